import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { type AddressInfo } from 'node:net';
import {
  ALERT_OUTBOX_REPOSITORY,
  type AlertOutboxRepository,
  GROUP_REPOSITORY,
  type GroupRepository,
  READING_REPOSITORY,
  type ReadingRepository,
  SCHEDULER,
  type ScheduledTask,
  type Scheduler,
  StoreDeadlineError,
} from '@hortus/core';
import { isListening, TcpRelay } from '@hortus/test-support';
import { eventually, expect, sample, startTestServer, type TestServer } from './harness.js';

/*
 * The series of what the server does beside answering requests (docs/operations.md, "Metrics"): each
 * changes as the thing it counts happens.
 */

const ENGINE_TICK_MS = 60_000;
const DELIVERY_MS = 30_000;

/** The scheduler seam: the test runs each task (engine tick, delivery round) when it chooses. */
class ManualScheduler implements Scheduler {
  private readonly tasks = new Map<number, () => Promise<void>>();

  every(intervalMs: number, task: () => Promise<void>): ScheduledTask {
    this.tasks.set(intervalMs, task);
    return { stop: async () => void this.tasks.delete(intervalMs) };
  }

  async run(intervalMs: number): Promise<void> {
    const task = this.tasks.get(intervalMs);
    if (task === undefined) throw new Error(`no task runs every ${intervalMs} ms`);
    await task();
  }
}

/** A repository whose method `name` does `before` first, then what the real one does. */
function around<T extends object>(real: T, name: keyof T & string, before: () => Promise<void>): T {
  const wrapped = Object.create(real) as T;
  const method = real[name] as (...args: unknown[]) => Promise<unknown>;
  (wrapped as Record<string, unknown>)[name] = async (...args: unknown[]) => {
    await before();
    return method.apply(real, args);
  };
  return wrapped;
}

const brokerUp = await isListening(1883);
const ci = process.env['CI'] === 'true';

const metricsOf = async (api: TestServer): Promise<string> => (await api.get('/metrics')).text;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('metrics of the engine, the outbox, the MQTT connection and store deadlines', () => {
  describe('engine ticks and alert delivery', () => {
    let api: TestServer;
    const scheduler = new ManualScheduler();
    let receiver: Server;
    let hookUrl = '';

    before(async () => {
      // A receiver that refuses every delivery.
      receiver = createServer((_request, response) => response.writeHead(500).end());
      await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
      hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
      api = await startTestServer(
        {
          AUTOMATIONS: 'on',
          AUTOMATION_TICK_MS: String(ENGINE_TICK_MS),
          ALERT_DELIVERY_MS: String(DELIVERY_MS),
        },
        (container) => {
          container.rebind<Scheduler>(SCHEDULER).toConstantValue(scheduler);
          // Listing the groups takes 400 ms of the simulated clock: the tick's length is known exactly.
          const groups = container.get<GroupRepository>(GROUP_REPOSITORY);
          const slow = around(groups, 'list', async () => api.clock.advance(400));
          container.rebind<GroupRepository>(GROUP_REPOSITORY).toConstantValue(slow);
        },
      );
    });
    after(async () => {
      await api?.close();
      await new Promise((resolve) => receiver.close(resolve));
    });

    it('when the engine ticks, then the tick is timed by the engine clock and its groups are counted', async () => {
      await api.seed.group(api.unique('tick-a'), []);
      await api.seed.group(api.unique('tick-b'), []);
      const listed = (await api.container.get<GroupRepository>(GROUP_REPOSITORY).list()).length;
      const before = await metricsOf(api);
      expect(sample(before, 'hortus_automation_tick_duration_seconds_count')).to.equal(0);
      expect(sample(before, 'hortus_automation_groups_evaluated_total')).to.equal(0);

      // The first tick evaluates every group (a full pass), listing them once.
      await scheduler.run(ENGINE_TICK_MS);

      const after = await metricsOf(api);
      expect(sample(after, 'hortus_automation_tick_duration_seconds_count')).to.equal(1);
      expect(sample(after, 'hortus_automation_tick_duration_seconds_sum')).to.equal(0.4);
      expect(sample(after, 'hortus_automation_tick_duration_seconds_bucket{le="0.25"}')).to.equal(0);
      expect(sample(after, 'hortus_automation_tick_duration_seconds_bucket{le="0.5"}')).to.equal(1);
      expect(sample(after, 'hortus_automation_tick_duration_seconds_bucket{le="+Inf"}')).to.equal(1);
      expect(sample(after, 'hortus_automation_groups_evaluated_total')).to.equal(listed);
      expect(after).to.contain('# TYPE hortus_automation_tick_duration_seconds histogram');
    });

    it('when a delivery fails against the receiver, then the failure is counted and the outbox depth follows', async () => {
      const outbox = api.container.get<AlertOutboxRepository>(ALERT_OUTBOX_REPOSITORY);
      const group = api.unique('outbox');
      await outbox.enqueue([
        {
          group,
          event: 'opened',
          channel: { type: 'webhook', url: hookUrl, secret: 'a-secret-of-16-chars' },
          subject: `[Hortus] ${group}: too warm`,
          text: 'too warm',
          payload: { group, event: 'opened', message: 'too warm' },
          createdAt: api.clock.now(),
        },
      ]);
      const queued = await metricsOf(api);
      expect(sample(queued, 'hortus_alert_outbox_messages{state="due"}')).to.equal(1);
      expect(sample(queued, 'hortus_alert_outbox_messages{state="deferred"}')).to.equal(0);
      const failures = 'hortus_alert_delivery_failures_total{channel="webhook",outcome="retrying"}';
      expect(sample(queued, failures)).to.equal(0);

      await scheduler.run(DELIVERY_MS);

      // The round runs on after the scheduler's task returns; the notifier's own two retries take 3 s.
      await eventually(async () => expect(sample(await metricsOf(api), failures)).to.equal(1));
      const failed = await metricsOf(api);
      expect(
        sample(failed, 'hortus_alert_delivery_failures_total{channel="webhook",outcome="given_up"}'),
      ).to.equal(0);
      expect(
        sample(failed, 'hortus_alert_delivery_failures_total{channel="email",outcome="retrying"}'),
      ).to.equal(0);
      // Waiting out its backoff now.
      expect(sample(failed, 'hortus_alert_outbox_messages{state="due"}')).to.equal(0);
      expect(sample(failed, 'hortus_alert_outbox_messages{state="deferred"}')).to.equal(1);
    });

    it('when MQTT is off, then there is no connection series to alert on', async () => {
      expect(await metricsOf(api)).not.to.contain('hortus_mqtt_connected');
    });
  });

  describe('store deadlines', () => {
    it('when a poll waits for a slow store past ANSWER_WAIT_MS, then the 503 is counted as an answer deadline of its route', async () => {
      const api = await startTestServer({ ANSWER_WAIT_MS: '50' }, (container) => {
        const readings = container.get<ReadingRepository>(READING_REPOSITORY);
        const slow = around(readings, 'latestOfEveryTopic', () => sleep(1000));
        container.rebind<ReadingRepository>(READING_REPOSITORY).toConstantValue(slow);
      });
      try {
        const group = api.unique('slow');
        await api.seed.group(group, []);
        const hits = 'hortus_store_deadline_hits_total{deadline="answer",route="/api/data/latestdata/All"}';
        expect(sample(await metricsOf(api), hits)).to.equal(undefined);

        const reply = await api.get(`/api/data/latestdata/All?groupId=${group}`);

        expect(reply.status).to.equal(503);
        expect(sample(await metricsOf(api), hits)).to.equal(1);
      } finally {
        await api.close();
      }
    });

    it("when a store operation runs out of the store's deadline, then the 503 is counted as a store deadline of its route", async () => {
      // What MongoDB's adapter raises at MONGODB_TIMEOUT_MS, from a store double that waits first.
      const api = await startTestServer({}, (container) => {
        const groups = container.get<GroupRepository>(GROUP_REPOSITORY);
        const slow = around(groups, 'findByName', async () => {
          await sleep(100);
          throw new StoreDeadlineError('store');
        });
        container.rebind<GroupRepository>(GROUP_REPOSITORY).toConstantValue(slow);
      });
      try {
        const reply = await api.get('/api/group/checkgroup?group=any');

        expect(reply.status).to.equal(503);
        expect(reply.headers.get('retry-after')).to.equal('5');
        const text = await metricsOf(api);
        expect(
          sample(text, 'hortus_store_deadline_hits_total{deadline="store",route="/api/group/checkgroup"}'),
        ).to.equal(1);
        expect(text).to.contain('# TYPE hortus_store_deadline_hits_total counter');
      } finally {
        await api.close();
      }
    });
  });

  (brokerUp || ci ? describe : describe.skip)(
    `the MQTT connection, against Mosquitto on 127.0.0.1:1883${brokerUp ? '' : ' (SKIPPED: nothing listens there)'}`,
    () => {
      it('when the broker connection is made, lost and made again, then hortus_mqtt_connected is 1, 0, 1', async () => {
        const relay = new TcpRelay(1883);
        await relay.open();
        let api: TestServer | undefined;
        try {
          api = await startTestServer({
            MQTT_URL: `mqtt://127.0.0.1:${relay.port}`,
            MQTT_TOPIC: `metrics-${randomUUID().slice(0, 8)}/#`,
          });
          const connected = async (): Promise<number | undefined> =>
            sample(await metricsOf(api as TestServer), 'hortus_mqtt_connected');
          await eventually(async () => expect(await connected()).to.equal(1));

          await relay.close();
          await eventually(async () => expect(await connected()).to.equal(0));

          await relay.open();
          await eventually(async () => expect(await connected()).to.equal(1));
        } finally {
          await api?.close();
          await relay.close();
        }
      });
    },
  );
});
