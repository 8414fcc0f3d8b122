import { InMemoryReadingRepository } from '@hortus/adapter-memory';
import {
  CreateGroup,
  NOTIFICATION_REPOSITORY,
  type NotificationRepository,
  type Reading,
  READING_REPOSITORY,
  SetActionValue,
} from '@hortus/core';
import { expect, type Reply, startTestServer, type TestServer } from './harness.js';

/** Counts how often the newest readings are built, to show a 304 is answered without building them. */
class CountingReadingRepository extends InMemoryReadingRepository {
  latestBuilt = 0;
  /** How long building the newest readings takes: a slow store. */
  latestDelayMs = 0;

  override async latestOfEveryTopic(group: string): Promise<Reading[]> {
    this.latestBuilt += 1;
    if (this.latestDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.latestDelayMs));
    return super.latestOfEveryTopic(group);
  }
}

describe('HTTP conditional GET on the polling routes', () => {
  let api: TestServer;
  let readings: CountingReadingRepository;
  before(async () => {
    readings = new CountingReadingRepository();
    api = await startTestServer({}, (container) => {
      container.rebind(READING_REPOSITORY).toConstantValue(readings);
    });
  });
  after(async () => {
    await api.close();
  });

  const poll = (path: string, etag?: string): Promise<Reply> =>
    api.call('GET', path, etag === undefined ? {} : { headers: { 'If-None-Match': etag } });

  const post = (group: string, value: number, time: string): Promise<Reply> =>
    api.call('POST', '/api/data/readings', { json: { group, topic: 'esp/air/temperature', value, time } });

  /** The first answer's tag, checked to be a quoted weak tag that browsers revalidate on every poll. */
  async function tagOf(path: string): Promise<string> {
    const first = await poll(path);
    expect(first.status, path).to.equal(200);
    const etag = first.headers.get('etag') ?? '';
    expect(etag, path).to.match(/^W\/"[\x21\x23-\x7e]+"$/u);
    expect(first.headers.get('cache-control'), path).to.equal('no-cache');
    return etag;
  }

  it('when many clients poll a changed group at once on a slow store, then its answer is built once for all of them', async () => {
    const group = api.unique('herd');
    expect((await post(group, 20, '2025-06-15T12:00:00.000Z')).status).to.equal(202);
    const built = readings.latestBuilt;
    readings.latestDelayMs = 100;
    try {
      const answers = await Promise.all(
        Array.from({ length: 20 }, () => poll(`/api/data/latestdata/All?groupId=${group}`)),
      );
      expect(answers.map(({ status }) => status)).to.deep.equal(answers.map(() => 200));
      expect(new Set(answers.map(({ text }) => text)).size).to.equal(1);
      expect(readings.latestBuilt - built).to.equal(1);
    } finally {
      readings.latestDelayMs = 0;
    }
  });

  it('when /latestdata/All is polled again with its ETag, then 304 without a body and without building the answer', async () => {
    const group = api.unique('greenhouse');
    await post(group, 21, '2025-06-15T12:00:00Z');
    const path = `/api/data/latestdata/All?groupId=${group}`;
    const etag = await tagOf(path);
    const built = readings.latestBuilt;

    const again = await poll(path, etag);

    expect(again.status).to.equal(304);
    expect(again.text).to.equal('');
    expect(again.headers.get('etag')).to.equal(etag);
    expect(readings.latestBuilt).to.equal(built);
  });

  it('when a reading of the group is stored, then the next poll gets 200 with it and a new ETag; readings of other groups change nothing', async () => {
    const group = api.unique('greenhouse');
    await post(group, 21, '2025-06-15T12:00:00Z');
    const path = `/api/data/latestdata/All?groupId=${group}`;
    const etag = await tagOf(path);

    await post(api.unique('other'), 5, '2025-06-15T12:05:00Z');
    expect((await poll(path, etag)).status).to.equal(304);

    await post(group, 23, '2025-06-15T12:05:00Z');
    const changed = await poll(path, etag);
    expect(changed.status).to.equal(200);
    expect((changed.json() as { value: number }[]).map((r) => r.value)).to.deep.equal([23]);
    expect(changed.headers.get('etag')).to.not.equal(etag);
    expect((await poll(path, changed.headers.get('etag') ?? '')).status).to.equal(304);
  });

  it('when an action is switched over HTTP or by another writer through the core, then current_state answers 200 again', async () => {
    const group = api.unique('greenhouse');
    await api.seed.action(group, 'pump_1');
    const path = `/api/actions/current_state?group=${group}`;
    const etag = await tagOf(path);
    expect((await poll(path, etag)).status).to.equal(304);

    await api.get(`/api/actions/?group=${group}&object=pump_1&value=on`);
    const afterHttp = await poll(path, etag);
    expect(afterHttp.status).to.equal(200);
    const secondTag = afterHttp.headers.get('etag') ?? '';

    // The CLI, the MQTT bridge and the automation engine write through the same core use cases.
    await api.container
      .get(SetActionValue)
      .execute({ group, object: 'pump_1', value: 'off', actor: { kind: 'cli' } });
    const afterCore = await poll(path, secondTag);
    expect(afterCore.status).to.equal(200);
    expect((afterCore.json() as { message: { value: string }[] }).message[0]?.value).to.equal('off');
  });

  it('when automations are replaced, then current_state answers 200 again', async () => {
    const group = api.unique('greenhouse');
    await api.seed.action(group, 'led_1');
    const path = `/api/actions/current_state?group=${group}`;
    const etag = await tagOf(path);

    await api.call('POST', '/api/actions/update', {
      json: { group, object: 'led_1', automations: [{ timeAutomations: [], sensorAutomations: [] }] },
    });

    expect((await poll(path, etag)).status).to.equal(200);
  });

  it('when the group settings are replaced, then /abo answers 200 again; the other routes keep their tags', async () => {
    const group = api.unique('greenhouse');
    await api.container.get(CreateGroup).execute({ name: group });
    const abo = `/api/group/abo?group=${group}`;
    const state = `/api/actions/current_state?group=${group}`;
    const [aboTag, stateTag] = [await tagOf(abo), await tagOf(state)];
    expect((await poll(abo, aboTag)).status).to.equal(304);

    await api.call('PUT', `/api/group/update?groupId=${group}`, { json: { settings: [{ tempMin: 10 }] } });

    const changed = await poll(abo, aboTag);
    expect(changed.status).to.equal(200);
    expect((changed.json() as { settings: unknown }).settings).to.deep.equal([{ tempMin: 10 }]);
    expect((await poll(state, stateTag)).status).to.equal(304);
  });

  it('when a notification of the group is created or ignored, then /latestdata/notifications answers 200 again; otherwise 304', async () => {
    const group = api.unique('greenhouse');
    await api.seed.group(group);
    const notifications = api.container.get(NOTIFICATION_REPOSITORY) as NotificationRepository;
    const path = `/api/notification/latestdata/notifications?groupId=${group}`;
    const empty = await tagOf(path);
    expect((await poll(path, empty)).status).to.equal(304);

    await notifications.create({ group, time: new Date('2025-06-15T12:00:00Z'), message: 'too dry' });
    const created = await poll(path, empty);
    expect(created.status).to.equal(200);
    expect((created.json() as { message: string }[]).map((n) => n.message)).to.deep.equal(['too dry']);
    const etag = created.headers.get('etag') ?? '';
    await notifications.create({ group: api.unique('other'), time: new Date(), message: 'elsewhere' });
    expect((await poll(path, etag)).status).to.equal(304);

    const ignored = await api.call('POST', `/api/notification/notifications/ignore?groupId=${group}`, {
      json: { time: '2025-06-15T12:00:00Z' },
    });
    expect(ignored.status).to.equal(200);
    const after = await poll(path, etag);
    expect(after.status).to.equal(200);
    expect(after.json()).to.deep.equal([]);
  });

  it('when If-None-Match lists the tag among others, without W/, or is *, then 304; another tag gets 200', async () => {
    const group = api.unique('greenhouse');
    await post(group, 21, '2025-06-15T12:00:00Z');
    const path = `/api/data/latestdata/All?groupId=${group}`;
    const etag = await tagOf(path);

    expect((await poll(path, `"elsewhere", ${etag}`)).status).to.equal(304);
    expect((await poll(path, etag.slice(2))).status).to.equal(304);
    expect((await poll(path, '*')).status).to.equal(304);
    expect((await poll(path, 'W/"elsewhere"')).status).to.equal(200);
  });

  it('when two groups have seen the same number of writes, then their tags still differ, as do the routes of one group', async () => {
    const [first, second] = [api.unique('twin'), api.unique('twin')];
    await post(first, 21, '2025-06-15T12:00:00Z');
    await post(second, 21, '2025-06-15T12:00:00Z');

    const firstTag = await tagOf(`/api/data/latestdata/All?groupId=${first}`);
    expect(await tagOf(`/api/data/latestdata/All?groupId=${second}`)).to.not.equal(firstTag);
    expect(await tagOf(`/api/data/latestdata/Temperature?groupId=${first}`)).to.not.equal(firstTag);
  });

  it('when the group parameter is missing or invalid, then 400 even with If-None-Match', async () => {
    const reply = await poll('/api/actions/current_state', '*');

    expect(reply.status).to.equal(400);
    expect(reply.json()).to.have.property('message');
  });

  it('when history is asked as readings, then it carries a tag; as buckets, whose window moves with time, it does not', async () => {
    const group = api.unique('greenhouse');
    await post(group, 21, '2025-06-15T12:00:00Z');

    await tagOf(`/api/data/All/temperature?groupId=${group}`);
    const buckets = await poll(`/api/data/All/temperature?groupId=${group}&interval=1h`);
    expect(buckets.status).to.equal(200);
    expect(buckets.headers.get('etag')).to.equal(null);
  });
});
