import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { InMemoryReadingRepository } from '@hortus/adapter-memory';
import {
  type Clock,
  type NewReading,
  QueryReadings,
  READING_REPOSITORY,
  type ReadingRepository,
  StoreUnavailableError,
} from '@hortus/core';
import { type ImportSummary } from '@hortus/cli';
import { type Container } from 'inversify';
import { Capture, hortus, memoryContainer } from './harness.js';

const fixedClock: Clock = { now: () => new Date('2025-06-01T12:00:00.000Z') };

describe('hortus readings import (in-process, memory store)', () => {
  let dir: string;
  let container: Container;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'hortus-import-'));
    container = memoryContainer(fixedClock);
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const file = async (name: string, lines: readonly string[]): Promise<string> => {
    const path = join(dir, name);
    await writeFile(path, `${lines.join('\n')}\n`);
    return path;
  };
  const stored = (topic: string, group = 'gh-1', count = 10_000): Promise<{ value: number; time: Date }[]> =>
    container.get(QueryReadings).execute({ group, topic, count });

  it('when a file of 100 000 CSV readings holds bad lines, then the rest is stored and the bad lines are reported by number', async function () {
    this.timeout(60_000);
    const start = Date.parse('2025-01-01T00:00:00.000Z');
    const lines = ['group,topic,value,time'];
    const bad = new Map<number, string>([
      [1_000, 'gh-1,esp/air/temperature,warm,2025-01-01T00:00:00Z'],
      [50_000, 'gh-1,esp/air/temperature,21.5,yesterday'],
      [77_777, 'gh-1,esp/air/temperature'],
    ]);
    for (let i = 0; i < 100_000; i += 1) {
      const lineNumber = lines.length + 1;
      lines.push(
        bad.get(lineNumber) ??
          `gh-1,${i % 2 === 0 ? 'esp/air/temperature' : 'esp/air/humidity'},${(i % 400) / 10},${new Date(start + i * 60_000).toISOString()}`,
      );
    }
    const path = await file('big.csv', lines);

    const { code, stdout, stderr } = await hortus(container, ['readings', 'import', path, '--json']);

    const summary = JSON.parse(stdout) as ImportSummary;
    expect(summary).to.deep.include({
      format: 'csv',
      lines: 100_000,
      accepted: 99_997,
      stored: 99_997,
      rejected: 3,
    });
    expect(summary.rejections).to.deep.equal([
      { line: 1_000, reason: 'value must be a finite number' },
      {
        line: 50_000,
        reason: 'time must be an RFC 3339 date-time with Z or an offset, such as 2025-06-15T10:00:00Z',
      },
      { line: 77_777, reason: 'expected 4 fields, found 2' },
    ]);
    expect(code).to.equal(2);
    expect(await stored('esp/air/humidity')).to.have.length(10_000);
    const stderrLines = stderr
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as { event?: string; percent?: number; error?: { code: string } });
    const progress = stderrLines.filter((line) => line.event === 'readings.import.progress');
    expect(progress.length).to.be.within(2, 11);
    expect(progress.at(-1)?.percent).to.equal(100);
    expect(stderrLines.at(-1)?.error?.code).to.equal('INVALID_INPUT');
    expect(stderrLines).to.have.length(progress.length + 1);
  });

  it('when an NDJSON file mixes single readings and the compact form, then each becomes readings and bad ones name their line', async () => {
    const path = await file('box.ndjson', [
      '{"group":"gh-1","topic":"esp/air/temperature","value":21.5,"time":"2025-05-01T10:00:00Z"}',
      '',
      '{"group":"gh-1","time":"2025-05-01T10:05:00Z","values":{"esp/air/temperature":22,"esp/air/humidity":"55.5"}}',
      'not json',
      '{"group":"gh-1","time":"2025-05-01T10:10:00Z","values":{"esp/air/temperature":"hot","esp/air/humidity":56}}',
      '["an array"]',
      '{"group":"gh-1","values":{}}',
    ]);

    const { code, stdout, stderr } = await hortus(container, ['readings', 'import', path]);

    expect(code).to.equal(2);
    expect(stderr).to.match(
      /\nhortus: 4 rejected \(listed in the summary\); the valid readings were stored\n$/,
    );
    expect(stdout).to.contain(
      `Imported ${path} (ndjson): 6 lines, 4 readings accepted (4 new, 0 already stored), 4 rejected.`,
    );
    expect(stdout).to.contain(
      [
        'LINE  REASON',
        '4     not valid JSON',
        '5     esp/air/temperature: value must be a finite number',
        '6     must be a JSON object',
        '7     values must be an object of <topic>: <number> with at least one entry',
      ].join('\n'),
    );
    expect((await stored('esp/air/temperature')).map((r) => r.value)).to.deep.equal([22, 21.5]);
    expect((await stored('esp/air/humidity')).map((r) => r.value)).to.deep.equal([56, 55.5]);
  });

  it('when every line is valid, then it exits 0; importing the same file again stores nothing new', async () => {
    const path = await file('ok.csv', [
      'time,value,topic,group',
      '2025-05-01T10:00:00Z,1,esp/air/temperature,gh-1',
      '"2025-05-01T10:01:00Z","2","esp/air/temperature","gh-1"',
      ',3,esp/ground/moisture/1,gh-1',
    ]);
    const first = await hortus(container, ['readings', 'import', path, '--json']);
    expect(first.code).to.equal(0);
    expect(JSON.parse(first.stdout)).to.deep.include({ accepted: 3, stored: 3, rejected: 0, rejections: [] });
    expect((await stored('esp/ground/moisture/1'))[0]?.time).to.deep.equal(fixedClock.now());

    const again = await hortus(container, ['readings', 'import', path, '--json']);
    expect(again.code).to.equal(0);
    expect(JSON.parse(again.stdout)).to.deep.include({ accepted: 3, stored: 0 });
  });

  it('when the store becomes unavailable midway, then it exits 5 and says where the import stopped', async () => {
    /** A store that goes away after its first batch, as a database failing over would. */
    class FailingAfterFirstBatch extends InMemoryReadingRepository {
      private batches = 0;
      override async add(readings: readonly NewReading[]): Promise<number> {
        this.batches += 1;
        if (this.batches > 1) throw new StoreUnavailableError();
        return super.add(readings);
      }
    }
    container.rebind<ReadingRepository>(READING_REPOSITORY).to(FailingAfterFirstBatch).inSingletonScope();
    const lines = ['group,topic,value,time'];
    for (let i = 0; i < 30; i += 1)
      lines.push(`gh-1,esp/air/temperature,${i},${new Date(i * 1000).toISOString()}`);
    const path = await file('flaky.csv', lines);

    const { code, stdout, stderr } = await hortus(container, [
      'readings',
      'import',
      path,
      '--batch-size',
      '10',
    ]);

    expect(code).to.equal(5);
    expect(stdout).to.equal('');
    expect(stderr).to.contain(
      'hortus: The data store is unavailable, try again shortly (import stopped at line 12; the readings before line 12 are stored)',
    );
    expect(await stored('esp/air/temperature')).to.have.length(10);
  });

  it('when a CSV file lacks the header, then it exits 2 before storing anything', async () => {
    const path = await file('nohead.csv', ['gh-1,esp/air/temperature,1,2025-05-01T10:00:00Z']);
    const { code, stderr } = await hortus(container, ['readings', 'import', path]);
    expect(code).to.equal(2);
    expect(stderr).to.contain('line 1: a CSV file must start with the header group,topic,value,time');
    expect(await stored('esp/air/temperature')).to.deep.equal([]);
  });

  it('when the file does not exist or the batch size is too big, then it exits 2', async () => {
    expect((await hortus(container, ['readings', 'import', join(dir, 'missing.csv')])).stderr).to.contain(
      'cannot read',
    );
    const path = await file('ok.csv', ['group,topic,value']);
    const tooBig = await hortus(container, ['readings', 'import', path, '--batch-size', '5001']);
    expect(tooBig.code).to.equal(2);
    expect(tooBig.stderr).to.contain('--batch-size must be a whole number from 1 to 5000');
  });

  it('when stderr is a terminal, then progress is a bar redrawn in place, not JSON', async () => {
    const lines = ['group,topic,value,time'];
    for (let i = 0; i < 3000; i += 1)
      lines.push(`gh-1,esp/air/temperature,${i},${new Date(i * 1000).toISOString()}`);
    const path = await file('tty.csv', lines);
    const terminal = new Capture(true);

    const { code } = await hortus(container, ['readings', 'import', path, '--batch-size', '500'], {
      stderr: terminal,
    });

    expect(code).to.equal(0);
    expect(terminal.text.startsWith('\r\u001b[K[')).to.equal(true);
    expect(terminal.text).to.match(
      new RegExp(
        `\\r\\u001b\\[K\\[${'#'.repeat(30)}\\] 100%  3000 lines, 0 rejected, \\d+ lines/s, done\\n$`,
        'u',
      ),
    );
    expect(terminal.text).not.to.contain('{');
  });

  describe('CSV parsing (csv-parse)', () => {
    const raw = async (name: string, text: string): Promise<string> => {
      const path = join(dir, name);
      await writeFile(path, text);
      return path;
    };
    const importJson = async (path: string, ...more: string[]): Promise<ImportSummary> =>
      JSON.parse(
        (await hortus(container, ['readings', 'import', path, '--json', ...more])).stdout,
      ) as ImportSummary;

    it('when a quoted field holds a line break, then it is one field of one record numbered by its first line, later numbers stay right, and no group `line"` is stored', async () => {
      const path = await raw(
        'broken.csv',
        'group,topic,value,time\n' +
          'gh-1,esp/air/temperature,1,2025-05-01T10:00:00Z\n' +
          '"gh-1\nline",esp/air/temperature,2,2025-05-01T10:01:00Z\n' +
          'gh-1,esp/air/temperature,x,2025-05-01T10:02:00Z\n',
      );

      const summary = await importJson(path);

      expect(summary).to.deep.include({ lines: 3, accepted: 2, rejected: 1 });
      expect(summary.rejections).to.deep.equal([{ line: 5, reason: 'value must be a finite number' }]);
      expect(await stored('esp/air/temperature', 'line"')).to.deep.equal([]);
      expect((await stored('esp/air/temperature', 'gh-1\nline')).map((r) => r.value)).to.deep.equal([2]);
    });

    it('when the file has a BOM, CRLF line ends, quoted fields and doubled quotes, then every reading is stored as written', async () => {
      const path = await raw(
        'excel.csv',
        '\uFEFFgroup,topic,value,time\r\n' +
          '"gh-1","esp/air/""quoted""",1.5,2025-05-01T10:00:00Z\r\n' +
          'gh-1,"esp/air/a,b","2",2025-05-01T10:00:00Z\r\n',
      );

      const summary = await importJson(path);

      expect(summary).to.deep.include({ lines: 2, accepted: 2, rejected: 0 });
      expect((await stored('esp/air/"quoted"')).map((r) => r.value)).to.deep.equal([1.5]);
      expect((await stored('esp/air/a,b')).map((r) => r.value)).to.deep.equal([2]);
    });

    it('when a quote is never closed, then that record is rejected once and the records after the line cap are read again', async () => {
      const good = (minute: number): string =>
        `gh-1,esp/air/temperature,${minute},2025-05-01T10:0${minute}:00Z`;
      const path = await raw(
        'unclosed.csv',
        [
          'group,topic,value,time',
          '"gh-1,esp/air/temperature,1,2025-05-01T10:00:00Z',
          good(1),
          good(2),
          good(3),
          good(4),
          good(5),
        ].join('\n'),
      );

      const summary = await importJson(path, '--max-line-bytes', '120');

      expect(summary.rejections).to.deep.equal([
        { line: 2, reason: 'a quoted field is not closed within 120 bytes (lines 2-4)' },
      ]);
      expect(summary).to.deep.include({ lines: 4, accepted: 3 });
      expect((await stored('esp/air/temperature')).map((r) => r.value).sort()).to.deep.equal([3, 4, 5]);
    });

    it('when a quote opens inside an unquoted field, then csv-parse refuses that record and says why', async () => {
      const path = await raw(
        'stray.csv',
        'group,topic,value\ngh-1,esp/a"b"c,1\ngh-1,esp/air/temperature,2\n',
      );

      const summary = await importJson(path);

      expect(summary).to.deep.include({ lines: 2, accepted: 1, rejected: 1 });
      expect(summary.rejections[0]?.line).to.equal(2);
      expect(summary.rejections[0]?.reason).to.match(/^malformed CSV: Invalid Opening Quote/u);
    });
  });
});

describe('hortus readings export (in-process, memory store)', () => {
  let dir: string;
  let source: Container;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'hortus-export-'));
    source = memoryContainer(fixedClock);
    const readings: NewReading[] = [];
    for (let i = 0; i < 4500; i += 1) {
      readings.push({
        group: 'gh-1',
        topic: i % 3 === 0 ? 'esp/air/humidity' : i % 3 === 1 ? 'esp/air/temperature' : 'odd, "quoted" topic',
        value: (i % 500) / 7,
        time: new Date(Date.parse('2025-05-01T00:00:00Z') + i * 1000),
      });
    }
    readings.push({
      group: 'other',
      topic: 'esp/air/humidity',
      value: 1,
      time: new Date('2025-05-01T00:00:00Z'),
    });
    await source.get<ReadingRepository>(READING_REPOSITORY).add(readings);
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const series = async (container: Container, topic: string): Promise<[number, number][]> =>
    (await container.get(QueryReadings).execute({ group: 'gh-1', topic, count: 10_000 })).map((r) => [
      r.time.getTime(),
      r.value,
    ]);

  for (const format of ['csv', 'ndjson'] as const) {
    it(`when a group is exported as ${format} and imported into an empty store, then every reading arrives as it was`, async () => {
      const path = join(dir, `export.${format}`);

      const exported = await hortus(source, [
        'readings',
        'export',
        '--group',
        'gh-1',
        '--format',
        format,
        '--output',
        path,
        '--json',
      ]);
      const target = memoryContainer(fixedClock);
      const imported = await hortus(target, ['readings', 'import', path, '--json']);

      expect(exported.code).to.equal(0);
      expect(JSON.parse(exported.stdout)).to.deep.include({ group: 'gh-1', format, readings: 4500 });
      expect(imported.code).to.equal(0);
      expect(JSON.parse(imported.stdout)).to.deep.include({ lines: 4500, stored: 4500, rejected: 0 });
      for (const topic of ['esp/air/humidity', 'esp/air/temperature', 'odd, "quoted" topic']) {
        expect(await series(target, topic)).to.deep.equal(await series(source, topic));
      }
    });
  }

  it('when written to stdout with a topic and times, then stdout is only the header and the lines in time order, and progress is JSON on stderr', async () => {
    const { code, stdout, stderr } = await hortus(source, [
      'readings',
      'export',
      '--group',
      'gh-1',
      '--topic',
      'temperature',
      '--from',
      '2025-05-01T00:00:01Z',
      '--to',
      '2025-05-01T00:00:07Z',
      '--format',
      'csv',
    ]);

    expect(code).to.equal(0);
    expect(stdout).to.equal(
      'group,topic,value,time\n' +
        `gh-1,esp/air/temperature,${1 / 7},2025-05-01T00:00:01.000Z\n` +
        `gh-1,esp/air/temperature,${4 / 7},2025-05-01T00:00:04.000Z\n` +
        'gh-1,esp/air/temperature,1,2025-05-01T00:00:07.000Z\n',
    );
    const last = JSON.parse(stderr.trimEnd().split('\n').at(-1) ?? '{}') as Record<string, unknown>;
    expect(last).to.deep.include({ event: 'readings.export.progress', readings: 3, done: true });
  });

  it('when stderr is a terminal, then progress is one line redrawn in place', async () => {
    const terminal = new Capture(true);

    const { code } = await hortus(source, ['readings', 'export', '--group', 'gh-1', '--format', 'ndjson'], {
      stderr: terminal,
    });

    expect(code).to.equal(0);
    expect(terminal.text.startsWith('\r')).to.equal(true);
    expect(terminal.text).to.match(/4500 readings exported, \d+ readings\/s, done\n$/u);
  });

  it('when the format is missing or a time is not a date, then it exits 2 and writes nothing', async () => {
    const noFormat = await hortus(source, ['readings', 'export', '--group', 'gh-1']);
    const badTime = await hortus(source, [
      'readings',
      'export',
      '--group',
      'gh-1',
      '--format',
      'csv',
      '--from',
      'soon',
    ]);

    expect(noFormat.code).to.equal(2);
    expect(badTime.code).to.equal(2);
    expect(badTime.stdout).to.equal('');
    expect(badTime.stderr).to.contain('from');
  });
});
