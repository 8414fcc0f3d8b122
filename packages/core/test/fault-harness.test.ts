import 'reflect-metadata';
import * as chai from 'chai';
import { defaultAutomationSettings, engineStateKey } from '@hortus/core';
import { type Breakage, faultRun, type RunResult } from './fault-harness.js';

const { expect } = chai;

const RUNS = Number(process.env['HORTUS_FAULT_RUNS'] ?? 1000);
const STEPS = 100;
const ONE_SEED = process.env['HORTUS_FAULT_SEED'];

/** Runs the seeds until one violates an invariant; answers it, or undefined and the totals. */
async function firstViolation(seeds: readonly number[], breakage?: Breakage) {
  const totals: Record<string, number> = {};
  for (const seed of seeds) {
    const result: RunResult = await faultRun(seed, STEPS, breakage);
    for (const [fault, n] of Object.entries(result.faults)) totals[fault] = (totals[fault] ?? 0) + n;
    if (result.violation !== undefined) return { result, totals };
  }
  return { result: undefined, totals };
}

const seeds = (n: number, from = 1) => Array.from({ length: n }, (_, index) => from + index);

/** Replaces a private part of the engine, as a broken build would have it. */
const replace = (target: object, part: string, value: unknown) => Object.assign(target, { [part]: value });

describe('the engine under faults: seeded runs on the simulated clock (issue 34)', function () {
  // A fixed amount of CPU work (about 28 s quiet): bounded by that, not by a time that a loaded machine
  // (two test runs beside eight builds took it past 120 s) could miss.
  this.timeout(900_000);

  it(`when ${RUNS} seeded runs of ${STEPS} ticks meet silent boxes, refused, late and duplicated readings, restarts, store outages, clock steps, switches by a person, a deleted action, and lockout inputs going stale or blocking, then no invariant is violated`, async () => {
    const started = Date.now();
    const { result, totals } = await firstViolation(
      ONE_SEED === undefined ? seeds(RUNS) : [Number(ONE_SEED)],
    );
    if (result !== undefined)
      expect.fail(
        `seed ${result.seed} (replay: HORTUS_FAULT_SEED=${result.seed}), tick ${result.ticks}: ${result.violation}`,
      );
    console.log(
      `    ${RUNS} runs in ${Date.now() - started} ms, 0 violations; faults: ${JSON.stringify(totals)}`,
    );
  });

  it('when a run is replayed from its seed, then it meets the same faults', async () => {
    expect(await faultRun(42, 60)).to.deep.equal(await faultRun(42, 60));
  });

  const broken: [string, Breakage][] = [
    [
      'one that ignores staleness (acts on readings of any age)',
      {
        patch: (server) =>
          replace(server.run, 'settings', { ...defaultAutomationSettings, maxReadingAgeMs: Infinity }),
      },
    ],
    [
      'one without the maximum on-time',
      { patch: (server) => replace(server.run, 'enforceLimit', () => Promise.resolve(undefined)) },
    ],
    [
      'one that forgets "on since" at a restart',
      {
        onRestart: async (store) => {
          const key = engineStateKey('on', 'gh', 'pump_1');
          const stored = await store.engineState.get(key);
          if (stored !== undefined)
            await store.engineState.compareAndSet(key, stored.version, {}, new Date(0));
        },
      },
    ],
    [
      'one that forgets the last switch (no minimum on/off-time)',
      { patch: (server) => replace(server.run, 'history', { list: () => Promise.resolve([]) }) },
    ],
    [
      'one that skips a lockout',
      {
        patch: (server) =>
          replace(server.run, 'lockouts', {
            check: () => Promise.resolve({ active: [] }),
            noteBlocked: () => Promise.resolve(undefined),
          }),
      },
    ],
    [
      'one without safe mode',
      {
        patch: (server) =>
          replace(server.run, 'safeMode', { check: () => Promise.resolve({ kind: 'normal' }) }),
      },
    ],
  ];
  for (const [name, breakage] of broken) {
    it(`when the engine is broken, ${name}, then the harness finds a seed that shows it`, async () => {
      const { result } = await firstViolation(seeds(300), breakage);
      expect(result?.violation, 'a violation within 300 seeds').to.be.a('string');
      console.log(`      seed ${String(result?.seed)}: ${String(result?.violation)}`);
    });
  }
});
