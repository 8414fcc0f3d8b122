import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Clock, CreateGroup, GetGroup, READING_REPOSITORY, type ReadingRepository } from '@hortus/core';
import { expect } from 'chai';
import { hortus, memoryContainer } from './harness.js';

const clock: Clock = { now: () => new Date('2026-06-10T12:00:00.000Z') };

describe('hortus group metrics: the derived series of a group', () => {
  it('when series are switched on with options, then the setting is stored and shown with the lux ceiling note', async () => {
    const container = memoryContainer(clock);
    await container.get(CreateGroup).execute({ name: 'gh', settings: [{ tempMin: 15 }] });
    const set = await hortus(container, [
      'group',
      'metrics',
      'gh',
      '--vpd',
      '--dew-point',
      '--dli',
      '--leaf-offset',
      '-2',
      '--light',
      'white-led',
      '--day-start',
      '06:30',
    ]);
    expect(set.code, set.stderr).to.equal(0);
    expect(set.stdout)
      .to.match(/^VPD: +on/mu)
      .and.match(/65535/u)
      .and.match(/^Day start: +06:30$/mu);
    expect((await container.get(GetGroup).execute({ name: 'gh' })).settings).to.deep.equal([
      { tempMin: 15 },
      {
        metrics: {
          vpd: true,
          dewPoint: true,
          dli: true,
          leafOffset: -2,
          light: 'white-led',
          dayStart: '06:30',
        },
      },
    ]);
    const off = await hortus(container, ['group', 'metrics', 'gh', '--no-dew-point', '--light', '0.0141']);
    expect(off.stdout)
      .to.match(/^Dew point: +off/mu)
      .and.match(/^Light: +0\.0141/mu);
  });

  it('when an option is not valid, then the command fails with exit 2 and the setting is unchanged', async () => {
    const container = memoryContainer(clock);
    await container.get(CreateGroup).execute({ name: 'gh' });
    for (const args of [
      ['--light', 'candle'],
      ['--day-start', '7am'],
      ['--leaf-offset', 'warm'],
    ]) {
      const outcome = await hortus(container, ['group', 'metrics', 'gh', '--vpd', ...args]);
      expect(outcome.code, args.join(' ')).to.equal(2);
    }
    expect((await container.get(GetGroup).execute({ name: 'gh' })).settings).to.deep.equal([]);
  });

  it('when --backfill runs on a group with history, then the past is derived with progress on stderr', async () => {
    const container = memoryContainer(clock);
    await container.get(CreateGroup).execute({ name: 'gh' });
    const readings = container.get<ReadingRepository>(READING_REPOSITORY);
    const base = Date.parse('2026-06-08T10:00:00Z');
    await readings.add(
      Array.from({ length: 60 }, (_, i) => [
        { group: 'gh', topic: 'esp/air/temperature', value: 22, time: new Date(base + i * 600_000) },
        { group: 'gh', topic: 'esp/air/humidity', value: 60, time: new Date(base + i * 600_000 + 1000) },
      ]).flat(),
    );
    const outcome = await hortus(container, ['group', 'metrics', 'gh', '--vpd', '--backfill']);
    expect(outcome.code, outcome.stderr).to.equal(0);
    expect(outcome.stdout).to.match(/Backfill: 60 values stored/u);
    expect(outcome.stderr).to.match(/group\.metrics\.backfill\.progress/u);
    expect(await readings.newestFirst({ group: 'gh', topic: 'esp/derived/vpd' }, 100)).to.have.lengthOf(60);
  });

  it('when readings import holds a reading under esp/derived/, then that line is refused and the rest stored', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'hortus-metrics-'));
    try {
      const container = memoryContainer(clock);
      const file = join(dir, 'forged.csv');
      await writeFile(
        file,
        'group,topic,value,time\ngh,esp/derived/vpd,9,2026-06-10T10:00:00Z\ngh,esp/air/humidity,50,2026-06-10T10:00:00Z\n',
      );
      const outcome = await hortus(container, ['readings', 'import', file]);
      expect(outcome.code).to.not.equal(0);
      expect(outcome.stdout + outcome.stderr).to.match(/esp\/derived\//u);
      const readings = container.get<ReadingRepository>(READING_REPOSITORY);
      expect(await readings.latest('gh', 'esp/derived/vpd')).to.equal(undefined);
      expect(await readings.latest('gh', 'esp/air/humidity')).to.not.equal(undefined);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
