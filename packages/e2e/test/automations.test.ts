import { AutomationEngine } from '@hortus/core';
import { IntervalScheduler, MqttBridgeKeeper, type StartableBridge } from '@hortus/cli';
import { CapturingLogger, eventually, expect, startTestServer, type TestServer } from './harness.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

type Action = { object: string; value: string };
type AutomationEvent = Record<string, unknown> & { value: string };

function sensorRule(action: string, sensor: string, condition: string, value: string): unknown[] {
  return [{ timeAutomations: [], sensorAutomations: [{ action, sensor, condition, value }] }];
}

async function valueOf(api: TestServer, group: string, object: string): Promise<string | undefined> {
  const reply = await api.get(`/api/actions/current_state?group=${group}`);
  return (reply.json() as { message: Action[] }).message.find((action) => action.object === object)?.value;
}

describe('IntervalScheduler', () => {
  let logger: CapturingLogger;
  let scheduler: IntervalScheduler;
  beforeEach(() => {
    logger = new CapturingLogger();
    scheduler = new IntervalScheduler(logger);
  });

  it('when started, then the task runs every interval, and after stop() never again', async () => {
    let runs = 0;
    const task = scheduler.every(20, async () => {
      runs += 1;
    });
    await eventually(() => expect(runs).to.be.at.least(3));
    await task.stop();
    const runsAtStop = runs;
    await sleep(80);
    expect(runs).to.equal(runsAtStop);
  });

  it('when a run takes longer than the interval, then ticks are skipped: two runs never overlap', async () => {
    let active = 0;
    let mostActive = 0;
    let runs = 0;
    const task = scheduler.every(10, async () => {
      active += 1;
      mostActive = Math.max(mostActive, active);
      runs += 1;
      await sleep(50);
      active -= 1;
    });
    await eventually(() => expect(runs).to.be.at.least(3));
    await task.stop();
    expect(mostActive).to.equal(1);
  });

  it('when stopped during a run, then stop() resolves only once that run has finished', async () => {
    let release: () => void = () => {};
    let started = false;
    let finished = false;
    const task = scheduler.every(10, async () => {
      started = true;
      await new Promise<void>((resolve) => (release = resolve));
      finished = true;
    });
    await eventually(() => expect(started).to.equal(true));
    let stopped = false;
    const stopping = task.stop().then(() => {
      stopped = true;
    });
    await sleep(40);
    expect(stopped).to.equal(false);
    release();
    await stopping;
    expect(finished).to.equal(true);
  });

  it('when a run fails, then one error line is logged and the next run happens as usual', async () => {
    let runs = 0;
    const task = scheduler.every(10, async () => {
      runs += 1;
      if (runs === 1) throw new Error('store hiccup');
    });
    await eventually(() => expect(runs).to.be.at.least(3));
    await task.stop();
    const failures = logger.lines.filter((line) => line.event === 'scheduled task failed');
    expect(failures).to.have.length(1);
    expect(failures[0]).to.include({ level: 'error', error: 'store hiccup', intervalMs: 10 });
    expect(failures[0]?.['stack']).to.be.a('string');
  });
});

/** Plays the MQTT bridge: its first starts fail as they do while the broker is down. */
class FlakyBridge implements StartableBridge {
  attempts = 0;
  stops = 0;
  constructor(private readonly failures: number) {}
  async start(): Promise<void> {
    this.attempts += 1;
    if (this.attempts <= this.failures) throw new Error('connect ECONNREFUSED 127.0.0.1:1883');
  }
  async stop(): Promise<void> {
    this.stops += 1;
  }
}

describe('MqttBridgeKeeper', () => {
  it('when the first starts fail, then each failure is a warning, it retries, and the success is logged', async () => {
    const logger = new CapturingLogger();
    const bridge = new FlakyBridge(2);
    const keeper = new MqttBridgeKeeper(bridge, logger, 20);
    keeper.start();
    await eventually(() => expect(logger.lines.map((line) => line.event)).to.include('mqtt bridge started'));
    expect(bridge.attempts).to.equal(3);
    const warnings = logger.lines.filter((line) => line.level === 'warn');
    expect(warnings.map((line) => [line['attempt'], line['retryInMs'], line['error']])).to.deep.equal([
      [1, 20, 'connect ECONNREFUSED 127.0.0.1:1883'],
      [2, 20, 'connect ECONNREFUSED 127.0.0.1:1883'],
    ]);
    await keeper.stop();
    expect(bridge.stops).to.equal(1);
  });

  it('when stopped while waiting to retry, then no further attempt is made and the bridge is stopped', async () => {
    const bridge = new FlakyBridge(Number.POSITIVE_INFINITY);
    const keeper = new MqttBridgeKeeper(bridge, new CapturingLogger(), 30);
    keeper.start();
    await eventually(() => expect(bridge.attempts).to.equal(1));
    await keeper.stop();
    await sleep(80);
    expect(bridge.attempts).to.equal(1);
    expect(bridge.stops).to.equal(1);
  });
});

describe('HTTP GET /api/actions/automation_log', () => {
  let api: TestServer;
  before(async () => {
    api = await startTestServer();
  });
  after(async () => {
    await api.close();
  });

  it('when the engine switched an action, then {message: [event]} newest first with _id, at most count', async () => {
    const group = api.unique('greenhouse');
    await api.seed.group(group);
    await api.seed.action(group, 'led_1');
    const timeAutomations = [
      { action: 'on', time: '12:30', frequency: 'every day' },
      { action: 'off', time: '12:40', frequency: 'every day' },
    ];
    const update = await api.call('POST', '/api/actions/update', {
      json: { group, object: 'led_1', automations: [{ timeAutomations, sensorAutomations: [] }] },
    });
    expect(update.status).to.equal(200);
    // testNow is 12:30 UTC: the first rule is due; ten minutes later the second.
    const engine = api.container.get(AutomationEngine);
    await engine.tick();
    api.clock.advance(10 * 60_000);
    await engine.tick();

    const reply = await api.get(`/api/actions/automation_log?group=${group}`);
    expect(reply.status).to.equal(200);
    const { message } = reply.json() as { message: AutomationEvent[] };
    expect(message.map((event) => [event.value, event['previousValue'], event['rule']])).to.deep.equal([
      ['off', 'on', '12:40 every day -> off'],
      ['on', 'off', '12:30 every day -> on'],
    ]);
    expect(message[0]).to.include({
      group,
      object: 'led_1',
      trigger: 'time',
      at: '2025-06-15T12:40:00.000Z',
    });
    expect(message[0]).to.have.property('_id').that.is.a('string');
    expect(message[0]).to.not.have.property('id');

    const newest = await api.get(`/api/actions/automation_log?group=${group}&count=1`);
    expect(
      (newest.json() as { message: AutomationEvent[] }).message.map((event) => event.value),
    ).to.deep.equal(['off']);
  });

  it('when the group has no events, then {message: []}', async () => {
    const reply = await api.get(`/api/actions/automation_log?group=${api.unique('quiet')}`);
    expect(reply.status).to.equal(200);
    expect(reply.json()).to.deep.equal({ message: [] });
  });

  it('when group is missing or count is not a whole number from 1 to 1000, then 400 {message}', async () => {
    const cases: [string, string][] = [
      ['', 'group is required'],
      ['?group=g&count=many', 'count must be a whole number'],
      ['?group=g&count=0', 'count must be a whole number from 1 to 1000'],
      ['?group=g&count=1001', 'count must be a whole number from 1 to 1000'],
      ['?group=a&group=b', 'group must be given only once'],
    ];
    for (const [query, message] of cases) {
      const reply = await api.get(`/api/actions/automation_log${query}`);
      expect(reply.status, query).to.equal(400);
      expect(reply.json(), query).to.deep.equal({ message });
    }
  });
});

describe('Automation engine in the server', () => {
  it('when AUTOMATIONS is on, then a reading crossing a sensor rule switches the action, raises the alert and logs the tick', async () => {
    const api = await startTestServer({ AUTOMATIONS: 'on', AUTOMATION_TICK_MS: '20' });
    const group = api.unique('greenhouse');
    try {
      await api.seed.group(group, [{ tempMin: 10 }, { tempMax: 30 }]);
      await api.seed.action(group, 'ventilator_1');
      await api.call('POST', '/api/actions/update', {
        json: { group, object: 'ventilator_1', automations: sensorRule('on', 'temperature', 'above', '28') },
      });
      const posted = await api.call('POST', '/api/data/readings', {
        json: { group, topic: 'esp/air/temperature', value: 31 },
      });
      expect(posted.status).to.equal(202);

      await eventually(async () => expect(await valueOf(api, group, 'ventilator_1')).to.equal('on'));
      const notifications = await eventually(async () => {
        const reply = await api.get(`/api/notification/latestdata/notifications?groupId=${group}`);
        const list = reply.json() as { message: string }[];
        expect(list).to.have.length(1);
        return list;
      });
      const message = notifications[0]?.message ?? '';
      expect(message).to.match(
        /^Temperature \(esp\/air\/temperature\) is above its maximum of 30 °C: 31 °C at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/u,
      );
      // The tick's log line is written when the whole tick is done, which may be after its writes are visible.
      await eventually(() => {
        const ticks = api.logger.lines.filter((line) => line.event === 'automation tick');
        expect(ticks.flatMap((line) => line['switched'] as unknown[])).to.deep.include({
          group,
          object: 'ventilator_1',
          value: 'on',
          previousValue: 'off',
          trigger: 'sensor',
          rule: 'temperature above 28 -> on',
        });
        expect(ticks.flatMap((line) => line['alerts'] as unknown[])).to.deep.include({
          group,
          topic: 'esp/air/temperature',
          message,
        });
      });
      expect(api.logger.lines.find((line) => line.event === 'automations started')).to.include({
        tickMs: 20,
        timeZone: 'UTC',
        boxTimeZone: 'Europe/Berlin',
      });
    } finally {
      await api.close();
    }
    const events = api.logger.lines.map((line) => line.event);
    expect(events.indexOf('automations stopped')).to.be.within(0, events.indexOf('stopped') - 1);
  });

  it('when AUTOMATIONS is off, then a due rule switches nothing', async () => {
    const api = await startTestServer({ AUTOMATIONS: 'off', AUTOMATION_TICK_MS: '10' });
    const group = api.unique('greenhouse');
    try {
      await api.seed.group(group);
      await api.seed.action(group, 'pump_1');
      await api.call('POST', '/api/actions/update', {
        json: {
          group,
          object: 'pump_1',
          automations: [{ timeAutomations: [{ action: 'on', time: '12:30', frequency: 'every day' }] }],
        },
      });
      await sleep(100);
      expect(await valueOf(api, group, 'pump_1')).to.equal('off');
      expect(api.logger.lines.map((line) => line.event)).to.not.include('automations started');
    } finally {
      await api.close();
    }
  });
});
