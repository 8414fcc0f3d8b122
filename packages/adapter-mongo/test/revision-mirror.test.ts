import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import * as chai from 'chai';
import { type Context } from 'mocha';
import { type Collection, type CommandStartedEvent, type Document, MongoClient } from 'mongodb';
import { DEFAULT_REVISION_POLL_MS, MongoStore, RevisionMirror } from '@hortus/adapter-mongo';
import { mongoUri, serverSuite } from './fixture.js';

const { expect } = chai;

/** A store on its own client, which counts the `find` commands it sends to the revisions collection. */
interface CountingStore {
  readonly store: MongoStore;
  revisionFinds(): number;
  /** Those of them that do not look one document up by `_id` (FerretDB v1 reads every document for them). */
  revisionScans(): number;
}

async function openCountingStore(
  dbName: string,
  revisionPollMS?: number,
  operationTimeoutMS = 10_000,
): Promise<CountingStore> {
  if (mongoUri === undefined) throw new Error('MONGODB_URI is not set');
  const client = new MongoClient(mongoUri, { monitorCommands: true, serverSelectionTimeoutMS: 2000 });
  let finds = 0;
  let scans = 0;
  client.on('commandStarted', (event: CommandStartedEvent) => {
    if (event.commandName !== 'find' || event.command['find'] !== 'revisions') return;
    finds += 1;
    const filter: unknown = event.command['filter'];
    const byId =
      typeof filter === 'object' &&
      filter !== null &&
      Object.keys(filter).join() === '_id' &&
      !('$in' in filter);
    if (!byId) scans += 1;
  });
  const store = new MongoStore(client, {
    dbName,
    operationTimeoutMS,
    ...(revisionPollMS === undefined ? {} : { revisionPollMS }),
  });
  await store.start();
  return { store, revisionFinds: () => finds, revisionScans: () => scans };
}

async function addAction(store: MongoStore, group: string, object: string): Promise<void> {
  await store.repositories().actions.create({ group, object, value: '0', automations: [] });
}

describe(serverSuite('Mongo revisions mirrored in the process'), function () {
  this.timeout(20_000);
  const opened: CountingStore[] = [];
  let dbName = '';

  async function open(revisionPollMS?: number, operationTimeoutMS?: number): Promise<CountingStore> {
    const counting = await openCountingStore(dbName, revisionPollMS, operationTimeoutMS);
    opened.push(counting);
    return counting;
  }

  beforeEach(function (this: Context) {
    if (mongoUri === undefined) this.skip();
    dbName = `hortus_test_${randomBytes(6).toString('hex')}`;
  });

  afterEach(async () => {
    const stores = opened.splice(0);
    if (stores[0] !== undefined) await stores[0].store.db.dropDatabase();
    await Promise.all(stores.map(({ store }) => store.close()));
  });

  it('when an unchanged group is polled many times, then most polls send no query and at most one query is sent per refresh interval', async () => {
    const { store, revisionFinds } = await open();
    const actions = store.repositories().actions;
    await addAction(store, 'garden', 'pump');
    const expected = await actions.revision('garden');
    // Warm-up: the first question starts the mirror, whose first full read makes it fresh.
    await sleep(3 * DEFAULT_REVISION_POLL_MS);

    const polls = 200;
    const before = revisionFinds();
    const started = performance.now();
    for (let poll = 0; poll < polls; poll += 1) {
      expect(await actions.revision('garden')).to.equal(expected);
      await sleep(5);
    }
    const elapsedMs = performance.now() - started;
    const finds = revisionFinds() - before;

    console.log(`      ${polls} polls in ${Math.round(elapsedMs)} ms sent ${finds} finds on revisions`);
    expect(finds).to.be.at.most(elapsedMs / DEFAULT_REVISION_POLL_MS + 2);
    expect(finds).to.be.below(polls / 10);
  });

  it('when the mirror is off (revisionPollMS 0), then every poll reads the database as before', async () => {
    const { store, revisionFinds } = await open(0);
    const actions = store.repositories().actions;
    await addAction(store, 'garden', 'pump');
    const before = revisionFinds();
    for (let poll = 0; poll < 10; poll += 1) await actions.revision('garden');
    expect(revisionFinds() - before).to.equal(10);
  });

  it('when another store on the same database changes a group, then this store sees the new revision within a few polls', async () => {
    const writer = await open();
    const reader = await open();
    const readerActions = reader.store.repositories().actions;
    await addAction(writer.store, 'garden', 'pump');
    await readerActions.revision('garden');
    await sleep(3 * DEFAULT_REVISION_POLL_MS);
    const figures: number[] = [];

    for (let change = 1; change <= 3; change += 1) {
      const before = await readerActions.revision('garden');
      // A group without a counter yet answers '0' from the fresh mirror; its first change must show too.
      expect(await readerActions.revision(`new-${change}`)).to.equal('0');
      await writer.store.repositories().actions.setValue('garden', 'pump', String(change));
      await addAction(writer.store, `new-${change}`, 'pump');
      const started = performance.now();
      const changed = async (): Promise<boolean> =>
        (await readerActions.revision('garden')) !== before &&
        (await readerActions.revision(`new-${change}`)) !== '0';
      let seen = await changed();
      while (!seen && performance.now() - started < 10_000) {
        await sleep(20);
        seen = await changed();
      }
      figures.push(Math.round(performance.now() - started));
      expect(seen, `change ${change} seen`).to.equal(true);
    }
    console.log(`      another store's change seen after ${figures.join(', ')} ms`);
    // Ten poll intervals (250 ms): far from never, wide enough for a loaded machine.
    for (const ms of figures) expect(ms).to.be.below(2500);
  });

  it('when nothing changed for a while, then the mirror reads one document by _id per interval, and a change after the quiet is still seen within a few polls', async function (this: Context) {
    this.timeout(30_000);
    const writer = await open();
    const reader = await open();
    const readerActions = reader.store.repositories().actions;
    await addAction(writer.store, 'garden', 'pump');
    await readerActions.revision('garden');
    // The mirror reads what changed for 5 s after the last change it saw; then it only watches.
    await sleep(6000);
    const scansBefore = reader.revisionScans();
    const findsBefore = reader.revisionFinds();
    const before = await readerActions.revision('garden');
    // At least a second, and until two reads came (a loaded machine delays the mirror's timer).
    for (const quiet = Date.now(); Date.now() - quiet < 1000 || reader.revisionFinds() - findsBefore < 2;) {
      await sleep(20);
      if (Date.now() - quiet > 10_000) break;
    }
    expect(reader.revisionScans() - scansBefore, 'scans while quiet').to.equal(0);
    expect(reader.revisionFinds() - findsBefore, 'reads while quiet').to.be.at.least(2);

    await writer.store.repositories().actions.setValue('garden', 'pump', 'on');
    const started = performance.now();
    let seen = before;
    while (seen === before && performance.now() - started < 10_000) {
      await sleep(20);
      seen = await readerActions.revision('garden');
    }
    const ms = Math.round(performance.now() - started);
    console.log(`      after a quiet period, another store's change seen after ${ms} ms`);
    expect(seen).to.not.equal(before);
    expect(ms).to.be.below(2500);
  });

  it('when this store writes, then its next revision of the group already differs (read-your-writes)', async () => {
    const { store } = await open();
    const actions = store.repositories().actions;
    await addAction(store, 'garden', 'pump');
    await actions.revision('garden');
    await sleep(3 * DEFAULT_REVISION_POLL_MS);

    const seen = new Set([await actions.revision('garden')]);
    for (let change = 1; change <= 5; change += 1) {
      await actions.setValue('garden', 'pump', String(change));
      const revision = await actions.revision('garden');
      expect(seen.has(revision), `revision after change ${change}`).to.equal(false);
      seen.add(revision);
    }
    await addAction(store, 'shed', 'light');
    expect(await actions.revision('shed')).to.not.equal('0');
  });

  it('when the database answers slower than the mirror may lag, then the polls meanwhile wait for one refresh instead of each sending a query, and see the latest change', async () => {
    const { store } = await open();
    await addAction(store, 'garden', 'pump');
    const revisions = store.db.collection('revisions');
    // A database slower than the mirror's staleness bound (1 s): every refresh ends stale, so every poll
    // is answered through the database, as under a heavy load.
    const slowMs = 1500;
    let reads = 0;
    const slowly = async <T>(read: () => Promise<T>): Promise<T> => {
      reads += 1;
      await sleep(slowMs);
      return read();
    };
    const slow = new Proxy(revisions, {
      get(target, property, receiver) {
        if (property === 'findOne') {
          return (...args: Parameters<Collection['findOne']>) => slowly(() => target.findOne(...args));
        }
        if (property === 'find') {
          return (...args: Parameters<Collection['find']>) => {
            const cursor = target.find(...args);
            return { toArray: () => slowly(() => cursor.toArray()) };
          };
        }
        return Reflect.get(target, property, receiver) as unknown;
      },
    }) as Collection<Document>;
    const mirror = new RevisionMirror(slow as never, DEFAULT_REVISION_POLL_MS, 20_000);
    const key = JSON.stringify(['actions', 'garden']);
    try {
      await mirror.current(key);
      await sleep(2 * slowMs);
      await store.repositories().actions.setValue('garden', 'pump', 'on');
      const expected = await store.repositories().actions.revision('garden');

      const before = reads;
      const answers = await Promise.all(Array.from({ length: 50 }, () => mirror.current(key)));
      const sent = reads - before;

      console.log(`      50 polls of a stale mirror sent ${sent} reads`);
      expect(new Set(answers)).to.deep.equal(new Set([expected]));
      // One refresh under way, one begun after the polls (and the timer's, which may start meanwhile).
      expect(sent).to.be.at.most(5);
    } finally {
      mirror.stop();
    }
  });

  it('when the store is closed, then its mirror sends no more queries, even on a client connected again', async () => {
    // A short deadline: a refresh caught by the close gives up quickly, so a mirror left running would query
    // the connected client again well within the wait below.
    const { store, revisionFinds } = await open(50, 300);
    const actions = store.repositories().actions;
    await addAction(store, 'garden', 'pump');
    await actions.revision('garden');
    // Running: a few refreshes, however slow a loaded machine makes them.
    for (const until = Date.now() + 10_000; revisionFinds() <= 2 && Date.now() < until;) await sleep(20);
    expect(revisionFinds()).to.be.above(2);

    await store.close();
    await store.client.connect();
    const before = revisionFinds();
    await sleep(1000);
    expect(revisionFinds() - before).to.equal(0);
  });
});
