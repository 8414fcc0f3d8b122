import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  AdvanceStages,
  type Clock,
  CreateAction,
  CreateGroup,
  GetAction,
  GetGroup,
  UpdateGroupSettings,
  watchedRanges,
} from '@hortus/core';
import { expect } from 'chai';
import { type Container } from 'inversify';
import { hortus, scratchDataDir, type StoreContainer, storeContainer } from './harness.js';

const recipes = fileURLToPath(new URL('../../../../docs/recipes/', import.meta.url));
const lettuce = join(recipes, 'lettuce.yaml');
const tomato = join(recipes, 'tomato.yaml');
const DAY = 86_400_000;

describe('hortus group stage: crop recipes whose stages set the alert ranges and thresholds', () => {
  let container: Container;
  let store: StoreContainer;
  let now = new Date('2026-03-01T09:00:00Z');
  const clock: Clock = { now: () => new Date(now.getTime()) };
  beforeEach(async () => {
    now = new Date('2026-03-01T09:00:00Z');
    store = await storeContainer(clock);
    container = store.container;
    await container.get(CreateGroup).execute({ name: 'gh', settings: [{ tempMin: 10 }, { tempMax: 35 }] });
  });
  afterEach(async () => {
    await store.close();
  });

  const ranges = async (): Promise<Record<string, unknown>> =>
    Object.fromEntries(
      [...watchedRanges((await container.get(GetGroup).execute({ name: 'gh' })).settings)].map(
        ([topic, { range }]) => [topic, range],
      ),
    );

  it('when a recipe is assigned, then its first stage bands become the alert ranges and the stage shows with its day', async () => {
    const set = await hortus(container, ['group', 'stage', 'gh', '--recipe', lettuce]);
    expect(set.code, set.stderr).to.equal(0);
    expect(set.stdout).to.match(/stage seedling of Head lettuce, floating hydroponics started/u);
    expect(await ranges()).to.deep.include({
      'esp/air/temperature': { min: 19, max: 24 },
      'esp/air/humidity': { min: 50, max: 70 },
      'esp/derived/vpd': { min: 0.65, max: 1.5 },
      'esp/derived/dli': { max: 22 },
    });
    now = new Date(now.getTime() + 3 * DAY);
    const shown = await hortus(container, ['group', 'stage', 'gh']);
    expect(shown.code, shown.stderr).to.equal(0);
    expect(shown.stdout).to.match(/^Stage: +seedling \(day 4 of 11\)$/mu);
    expect(shown.stdout).to.match(/^Next: +pond on 2026-03-12 09:00:00 UTC$/mu);
    expect(shown.stdout).to.match(/^Photoperiod: +24 h of light$/mu);
  });

  it('when the start lies in the past, then the stage lengths count from it and the later stage thresholds go into the rules as numbers', async () => {
    await container.get(CreateAction).execute({
      group: 'gh',
      object: 'fan',
      value: 'off',
      automations: [
        { sensorAutomations: [{ sensor: 'vpd', condition: 'less than', value: '0.3', action: 'on' }] },
      ],
    });
    const set = await hortus(container, [
      '--json',
      'group',
      'stage',
      'gh',
      '--recipe',
      tomato,
      '--stage',
      'seedling',
      '--started',
      '2026-01-01',
    ]);
    expect(set.code, set.stderr).to.equal(0);
    expect(JSON.parse(set.stdout)).to.deep.include({ stage: 'fruiting', rulesUpdated: 1, rulesAdded: 1 });
    const fan = await container.get(GetAction).execute({ group: 'gh', object: 'fan' });
    expect(fan.automations[0]?.sensorAutomations).to.deep.equal([
      { action: 'on', sensor: 'vpd', condition: 'less than', value: '0.6' },
      { action: 'on', sensor: 'temperature', condition: 'above', value: '27' },
    ]);
    const shown = JSON.parse((await hortus(container, ['--json', 'group', 'stage', 'gh'])).stdout) as {
      day: number;
      startedAt: string;
    };
    // 28 + 28 days after 2026-01-01 (local midnight in UTC, the default zone).
    expect(shown).to.deep.include({ day: 4, startedAt: '2026-02-26T00:00:00.000Z' });
  });

  it('when a stage length is over, then the engine check moves the group on, and a person edit of tempMin/tempMax wins until then', async () => {
    await hortus(container, ['group', 'stage', 'gh', '--recipe', lettuce]);
    // The web client writes the whole settings, with its own temperature band.
    await container
      .get(UpdateGroupSettings)
      .execute({ name: 'gh', settings: [{ tempMin: 17 }, { tempMax: 26 }] });
    now = new Date(now.getTime() + 5 * DAY);
    expect(await container.get(AdvanceStages).execute(clock.now())).to.deep.equal([]);
    expect((await ranges())['esp/air/temperature']).to.deep.equal({ min: 17, max: 26 });
    now = new Date(now.getTime() + 6 * DAY);
    const started = await container.get(AdvanceStages).execute(clock.now());
    expect(started.map((s) => s.stage)).to.deep.equal(['pond']);
    expect(await ranges()).to.deep.include({
      'esp/air/temperature': { min: 19, max: 24 },
      'esp/derived/dli': { max: 18 },
    });
    // Written once: a second check changes nothing.
    expect(await container.get(AdvanceStages).execute(clock.now())).to.deep.equal([]);
    const shown = await hortus(container, ['group', 'stage', 'gh']);
    expect(shown.stdout).to.match(/^Stage: +pond \(day 1 of 24\)$/mu);
  });

  it('when the stage is changed by hand, then the assigned recipe is used; --clear drops it', async () => {
    await hortus(container, ['group', 'stage', 'gh', '--recipe', tomato]);
    const moved = await hortus(container, ['group', 'stage', 'gh', '--stage', 'fruiting']);
    expect(moved.code, moved.stderr).to.equal(0);
    expect((await ranges())['esp/air/temperature']).to.deep.equal({ min: 16, max: 29 });
    const cleared = await hortus(container, ['group', 'stage', 'gh', '--clear']);
    expect(cleared.stdout).to.match(/no recipe any more/u);
    expect((await hortus(container, ['group', 'stage', 'gh'])).stdout).to.match(/has no recipe/u);
  });

  it('when the input is wrong, then a clear error names it and nothing is written', async () => {
    const dir = scratchDataDir();
    mkdirSync(dir, { recursive: true });
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ name: 'x', stages: [{ name: 'a', vpd: { min: 2, max: 1 } }] }));
    const cases: [string[], RegExp][] = [
      [['--stage', 'seedling'], /has no recipe yet/u],
      [
        ['--recipe', lettuce, '--stage', 'flowering'],
        /flowering is not a stage of .*seedling, pond, harvest/u,
      ],
      [['--recipe', lettuce, '--started', '2026-04-01'], /must not lie in the future/u],
      [['--recipe', lettuce, '--started', 'yesterday'], /started/u],
      [['--recipe', bad], /stages\[0\]\.vpd\.min.*must be below max/u],
      [['--recipe', join(dir, 'missing.yaml')], /cannot read the recipe/u],
      [['--clear', '--stage', 'pond'], /--clear takes no other option/u],
    ];
    for (const [args, message] of cases) {
      const outcome = await hortus(container, ['group', 'stage', 'gh', ...args]);
      expect(outcome.code, args.join(' ')).to.not.equal(0);
      expect(outcome.stderr, args.join(' ')).to.match(message);
    }
    expect((await hortus(container, ['group', 'stage', 'gh'])).stdout).to.match(/has no recipe/u);
    expect((await ranges())['esp/air/temperature']).to.deep.equal({ min: 10, max: 35 });
  });
});
