// What bench/explain.mjs runs on the MongoDB store: the application's hot paths, each a named step, through
// the real server (HTTP polls, box requests) and the use cases the routes, the engine and the workers call.
// The commands the driver sends during a step are recorded under its name; nothing here lists a query.
import { Buffer } from 'node:buffer';
import { request } from 'node:http';
import { URL } from 'node:url';

const GROUPS = ['demo', 'demo-2', 'demo-3'];
const ORIGIN = 'http://localhost:3000';

/** One HTTP request to the server; answers status, ETag and body. */
function send(url, method, path, headers = {}, body) {
  return new Promise((resolve, reject) => {
    const sent = request(
      new URL(path, url),
      {
        method,
        headers: {
          origin: ORIGIN,
          ...headers,
          ...(body === undefined ? {} : { 'content-length': Buffer.byteLength(body) }),
        },
      },
      (response) => {
        const chunks = [];
        response.on('data', (chunk) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode,
            tag: response.headers.etag,
            body: Buffer.concat(chunks).toString(),
          }),
        );
      },
    );
    sent.on('error', reject);
    sent.end(body);
  });
}

async function expectStatus(answer, statuses, what) {
  const reply = await answer;
  if (!statuses.includes(reply.status)) throw new Error(`${what} answered ${reply.status}: ${reply.body}`);
  return reply;
}

/**
 * The steps, in order: [name, run]. `app` holds the container's use cases (`use(Class)`), the classes of
 * @hortus/core (`core`) and the server's `url`.
 */
export function scenario({ use, core, url, now }) {
  const minutesAgo = (minutes) => new Date(now - minutes * 60_000);
  const boxes = [];
  let token;
  let keySecret;
  const poll = async (path) => {
    const first = await expectStatus(send(url, 'GET', path), [200], path);
    await expectStatus(send(url, 'GET', path, { 'if-none-match': first.tag ?? '*' }), [200, 304], path);
  };
  return [
    [
      // Three demo groups: group, actions with automations, devices, a day of readings, notification, chart.
      'seed demo groups',
      async () => {
        for (const group of GROUPS) await use(core.SeedDemo).execute({ group });
      },
    ],
    [
      'sign-up, log-in',
      async () => {
        const caller = { kind: 'operator' };
        await use(core.SignUp).execute(
          {
            firstName: 'Ada',
            lastName: 'Grower',
            email: 'ada@example.org',
            password: 'a long passphrase 42',
            group: 'demo',
          },
          { caller, accessRequired: false, clientAddress: '127.0.0.1' },
        );
        const loggedIn = await use(core.LogIn).execute(
          { email: 'ada@example.org', password: 'a long passphrase 42' },
          '127.0.0.1',
        );
        token = loggedIn.token;
        await use(core.VerifySession).execute(token);
        await use(core.GetProfile).execute(
          { id: loggedIn.userId },
          { kind: 'user', userId: loggedIn.userId, group: 'demo' },
        );
      },
    ],
    [
      'access keys',
      async () => {
        const created = await use(core.CreateAccessKey).execute({
          name: 'dashboard',
          kind: 'client',
          groups: ['demo'],
        });
        keySecret = created.secret;
        await use(core.Authenticate).execute(keySecret);
        await use(core.Authenticate).keysInUse();
      },
    ],
    [
      'box onboarding',
      async () => {
        for (const device of await use(core.ListDevices).execute({ group: 'demo' })) {
          const outcome = await use(core.OnboardBox).execute({
            deviceId: core.boxIdOfMac(core.macOfRegisteredId(device.deviceId)),
            firmwareVersion: '1.0.4',
            lastActive: '4200',
            address: '127.0.0.1',
          });
          if (!outcome.registered) throw new Error(`onboarding refused: ${outcome.reason}`);
          boxes.push(outcome.apiKey);
        }
      },
    ],
    [
      'box requests (HTTP)',
      async () => {
        for (const [index, apiKey] of boxes.entries()) {
          for (let i = 0; i < 3; i += 1) {
            const stamp = minutesAgo(3 - i).toISOString();
            const body =
              '{"collection":"datas","database":"Website","dataSource":"Cluster0","document":' +
              `{"topic":"esp/air/temperature","group":"demo","value":"${20 + index + i / 10}","time":{"$date":"${stamp}"}}}`;
            await expectStatus(
              send(
                url,
                'POST',
                '/api/box/v1/action/insertOne',
                { 'content-type': 'application/ejson', 'api-key': apiKey },
                body,
              ),
              [200, 201],
              'box insertOne',
            );
          }
          await expectStatus(
            send(
              url,
              'POST',
              '/api/box/v1/action/find',
              { 'content-type': 'application/json', 'api-key': apiKey },
              '{"collection":"actions","database":"Website","dataSource":"Cluster0"}',
            ),
            [200],
            'box find',
          );
        }
      },
    ],
    [
      // As HTTP clients and the MQTT bridge store them.
      'ingest batch',
      async () => {
        const items = [];
        for (const group of GROUPS)
          for (let i = 0; i < 10; i += 1)
            items.push({
              group,
              topic: 'esp/ground/moisture/1',
              value: 40 + i,
              time: minutesAgo(10 - i).toISOString(),
            });
        await use(core.RecordReadings).execute(items);
      },
    ],
    [
      // latestdata/All and /Temperature, notifications, group/abo, current_state: a full answer, then a conditional one.
      'dashboard polls (HTTP)',
      async () => {
        for (const group of GROUPS) {
          await poll(`/api/data/latestdata/All?groupId=${group}`);
          await poll(`/api/data/latestdata/Temperature?groupId=${group}`);
          await poll(`/api/notification/latestdata/notifications?groupId=${group}`);
          await poll(`/api/group/abo?group=${group}`);
          await poll(`/api/actions/current_state?group=${group}`);
        }
      },
    ],
    [
      // Readings of a range, buckets from rollups, the range route.
      'history',
      async () => {
        const topic = 'esp/air/temperature';
        await use(core.QueryReadings).execute({ group: 'demo', topic, count: 100 });
        await use(core.QueryReadings).execute({
          group: 'demo',
          topic,
          startDate: minutesAgo(600).toISOString(),
          endDate: minutesAgo(10).toISOString(),
          minValue: 0,
        });
        await use(core.AggregateReadings).execute({ group: 'demo', topic, interval: '1h' });
        await use(core.AggregateReadings).execute({
          group: 'demo',
          topic,
          interval: '5m',
          startDate: minutesAgo(720).toISOString(),
        });
        await use(core.AggregateReadings).execute({
          group: 'demo',
          topic,
          points: 50,
          startDate: minutesAgo(725).toISOString(),
          endDate: minutesAgo(3).toISOString(),
        });
        await expectStatus(
          send(url, 'GET', `/api/data/All/temperature?groupId=demo&points=100`),
          [200],
          'range route',
        );
      },
    ],
    [
      'history charts',
      async () => {
        await use(core.GetHistoryCharts).execute({ userId: core.DEMO_USER_ID });
        await use(core.AddChart).execute({
          userId: core.DEMO_USER_ID,
          chartName: 'Second',
          chartData: { type: 'line', max_count: 100, data_interval: 60000, datasets: [] },
        });
        await use(core.GetChartSettings).execute({ userId: core.DEMO_USER_ID, chartName: 'Second' });
      },
    ],
    [
      'actions',
      async () => {
        await use(core.SetActionValue).execute({
          group: 'demo',
          object: 'pump_1',
          value: 'on',
          actor: { kind: 'cli' },
        });
        await use(core.GetActionsOfGroup).execute({ group: 'demo' });
        await use(core.ListAutomationEvents).execute({ group: 'demo' });
      },
    ],
    [
      // Topic ranges, a webhook, notifications created and ignored.
      'alerts, notifications',
      async () => {
        await use(core.SetTopicAlert).execute({
          group: 'demo',
          topic: 'esp/ground/moisture/1',
          min: 45,
          max: 90,
        });
        await use(core.ConfigureGroupNotify).execute({
          group: 'demo',
          addWebhook: {
            url: 'http://127.0.0.1:9/hook',
            secret: 'a secret of sixteen+ chars',
            format: 'json',
          },
        });
        const made = await use(core.CreateNotification).execute({
          group: 'demo',
          message: 'Explain: check the pump',
        });
        await use(core.ListOpenNotifications).execute({ group: 'demo' });
        await use(core.IgnoreNotifications).execute({ group: 'demo', time: made.time.toISOString() });
      },
    ],
    [
      // A tick, readings, a tick after the change, an idle tick.
      'engine ticks',
      async () => {
        const engine = use(core.AutomationEngine);
        await engine.tick();
        await use(core.RecordReadings).execute([
          // Below the range the alerts step set: an alert, a notification and a message for the webhook.
          { group: 'demo', topic: 'esp/ground/moisture/1', value: 10, time: new Date().toISOString() },
        ]);
        await engine.tick();
        await engine.tick();
      },
    ],
    [
      'alert outbox',
      async () => {
        await use(core.DeliverAlertMessages).execute();
      },
    ],
    [
      'retention, deletes',
      async () => {
        await use(core.SetGroupRetention).execute({ group: 'demo-3', days: 1 });
        await use(core.ApplyRetention).execute();
        await use(core.DeleteReadings).execute({
          group: 'demo-2',
          topic: 'esp/ground/moisture/1',
          from: minutesAgo(5).toISOString(),
          to: new Date(now).toISOString(),
        });
      },
    ],
    [
      'session and key checks',
      async () => {
        await use(core.VerifySession).execute(token);
        await use(core.Authenticate).execute(keySecret);
      },
    ],
  ];
}
