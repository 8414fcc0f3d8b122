import {
  ApplyRetention,
  ConfigError,
  CreateGroup,
  InvalidInputError,
  NotFoundError,
  QueryReadings,
  RecordReadings,
  retentionSettingsFromEnv,
  SetGroupRetention,
} from '@hortus/core';
import { createTestApp, expect, type TestApp } from './support.js';

const DAY_MS = 86_400_000;
const NOW = '2024-06-15T08:30:00.000Z';

describe('retention', () => {
  let app: TestApp;

  /** One reading a day for `days` days up to now, in the group. */
  async function daily(group: string, days: number): Promise<void> {
    const now = Date.parse(NOW);
    await app.get(RecordReadings).execute(
      Array.from({ length: days }, (_, index) => ({
        group,
        topic: 'esp/air/temperature',
        value: index,
        time: new Date(now - index * DAY_MS - 60_000).toISOString(),
      })),
    );
  }

  const kept = async (group: string): Promise<number> =>
    (await app.get(QueryReadings).execute({ group, topic: 'esp/air/temperature', count: '10000' })).length;

  describe('ApplyRetention', () => {
    beforeEach(async () => {
      app = createTestApp({ now: NOW, settings: { retention: { readingDays: 30, batchSize: 7 } } });
      for (const group of ['default', 'short', 'forever', 'no-record']) {
        if (group !== 'no-record') await app.get(CreateGroup).execute({ name: group });
        await daily(group, 100);
      }
      await app.get(SetGroupRetention).execute({ group: 'short', days: '10' });
      await app.get(SetGroupRetention).execute({ group: 'forever', days: 'off' });
    });

    it('when it runs, then readings older than each group’s retention go, in batches with a pause between them', async () => {
      let pauses = 0;

      const result = await app.get(ApplyRetention).execute(async () => {
        pauses += 1;
      });

      expect(result.readings).to.deep.equal({ default: 70, short: 90, 'no-record': 70 });
      expect(await kept('default')).to.equal(30);
      expect(await kept('short')).to.equal(10);
      expect(await kept('forever')).to.equal(100);
      expect(await kept('no-record')).to.equal(30);
      // 70 in batches of 7 is 10 full batches (a pause after each) and an empty last call, per group.
      expect(pauses).to.equal(10 + Math.floor(90 / 7) + 10);
      expect((await app.get(ApplyRetention).execute()).readings).to.deep.equal({});
    });

    it('when an override is set back to default, then the service setting applies again', async () => {
      await app.get(SetGroupRetention).execute({ group: 'forever', days: 'default' });

      expect((await app.get(ApplyRetention).execute()).readings).to.include({ forever: 70 });
      expect(await app.get(ApplyRetention).configured()).to.equal(true);
    });
  });

  it('when nothing is configured, then nothing is deleted and it says it is not configured', async () => {
    app = createTestApp({ now: NOW });
    await daily('g', 5);

    expect(await app.get(ApplyRetention).configured()).to.equal(false);
    expect(await app.get(ApplyRetention).execute()).to.deep.equal({ readings: {}, summaries: 0 });
    await app.get(CreateGroup).execute({ name: 'g' });
    await app.get(SetGroupRetention).execute({ group: 'g', days: 2 });
    expect(await app.get(ApplyRetention).configured()).to.equal(true);
    expect((await app.get(ApplyRetention).execute()).readings).to.deep.equal({ g: 3 });
  });

  it('when an override is not a number of days, off or default, then it is invalid input; an unknown group is not found', async () => {
    app = createTestApp({ now: NOW });
    await app.get(CreateGroup).execute({ name: 'g' });
    for (const days of ['-1', '0', 'soon', '1.5', '36501', '']) {
      await expect(app.get(SetGroupRetention).execute({ group: 'g', days }), days).to.be.rejectedWith(
        InvalidInputError,
        /days must be a whole number of days from 1 to 36500, off \(keep forever\) or default/u,
      );
    }
    await expect(app.get(SetGroupRetention).execute({ group: 'nowhere', days: '5' })).to.be.rejectedWith(
      NotFoundError,
    );
  });

  describe('retentionSettingsFromEnv', () => {
    it('when unset or off, then nothing expires; when set, the days are taken', () => {
      expect(retentionSettingsFromEnv({})).to.deep.equal({});
      expect(retentionSettingsFromEnv({ RETENTION_DAYS: 'off', ROLLUP_RETENTION_DAYS: ' ' })).to.deep.equal(
        {},
      );
      expect(retentionSettingsFromEnv({ RETENTION_DAYS: '90', ROLLUP_RETENTION_DAYS: '730' })).to.deep.equal({
        readingDays: 90,
        rollupDays: 730,
      });
    });

    it('when values are negative, not numbers, or rollups would go first, then a ConfigError names each', () => {
      expect(() => retentionSettingsFromEnv({ RETENTION_DAYS: '-5', ROLLUP_RETENTION_DAYS: 'lots' }))
        .to.throw(ConfigError)
        .with.property('problems')
        .that.deep.equals([
          'RETENTION_DAYS must be a whole number of days from 1 to 36500 or off, got "-5"',
          'ROLLUP_RETENTION_DAYS must be a whole number of days from 1 to 36500 or off, got "lots"',
        ]);
      expect(() => retentionSettingsFromEnv({ RETENTION_DAYS: '0' })).to.throw(
        ConfigError,
        /RETENTION_DAYS/u,
      );
      expect(() => retentionSettingsFromEnv({ RETENTION_DAYS: '90', ROLLUP_RETENTION_DAYS: '30' })).to.throw(
        ConfigError,
        /ROLLUP_RETENTION_DAYS \(30\) must not be shorter than RETENTION_DAYS \(90\)/u,
      );
    });
  });
});
