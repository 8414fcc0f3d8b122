import {
  type AutomationSet,
  defaultAutomationSettings,
  defaultCoreLimits,
  type ReadingRepository,
  sensorTopics,
} from '@hortus/core';
import { FakeClock, instance, type Instance, type SharedStore, sharedStore } from './automation-support.js';

/**
 * A seeded, randomized run of the automation engine on the simulated clock, with faults: the box silent and
 * back, readings late, duplicated or from beyond the allowed skew, restarts, store outages, clock steps (ahead and back),
 * a person's switches, the action deleted and created again, lockouts whose inputs go stale or block (a
 * humidity limit, and an interlock with a fan a person switches). After every tick the invariants of issue 34
 * are checked; a run answers the first violation, with what reproduces it (its seed).
 */

const TOPIC = sensorTopics.temperature;
/** The lockouts' inputs: pump_1 is never switched on by the engine while humidity is above 90 (or unknown), nor while ventilator_1 is on. */
const HUMIDITY = sensorTopics.humidity;
const HUMIDITY_LIMIT = 90;
const STEP_MS = 60_000;
export const LIMITS = { maxOnMs: 30 * 60_000, minOnMs: 2 * 60_000, minOffMs: 5 * 60_000 };
const STALE_AFTER_MS = 15 * 60_000;
const MAX_READING_AGE_MS = defaultAutomationSettings.maxReadingAgeMs;
/** How far ahead of the server's clock ingest accepts a stamp: further ahead is "from the future". */
const MAX_CLOCK_SKEW_MS = defaultCoreLimits.maxClockSkewMs;

const thermostat: AutomationSet[] = [
  {
    timeAutomations: [{ action: 'on', time: '06:00', frequency: 'every day' }],
    sensorAutomations: [
      { action: 'on', sensor: 'temperature', condition: 'less than', value: '18' },
      { action: 'off', sensor: 'temperature', condition: 'above', value: '21' },
    ],
  },
];

/** mulberry32: small, fast, and the same sequence for the same seed everywhere. */
export function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** A deliberate defect put into every engine instance of a run, to prove the invariants can fail. */
export interface Breakage {
  /** Changes a fresh instance (its RunAutomations), as a broken build of the engine would be. */
  readonly patch?: (server: Instance) => void;
  /** Runs at each restart, before the new instance: a broken engine that forgets part of its state. */
  readonly onRestart?: (store: SharedStore) => Promise<void>;
}

export interface RunResult {
  readonly seed: number;
  readonly ticks: number;
  readonly faults: Readonly<Record<string, number>>;
  readonly violation?: string;
}

/** One run of `steps` ticks of one minute (plus clock steps) from the seed. */
export async function faultRun(seed: number, steps: number, breakage: Breakage = {}): Promise<RunResult> {
  const next = random(seed);
  const chance = (p: number) => next() < p;
  const faults: Record<string, number> = {};
  const count = (fault: string) => (faults[fault] = (faults[fault] ?? 0) + 1);
  const base = sharedStore();
  const outage = { on: false };
  // The store as the engine sees it: its readings fail while an outage lasts.
  const readings = new Proxy(base.readings, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) =>
        outage.on && property !== 'add'
          ? Promise.reject(new Error('store outage'))
          : (value as (...a: unknown[]) => unknown).apply(target, args);
    },
  }) as ReadingRepository;
  const store: SharedStore = Object.assign(Object.create(base) as SharedStore, { readings });
  const clock = new FakeClock(new Date(Date.UTC(2026, 0, 10, 3, 0) + Math.floor(next() * 86_400_000)));
  const start = (): Instance => {
    const server = instance(store, clock, 'UTC');
    breakage.patch?.(server);
    return server;
  };
  let server = start();
  await server.createGroup.execute({ name: 'gh', settings: [] });
  await server.createAction.execute({ group: 'gh', object: 'ventilator_1', value: 'off', automations: [] });
  const create = async () => {
    await server.createAction.execute({
      group: 'gh',
      object: 'pump_1',
      value: 'off',
      automations: thermostat,
    });
    await server.setLimit.execute({ group: 'gh', object: 'pump_1', ...LIMITS });
    await server.setSafety.execute({ group: 'gh', object: 'pump_1', staleAfterMs: STALE_AFTER_MS });
    await server.addLockout.execute({
      group: 'gh',
      object: 'pump_1',
      lockout: { sensor: HUMIDITY, above: HUMIDITY_LIMIT },
    });
    await server.addLockout.execute({
      group: 'gh',
      object: 'pump_1',
      lockout: { while: 'ventilator_1', is: 'on' },
    });
  };
  await create();
  /**
   * Every switch of pump_1 in the order it happened, with the clock's time then: the history's stamps are
   * out of order once the clock has stepped back, so the invariants read this instead.
   */
  const switches: SwitchSeen[] = [{ value: 'off', at: clock.now().getTime(), by: 'created' }];
  let temperature = 15 + next() * 10;
  let humidity = 70 + next() * 25;
  let humidityNewest: { value: number; time: number } | undefined;
  let humiditySilentUntil = 0;
  /** Since when a lockout has blocked without a break, as the harness sees it (not the engine's code). */
  let blockedSince: number | undefined;
  let silentUntil = 0;
  let deletedUntil = 0;
  let lastSent: { value: number; time: string } | undefined;
  let newestReading = Number.NEGATIVE_INFINITY;
  /** When the input counts as stale to an engine: the newest reading's deadline, or its arrival if later. */
  let staleFrom = Number.POSITIVE_INFINITY;
  let recentOutages: boolean[] = [];
  /** The last tick at which the input was fresh: a person's switch after it, in the silence, is obeyed. */
  let lastFresh = Number.NEGATIVE_INFINITY;
  const send = async (value: number, time: number) => {
    const result = await base.readings.add([{ group: 'gh', topic: TOPIC, value, time: new Date(time) }]);
    if (result > 0 && time > newestReading) {
      newestReading = time;
      // A late reading may arrive stale already: the engine can only tell from its arrival on.
      staleFrom = Math.max(time + STALE_AFTER_MS, clock.now().getTime());
    }
  };
  for (let tick = 0; tick < steps; tick += 1) {
    let step = STEP_MS;
    if (chance(0.01)) {
      step += Math.floor(next() * 60) * 60_000;
      count('clock step');
    } else if (chance(0.005)) {
      // NTP corrects a clock that ran ahead: time goes back by up to 10 minutes, stored stamps lie ahead.
      step = -Math.floor(1 + next() * 10) * 60_000;
      count('clock step back');
    }
    clock.set(new Date(clock.now().getTime() + step).toISOString());
    const now = clock.now().getTime();
    temperature = Math.min(35, Math.max(5, temperature + (next() - 0.5) * 3));
    if (chance(0.02)) {
      silentUntil = now + Math.floor(next() * 40) * 60_000;
      count('box silent');
    }
    if (now >= silentUntil) {
      const time = now - Math.floor(next() * 20_000);
      await send(Math.round(temperature * 100) / 100, time);
      lastSent = { value: temperature, time: new Date(time).toISOString() };
    } else if (chance(0.3)) {
      // A failed sensor's nan, or a reading beyond the allowed skew: refused, never stored.
      const refused = await server.record.execute([
        chance(0.5)
          ? { group: 'gh', topic: TOPIC, value: 'nan', time: new Date(now).toISOString() }
          : { group: 'gh', topic: TOPIC, value: 12, time: new Date(now + 600_000).toISOString() },
      ]);
      if (refused.stored !== 0)
        return { seed, ticks: tick, faults, violation: 'a refused reading was stored' };
      count('refused reading');
    }
    if (chance(0.05)) {
      await send(5 + next() * 30, now - Math.floor(next() * 30) * 60_000);
      count('late reading');
    }
    humidity = Math.min(100, Math.max(60, humidity + (next() - 0.5) * 6));
    if (chance(0.02)) {
      humiditySilentUntil = now + Math.floor(next() * 40) * 60_000;
      count('lockout input silent');
    }
    if (now >= humiditySilentUntil) {
      const time = now - Math.floor(next() * 20_000);
      const value = Math.round(humidity * 10) / 10;
      if ((await base.readings.add([{ group: 'gh', topic: HUMIDITY, value, time: new Date(time) }])) > 0)
        if (humidityNewest === undefined || time > humidityNewest.time) humidityNewest = { value, time };
    }
    // The fan runs for short spells (a fifth of the time or so), so the pump's rules still get to act.
    const fanOn = (await base.actions.find('gh', 'ventilator_1'))?.value === 'on';
    if (chance(fanOn ? 0.1 : 0.02)) {
      await server.setValue.execute({
        group: 'gh',
        object: 'ventilator_1',
        value: fanOn ? 'off' : 'on',
        actor: { kind: 'cli' },
      });
      count('interlock switched');
    }
    if (chance(0.05) && lastSent !== undefined) {
      await send(lastSent.value, Date.parse(lastSent.time));
      count('duplicate reading');
    }
    if (chance(0.03)) {
      const value = chance(0.5) ? 'on' : 'off';
      await server.setValue.execute({ group: 'gh', object: 'pump_1', value, actor: { kind: 'cli' } }).then(
        () => switches.push({ value, at: now, by: 'person' }),
        () => undefined,
      );
      count('person switch');
    }
    if (chance(0.005) && deletedUntil === 0) {
      await server.deleteAction.execute({ group: 'gh', object: 'pump_1' });
      deletedUntil = now + Math.floor(next() * 10) * 60_000;
      count('action deleted');
    } else if (deletedUntil !== 0 && now >= deletedUntil) {
      await create();
      switches.push({ value: 'off', at: now, by: 'created' });
      deletedUntil = 0;
    }
    if (chance(0.02)) {
      await breakage.onRestart?.(base);
      server = start();
      count('restart');
    }
    outage.on = chance(0.02);
    if (outage.on) count('store outage');
    recentOutages = [...recentOutages.slice(-4), outage.on];
    const result = await server.engine.tick();
    outage.on = false;
    for (const event of result.switched)
      if (event.object === 'pump_1')
        switches.push({ value: event.value, at: event.at.getTime(), by: 'engine' });
    // A tick the store failed is tried again at the next: each one in the last few adds a step of slack.
    const slack = (2 + recentOutages.filter(Boolean).length) * Math.max(step, STEP_MS);
    if (now - newestReading <= STALE_AFTER_MS) lastFresh = now;
    const blocking = await lockoutBlocks(base, now, humidityNewest);
    if (blocking === undefined) blockedSince = undefined;
    else blockedSince ??= now;
    const violation =
      (await checkInvariants(base, now, slack, staleFrom, lastFresh, result.switched, switches)) ??
      (await checkLockouts(base, now, slack, blocking, blockedSince, result.switched, switches));
    if (violation !== undefined) return { seed, ticks: tick + 1, faults, violation };
  }
  return { seed, ticks: steps, faults };
}

type Switched = Awaited<ReturnType<Instance['engine']['tick']>>['switched'];

interface SwitchSeen {
  readonly value: string;
  readonly at: number;
  /** `created`: the action was created (off); no switch, so no cycling limit counts from it. */
  readonly by: 'engine' | 'person' | 'created';
}

/** When the newest run of `on` switches began (consecutive ones continue it), or undefined when off. */
function onSince(switches: readonly SwitchSeen[]): number | undefined {
  let since: number | undefined;
  for (let index = switches.length - 1; index >= 0 && switches[index]?.value === 'on'; index -= 1)
    since = switches[index]?.at;
  return since;
}

/**
 * Whether a lockout of pump_1 surely blocks now, and why, decided here from the store alone (not with the
 * engine's code): no fresh humidity reading (its freshness limit is the action's, 15 minutes), humidity above
 * the limit, or the fan on. Lenient where the engine is strict (its dead band), so no false alarms.
 */
async function lockoutBlocks(
  store: SharedStore,
  now: number,
  humidity: { value: number; time: number } | undefined,
): Promise<string | undefined> {
  if ((await store.actions.find('gh', 'ventilator_1'))?.value === 'on') return 'ventilator_1 is on';
  if (humidity === undefined || now - humidity.time > STALE_AFTER_MS) return 'humidity stale or missing';
  if (humidity.value > HUMIDITY_LIMIT) return `humidity ${humidity.value} above ${HUMIDITY_LIMIT}`;
  return undefined;
}

/**
 * A lockout is never crossed by the engine: no switch `on` of the engine while one surely blocks, and the
 * engine does not keep on (longer than the slack of a retried tick) an action it switched on once one blocks.
 * A person's `on` may override a lockout (docs/automations.md), so it is not counted.
 */
async function checkLockouts(
  store: SharedStore,
  now: number,
  slack: number,
  blocking: string | undefined,
  blockedSince: number | undefined,
  switched: Switched,
  switches: readonly SwitchSeen[],
): Promise<string | undefined> {
  if (blocking === undefined || blockedSince === undefined) return undefined;
  const at = new Date(now).toISOString();
  for (const event of switched)
    if (event.object === 'pump_1' && event.value === 'on')
      return `${at}: ${event.trigger} switched pump_1 on across a lockout (${blocking})`;
  const action = await store.actions.find('gh', 'pump_1');
  if (action?.value !== 'on' || now - blockedSince <= slack) return undefined;
  const last = switches.at(-1);
  if (last?.by === 'engine' && last.value === 'on')
    return `${at}: the engine kept pump_1 on across a lockout (${blocking}) since ${new Date(blockedSince).toISOString()}`;
  return undefined;
}

async function checkInvariants(
  store: SharedStore,
  now: number,
  slack: number,
  staleFrom: number,
  lastFresh: number,
  switched: Switched,
  switches: readonly SwitchSeen[],
): Promise<string | undefined> {
  const at = new Date(now).toISOString();
  for (const event of switched) {
    if (event.trigger === 'sensor' && event.reading !== undefined) {
      const age = event.at.getTime() - event.reading.time.getTime();
      if (age > MAX_READING_AGE_MS) return `${at}: switched ${event.value} on a reading ${age} ms old`;
      if (-age > MAX_CLOCK_SKEW_MS) return `${at}: switched ${event.value} on a reading from the future`;
    }
  }
  for (const event of switched) {
    if (event.trigger !== 'sensor' && event.trigger !== 'time') continue;
    const index = switches.findIndex(
      (entry) => entry.by === 'engine' && entry.at === event.at.getTime() && entry.value === event.value,
    );
    const previous = switches[index - 1];
    if (index < 0 || previous === undefined || previous.by === 'created' || previous.value === event.value)
      continue;
    const least = previous.value === 'on' ? LIMITS.minOnMs : LIMITS.minOffMs;
    const since = event.at.getTime() - previous.at;
    if (since < least)
      return `${at}: ${event.trigger} rule switched ${event.value} ${since} ms after the last switch`;
  }
  const action = await store.actions.find('gh', 'pump_1');
  if (action?.value !== 'on') return undefined;
  const since = onSince(switches);
  if (since === undefined) return undefined;
  // The engine sees a switch at its next tick at the latest: the slack holds that tick and the step made.
  // On the server's clock: a clock stepped back by N minutes lengthens a running on-time by N minutes.
  if (now - since > LIMITS.maxOnMs + slack)
    return `${at}: on for ${now - since} ms, past its maximum on-time of ${LIMITS.maxOnMs}`;
  const lastOn = switches.at(-1);
  if (now > staleFrom + slack && lastOn !== undefined) {
    const byPerson = lastOn.by === 'person';
    if (!(byPerson && lastOn.at > lastFresh))
      return `${at}: on with every input stale since ${new Date(staleFrom).toISOString()}`;
  }
  return undefined;
}
