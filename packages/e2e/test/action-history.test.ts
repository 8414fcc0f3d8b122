import { CLI_ACTOR, CreateAccessKey, SetActionValue } from '@hortus/core';
import { signUpAndLogIn } from './accounts-support.js';
import { expect, startTestServer, type TestServer } from './harness.js';

type Entry = Record<string, unknown> & {
  object: string;
  value: string;
  actor: { kind: string; id?: string };
};

const entriesOf = (reply: { json(): unknown }): Entry[] => (reply.json() as { message: Entry[] }).message;

describe('HTTP GET /api/actions/history', () => {
  describe('when access control is off', () => {
    let api: TestServer;
    before(async () => {
      api = await startTestServer();
    });
    after(async () => {
      await api.close();
    });

    it('when actions are switched over HTTP and from the console, then {message: [entry]} newest first names who did it', async () => {
      const group = api.unique('greenhouse');
      await api.seed.group(group);
      await api.seed.action(group, 'pump_1');
      await api.seed.action(group, 'led_1');

      expect((await api.get(`/api/actions/?group=${group}&object=pump_1&value=on`)).status).to.equal(200);
      api.clock.advance(60_000);
      await api.container
        .get(SetActionValue)
        .execute({ group, object: 'led_1', value: 'on', actor: CLI_ACTOR });

      const reply = await api.get(`/api/actions/history?group=${group}`);

      expect(reply.status).to.equal(200);
      const entries = entriesOf(reply);
      expect(entries.map((entry) => [entry.object, entry.value, entry.actor])).to.deep.equal([
        ['led_1', 'on', { kind: 'cli' }],
        ['pump_1', 'on', { kind: 'anonymous' }],
      ]);
      expect(entries[0]).to.include({ group });
      expect(entries[0]).to.have.property('_id').that.is.a('string');
      expect(entries[0]).to.have.property('at').that.is.a('string');
      expect(entries[0]).not.to.have.property('id');

      const one = await api.get(`/api/actions/history?group=${group}&object=pump_1`);
      expect(entriesOf(one).map((entry) => entry.object)).to.deep.equal(['pump_1']);
      const newest = await api.get(`/api/actions/history?group=${group}&limit=1`);
      expect(entriesOf(newest).map((entry) => entry.object)).to.deep.equal(['led_1']);
    });

    it('when the group has no history, then {message: []}', async () => {
      const reply = await api.get(`/api/actions/history?group=${api.unique('quiet')}`);
      expect(reply.status).to.equal(200);
      expect(reply.json()).to.deep.equal({ message: [] });
    });

    it('when group is missing, limit out of range or the action unknown, then 400 or 404 {message}', async () => {
      const cases: [string, number, string][] = [
        ['', 400, 'group is required'],
        ['?group=g&limit=many', 400, 'limit must be a whole number'],
        ['?group=g&limit=0', 400, 'limit must be a whole number from 1 to 1000'],
        ['?group=g&limit=1001', 400, 'limit must be a whole number from 1 to 1000'],
        ['?group=g&object=fan_9', 404, 'Group g has no action fan_9'],
      ];
      for (const [query, status, message] of cases) {
        const reply = await api.get(`/api/actions/history${query}`);
        expect(reply.status, query).to.equal(status);
        expect(reply.json(), query).to.deep.equal({ message });
      }
    });
  });

  describe('when access control is on', () => {
    let api: TestServer;
    let group: string;
    let other: string;
    let admin: { authorization: string };
    before(async () => {
      api = await startTestServer({ AUTH: 'on', AUTH_CACHE_MS: '0' });
      group = api.unique('greenhouse');
      other = api.unique('greenhouse');
      for (const name of [group, other]) {
        await api.seed.group(name);
        await api.seed.action(name, 'pump_1');
      }
      const { secret } = await api.container.get(CreateAccessKey).execute({ name: 'admin', kind: 'admin' });
      admin = { authorization: `Bearer ${secret}` };
    });
    after(async () => {
      await api.close();
    });

    it("when a member and a group's key switch, then the history names the user and the key, and only the group's members and keys may read it", async () => {
      const ana = await signUpAndLogIn(api, group, `${api.unique('ana')}@example.org`, admin);
      const created = await api.container
        .get(CreateAccessKey)
        .execute({ name: 'dashboard', kind: 'client', groups: [group] });
      const key = { authorization: `Bearer ${created.secret}` };
      const switchAs = (headers: Record<string, string>, value: string) =>
        api.call('GET', `/api/actions/?group=${group}&object=pump_1&value=${value}`, { headers });

      expect((await switchAs(ana.auth, 'on')).status).to.equal(200);
      api.clock.advance(60_000);
      expect((await switchAs(key, 'off')).status).to.equal(200);

      const path = `/api/actions/history?group=${group}`;
      const asMember = await api.call('GET', path, { headers: ana.auth });
      expect(asMember.status, asMember.text).to.equal(200);
      expect(entriesOf(asMember).map((entry) => [entry.value, entry.actor])).to.deep.equal([
        ['off', { kind: 'key', id: created.key.id }],
        ['on', { kind: 'user', id: ana.userId }],
      ]);
      expect((await api.call('GET', path, { headers: key })).status).to.equal(200);
      expect((await api.call('GET', path)).status).to.equal(401);

      const stranger = await signUpAndLogIn(api, other, `${api.unique('eve')}@example.org`, admin);
      const otherKey = await api.container
        .get(CreateAccessKey)
        .execute({ name: 'other', kind: 'client', groups: [other] });
      for (const headers of [stranger.auth, { authorization: `Bearer ${otherKey.secret}` }]) {
        const refused = await api.call('GET', path, { headers });
        expect(refused.status).to.equal(403);
        expect(refused.text).not.to.contain('pump_1');
      }
    });
  });
});
