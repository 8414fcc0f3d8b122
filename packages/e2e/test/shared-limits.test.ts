import { MongoStore } from '@hortus/adapter-mongo';
import { STORE_LIFECYCLE, type StoreLifecycle } from '@hortus/core';
import { expect, type Reply, startTestServer, testStore, type TestServer } from './harness.js';

const PASSWORD = 'Tomato#Bed42';
const onMongo = testStore === 'mongodb';

function logIn(api: TestServer, email: string, password: string): Promise<Reply> {
  return api.call('POST', '/api/auth', { json: { email, password } });
}

function signUp(api: TestServer, group: string, email: string): Promise<Reply> {
  return api.call('POST', '/api/users', {
    json: { firstName: 'Ada', lastName: 'Grower', email, password: PASSWORD, group },
  });
}

describe(
  onMongo
    ? 'two servers on one MongoDB share the log-in and sign-up limits'
    : 'two servers on one MongoDB share the log-in and sign-up limits (skipped: HORTUS_TEST_STORE is not mongodb)',
  () => {
    let first: TestServer | undefined;
    let second: TestServer | undefined;
    const servers = (): [TestServer, TestServer] => {
      if (first === undefined || second === undefined)
        throw new Error('The servers run only inside the suite');
      return [first, second];
    };

    beforeEach(async function () {
      if (!onMongo) this.skip();
      this.timeout(60_000);
      first = await startTestServer({ AUTH: 'off', SIGNUPS_PER_ADDRESS: '2' });
      // The same database as the first: as two servers of one installation behind a load balancer.
      const store = first.container.get<StoreLifecycle>(STORE_LIFECYCLE);
      if (!(store instanceof MongoStore)) throw new Error('The first server is not on MongoDB');
      second = await startTestServer({
        AUTH: 'off',
        SIGNUPS_PER_ADDRESS: '2',
        MONGODB_DB: store.db.databaseName,
      });
    });

    afterEach(async function () {
      this.timeout(60_000);
      await second?.close();
      await first?.close();
      first = undefined;
      second = undefined;
    });

    it('when failed log-ins for one e-mail are split across both servers, then together they reach the limit: the 11th is 429 on either', async function () {
      this.timeout(120_000);
      const [one, two] = servers();
      const group = one.unique('greenhouse');
      await one.seed.group(group);
      const email = `${one.unique('ana')}@example.org`;
      expect((await signUp(one, group, email)).status).to.equal(201);

      for (let attempt = 0; attempt < 10; attempt += 1) {
        const reply = await logIn(attempt % 2 === 0 ? one : two, email, `Wrong#${attempt}a`);
        expect(reply.status, reply.text).to.equal(401);
      }

      const onFirst = await logIn(one, email, PASSWORD);
      const onSecond = await logIn(two, email, PASSWORD);
      expect(onFirst.status).to.equal(429);
      expect(onSecond.status).to.equal(429);
      expect(Number(onSecond.headers.get('retry-after'))).to.be.within(1, 15 * 60);
    });

    it('when one address signs up on both servers, then SIGNUPS_PER_ADDRESS holds for the two together', async () => {
      const [one, two] = servers();
      const group = one.unique('greenhouse');
      await one.seed.group(group);

      expect((await signUp(one, group, `${one.unique('ana')}@example.org`)).status).to.equal(201);
      expect((await signUp(two, group, `${two.unique('ben')}@example.org`)).status).to.equal(201);
      const refused = await signUp(one, group, `${one.unique('cy')}@example.org`);

      expect(refused.status, refused.text).to.equal(429);
      expect((await signUp(two, group, `${two.unique('dora')}@example.org`)).status).to.equal(429);
    });
  },
);
