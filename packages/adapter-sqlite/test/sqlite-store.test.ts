import 'reflect-metadata';
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import * as chai from 'chai';
import chaiAsPromised from 'chai-as-promised';
import { Container } from 'inversify';
import {
  ACCESS_KEY_REPOSITORY,
  ACTION_REPOSITORY,
  AUTOMATION_LOG_REPOSITORY,
  ConflictError,
  DEVICE_REPOSITORY,
  ENGINE_STATE_REPOSITORY,
  GROUP_REPOSITORY,
  type GroupRepository,
  HISTORY_CHART_REPOSITORY,
  InvalidInputError,
  type NewReading,
  NOTIFICATION_REPOSITORY,
  READING_REPOSITORY,
  SERVER_SECRET_REPOSITORY,
  STORE_LIFECYCLE,
  StoreUnavailableError,
  USER_REPOSITORY,
} from '@hortus/core';
import {
  migrations,
  SCHEMA_VERSION,
  SqliteAccessKeyRepository,
  SqliteActionRepository,
  SqliteAutomationLogRepository,
  SqliteDeviceRepository,
  SqliteEngineStateRepository,
  SqliteGroupRepository,
  SqliteHistoryChartRepository,
  SqliteNotificationRepository,
  SqliteReadingRepository,
  SqliteServerSecretRepository,
  sqliteSettingsFromEnv,
  SqliteStore,
  SqliteUserRepository,
} from '@hortus/adapter-sqlite';
import { openTestStore, tempDir, type TestStore } from './fixture.js';

chai.use(chaiAsPromised);
const { expect } = chai;

const GROUP = 'greenhouse-a';
const TOPIC = 'esp/air/temperature';
const BASE = Date.UTC(2024, 4, 1);
const MINUTE = 60_000;

function readings(count: number, { from = 0, topic = TOPIC, stepMs = 20_000 } = {}): NewReading[] {
  return Array.from({ length: count }, (_, i) => ({
    group: GROUP,
    topic,
    value: (i % 41) / 2,
    time: new Date(BASE + (from + i) * stepMs),
  }));
}

function count(db: Database.Database, table: string): number {
  return (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
}

async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a rejection');
}

describe('SQLite store specifics', () => {
  const opened: TestStore[] = [];
  const dirs: string[] = [];
  const open = async (settings: Parameters<typeof openTestStore>[0] = {}): Promise<TestStore> => {
    const store = await openTestStore(settings);
    opened.push(store);
    return store;
  };
  const newDir = (): string => {
    const dir = tempDir();
    dirs.push(dir);
    return dir;
  };
  afterEach(async () => {
    for (const store of opened.splice(0)) await store.dispose();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  describe('settings and start', () => {
    it('when HORTUS_DATA_DIR is not set, then the file is hortus.db in ./data; when set, in that directory', () => {
      expect(sqliteSettingsFromEnv({})).to.deep.equal({ file: resolve('data', 'hortus.db') });
      expect(
        sqliteSettingsFromEnv({
          HORTUS_DATA_DIR: '/srv/hortus',
          HORTUS_SQLITE_BUSY_TIMEOUT_MS: '250',
          HORTUS_SQLITE_SYNCHRONOUS: 'normal',
        }),
      ).to.deep.equal({ file: '/srv/hortus/hortus.db', busyTimeoutMs: 250, synchronous: 'normal' });
      expect(() => sqliteSettingsFromEnv({ HORTUS_SQLITE_BUSY_TIMEOUT_MS: 'soon' })).to.throw(
        InvalidInputError,
      );
      expect(() => sqliteSettingsFromEnv({ HORTUS_SQLITE_SYNCHRONOUS: 'off' })).to.throw(InvalidInputError);
    });

    it('when the data directory is missing, then start creates it and the file, in WAL mode with the busy timeout and schema version', async () => {
      const dir = newDir();
      const file = join(dir, 'nested', 'data', 'hortus.db');
      const store = await SqliteStore.open({ file, busyTimeoutMs: 1234 });
      try {
        expect(existsSync(file)).to.equal(true);
        expect(store.database.pragma('journal_mode', { simple: true })).to.equal('wal');
        expect(store.database.pragma('busy_timeout', { simple: true })).to.equal(1234);
        // FULL (2) unless asked for NORMAL (1): a commit is on disk before the write is acknowledged.
        expect(store.database.pragma('synchronous', { simple: true })).to.equal(2);
        expect(store.database.prepare('SELECT max(version) AS v FROM schema_version').get()).to.deep.equal({
          v: SCHEMA_VERSION,
        });
        expect(await store.ping()).to.equal(true);
      } finally {
        await store.close();
      }
      expect(await store.ping()).to.equal(false);
      await expect(store.repositories().groups.list()).to.be.rejectedWith(StoreUnavailableError);
    });

    it('when a store is closed and opened again, then everything written before is there', async () => {
      const { store, file } = await open();
      await store.repositories().readings.add(readings(10));
      await store.repositories().groups.create({ name: GROUP, package: 'small', employee: [], settings: [] });
      const revision = await store.repositories().readings.revision(GROUP);
      await store.close();

      const again = await SqliteStore.open({ file, synchronous: 'normal' });
      try {
        expect(again.database.pragma('synchronous', { simple: true })).to.equal(1);
        expect((await again.repositories().readings.latest(GROUP, TOPIC))?.time).to.deep.equal(
          new Date(BASE + 9 * 20_000),
        );
        expect(await again.repositories().groups.findByName(GROUP)).to.include({ package: 'small' });
        expect(await again.repositories().readings.revision(GROUP)).to.equal(revision);
      } finally {
        await again.close();
      }
    });

    it('when the container module is loaded, then every repository port resolves to its SQLite class on the one file, and the lifecycle to the store', async () => {
      const { store } = await open();
      const container = new Container();
      container.load(store.module());
      const bound = [
        [READING_REPOSITORY, SqliteReadingRepository],
        [ACTION_REPOSITORY, SqliteActionRepository],
        [DEVICE_REPOSITORY, SqliteDeviceRepository],
        [NOTIFICATION_REPOSITORY, SqliteNotificationRepository],
        [HISTORY_CHART_REPOSITORY, SqliteHistoryChartRepository],
        [GROUP_REPOSITORY, SqliteGroupRepository],
        [USER_REPOSITORY, SqliteUserRepository],
        [ENGINE_STATE_REPOSITORY, SqliteEngineStateRepository],
        [AUTOMATION_LOG_REPOSITORY, SqliteAutomationLogRepository],
        [ACCESS_KEY_REPOSITORY, SqliteAccessKeyRepository],
        [SERVER_SECRET_REPOSITORY, SqliteServerSecretRepository],
      ] as const;
      for (const [token, type] of bound) {
        expect(container.get(token), String(token)).to.be.an.instanceOf(type);
        expect(container.get(token), 'one instance per container').to.equal(container.get(token));
      }
      expect(container.get(STORE_LIFECYCLE)).to.equal(store);
      await container
        .get<GroupRepository>(GROUP_REPOSITORY)
        .create({ name: 'via-container', package: 'big', employee: [], settings: [] });
      expect(await store.repositories().groups.findByName('via-container')).to.include({ package: 'big' });
    });
  });

  it('when a user is imported with a bcrypt hash, then the file keeps the hash beside the user and no read answers it', async () => {
    const { store } = await open();
    const hash = `$2b$10$${'c'.repeat(53)}`;

    const user = await store.repositories().users.createImported({
      id: '65a000000000000000000001',
      firstName: 'Ana',
      lastName: 'Grower',
      email: 'ana@example.org',
      group: GROUP,
      passwordHash: hash,
    });

    expect(user).to.not.have.property('passwordHash');
    expect(await store.repositories().users.findByEmail('ana@example.org')).to.deep.equal(user);
    expect(store.database.prepare('SELECT password_hash FROM users WHERE id = ?').get(user.id)).to.deep.equal(
      {
        password_hash: hash,
      },
    );
  });

  describe('file modes: the file holds the signing key and password hashes', () => {
    const modeOf = (path: string): string => (statSync(path).mode & 0o777).toString(8);
    let umask: number;
    // The usual umask of a shell or service: without care, files come out 0644 in a 0755 directory.
    beforeEach(() => {
      umask = process.umask(0o022);
    });
    afterEach(() => {
      process.umask(umask);
    });

    it('when the store creates its directory and file, then the directory is 0700 and the file, -wal and -shm are 0600, with nothing to warn of', async function () {
      if (process.platform === 'win32') this.skip();
      const dir = newDir();
      const file = join(dir, 'data', 'hortus.db');
      const store = await SqliteStore.open({ file });
      try {
        await store.repositories().readings.add(readings(3));
        expect(modeOf(join(dir, 'data'))).to.equal('700');
        for (const path of [file, `${file}-wal`, `${file}-shm`]) expect(modeOf(path), path).to.equal('600');
        expect(store.startWarnings()).to.deep.equal([]);
      } finally {
        await store.close();
      }
    });

    it('when a backup is made, then the copy is 0600', async function () {
      if (process.platform === 'win32') this.skip();
      const { store, dir } = await open();
      const target = join(dir, 'copy.db');

      await store.backup(target);

      expect(modeOf(target)).to.equal('600');
    });

    it('when the directory and files exist with wider modes, then start leaves them and warns of each with its fix', async function () {
      if (process.platform === 'win32') this.skip();
      const dir = join(newDir(), 'data');
      mkdirSync(dir, { mode: 0o755 });
      chmodSync(dir, 0o755);
      const file = join(dir, 'hortus.db');
      const first = await SqliteStore.open({ file });
      await first.close();
      chmodSync(file, 0o644);

      const store = await SqliteStore.open({ file });
      try {
        expect(modeOf(file)).to.equal('644');
        expect(store.startWarnings()).to.include.members([
          `${dir} is 0755, other users may read it: chmod 700 ${dir}`,
          `${file} is 0644, other users may read it: chmod 600 ${file}`,
        ]);
      } finally {
        await store.close();
      }
    });
  });

  describe('files it must refuse, left as they were', () => {
    it('when the data directory cannot be created (a file is in the way), then start rejects with a one-line InvalidInputError', async () => {
      const dir = newDir();
      writeFileSync(join(dir, 'occupied'), 'a file, not a directory');
      const file = join(dir, 'occupied', 'data', 'hortus.db');

      const error = await rejection(SqliteStore.open({ file }));

      expect(error).to.be.an.instanceOf(InvalidInputError);
      expect(error.message).to.match(
        /^Cannot use the data file .*hortus\.db: its directory cannot be created/u,
      );
      expect(error.message).not.to.include('\n');
      expect(readFileSync(join(dir, 'occupied'), 'utf8')).to.equal('a file, not a directory');
    });

    it('when the data directory is read-only, then start rejects with a one-line InvalidInputError', async function () {
      // Root writes through any permission bits, so only another user can see this refusal.
      if (process.getuid?.() === 0) this.skip();
      const dir = newDir();
      const { chmodSync } = await import('node:fs');
      chmodSync(dir, 0o555);
      try {
        const error = await rejection(SqliteStore.open({ file: join(dir, 'hortus.db') }));
        expect(error).to.be.an.instanceOf(InvalidInputError);
        expect(error.message).not.to.include('\n');
      } finally {
        chmodSync(dir, 0o755);
      }
    });

    it('when the file is not a SQLite database, then start rejects saying so and the file is unchanged', async () => {
      const dir = newDir();
      const file = join(dir, 'hortus.db');
      const content = Buffer.from("these are somebody else's notes, not a database\n".repeat(200));
      writeFileSync(file, content);

      const error = await rejection(SqliteStore.open({ file }));

      expect(error).to.be.an.instanceOf(InvalidInputError);
      expect(error.message).to.equal(`Cannot use the data file ${file}: it is not a SQLite database`);
      expect(readFileSync(file).equals(content)).to.equal(true);
      expect(existsSync(`${file}-wal`)).to.equal(false);
    });

    it("when the file is another application's SQLite database, then start rejects and adds no table", async () => {
      const dir = newDir();
      const file = join(dir, 'hortus.db');
      const other = new Database(file);
      other.exec("CREATE TABLE recipes (name TEXT); INSERT INTO recipes VALUES ('soup')");
      other.close();
      const before = readFileSync(file);

      const error = await rejection(SqliteStore.open({ file }));

      expect(error).to.be.an.instanceOf(InvalidInputError);
      expect(error.message).to.match(/holds tables of another application/u);
      expect(readFileSync(file).equals(before)).to.equal(true);
    });

    it('when the file was written by a newer schema version, then start rejects naming both versions and changes nothing', async () => {
      const { store, file } = await open();
      await store.repositories().readings.add(readings(3));
      await store.close();
      const raw = new Database(file);
      raw
        .prepare('INSERT INTO schema_version (version, applied_at) VALUES (?, ?)')
        .run(SCHEMA_VERSION + 1, 0);
      raw.close();
      const before = readFileSync(file);

      const error = await rejection(SqliteStore.open({ file }));

      expect(error).to.be.an.instanceOf(InvalidInputError);
      expect(error.message).to.equal(
        `Cannot use the data file ${file}: it was written by a newer Hortus (schema version ${SCHEMA_VERSION + 1}; this one knows up to ${SCHEMA_VERSION})`,
      );
      expect(readFileSync(file).equals(before)).to.equal(true);
    });
  });

  describe('migrations', () => {
    it('when a version-1 file with readings is opened, then it is migrated to the current version and summaries come from the new rollups', async () => {
      const dir = newDir();
      const file = join(dir, 'hortus.db');
      // A file exactly as the first release left it: version 1's tables and two series of readings.
      const v1 = new Database(file);
      v1.pragma('journal_mode = WAL');
      v1.exec('CREATE TABLE schema_version (version INTEGER NOT NULL, applied_at INTEGER NOT NULL)');
      v1.exec(migrations.find(({ version }) => version === 1)?.sql ?? '');
      v1.prepare('INSERT INTO schema_version VALUES (1, 0)').run();
      v1.prepare("INSERT INTO series (id, grp, topic) VALUES (1, ?, ?), (2, ?, 'esp/air/humidity')").run(
        GROUP,
        TOPIC,
        GROUP,
      );
      const insert = v1.prepare('INSERT INTO readings (series, time, value) VALUES (?, ?, ?)');
      const old = readings(600); // 200 minutes at 20 s
      for (const reading of old) insert.run(1, reading.time.getTime(), reading.value);
      insert.run(2, BASE, 55);
      v1.close();

      const store = await SqliteStore.open({ file });
      try {
        const versions = store.database.prepare('SELECT version FROM schema_version ORDER BY version').all();
        expect(versions).to.deep.equal(migrations.map(({ version }) => ({ version })));
        expect(count(store.database, 'rollups_1m')).to.equal(200 + 1);
        expect(count(store.database, 'rollups_1h')).to.equal(4 + 1);

        const repository = store.repositories().readings;
        await repository.add(readings(3, { from: 600 }));
        const all = [...old, ...readings(3, { from: 600 })];
        const buckets = await repository.aggregate({ group: GROUP, topic: TOPIC }, 60 * MINUTE);
        expect(buckets.map((bucket) => bucket.count)).to.deep.equal([63, 180, 180, 180]);
        expect(buckets.reduce((sum, bucket) => sum + bucket.avg * bucket.count, 0)).to.be.closeTo(
          all.reduce((sum, reading) => sum + reading.value, 0),
          1e-6,
        );
        expect(buckets[3]).to.include({ min: 0, max: 20 });
        expect((await repository.latest(GROUP, 'esp/air/humidity'))?.value).to.equal(55);
      } finally {
        await store.close();
      }
    });
  });

  describe('migrations to version 3 (accounts)', () => {
    it('when a version-2 file with users is opened, then they are found by e-mail in any case, without a password, and a same-address duplicate keeps its record', async () => {
      const file = join(newDir(), 'hortus.db');
      const v2 = new Database(file);
      v2.exec('CREATE TABLE schema_version (version INTEGER NOT NULL, applied_at INTEGER NOT NULL)');
      for (const version of [1, 2]) {
        v2.exec(migrations.find((migration) => migration.version === version)?.sql ?? '');
        v2.prepare('INSERT INTO schema_version VALUES (?, 0)').run(version);
      }
      const insert = v2.prepare(
        "INSERT INTO users (id, first_name, last_name, email, grp) VALUES (?, 'A', 'B', ?, 'greenhouse-a')",
      );
      insert.run('0000000000000000000000a1', 'Ana@Example.org');
      // Version 2 compared e-mails case-sensitively, so a file may hold both.
      insert.run('0000000000000000000000a2', 'ANA@example.org');
      insert.run('0000000000000000000000b1', 'Ömer@Example.org');
      v2.close();

      const store = await SqliteStore.open({ file });
      try {
        const users = store.repositories().users;
        expect((await users.findByEmail('ana@EXAMPLE.org'))?.id).to.equal('0000000000000000000000a1');
        expect((await users.findByEmail('ömer@example.org'))?.id).to.equal('0000000000000000000000b1');
        expect(await users.findCredentials('0000000000000000000000a1')).to.deep.equal({ sessionVersion: 0 });
        expect((await users.findById('0000000000000000000000a2'))?.email).to.equal('ANA@example.org');
        await expect(
          users.create({ firstName: 'C', lastName: 'D', email: 'ana@example.ORG', group: 'g' }),
        ).to.be.rejectedWith(ConflictError);
        // The duplicate gets its key once its address changes to a free one.
        await users.changeEmail('0000000000000000000000a2', 'Ana.Two@example.org');
        expect((await users.findByEmail('ana.two@example.org'))?.id).to.equal('0000000000000000000000a2');
      } finally {
        await store.close();
      }
    });
  });

  describe('indexes', () => {
    it('when the reads of readings run, then every query plan searches an index and none scans readings or sorts', async () => {
      const { store } = await open();
      const repository = store.repositories().readings;
      await repository.add([...readings(500), ...readings(500, { topic: 'esp/air/humidity' })]);
      const range = {
        group: GROUP,
        topic: TOPIC,
        startDate: new Date(BASE),
        endDate: new Date(BASE + 3_600_000),
      };
      await repository.latest(GROUP, TOPIC);
      await repository.latestOfEveryTopic(GROUP);
      await repository.newestFirst(range, 10);
      await repository.newestFirst({ ...range, minValue: 3 }, 10);
      await repository.oldest(range);
      await repository.aggregate(range, MINUTE);

      const reads = store.connection.preparedSql.filter((sql) =>
        /^\s*SELECT[\s\S]*FROM (readings|series)/u.test(sql),
      );
      expect(reads.length).to.be.at.least(5);
      for (const sql of reads) {
        // Planning needs every parameter bound; their values do not change the plan.
        const named = Object.fromEntries([...sql.matchAll(/@(\w+)/gu)].map((match) => [match[1], 1]));
        const positional = [...sql.matchAll(/\?/gu)].map(() => 1);
        const explain = store.database.prepare(`EXPLAIN QUERY PLAN ${sql}`);
        const steps = (Object.keys(named).length > 0 ? explain.all(named) : explain.all(...positional)) as {
          detail: string;
        }[];
        const plan = steps.map((step) => step.detail);
        expect(plan.join(' | '), sql).not.to.match(/\bSCAN (readings|r|s|series)\b/u);
        expect(plan.join(' | '), sql).not.to.match(/TEMP B-TREE FOR ORDER BY/u);
        expect(plan.join(' | '), sql).to.match(
          /SEARCH (readings|r|series|s) USING (PRIMARY KEY|COVERING INDEX)/u,
        );
      }
    });
  });

  describe('faults', () => {
    it('when the disk is full, then add rejects with StoreUnavailableError and nothing of the batch is kept', async () => {
      const { store } = await open();
      const repository = store.repositories().readings;
      await repository.add(readings(10));
      const revision = await repository.revision(GROUP);
      const pages = store.database.pragma('page_count', { simple: true }) as number;
      // A database that may not grow past its current size behaves like a full disk: SQLITE_FULL.
      store.database.pragma(`max_page_count = ${pages}`);

      const error = await rejection(repository.add(readings(20_000, { from: 10 })));

      expect(error).to.be.an.instanceOf(StoreUnavailableError);
      expect(error.message).to.match(/full/u);
      expect(count(store.database, 'readings')).to.equal(10);
      expect(await repository.revision(GROUP)).to.equal(revision);
    });

    it('when another process holds the write lock past the busy timeout, then a write rejects with StoreUnavailableError and reads still answer', async () => {
      const first = await open();
      const second = await SqliteStore.open({ file: first.file, busyTimeoutMs: 50 });
      const locker = new Database(first.file);
      try {
        await first.store.repositories().readings.add(readings(1));
        locker.exec('BEGIN IMMEDIATE');

        const started = Date.now();
        const error = await rejection(second.repositories().readings.add(readings(1, { from: 1 })));
        expect(error).to.be.an.instanceOf(StoreUnavailableError);
        expect(Date.now() - started).to.be.at.least(40);
        expect(await second.repositories().readings.latest(GROUP, TOPIC)).to.include({ value: 0 });

        locker.exec('ROLLBACK');
        expect(await second.repositories().readings.add(readings(1, { from: 1 }))).to.equal(1);
      } finally {
        locker.close();
        await second.close();
      }
    });
  });

  describe('two processes on one file', () => {
    it('when one store writes, then the other store reads the change and its revisions change too', async () => {
      const first = await open();
      const second = await SqliteStore.open({ file: first.file });
      try {
        const a = first.store.repositories();
        const b = second.repositories();
        const before = await Promise.all([
          b.readings.revision(GROUP),
          b.actions.revision(GROUP),
          b.groups.revision(GROUP),
        ]);

        await a.readings.add(readings(2));
        await a.actions.create({ group: GROUP, object: 'pump_1', value: 'off', automations: [] });
        await a.groups.create({ name: GROUP, package: 'small', employee: [], settings: [] });

        const after = await Promise.all([
          b.readings.revision(GROUP),
          b.actions.revision(GROUP),
          b.groups.revision(GROUP),
        ]);
        expect(after.filter((revision, i) => revision === before[i])).to.deep.equal([]);
        expect(after).to.deep.equal(
          await Promise.all([
            a.readings.revision(GROUP),
            a.actions.revision(GROUP),
            a.groups.revision(GROUP),
          ]),
        );
        expect(await b.readings.latestOfEveryTopic(GROUP)).to.have.lengthOf(1);

        // Read again and again (kept by the handle), then written by the other: the change shows at once.
        const notified = await b.notifications.revision(GROUP);
        expect(await b.notifications.revision(GROUP)).to.equal(notified);
        await a.notifications.create({ group: GROUP, time: new Date(), message: 'too dry' });
        expect(await b.notifications.revision(GROUP)).to.not.equal(notified);
        expect(await b.notifications.revision(GROUP)).to.equal(await a.notifications.revision(GROUP));

        await b.actions.setValue(GROUP, 'pump_1', 'on');
        expect(await a.actions.revision(GROUP)).to.equal(await b.actions.revision(GROUP));
        expect((await a.actions.find(GROUP, 'pump_1'))?.value).to.equal('on');
      } finally {
        await second.close();
      }
    });

    it('when both stores add readings of one new series at once, then every reading is stored once under one series', async () => {
      const first = await open();
      const second = await SqliteStore.open({ file: first.file });
      try {
        const stored = await Promise.all([
          first.store.repositories().readings.add(readings(100)),
          second.repositories().readings.add(readings(100, { from: 50 })),
        ]);
        expect(stored[0] + stored[1]).to.equal(150);
        expect(count(first.store.database, 'series')).to.equal(1);
        const buckets = await second
          .repositories()
          .readings.aggregate({ group: GROUP, topic: TOPIC }, 3_600_000);
        expect(buckets.reduce((sum, bucket) => sum + bucket.count, 0)).to.equal(150);
      } finally {
        await second.close();
      }
    });
  });

  describe('online backup', () => {
    it('when readings are written during a backup, then the copy passes integrity_check and holds one consistent state', async function () {
      this.timeout(30_000);
      const { store, dir } = await open();
      const repository = store.repositories().readings;
      for (let batch = 0; batch < 20; batch += 1)
        await repository.add(readings(2000, { from: batch * 2000 }));
      const target = join(dir, 'backup.db');

      let writing = true;
      let written = 40_000;
      const writer = (async () => {
        while (writing) {
          written += await repository.add(readings(200, { from: written }));
          await new Promise((resolve) => setImmediate(resolve));
        }
      })();
      const result = await store.backup(target);
      writing = false;
      await writer;

      expect(result.totalPages).to.be.greaterThan(0);
      const copy = new Database(target, { readonly: true });
      try {
        expect(copy.pragma('integrity_check', { simple: true })).to.equal('ok');
        const stored = count(copy, 'readings');
        expect(stored).to.be.at.least(40_000).and.at.most(written);
        // Readings and their rollups commit together, so a consistent copy has both or neither.
        expect((copy.prepare('SELECT sum(n) AS n FROM rollups_1h').get() as { n: number }).n).to.equal(
          stored,
        );
        const epochOf = (db: Database.Database): unknown =>
          (db.prepare("SELECT epoch FROM revisions WHERE subject = 'readings'").get() as { epoch: string })
            .epoch;
        expect(epochOf(copy)).not.to.equal(epochOf(store.database));
      } finally {
        copy.close();
      }
      expect(written).to.be.greaterThan(40_000);

      const restored = await SqliteStore.open({ file: target });
      try {
        expect((await restored.repositories().readings.latest(GROUP, TOPIC))?.time.getTime()).to.be.a(
          'number',
        );
      } finally {
        await restored.close();
      }
    });

    it('when the backup file exists, then backup rejects and leaves it alone', async () => {
      const { store, dir } = await open();
      const target = join(dir, 'existing.db');
      writeFileSync(target, 'keep me');

      await expect(store.backup(target)).to.be.rejectedWith(InvalidInputError, /exists already/u);
      expect(readFileSync(target, 'utf8')).to.equal('keep me');
    });
  });

  describe('durability', () => {
    it('when the writing process is killed with SIGKILL, then every acknowledged batch is in the file and it passes integrity_check', async function () {
      this.timeout(30_000);
      const dir = newDir();
      const file = join(dir, 'hortus.db');
      const entry = resolve(fileURLToPath(import.meta.url), '../../src/index.js');
      // The child acknowledges a batch on stdout only after add() resolved, i.e. after COMMIT.
      const script = `
        import { SqliteStore } from ${JSON.stringify(entry)};
        const store = await SqliteStore.open({ file: ${JSON.stringify(file)} });
        const readings = store.repositories().readings;
        for (let batch = 0; ; batch += 1) {
          const items = Array.from({ length: 500 }, (_, i) => ({
            group: 'g', topic: 't', value: i, time: new Date(${BASE} + (batch * 500 + i) * 1000),
          }));
          await readings.add(items);
          process.stdout.write('ack ' + (batch + 1) * 500 + '\\n');
        }
      `;
      const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let acknowledged = 0;
      await new Promise<void>((resolveKilled) => {
        child.stdout.setEncoding('utf8');
        child.stdout.on('data', (text: string) => {
          for (const match of text.matchAll(/ack (\d+)/gu)) acknowledged = Number(match[1]);
          if (acknowledged >= 20_000 && child.exitCode === null && !child.killed) child.kill('SIGKILL');
        });
        child.on('exit', () => resolveKilled());
      });

      expect(acknowledged).to.be.at.least(20_000);
      const store = await SqliteStore.open({ file });
      try {
        expect(store.database.pragma('integrity_check', { simple: true })).to.equal('ok');
        expect(count(store.database, 'readings')).to.be.at.least(acknowledged);
      } finally {
        await store.close();
      }
    });
  });
});
