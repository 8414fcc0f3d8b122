import { expect } from 'chai';
import {
  AggregateReadings,
  CreateAction,
  CreateDevice,
  GetLatestReading,
  GetRevision,
  QuotaExceededError,
  READING_REPOSITORY,
  type ReadingRepository,
  sensorTopics,
} from '@hortus/core';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { BoundedLines, describeFailure, type ImportSummary } from '@hortus/cli';
import { type Container } from 'inversify';
import { hortus, type StoreContainer, storeContainer } from './harness.js';

const TEMPERATURE = sensorTopics.temperature;

describe('hortus CLI against hostile data', () => {
  let container: Container;
  let store: StoreContainer;
  beforeEach(async () => {
    store = await storeContainer();
    container = store.container;
  });
  afterEach(async () => {
    await store.close();
  });

  describe('readings delete', () => {
    const seed = async (): Promise<ReadingRepository> => {
      const readings = container.get<ReadingRepository>(READING_REPOSITORY);
      // Stored before the clock-skew check existed: only a delete can remove it.
      await readings.add([
        { group: 'demo', topic: TEMPERATURE, value: 21, time: new Date('2025-06-15T10:00:00Z') },
        { group: 'demo', topic: TEMPERATURE, value: 99, time: new Date('2099-01-01T00:00:00Z') },
        { group: 'demo', topic: 'esp/air/humidity', value: 60, time: new Date('2099-01-01T00:00:00Z') },
      ]);
      return readings;
    };

    it('when a future reading is deleted by topic and dates, then it reports the count, latest is real again and the revision changed', async () => {
      await seed();
      const revision = await container.get(GetRevision).execute({ subject: 'readings', group: 'demo' });

      const outcome = await hortus(container, [
        'readings',
        'delete',
        '--group',
        'demo',
        '--topic',
        'temperature',
        '--from',
        '2099-01-01',
        '--to',
        '2099-12-31',
      ]);

      expect(outcome.code).to.equal(0);
      expect(outcome.stdout).to.equal(
        `Deleted 1 reading of group demo (${TEMPERATURE}) from 2099-01-01 00:00:00 UTC to 2099-12-31 23:59:59 UTC.\n`,
      );
      const latest = await container.get(GetLatestReading).execute({ group: 'demo', topic: TEMPERATURE });
      expect(latest.map((reading) => reading.value)).to.deep.equal([21]);
      const buckets = await container.get(AggregateReadings).execute({
        group: 'demo',
        topic: TEMPERATURE,
        interval: '30d',
        startDate: '2099-01-01',
        endDate: '2099-01-02',
      });
      expect(buckets).to.deep.equal([]);
      expect(await container.get(GetRevision).execute({ subject: 'readings', group: 'demo' })).to.not.equal(
        revision,
      );
    });

    it('when no topic is given, then every topic loses its readings in the span, and --json answers the count', async () => {
      await seed();

      const outcome = await hortus(container, [
        'readings',
        'delete',
        '-g',
        'demo',
        '--from',
        '2098-12-31T23:59:59Z',
        '--to',
        '2099-01-01T00:00:00+00:00',
        '--json',
      ]);

      expect(outcome.code).to.equal(0);
      expect(JSON.parse(outcome.stdout)).to.deep.equal({
        group: 'demo',
        from: '2098-12-31T23:59:59.000Z',
        to: '2099-01-01T00:00:00.000Z',
        deleted: 2,
      });
    });

    it('when --from or --to is missing or not strict ISO, or from is after to, then it exits 2 and deletes nothing', async () => {
      const readings = await seed();
      const cases = [
        ['--from', '2099-01-01'],
        ['--from', 'March 7 2025', '--to', '2099-12-31'],
        ['--from', '2099-02-30', '--to', '2099-12-31'],
        ['--from', '2099-01-01T00:00:00', '--to', '2099-12-31'],
        ['--from', '2099-12-31', '--to', '2099-01-01'],
      ];
      for (const args of cases) {
        const outcome = await hortus(container, ['readings', 'delete', '-g', 'demo', ...args]);
        expect(outcome.code, args.join(' ')).to.equal(2);
      }
      expect((await readings.latest('demo', TEMPERATURE))?.value).to.equal(99);
    });
  });

  describe('control characters in stored text', () => {
    const hostile = 'box\u001b]0;pwned\u0007\u001b[2J\r\nAA:FF  forged-row  demo\u009b31m';

    it('when a device type holds escape sequences and a line break, then device list shows them escaped on one row', async () => {
      await container.get(CreateDevice).execute({ deviceId: 'AA:01', group: 'demo', type: hostile });

      const outcome = await hortus(container, ['device', 'list', '--group', 'demo']);

      expect(outcome.code).to.equal(0);
      expect(outcome.stdout).to.not.match(/(?!\n)\p{Cc}/u);
      const lines = outcome.stdout.trimEnd().split('\n');
      expect(lines).to.have.length(2);
      expect(lines[1]).to.match(/^AA:01 /);
      expect(lines[1]).to.contain(
        'box\\u001b]0;pwned\\u0007\\u001b[2J\\r\\nAA:FF  forged-row  demo\\u009b31m ',
      );
    });

    it('when an action value holds escape sequences, then action list and the CLI error text escape them, and --json keeps the raw text', async () => {
      await container.get(CreateAction).execute({ group: 'demo', object: 'pump_1', value: 'on\u001b[2J' });

      const table = await hortus(container, ['action', 'list', '--group', 'demo']);
      const json = await hortus(container, ['action', 'list', '--group', 'demo', '--json']);
      const failed = await hortus(container, ['group', 'show', 'x\u001b]0;pwned\u0007']);

      expect(table.stdout).to.contain('on\\u001b[2J').and.not.contain('\u001b');
      expect((JSON.parse(json.stdout) as { value: string }[])[0]?.value).to.equal('on\u001b[2J');
      expect(failed.code).to.equal(3);
      expect(failed.stderr).to.not.contain('\u001b');
    });
  });

  describe('readings import with an overlong line', () => {
    let dir: string;
    beforeEach(async () => {
      dir = await mkdtemp(join(tmpdir(), 'hortus-hostile-'));
    });
    afterEach(async () => {
      await rm(dir, { recursive: true, force: true });
    });

    it('when one line is 5 MB, then it is rejected with its number and length and the other lines are stored', async () => {
      const path = join(dir, 'dump.ndjson');
      const reading = (value: number): string =>
        JSON.stringify({ group: 'demo', topic: TEMPERATURE, value, time: `2025-06-0${value}T00:00:00Z` });
      const huge = JSON.stringify({
        group: 'demo',
        topic: TEMPERATURE,
        value: 3,
        note: 'x'.repeat(5_000_000),
      });
      await writeFile(path, [reading(1), reading(2), huge, reading(4)].join('\n'));

      const outcome = await hortus(container, ['readings', 'import', path, '--json']);

      expect(outcome.code).to.equal(2);
      const summary = JSON.parse(outcome.stdout) as ImportSummary;
      expect(summary).to.deep.include({ lines: 4, accepted: 3, rejected: 1 });
      expect(summary.rejections).to.deep.equal([
        { line: 3, reason: `line is ${Buffer.byteLength(huge)} bytes, longer than 65536` },
      ]);
    });

    it('when --max-line-bytes is given, then it is the limit; out of bounds it exits 2', async () => {
      const path = join(dir, 'short.csv');
      await writeFile(path, 'group,topic,value\ndemo,esp/a,1\ndemo,esp/a-much-longer-topic,2\n');

      const outcome = await hortus(container, [
        'readings',
        'import',
        path,
        '--max-line-bytes',
        '20',
        '--json',
      ]);
      const bad = await hortus(container, ['readings', 'import', path, '--max-line-bytes', '0']);

      expect((JSON.parse(outcome.stdout) as ImportSummary).rejections.map((r) => r.line)).to.deep.equal([3]);
      expect(bad.code).to.equal(2);
    });

    it('when a 5 MB line streams through the line reader, then it never holds more than the limit of it', async () => {
      const chunks = function* (): Generator<Buffer> {
        yield Buffer.from('first\r\n');
        for (let i = 0; i < 80; i += 1) yield Buffer.alloc(65_536, 0x78);
        yield Buffer.from('\nlast é');
      };
      const reader = new BoundedLines(Readable.from(chunks()), 1024);

      const lines = [];
      for await (const line of reader) lines.push(line);

      expect(lines).to.deep.equal([
        { number: 1, bytes: 6, text: 'first' },
        { number: 2, bytes: 80 * 65_536 },
        { number: 3, bytes: 7, text: 'last é' },
      ]);
      expect(reader.peakHeldBytes).to.be.at.most(1024);
    });
  });

  describe('exit codes', () => {
    it('when a quota is exceeded, then the exit code is 6', () => {
      expect(describeFailure(new QuotaExceededError('device', 1000, 'full')).exitCode).to.equal(6);
    });
  });
});
