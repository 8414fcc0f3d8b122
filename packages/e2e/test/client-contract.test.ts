import { datasetFlags } from '@hortus/core';
import { expect, FakeCodeHost, type Reply, startTestServer, type TestServer } from './harness.js';

/**
 * The deployed web client, page by page: each test replays the requests that page sends (COMPAT and SPEC),
 * in the order it sends them, and checks the status and every field the page reads. The pages run in the
 * order a new user meets them, sharing one account. Like every HTTP suite, this runs on each store.
 */
describe('client contract: the web client from sign-up to profile', () => {
  let api: TestServer;
  let host: FakeCodeHost;
  const group = 'contract-greenhouse';
  const email = 'grower@example.org';
  const password = 'Tomato#Bed42';
  /** What the log-in page keeps in localStorage. */
  const session = { token: '', id: '', groupId: '' };
  const commits = Array.from({ length: 10 }, (_, index) => ({
    sha: `sha${index}`,
    commit: { message: `Change ${index}`, author: { date: `2025-06-0${(index % 9) + 1}T00:00:00Z` } },
  }));

  const body = (reply: Reply): unknown => reply.json();
  const ok = (reply: Reply, status = 200): Reply => {
    expect(reply.status, reply.text).to.equal(status);
    return reply;
  };
  const expectReading = (reading: unknown, topic?: string): void => {
    expect(reading).to.include.keys('_id', 'group', 'topic', 'value', 'time');
    const { value, time, group: of } = reading as { value: unknown; time: string; group: string };
    expect(value).to.be.a('number');
    expect(new Date(time).toISOString()).to.equal(time);
    expect(of).to.equal(group);
    if (topic !== undefined) expect((reading as { topic: string }).topic).to.equal(topic);
  };

  before(async () => {
    host = new FakeCodeHost();
    const apiUrl = await host.start();
    host.answerJson(200, commits);
    api = await startTestServer({ CODE_HOST_API_URL: apiUrl, CODE_HOST_REPOSITORY: 'hortus-org/hortus' });
    await api.seed.group(group, [{ tempMin: 15 }, { tempMax: 30 }]);
    await api.seed.action(group, 'pump_1');
    await api.seed.action(group, 'led_1', 'on');
    await api.seed.device('24:6F:28:AA:00:01', group);
    await api.seed.notification(group, '2025-06-15T10:00:00.000Z', 'Soil is dry');
    const hour = (h: number): string => new Date(Date.UTC(2025, 5, 15, h, 5)).toISOString();
    await api.seed.readings([
      { group, topic: 'esp/air/temperature', value: 21.5, time: hour(8) },
      { group, topic: 'esp/air/temperature', value: '22.25', time: hour(9) },
      { group, topic: 'esp/air/humidity', value: 55, time: hour(9) },
      { group, topic: 'esp/ground/light/lux', value: 1200, time: hour(9) },
      { group, topic: 'esp/ground/moisture/1', value: 40, time: hour(9) },
    ]);
  });
  after(async () => {
    await api.close();
    await host.stop();
  });

  it('sign-up page: checks the group, then creates the account', async () => {
    expect(body(ok(await api.get(`/api/group/checkGroup?group=${group}`)))).to.deep.equal({ exists: true });
    const created = ok(
      await api.call('POST', '/api/users', {
        json: { firstName: 'Gro', lastName: 'Wer', email, password, group },
      }),
      201,
    );
    expect(body(created)).to.deep.equal({ message: 'User created successfully' });
  });

  it('log-in page: logs in and keeps token, id and groupId', async () => {
    const reply = ok(await api.call('POST', '/api/auth', { json: { email, password } }));
    const { data, message } = body(reply) as {
      data: { token: string; userId: string; group: string };
      message: string;
    };
    expect(message).to.equal('Logged in successfully');
    expect(data.token)
      .to.be.a('string')
      .and.match(/^[\w-]+\.[\w-]+\.[\w-]+$/u);
    expect(data.userId).to.be.a('string').with.length.greaterThan(0);
    expect(data.group).to.equal(group);
    Object.assign(session, { token: data.token, id: data.userId, groupId: data.group });
    const wrong = await api.call('POST', '/api/auth', { json: { email, password: 'Wrong#Pass1' } });
    expect(wrong.status).to.equal(401);
    expect(body(wrong)).to.deep.equal({ message: 'Invalid Email or Password' });
  });

  it('dashboard page: polls the newest reading of every topic and each sensor, and today by hour', async () => {
    const all = body(ok(await api.get(`/api/data/latestdata/all?groupId=${session.groupId}`))) as unknown[];
    expect(all).to.have.lengthOf(4);
    for (const reading of all) expectReading(reading);
    for (const [path, topic] of [
      ['Temperature', 'esp/air/temperature'],
      ['Humidity', 'esp/air/humidity'],
      ['Moisture/1', 'esp/ground/moisture/1'],
      ['Lux', 'esp/ground/light/lux'],
    ] as const) {
      const latest = body(
        ok(await api.get(`/api/data/latestdata/${path}?groupId=${session.groupId}`)),
      ) as unknown[];
      expect(latest, path).to.have.lengthOf(1);
      expectReading(latest[0], topic);
    }
    const today = body(ok(await api.get(`/api/data/tem?groupId=${session.groupId}`))) as {
      _id: number;
      data: unknown;
    }[];
    expect(today.map((entry) => entry._id)).to.deep.equal([8, 9]);
    expectReading(today[1]?.data, 'esp/air/temperature');
    expect((today[1]?.data as { value: number }).value).to.equal(22.25);
  });

  it('actions page: reads the state, switches a device, reads and replaces its automations', async () => {
    const state = body(ok(await api.get(`/api/actions/current_state?group=${session.groupId}`))) as {
      message: Record<string, unknown>[];
    };
    expect(state.message.map((action) => action['object']).sort()).to.deep.equal(['led_1', 'pump_1']);
    for (const action of state.message)
      expect(action).to.include.keys('_id', 'group', 'object', 'value', 'automations');

    const switched = body(ok(await api.get(`/api/actions/?group=${session.groupId}&object=pump_1&value=on`)));
    expect(switched).to.have.property('message').that.is.a('string');
    const automations = [
      {
        timeAutomations: [{ action: 'on', time: '06:00', frequency: 'every day' }],
        sensorAutomations: [{ action: 'off', sensor: 'temperature', condition: 'above', value: '30' }],
      },
    ];
    ok(
      await api.call('POST', '/api/actions/update', {
        json: { object: 'pump_1', group: session.groupId, automations },
      }),
    );
    const read = body(
      ok(await api.get(`/api/actions/get_automations?groupId=${session.groupId}&deviceName=pump_1`)),
    ) as {
      value: string;
      automations: {
        timeAutomations: Record<string, unknown>[];
        sensorAutomations: Record<string, unknown>[];
      }[];
    };
    expect(read.value).to.equal('on');
    expect(read.automations[0]?.timeAutomations[0]).to.include({
      action: 'on',
      time: '06:00',
      frequency: 'every day',
    });
    expect(read.automations[0]?.sensorAutomations[0]).to.include({
      sensor: 'temperature',
      condition: 'above',
      value: '30',
    });
  });

  it('devices page: lists the boxes of the group', async () => {
    const devices = body(ok(await api.get(`/api/devices/?group=${session.groupId}`))) as {
      message: unknown[];
    };
    expect(devices.message).to.have.lengthOf(1);
    expect(devices.message[0])
      .to.include({ deviceId: '24:6F:28:AA:00:01', group })
      .and.to.have.property('_id');
  });

  it('notifications page: lists open notifications, ignores one, reads the commit feed', async () => {
    const path = `/api/notification/latestdata/notifications?groupId=${session.groupId}`;
    const open = body(ok(await api.get(path))) as Record<string, unknown>[];
    expect(open).to.have.lengthOf(1);
    expect(open[0]).to.include({
      group,
      message: 'Soil is dry',
      ignore: 'false',
      time: '2025-06-15T10:00:00.000Z',
    });
    ok(
      await api.call('POST', `/api/notification/notifications/ignore?groupId=${session.groupId}`, {
        json: { time: '2025-06-15T10:00:00.000Z' },
      }),
    );
    expect(body(ok(await api.get(path)))).to.deep.equal([]);
    const feed = body(ok(await api.get('/api/notification/latestdata/github'))) as {
      commit: { author: { date: string }; message: string };
    }[];
    expect(feed).to.have.lengthOf(10);
    for (const entry of feed) {
      expect(entry.commit.author.date).to.be.a('string');
      expect(entry.commit.message).to.be.a('string');
    }
  });

  it('history page: adds a chart with its name only, reads its settings, asks the checked series with count=max_count, changes and deletes it', async () => {
    const base = '/api/historyChart';
    ok(await api.call('POST', `${base}/update/${session.id}`, { json: { chartName: 'Climate' } }));
    const record = body(ok(await api.get(`${base}/all/${session.id}`))) as {
      charts: { chartName: string }[];
    };
    expect(record.charts.map((chart) => chart.chartName)).to.deep.equal(['Climate']);

    const settings = async (): Promise<Record<string, unknown>> =>
      body(ok(await api.get(`${base}/settings/${session.id}/Climate`))) as Record<string, unknown>;
    const initial = await settings();
    expect(initial).to.include({ type: 'line', update_interval: 15000, data_interval: 1, max_count: 100 });
    const [dataset] = initial['datasets'] as Record<string, unknown>[];
    for (const flag of datasetFlags) expect(dataset?.[flag], flag).to.equal(false);

    ok(
      await api.call('PUT', `${base}/change_datasets/${session.id}/Climate/temperature`, {
        json: { checked: true },
      }),
    );
    const checked = await settings();
    expect((checked['datasets'] as Record<string, unknown>[])[0]?.['checked_temperature']).to.equal(true);
    // The page asks each checked series with the chart's max_count; it used to ask count=undefined.
    const series = body(
      ok(
        await api.get(
          `/api/data/all/temperature?groupId=${session.groupId}&count=${String(checked['max_count'])}`,
        ),
      ),
    ) as unknown[];
    expect(series).to.have.lengthOf(2);
    for (const reading of series) expectReading(reading, 'esp/air/temperature');

    ok(await api.call('PUT', `${base}/change_max_count/${session.id}/Climate`, { json: { max_count: 500 } }));
    ok(
      await api.call('PUT', `${base}/change_update_interval/${session.id}/Climate`, {
        json: { update_interval: 5000 },
      }),
    );
    expect(await settings()).to.include({ max_count: 500, update_interval: 5000 });
    const deleted = body(ok(await api.call('DELETE', `${base}/delete/${session.id}/Climate`))) as {
      charts: unknown[];
    };
    expect(deleted.charts).to.deep.equal([]);
  });

  it('profile page: reads the profile with the token; an e-mail change needs that token too (a deviation)', async () => {
    const auth = { authorization: `Bearer ${session.token}` };
    const profile = body(ok(await api.call('GET', `/api/apiuserdata/${session.id}`, { headers: auth })));
    expect(profile).to.include({ firstName: 'Gro', lastName: 'Wer', email, group });
    expect(JSON.stringify(profile)).to.not.match(/password|\$2[aby]\$/u);

    // As the unmodified client sends it, without the token: refused, since it would allow an account takeover.
    const unchanged = await api.call('POST', `/api/changeEmail/${session.id}`, {
      json: { newEmail: 'new@example.org' },
    });
    expect(unchanged.status).to.equal(401);
    const changed = ok(
      await api.call('POST', `/api/changeEmail/${session.id}`, {
        json: { newEmail: 'new@example.org' },
        headers: auth,
      }),
    );
    expect(body(changed)).to.have.property('message').that.is.a('string');
    const after = body(ok(await api.call('GET', `/api/apiuserdata/${session.id}`, { headers: auth })));
    expect(after).to.include({ email: 'new@example.org' });
  });
});
