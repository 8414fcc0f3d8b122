import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { type Clock, type NewReading, READING_REPOSITORY, type ReadingRepository } from '@hortus/core';
import { type Container } from 'inversify';
import { hortus, memoryContainer } from './harness.js';

const fixedClock: Clock = { now: () => new Date('2025-06-01T12:00:00.000Z') };
const group = '=cmd|/c calc';
const readings: NewReading[] = [
  { group, topic: '@esp/air', value: -3.5, time: new Date('2025-05-01T00:00:00Z') },
  { group, topic: '-5', value: 2, time: new Date('2025-05-01T00:00:01Z') },
  { group, topic: "'=kept as is", value: 0, time: new Date('2025-05-01T00:00:02Z') },
];

describe('hortus readings export as CSV: cells a spreadsheet would run', () => {
  let dir: string;
  let source: Container;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'hortus-export-csv-'));
    source = memoryContainer(fixedClock);
    await source.get<ReadingRepository>(READING_REPOSITORY).add(readings);
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('when group or topic start like a formula, then they are quoted behind a single quote, values stay numbers, and an import gives them back', async () => {
    const exported = await hortus(source, ['readings', 'export', '--group', group, '--format', 'csv']);
    expect(exported.code, exported.stderr).to.equal(0);
    expect(exported.stdout).to.equal(
      'group,topic,value,time\n' +
        `"'=cmd|/c calc","''=kept as is",0,2025-05-01T00:00:02.000Z\n` +
        `"'=cmd|/c calc","'-5",2,2025-05-01T00:00:01.000Z\n` +
        `"'=cmd|/c calc","'@esp/air",-3.5,2025-05-01T00:00:00.000Z\n`,
    );

    const file = join(dir, 'export.csv');
    await writeFile(file, exported.stdout);
    const target = memoryContainer(fixedClock);
    const imported = await hortus(target, ['readings', 'import', file, '--json']);
    expect(imported.code, imported.stderr).to.equal(0);
    const back = await target.get<ReadingRepository>(READING_REPOSITORY).page({ group }, undefined, 10);
    expect(
      back.map(({ group: g, topic, value, time }) => ({ group: g, topic, value, time })),
    ).to.have.deep.members(readings);
  });
});
