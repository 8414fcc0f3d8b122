import 'reflect-metadata';
import { type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as chai from 'chai';
import chaiAsPromised from 'chai-as-promised';
import { type Context } from 'mocha';
import { ObjectId } from 'mongodb';
import { StoreUnavailableError } from '@hortus/core';
import { MongoStore } from '@hortus/adapter-mongo';
import { ferretDbBinary, freePort, killProcess, startFerretDb } from '@hortus/test-support';
import { rejectionOf } from './fixture.js';

chai.use(chaiAsPromised);
const { expect } = chai;

describe('Mongo store when no server answers', () => {
  let store: MongoStore;

  beforeEach(() => {
    // Port 1 is closed on any test machine: connections are refused at once.
    store = MongoStore.fromSettings({ uri: 'mongodb://127.0.0.1:1/', serverSelectionTimeoutMS: 500 });
  });

  afterEach(async () => {
    await store.close();
  });

  it('when a repository is used, then it rejects with StoreUnavailableError within 2 s instead of hanging', async () => {
    const { readings, groups, users, historyCharts } = store.repositories();
    const attempts = [
      readings.add([{ group: 'g', topic: 't', value: 1, time: new Date() }]),
      readings.latestOfEveryTopic('g'),
      groups.findByName('g'),
      users.changeEmail(new ObjectId().toHexString(), 'a@b.example'),
      historyCharts.updateChart('u', 'a', { kind: 'set-field', field: 'type', value: 'line' }, new Date()),
    ];

    for (const { error, ms } of await Promise.all(attempts.map(rejectionOf))) {
      expect(error).to.be.an.instanceOf(StoreUnavailableError);
      expect(error).to.have.property('code', 'UNAVAILABLE');
      expect(ms).to.be.below(2000);
    }
  });

  it('when the store starts, then it rejects with StoreUnavailableError and a later start tries again', async () => {
    const first = await rejectionOf(store.start());
    const second = await rejectionOf(store.start());

    expect(first.error).to.be.an.instanceOf(StoreUnavailableError);
    expect(second.error).to.be.an.instanceOf(StoreUnavailableError);
    // A real second attempt waits for selection again rather than failing on a closed client at once.
    expect(second.ms).to.be.at.least(400);
  });

  it('when health is asked, then ping answers false', async () => {
    expect(await store.ping()).to.equal(false);
  });
});

describe('Mongo store when its server dies and comes back', () => {
  const available = existsSync(ferretDbBinary);
  let port: number;
  let dir: string;
  let server: ChildProcess | undefined;
  let store: MongoStore | undefined;

  before(async function (this: Context) {
    if (!available) this.skip();
    port = await freePort();
    dir = await mkdtemp(join(tmpdir(), 'hortus-recovery-'));
  });

  after(async () => {
    await store?.close();
    if (server !== undefined) await killProcess(server);
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it(`when the server is killed and restarted on its port, then requests fail fast meanwhile and succeed again by themselves${
    available ? '' : ' (skipped: needs the FerretDB test binary, built by scripts/ferretdb.sh)'
  }`, async function (this: Context) {
    this.timeout(30_000);
    server = await startFerretDb(port, dir);
    store = MongoStore.fromSettings({
      uri: `mongodb://127.0.0.1:${port}/`,
      dbName: 'recovery',
      serverSelectionTimeoutMS: 1000,
    });
    await store.start();
    const { groups } = store.repositories();
    await groups.create({ name: 'kept', package: 'small', employee: [], settings: [] });

    await killProcess(server);
    const down = await rejectionOf(groups.findByName('kept'));
    expect(down.error).to.be.an.instanceOf(StoreUnavailableError);
    // Fast: the selection timeout (1 s), not the driver's default 30 s.
    expect(down.ms).to.be.below(10_000);
    expect(await store.ping()).to.equal(false);

    server = await startFerretDb(port, dir);
    const deadline = Date.now() + 10_000;
    let found: Awaited<ReturnType<typeof groups.findByName>>;
    for (;;) {
      try {
        found = await groups.findByName('kept');
        break;
      } catch (error) {
        if (!(error instanceof StoreUnavailableError) || Date.now() > deadline) throw error;
      }
    }
    expect(found?.name).to.equal('kept');
    expect(await store.ping()).to.equal(true);
  });
});
