import Mocha from 'mocha';
import {
  type NewReading,
  type ImportedUser,
  type NewUser,
  type Reading,
  type ReadingBucket,
  type ReadingCursor,
  type ReadingExportSelection,
  type ReadingRange,
  type ReadingScan,
  type ReadingRepository,
  type ReadingSelection,
  type User,
  type UserRecord,
  type UserCredentials,
  type UserCopy,
  type UserRepository,
} from '@hortus/core';
import {
  expect,
  readingAggregateContract,
  readingRepositoryContract,
  userRepositoryContract,
} from '@hortus/contract-tests';

interface Outcome {
  readonly passed: readonly string[];
  readonly failed: readonly string[];
}

const bddGlobals = [
  'describe',
  'context',
  'it',
  'specify',
  'xdescribe',
  'xcontext',
  'xit',
  'xspecify',
] as const;
const hookGlobals = ['before', 'after', 'beforeEach', 'afterEach', 'run'] as const;

/**
 * Runs suites in a separate, silent mocha instance: its bdd interface takes over the globals while the
 * suites register, and the outer run's globals are put back before anything runs.
 */
async function runNested(register: () => void): Promise<Outcome> {
  const mocha = new Mocha({ reporter: Mocha.reporters.Base, timeout: 5000 });
  const scope = globalThis as Record<string, unknown>;
  const saved = [...bddGlobals, ...hookGlobals].map((name) => [name, scope[name]] as const);
  mocha.suite.emit('pre-require', globalThis, 'nested-contract', mocha);
  try {
    register();
  } finally {
    for (const [name, value] of saved) scope[name] = value;
  }
  const passed: string[] = [];
  const failed: string[] = [];
  await new Promise<void>((resolve) => {
    const runner = mocha.run(() => resolve());
    runner.on(Mocha.Runner.constants.EVENT_TEST_PASS, (test) => passed.push(test.title));
    runner.on(Mocha.Runner.constants.EVENT_TEST_FAIL, (test) => failed.push(test.title));
  });
  return { passed, failed };
}

/** Keeps readings in one unsorted list, compares values as text and never deduplicates: three classic bugs. */
class NaiveReadingRepository implements ReadingRepository {
  private readonly stored: Reading[] = [];
  private nextId = 0;

  async add(readings: readonly NewReading[]): Promise<number> {
    for (const reading of readings) this.stored.push({ ...reading, id: String((this.nextId += 1)) });
    return readings.length;
  }

  async latest(group: string, topic: string): Promise<Reading | undefined> {
    return this.stored.filter((r) => r.group === group && r.topic === topic).at(-1);
  }

  async latestOfEveryTopic(group: string): Promise<Reading[]> {
    const byTopic = new Map(this.stored.filter((r) => r.group === group).map((r) => [r.topic, r]));
    return [...byTopic.values()];
  }

  async newestFirst(range: ReadingRange, limit: number): Promise<Reading[]> {
    return this.matching(range)
      .sort((a, b) => b.time.getTime() - a.time.getTime())
      .slice(0, limit);
  }

  async oldest(range: ReadingRange): Promise<Reading | undefined> {
    return this.matching(range).sort((a, b) => a.time.getTime() - b.time.getTime())[0];
  }

  /** Oldest bucket first, and every stored copy counted. */
  async aggregate(range: ReadingRange, bucketMs: number): Promise<ReadingBucket[]> {
    const buckets = new Map<number, number[]>();
    for (const r of this.matching(range)) {
      const start = Math.floor(r.time.getTime() / bucketMs) * bucketMs;
      buckets.set(start, [...(buckets.get(start) ?? []), r.value]);
    }
    return [...buckets.entries()]
      .sort(([a], [b]) => a - b)
      .map(([start, values]) => ({
        time: new Date(start),
        min: Math.min(...values),
        max: Math.max(...values),
        avg: values.reduce((sum, value) => sum + value, 0) / values.length,
        count: values.length,
      }));
  }

  async revision(): Promise<string> {
    return String(this.nextId);
  }

  async countTopics(group: string): Promise<number> {
    return new Set(this.stored.filter((r) => r.group === group).map((r) => r.topic)).size;
  }

  async knownTopics(group: string, topics: readonly string[]): Promise<string[]> {
    return topics.filter((topic) => this.stored.some((r) => r.group === group && r.topic === topic));
  }

  async groups(): Promise<string[]> {
    return [...new Set(this.stored.map((r) => r.group))];
  }

  /** In the order stored, unsorted. */
  async *scanInTimeOrder(scan: ReadingScan): AsyncIterable<readonly Reading[]> {
    yield this.stored.filter(
      (r) =>
        r.group === scan.group && scan.topics.includes(r.topic) && r.time >= scan.from && r.time <= scan.to,
    );
  }

  /** It keeps no summaries. */
  async deleteSummariesBefore(): Promise<number> {
    return 0;
  }

  /** Pages in insertion order, a fourth classic bug. */
  async page(
    selection: ReadingExportSelection,
    after: ReadingCursor | undefined,
    limit: number,
  ): Promise<Reading[]> {
    const selected = this.stored.filter(
      (r) => r.group === selection.group && (selection.topic === undefined || r.topic === selection.topic),
    );
    const start =
      after === undefined
        ? 0
        : selected.findIndex((r) => r.topic === after.topic && r.time.getTime() === after.time.getTime()) + 1;
    return selected.slice(start, start + limit);
  }

  async deleteRange(selection: ReadingSelection): Promise<number> {
    const doomed = this.stored.filter(
      (r) =>
        r.group === selection.group &&
        (selection.topic === undefined || r.topic === selection.topic) &&
        r.time >= selection.from &&
        r.time <= selection.to,
    );
    for (const reading of doomed) this.stored.splice(this.stored.indexOf(reading), 1);
    return doomed.length;
  }

  private matching(range: ReadingRange): Reading[] {
    return this.stored.filter(
      (r) =>
        r.group === range.group &&
        r.topic === range.topic &&
        (range.startDate === undefined || r.time >= range.startDate) &&
        (range.endDate === undefined || r.time <= range.endDate) &&
        (range.minValue === undefined || String(r.value) >= String(range.minValue)) &&
        (range.maxValue === undefined || String(r.value) <= String(range.maxValue)),
    );
  }
}

/** Hands out its stored objects and throws on ids it cannot parse, as a careless Mongo mapper would. */
class CarelessUserRepository implements UserRepository {
  private readonly byId = new Map<string, User>();

  async create(user: NewUser): Promise<User> {
    if ([...this.byId.values()].some((u) => u.email === user.email)) throw new Error('duplicate key');
    const created = {
      ...user,
      role: user.role ?? 'operator',
      id: (this.byId.size + 1).toString(16).padStart(24, '0'),
    };
    this.byId.set(created.id, created);
    return created;
  }

  async findById(id: string): Promise<User | undefined> {
    if (!/^[0-9a-f]{24}$/u.test(id)) throw new Error(`invalid ObjectId ${id}`);
    return this.byId.get(id);
  }

  async changeEmail(id: string, email: string): Promise<User | undefined> {
    const user = await this.findById(id);
    if (user === undefined) return undefined;
    (user as { email: string }).email = email;
    return user;
  }

  async findByEmail(email: string): Promise<User | undefined> {
    return [...this.byId.values()].find((user) => user.email === email);
  }

  async useInvitation(): Promise<boolean> {
    return true;
  }

  async list(): Promise<UserRecord[]> {
    return [...this.byId.values()].map((user) => ({ ...user, origin: 'unknown' }));
  }

  async createImported(user: ImportedUser): Promise<User> {
    return this.create(user);
  }

  async restore(user: UserCopy): Promise<void> {
    this.byId.set(user.id, user);
  }

  async findCredentials(id: string): Promise<UserCredentials | undefined> {
    return (await this.findById(id)) === undefined ? undefined : { sessionVersion: 0 };
  }

  async setPassword(): Promise<number | undefined> {
    return undefined;
  }

  async endSessions(): Promise<number | undefined> {
    return undefined;
  }

  async setResetToken(): Promise<boolean> {
    return false;
  }

  async resetPassword(): Promise<number | undefined> {
    return undefined;
  }

  async setRole(id: string, role: User['role']): Promise<User | undefined> {
    const user = await this.findById(id);
    if (user === undefined) return undefined;
    (user as { role: string }).role = role;
    return user;
  }

  async delete(id: string): Promise<boolean> {
    return this.byId.delete(id);
  }
}

describe('contract suites (self-test)', () => {
  it('when the reading contract runs against a naive repository, then its bugs fail and its correct parts pass', async () => {
    const outcome = await runNested(() =>
      readingRepositoryContract('naive', async () => ({ readings: new NaiveReadingRepository() })),
    );

    expect(outcome.failed).to.include.members([
      'when a delivery is retried with the same group, topic and time, then it is skipped and the first value kept',
      'when the same reading is added by ten concurrent calls, then exactly one stores it',
      'when readings arrive out of order, then it answers the one with the greatest time',
      'when values have different digit counts, then they compare as numbers, never as text',
      'when the group has several topics, then it answers the newest reading of each, one per topic, ordered by topic',
      'when the caller mutates the answer, then the stored reading is unchanged',
      'when a group is paged through, then every reading comes once, by topic then time, in pages of at most the limit',
    ]);
    expect(outcome.passed).to.include.members([
      'when the series is empty or unknown, then it answers undefined',
      'when startDate and endDate equal stored times, then both bounds are inclusive',
      'when a limit is given, then it answers only that many, the newest ones',
    ]);
  });

  it('when the aggregate contract runs against a naive repository, then its bugs fail and its correct parts pass', async () => {
    const outcome = await runNested(() =>
      readingAggregateContract('naive', async () => ({ readings: new NaiveReadingRepository() })),
    );

    expect(outcome.failed).to.include.members([
      'when readings fall into buckets, then each bucket answers its start, min, max, avg and count, newest first, empty ones left out',
      'when a delivery is retried or readings arrive out of order over several batches, then each reading counts once',
    ]);
    expect(outcome.passed).to.include.members([
      'when the range starts inside a bucket, then the bucket still starts at a multiple of its size and counts only readings in the range',
      'when the range holds no readings, then it answers an empty list',
    ]);
  });

  it('when the user contract runs against a careless repository, then conflicts, malformed ids and aliasing fail', async () => {
    const outcome = await runNested(() =>
      userRepositoryContract('careless', async () => ({ users: new CarelessUserRepository() })),
    );

    expect(outcome.failed).to.include.members([
      'when another user has the e-mail, then creating is a conflict',
      'when an id is unknown or malformed, then findById answers undefined',
      'when the caller mutates an answer, then the stored user is unchanged',
      'when an imported user has an id of the store form, then it keeps that id, answers only the public fields, and its hash is the credential at session version 0',
    ]);
    expect(outcome.passed).to.include(
      'when the e-mail is changed, then the user keeps every other field and the old e-mail is free again',
    );
  });
});
