import { randomUUID } from 'node:crypto';
import { CreateUser, GetAction, type UserRole } from '@hortus/core';
import { MqttBridge } from '@hortus/mqtt';
import { isListening } from '@hortus/test-support';
import { connectAsync, type MqttClient } from 'mqtt';
import { eventually, expect, startTestServer, type TestServer } from './harness.js';
import { laneAnswers, type LaneTwin, see, startLaneTwin } from './lane-twin.js';

const PASSWORD = 'Tomato#Bed42';

interface LoggedIn {
  readonly userId: string;
  readonly headers: Record<string, string>;
}

/** A user of the role in the group, logged in through the route as the web client does. */
async function logIn(api: TestServer, group: string, role: UserRole | undefined): Promise<LoggedIn> {
  const email = `${api.unique(role ?? 'default')}@example.org`;
  await api.container.get(CreateUser).execute({
    firstName: 'Ada',
    lastName: 'Grower',
    email,
    group,
    password: PASSWORD,
    ...(role === undefined ? {} : { role }),
  });
  const answer = await api.call('POST', '/api/auth', { json: { email, password: PASSWORD } });
  expect(answer.status, answer.text).to.equal(200);
  const { token, userId } = (answer.json() as { data: { token: string; userId: string } }).data;
  return { userId, headers: { authorization: `Bearer ${token}` } };
}

const valueOf = async (api: TestServer, group: string): Promise<string> =>
  (await api.container.get(GetAction).execute({ group, object: 'pump_1' })).value;

describe('Roles: a viewer reads and keeps its own account, and is refused switches on every door', () => {
  let api: TestServer;
  let twin: LaneTwin;
  let group: string;
  let viewer: LoggedIn;
  let operator: LoggedIn;

  before(async () => {
    api = await startTestServer({ AUTH: 'on' });
    twin = await startLaneTwin(api);
    group = api.unique('roles');
    await api.seed.group(group);
    await api.seed.action(group, 'pump_1');
    viewer = await logIn(api, group, 'viewer');
    // Created without a role: an operator, as every account before roles.
    operator = await logIn(api, group, undefined);
  });
  after(async () => {
    await twin?.close();
    await api?.close();
  });

  it("when a viewer switches or edits the group's rules, then the chain and the lane's twin answer the same 403 and nothing changes", async () => {
    for (const [method, path, body] of [
      ['GET', `/api/actions?group=${group}&object=pump_1&value=on`, undefined],
      ['POST', '/api/actions/update', JSON.stringify({ group, object: 'pump_1', automations: [] })],
    ] as const) {
      const sending = {
        method,
        headers: { ...viewer.headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body }),
      };
      const [served, koa] = await Promise.all([see(api.url, path, sending), see(twin.url, path, sending)]);
      expect(served.status, served.body).to.equal(403);
      expect(JSON.parse(served.body)).to.deep.equal({ message: 'A viewer may only read' });
      expect(served).to.deep.equal(koa);
    }
    expect(await valueOf(api, group)).to.equal('off');
  });

  it("when a viewer polls its group's state, then the poll lane answers it as Koa does", async () => {
    const path = `/api/actions/current_state?group=${group}`;
    // The first request makes the session known to the access check; the lane answers only what it knows.
    expect((await see(api.url, path, { headers: viewer.headers })).status).to.equal(200);
    const before = laneAnswers(twin.laneMetrics, 'poll');
    const [served, koa] = await Promise.all([
      see(api.url, path, { headers: viewer.headers }),
      see(twin.url, path, { headers: viewer.headers }),
    ]);

    expect(served.status).to.equal(200);
    expect(served).to.deep.equal(koa);
    expect(laneAnswers(twin.laneMetrics, 'poll') - before).to.equal(1);
  });

  it('when a viewer uses its charts, e-mail and profile, then they answer as for anyone; another user’s charts are refused in their area’s shape', async () => {
    const call = (method: string, path: string, json?: unknown): ReturnType<TestServer['call']> =>
      api.call(method, path, { headers: viewer.headers, ...(json === undefined ? {} : { json }) });
    const added = await call('POST', `/api/historyChart/update/${viewer.userId}`, { chartName: 'Beds' });
    expect(added.status, added.text).to.equal(200);
    expect((await call('GET', `/api/historyChart/all/${viewer.userId}`)).status).to.equal(200);
    expect((await call('GET', `/api/apiuserdata/${viewer.userId}`)).status).to.equal(200);
    const moved = await call('POST', `/api/changeEmail/${viewer.userId}`, {
      newEmail: `${api.unique('moved')}@example.org`,
    });
    expect(moved.status, moved.text).to.equal(200);
    const me = await call('GET', '/api/me');
    expect(me.json()).to.deep.include({ kind: 'user', userId: viewer.userId, group, role: 'viewer' });
    expect((me.json() as { groups: string[] }).groups).to.deep.equal([group]);

    const foreign = await call('GET', `/api/historyChart/all/${operator.userId}`);
    expect(foreign.status).to.equal(403);
    expect(foreign.json()).to.deep.equal({ error: "A log-in token reaches only its own user's data" });
  });

  it('when an operator (an account made without a role) switches, then it switches', async () => {
    const answer = await api.call('GET', `/api/actions?group=${group}&object=pump_1&value=on`, {
      headers: operator.headers,
    });
    expect(answer.status, answer.text).to.equal(200);
    expect(await valueOf(api, group)).to.equal('on');
  });
});

const BROKER_URL = 'mqtt://127.0.0.1:1883';
const brokerUp = await isListening(1883);
const ci = process.env['CI'] === 'true';
const brokerSuite = brokerUp || ci ? describe : describe.skip;

brokerSuite(`Roles on MQTT commands, against Mosquitto${brokerUp ? '' : ' (no broker)'}`, () => {
  let api: TestServer;
  let client: MqttClient | undefined;
  const prefix = `hortus-roles-${randomUUID().slice(0, 8)}`;
  let group: string;

  before(async () => {
    if (!brokerUp) throw new Error(`Mosquitto must run on ${BROKER_URL} for these tests under CI=true`);
    api = await startTestServer({
      AUTH: 'on',
      MQTT_URL: BROKER_URL,
      // A topic no box publishes to, and a prefix of its own: nothing else reaches this server.
      MQTT_TOPIC: `${prefix}-readings/#`,
      MQTT_PUBLISH_PREFIX: prefix,
      MQTT_COMMANDS: 'on',
    });
    await eventually(() => expect(api.logger.lines.map((line) => line.event)).to.include('mqtt.started'));
    group = api.unique('mqtt-roles');
    await api.seed.group(group);
    await api.seed.action(group, 'pump_1');
    client = await connectAsync(BROKER_URL, { reconnectPeriod: 0, protocolVersion: 5 });
  });
  after(async () => {
    if (client?.connected === true) {
      await client.publishAsync(`${prefix}/${group}/actions/pump_1`, '', { qos: 1, retain: true });
    }
    await client?.endAsync();
    await api?.close();
  });

  it("when a viewer's log-in rides with a command, then it is refused and counted; an operator's is applied", async () => {
    const viewer = await logIn(api, group, 'viewer');
    const operator = await logIn(api, group, undefined);
    const bridge = api.container.get(MqttBridge);
    const send = (as: LoggedIn, value: string): Promise<unknown> =>
      (client as MqttClient).publishAsync(`${prefix}/${group}/actions/pump_1/set`, value, {
        qos: 1,
        properties: { userProperties: { authorization: as.headers['authorization'] ?? '' } },
      });

    await send(viewer, 'on');
    await eventually(() => expect(bridge.stats().commands).to.include({ refused: 1, applied: 0 }));
    expect(await valueOf(api, group)).to.equal('off');

    await send(operator, 'on');
    await eventually(() => expect(bridge.stats().commands).to.include({ refused: 1, applied: 1 }));
    expect(await valueOf(api, group)).to.equal('on');
    const refused = api.logger.lines.find((line) => line.event === 'mqtt.command_ignored');
    expect(refused).to.include({ group, object: 'pump_1', reason: 'A viewer may only read' });
  });
});
