import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import * as chai from 'chai';
import { type Context } from 'mocha';
import { type CommandStartedEvent, MongoClient } from 'mongodb';
import { MongoStore } from '@hortus/adapter-mongo';
import { mongoUri, serverSuite } from './fixture.js';

const { expect } = chai;

/** A store on its own client (another server), counting the commands it sends. */
async function openStore(dbName: string): Promise<{ store: MongoStore; commands: () => string[] }> {
  if (mongoUri === undefined) throw new Error('MONGODB_URI is not set');
  const client = new MongoClient(mongoUri, { monitorCommands: true, serverSelectionTimeoutMS: 2000 });
  const commands: string[] = [];
  client.on('commandStarted', (event: CommandStartedEvent) => {
    commands.push(`${event.commandName} ${JSON.stringify(event.command['filter'] ?? {})}`);
  });
  // No revision mirror: its polling would be counted too.
  const store = new MongoStore(client, { dbName, operationTimeoutMS: 10_000, revisionPollMS: 0 });
  await store.start();
  return { store, commands: () => [...commands] };
}

describe(serverSuite('Mongo change feed across servers'), function () {
  this.timeout(30_000);
  const opened: MongoStore[] = [];
  let dbName = '';

  beforeEach(function (this: Context) {
    if (mongoUri === undefined) this.skip();
    dbName = `hortus_test_${randomBytes(6).toString('hex')}`;
  });

  afterEach(async () => {
    const stores = opened.splice(0);
    if (stores[0] !== undefined) await stores[0].db.dropDatabase();
    await Promise.all(stores.map((store) => store.close()));
  });

  it('when another server writes, then this server’s feed names the group; once settled, an idle answer is one read by _id', async () => {
    const mine = await openStore(dbName);
    const theirs = await openStore(dbName);
    opened.push(mine.store, theirs.store);
    const feed = mine.store.repositories().changeFeed;
    await theirs.store
      .repositories()
      .groups.create({ name: 'warm', package: 'small', employee: [], settings: [] });
    const { cursor } = await feed.changesSince(undefined);

    await theirs.store
      .repositories()
      .readings.add([{ group: 'gh-1', topic: 'esp/air/temperature', value: 20, time: new Date() }]);
    const changed = await feed.changesSince(cursor);
    // Past the margin in which a later-committing counter is still looked for.
    await sleep(5500);
    const settling = await feed.changesSince(changed.cursor);
    const before = mine.commands().length;
    const idle = await feed.changesSince(settling.cursor);
    const idleCommands = mine.commands().slice(before);

    // 'warm' changed within the margin before the cursor: naming it again is allowed, leaving gh-1 out is not.
    expect(changed.groups).to.include('gh-1');
    expect(settling.groups).to.deep.equal([]);
    expect(idle.groups).to.deep.equal([]);
    expect(idleCommands).to.deep.equal(['find {"_id":"clock"}']);
  });
});
