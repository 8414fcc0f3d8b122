import {
  type AccessKeyCopy,
  type Action,
  ConflictError,
  type DeviceCopy,
  type Group,
  type HistoryChart,
  type UserCopy,
} from '@hortus/core';
import { at, expect, freshStorePerTest, MINUTE, type StoreFactory } from './store.js';

/** Records as another store of this service issued them: 24-hex ids, which every store keeps. */
const group: Group = {
  id: '65a1b2c3d4e5f60718293a4b',
  name: 'greenhouse-a',
  package: 'small',
  employee: ['ana', 'ben'],
  settings: [{ tempMin: 12 }, { 'odd.key': '$x' }],
  retentionDays: 30,
};

const user: UserCopy = {
  id: '65a1b2c3d4e5f60718293a4c',
  firstName: 'Ana',
  lastName: 'Gardener',
  email: 'Ana@Example.com',
  group: 'greenhouse-a',
  role: 'viewer',
  createdAt: at(0),
  origin: 'signup',
  passwordHash: '$2b$12$abcdefghijklmnopqrstuu1234567890123456789012345678901',
  sessionVersion: 3,
  reset: { tokenDigest: 'f'.repeat(64), expiresAt: at(60 * MINUTE) },
};

const action: Action = {
  id: '65a1b2c3d4e5f60718293a4d',
  group: 'greenhouse-a',
  object: 'pump',
  value: 'on',
  automations: [
    {
      timeAutomations: [{ action: 'on', time: '06:00', frequency: 'every day' }],
      sensorAutomations: [{ action: 'off', sensor: 'temp', condition: 'above', value: '30' }],
    },
  ],
  lockouts: [
    { id: 1, topic: 'esp/air/temperature', condition: 'below', value: 2 },
    { id: 3, while: 'ventilator_1', is: 'on' },
  ],
};

const charts: HistoryChart = {
  id: '65a1b2c3d4e5f60718293a4e',
  userId: user.id,
  charts: [
    {
      chartId: 'c1',
      chartName: 'Air',
      chartData: { topic: 'temp' },
      createdAt: at(0),
      updatedAt: at(MINUTE),
    },
    { chartId: 'c2', chartName: 'Soil', chartData: {}, createdAt: at(2 * MINUTE), updatedAt: at(2 * MINUTE) },
  ],
};

const key: AccessKeyCopy = {
  id: '65a1b2c3d4e5f60718293a4f',
  name: 'dashboard',
  kind: 'client',
  groups: ['greenhouse-a'],
  secretHash: 'a'.repeat(64),
  createdAt: at(0),
  revokedAt: at(5 * MINUTE),
};

const device: DeviceCopy = {
  id: '65a1b2c3d4e5f60718293a50',
  deviceId: '24:6F:28:6A:00:01',
  group: 'greenhouse-a',
  type: 'esp32',
  locked: true,
  lastSeenAt: at(3 * MINUTE),
  firmwareVersion: '1.2.3',
  bootedAt: at(-MINUTE),
  onboardings: [{ at: at(2 * MINUTE), address: '192.0.2.7' }],
  keyGeneration: 2,
  previousKeyGeneration: 1,
  keyHash: 'b'.repeat(64),
  previousKeyHash: 'c'.repeat(64),
};

/** The writes `hortus store copy` makes: each record as it is, and the same record again changes nothing. */
export function storeCopyContract(
  name: string,
  createStore: StoreFactory<
    | 'groups'
    | 'users'
    | 'actions'
    | 'historyCharts'
    | 'accessKeys'
    | 'devices'
    | 'serverSecrets'
    | 'engineState'
    | 'notifications'
  >,
): void {
  describe(`${name}: restoring copied records (hortus store copy)`, () => {
    const store = freshStorePerTest(createStore);

    it('when a group is restored twice, then it is listed once, as it was, id, employees and retention included', async () => {
      await store().groups.restore(group);
      await store().groups.restore(group);

      expect(await store().groups.list()).to.deep.equal([group]);
    });

    it('when a group of that name exists under another id, then the restored one replaces it', async () => {
      await store().groups.create({ name: group.name, package: 'small', employee: [], settings: [] });

      await store().groups.restore(group);

      expect(await store().groups.findByName(group.name)).to.deep.equal(group);
    });

    it('when a user is restored twice, then list and findCredentials answer it as it was: id, hash, session version, reset, creation time and origin', async () => {
      await store().users.restore(user);
      await store().users.restore(user);

      const { passwordHash, sessionVersion, reset, ...record } = user;
      expect(await store().users.list()).to.deep.equal([record]);
      expect(await store().users.findCredentials(user.id)).to.deep.equal({
        passwordHash,
        sessionVersion,
        reset,
      });
      expect((await store().users.findByEmail('ana@example.com'))?.id).to.equal(user.id);
    });

    it('when another user has the e-mail, then restoring is a conflict and the other user stays', async () => {
      const other = await store().users.create({ ...user, email: 'ana@example.com' });

      await expect(store().users.restore(user)).to.be.rejectedWith(ConflictError);
      expect((await store().users.list()).map((listed) => listed.id)).to.deep.equal([other.id]);
    });

    it('when an action is restored twice, then the group has it once, as it was, and its revision changed', async () => {
      const before = await store().actions.revision(action.group);

      await store().actions.restore(action);
      await store().actions.restore(action);

      expect(await store().actions.listByGroup(action.group)).to.deep.equal([action]);
      expect(await store().actions.revision(action.group)).not.to.equal(before);
    });

    it('when a chart record is restored twice, then the user has it once, charts and times as they were', async () => {
      await store().historyCharts.restore(charts);
      await store().historyCharts.restore(charts);

      expect(await store().historyCharts.findByUser(user.id)).to.deep.equal(charts);
    });

    it('when an access key is restored twice, then it is listed once with its digest, and its secret finds it', async () => {
      await store().accessKeys.restore(key);
      await store().accessKeys.restore(key);

      expect(await store().accessKeys.listCopies()).to.deep.equal([key]);
      const { secretHash, ...listed } = key;
      expect(await store().accessKeys.findByHash(secretHash)).to.deep.equal(listed);
    });

    it('when a device is restored twice, then it is listed once as it was, and both of its keys find it', async () => {
      await store().devices.restore(device);
      await store().devices.restore(device);

      expect(await store().devices.listCopies()).to.deep.equal([device]);
      const { keyHash, previousKeyHash, ...listed } = device;
      expect(await store().devices.findByKeyHash(keyHash ?? '')).to.deep.equal({
        device: listed,
        current: true,
      });
      expect(await store().devices.findByKeyHash(previousKeyHash ?? '')).to.deep.equal({
        device: listed,
        current: false,
      });
    });

    it('when a device of that deviceId exists under another id, then the restored one replaces it', async () => {
      await store().devices.create({ deviceId: device.deviceId, group: 'other', type: 'esp8266' });

      await store().devices.restore(device);

      expect(await store().devices.listCopies()).to.deep.equal([device]);
    });

    it('when a server secret is restored, then it replaces the stored one, and list answers it', async () => {
      await store().serverSecrets.findOrCreate('token-key', 'made-here');

      await store().serverSecrets.restore('token-key', 'copied');

      expect(await store().serverSecrets.findOrCreate('token-key', 'another')).to.equal('copied');
      expect(await store().serverSecrets.list()).to.deep.equal([{ name: 'token-key', value: 'copied' }]);
    });

    it('when engine states are restored, then list answers each key once, ordered, with version, value and time as they were', async () => {
      await store().engineState.compareAndSet('["slot","b"]', 0, { fired: false }, at(0));
      await store().engineState.compareAndSet('["slot","b"]', 1, { fired: true }, at(MINUTE));
      const copied = { version: 7, value: { fired: true, count: 3, note: null }, updatedAt: at(2 * MINUTE) };

      await store().engineState.restore('["slot","a"]', copied);
      await store().engineState.restore('["slot","b"]', copied);
      await store().engineState.restore('["slot","b"]', copied);

      expect(await store().engineState.list()).to.deep.equal([
        { key: '["slot","a"]', state: copied },
        { key: '["slot","b"]', state: copied },
      ]);
      expect(
        await store().engineState.compareAndSet('["slot","b"]', 7, { fired: false }, at(3 * MINUTE)),
      ).to.equal(true);
    });

    it('when notifications are listed for a copy, then every one of the group comes, ignored ones too, oldest first, and adding them again adds nothing', async () => {
      const first = await store().notifications.create({
        group: 'g',
        time: at(0),
        message: 'too warm',
        topic: 't',
        value: 31,
      });
      await store().notifications.create({ group: 'g', time: at(MINUTE), message: 'too dry' });
      await store().notifications.create({ group: 'other', time: at(0), message: 'elsewhere' });
      await store().notifications.ignoreAt('g', [first.time]);

      const copies = await store().notifications.listCopies('g');

      expect(copies).to.deep.equal([
        { group: 'g', time: at(0), message: 'too warm', ignore: 'true', topic: 't', value: 31 },
        { group: 'g', time: at(MINUTE), message: 'too dry', ignore: 'false' },
      ]);
      expect(await store().notifications.addMissing(copies)).to.equal(0);
    });

    it('when records exist for several user ids, then userIds answers each once, in code-unit order', async () => {
      const chart = charts.charts[0];
      if (chart === undefined) throw new Error('the sample has a chart');
      await store().historyCharts.appendChart('b-user', chart);
      await store().historyCharts.appendChart('B-user', chart);
      await store().historyCharts.restore(charts);

      expect(await store().historyCharts.userIds()).to.deep.equal(['B-user', user.id, 'b-user'].sort());
    });
  });
}
