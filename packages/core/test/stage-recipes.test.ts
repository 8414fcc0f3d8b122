import { expect } from 'chai';
import {
  InvalidInputError,
  parseRecipe,
  type Recipe,
  stageAt,
  watchedRanges,
  withStageBands,
  withStageThresholds,
} from '@hortus/core';

const recipe: Recipe = parseRecipe({
  name: 'test crop',
  stages: [
    { name: 'seedling', days: 10, temperature: { min: 18, max: 24 }, humidity: { min: 60, max: 80 } },
    { name: 'growth', days: 20, vpd: { min: 0.8, max: 1.2 }, dli: { min: 12, max: 17 }, photoperiod: 16 },
    { name: 'finish', days: 5 },
  ],
});

function refusal(raw: unknown): string {
  try {
    parseRecipe(raw);
  } catch (error) {
    expect(error).to.be.instanceOf(InvalidInputError);
    return (error as InvalidInputError).message;
  }
  throw new Error('accepted');
}

describe('stage recipes: parsing, the stage by date and what a stage writes', () => {
  it('when a recipe is malformed, then the refusal names the field', () => {
    expect(refusal({ name: 'x', stages: [] })).to.match(/stages/u);
    expect(refusal({ name: 'x', stages: [{ name: 'a' }, { name: 'a' }] })).to.match(/stages\[1\]\.name/u);
    expect(refusal({ name: 'x', stages: [{ name: 'a', humidity: { min: 20, max: 120 } }] })).to.match(
      /stages\[0\]\.humidity\.max/u,
    );
    expect(refusal({ name: 'x', stages: [{ name: 'a', days: 1.5 }] })).to.match(/stages\[0\]\.days/u);
    expect(refusal({ name: 'x', stages: [{ name: 'a', vpd: { target: 1 } }] })).to.match(/vpd\.target/u);
    expect(refusal({ name: 'x', stages: [{ name: 'a', photoperiod: 25 }] })).to.match(/photoperiod/u);
    expect(
      refusal({
        name: 'x',
        stages: [
          {
            name: 'a',
            rules: [{ object: 'fan', sensor: 'vpd', condition: 'above', action: 'on', value: 'target.max' }],
          },
        ],
      }),
    ).to.match(/rules\[0\]\.value must be a number/u);
  });

  it('when stages have lengths, then the stage moves on at the same local time, across a DST change too', () => {
    const zone = 'Europe/Berlin';
    // 2026-03-20 08:00 local (CET); the clocks go forward on 2026-03-29.
    const started = new Date('2026-03-20T07:00:00Z');
    const seedling = stageAt(recipe, 'seedling', started, new Date('2026-03-29T21:00:00Z'), zone);
    expect(seedling).to.deep.include({ day: 10 });
    expect(seedling.stage.name).to.equal('seedling');
    // 2026-03-30 08:00 CEST is 06:00Z.
    expect(seedling.endsAt?.toISOString()).to.equal('2026-03-30T06:00:00.000Z');
    const growth = stageAt(recipe, 'seedling', started, new Date('2026-03-30T06:00:00Z'), zone);
    expect(growth).to.deep.include({ day: 1 });
    expect(growth.stage.name).to.equal('growth');
    // Long past every length: the last stage stays, counting its days.
    const last = stageAt(recipe, 'seedling', started, new Date('2026-06-01T12:00:00Z'), zone);
    expect(last.stage.name).to.equal('finish');
    expect(last.endsAt).to.equal(undefined);
  });

  it('when a stage starts, then its bands replace the ranges keeping delays, temperature goes to tempMin/tempMax and DLI bounds only its maximum', () => {
    const settings = [
      { tempMin: 5 },
      { tempMax: 40 },
      { email: 'a@b.c' },
      {
        alertRanges: {
          'esp/air/temperature': { min: 1, max: 50, delayMs: 60_000 },
          'esp/air/humidity': { min: 10, max: 99, hysteresis: 2, delayMs: 300_000 },
          'esp/derived/vpd': { min: 0.1, max: 3, hysteresis: 0.5 },
        },
      },
    ];
    const seedling = withStageBands(settings, recipe.stages[0]!);
    const watched = watchedRanges(seedling.settings);
    expect(watched.get('esp/air/temperature')?.range).to.deep.equal({ min: 18, max: 24 });
    expect(watched.get('esp/air/humidity')?.range).to.deep.equal({
      min: 60,
      max: 80,
      hysteresis: 2,
      delayMs: 300_000,
    });
    const growth = withStageBands(seedling.settings, recipe.stages[1]!);
    const next = watchedRanges(growth.settings);
    // The hysteresis no longer fits the narrower band, so it goes.
    expect(next.get('esp/derived/vpd')?.range).to.deep.equal({ min: 0.8, max: 1.2 });
    expect(next.get('esp/derived/dli')?.range).to.deep.equal({ max: 17 });
    expect(growth.changes.map((c) => c.topic)).to.deep.equal(['esp/derived/vpd', 'esp/derived/dli']);
    expect(growth.settings).to.deep.include({ email: 'a@b.c' });
  });

  it('when a topic range has a no-data deadline only, then the original keys still bound its topic', () => {
    const watched = watchedRanges([
      { tempMin: 12 },
      { tempMax: 30 },
      { alertRanges: { 'esp/air/temperature': { noDataMs: 600_000 } } },
    ]);
    expect(watched.get('esp/air/temperature')?.range).to.deep.equal({ min: 12, max: 30, noDataMs: 600_000 });
  });

  it('when thresholds are written, then matching rules get the number as text and missing ones are added', () => {
    const outcome = withStageThresholds(
      [
        {
          timeAutomations: [],
          sensorAutomations: [
            { action: 'on', sensor: 'VPD', condition: 'below', value: '0.4' },
            { action: 'off', sensor: 'vpd', condition: 'above', value: '0.9' },
          ],
        },
      ],
      [
        { object: 'fan', sensor: 'esp/derived/vpd', condition: 'less than', action: 'on', value: 0.55 },
        { object: 'fan', sensor: 'humidity', condition: 'above', action: 'on', value: 85 },
      ],
    );
    expect(outcome).to.deep.include({ updated: 1, added: 1 });
    expect(outcome.automations[0]?.sensorAutomations).to.deep.equal([
      { action: 'on', sensor: 'VPD', condition: 'below', value: '0.55' },
      { action: 'off', sensor: 'vpd', condition: 'above', value: '0.9' },
      { action: 'on', sensor: 'humidity', condition: 'above', value: '85' },
    ]);
  });
});
