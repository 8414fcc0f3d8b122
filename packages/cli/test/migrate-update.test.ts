import { expect } from 'chai';
import { type MigrationReport } from '@hortus/cli';
import {
  GROUP_REPOSITORY,
  type GroupRepository,
  HISTORY_CHART_REPOSITORY,
  type HistoryChartRepository,
} from '@hortus/core';
import { type Db, ObjectId } from 'mongodb';
import { hortus } from './harness.js';
import {
  collectionOf,
  eachMigrationPair,
  oid,
  originalHash,
  type Target,
  uri,
  userId,
  when,
  withMongo,
  writeOriginal,
} from './migrate-fixture.js';

/** A user whose chart record holds the default chart twice: edited by the user, then added again by the client. */
async function writeTwinCharts(db: Db, hash: string): Promise<void> {
  await db.collection('groups').insertOne({ _id: oid(10), name: 'gh-1', package: 'small', settings: [] });
  await db.collection('users').insertOne({
    _id: userId,
    firstName: 'Ana',
    lastName: 'Grower',
    email: 'ana@example.org',
    password: hash,
    group: 'gh-1',
  });
  const chart = (chartId: string, maxCount: number, day: number): Record<string, unknown> => ({
    _id: new ObjectId(),
    chartId,
    chartName: 'Climate',
    chartData: { type: 'line', max_count: maxCount, datasets: [{ checked_temperature: true }] },
    createdAt: new Date(`2024-04-0${day}T10:00:00.000Z`),
    updatedAt: new Date(`2024-04-0${day}T10:00:00.000Z`),
  });
  await db.collection('history').insertOne({
    _id: oid(70),
    userId: userId.toHexString(),
    // The user's edited default chart first, then a later default chart of the same id and name.
    charts: [chart('defaultId', 500, 1), chart('defaultId', 100, 2), chart('c2', 200, 3)],
  });
}

/** An ObjectId made at `seconds` (as the original's driver made them at insert time), unique by `n`. */
function idAt(seconds: number, n: number): ObjectId {
  return ObjectId.createFromHexString(
    `${seconds.toString(16).padStart(8, '0')}${n.toString(16).padStart(16, '0')}`,
  );
}

describe('hortus migrate: re-runs with --update, dry runs and the source it is given', function () {
  this.timeout(60_000);
  let source: Db;
  let sourceUri: string;
  let target: Target;
  let hash: string;

  before(function () {
    if (uri === '') return;
    hash = originalHash();
  });

  eachMigrationPair((pair) => ({ source, sourceUri, target } = pair));

  const migrate = async (...extra: string[]): Promise<MigrationReport> => {
    const { code, stdout, stderr } = await hortus(target.container, [
      'migrate',
      '--from',
      sourceUri,
      '--json',
      ...extra,
    ]);
    expect(code, stderr).to.be.oneOf([0, 2]);
    return JSON.parse(stdout) as MigrationReport;
  };

  const chartsOf = async (): Promise<{ chartId: string; max: unknown }[]> => {
    const record = await target.container
      .get<HistoryChartRepository>(HISTORY_CHART_REPOSITORY)
      .findByUser(userId.toHexString());
    return (record?.charts ?? []).map((c) => ({ chartId: c.chartId, max: c.chartData['max_count'] }));
  };

  withMongo(
    when(
      'when a chart record holds two charts of one id and name, then --update keeps the first (the edited one), as a fresh migration does',
    ),
    async () => {
      await writeTwinCharts(source, hash);
      await migrate();
      const fresh = await chartsOf();
      expect(fresh).to.deep.equal([
        { chartId: 'defaultId', max: 500 },
        { chartId: 'c2', max: 200 },
      ]);

      const updated = await migrate('--update');

      expect(await chartsOf()).to.deep.equal(fresh);
      expect(collectionOf(updated, 'history')).to.include({ merged: 0, alreadyThere: 1 });

      // The second chart named Climate changed in the original: updates go by name to the first, so it is not brought over.
      await source
        .collection('history')
        .updateOne({ _id: oid(70) }, { $set: { 'charts.2.chartData.max_count': 300 } });
      const later = await migrate('--update');
      expect(await chartsOf()).to.deep.equal(fresh);
      expect(
        collectionOf(later, 'history')
          .notes.map((n) => n.text)
          .join('\n'),
      ).to.include('not brought over');
    },
  );

  withMongo(
    when(
      'when a group setting changed in the original after the first run, then --update brings it over and keeps the keys only Hortus has',
    ),
    async () => {
      await writeOriginal(source, hash);
      await migrate();
      const groups = target.container.get<GroupRepository>(GROUP_REPOSITORY);
      const first = await groups.findByName('gh-1');
      await groups.replaceSettings('gh-1', [...(first?.settings as unknown[]), { lux: 500 }]);
      await source
        .collection('groups')
        .updateOne({ _id: oid(10) }, { $set: { 'settings.1': { tempMax: 32 } } });

      const kept = await migrate();
      expect(collectionOf(kept, 'groups').notes.map((n) => n.text)).to.include(
        "settings differ: kept Hortus's; --update brings the original's over",
      );
      expect((await groups.findByName('gh-1'))?.settings).to.deep.include({ tempMax: 30 });

      const updated = await migrate('--update');

      expect(collectionOf(updated, 'groups').notes.map((n) => n.text)).to.include(
        "settings brought over from the original (tempMax); Hortus's own kept (lux)",
      );
      expect((await groups.findByName('gh-1'))?.settings).to.deep.equal([
        { tempMin: 15 },
        { tempMax: 32 },
        { emailNotification: true },
        { email: 'ana@example.org' },
        { lux: 500 },
      ]);
      const again = await migrate('--update');
      expect(collectionOf(again, 'groups').notes).to.deep.equal([]);
    },
  );

  withMongo(
    when(
      'when hourly readings repeat the fall-back hour at the same wall time, then the second pass is stored an hour later and a true duplicate is still one',
    ),
    async () => {
      // Berlin, 27 October 2024: 02:00 local is 00:00Z in the first pass and 01:00Z in the second.
      const firstPass = Date.UTC(2024, 9, 27, 0, 0) / 1000;
      const secondPass = firstPass + 3600;
      const wall = new Date('2024-10-27T02:00:00.000Z');
      const topics = ['temperature', 'humidity', 'lux', 'moisture/1', 'moisture/2'];
      let n = 0;
      const reading = (at: number, topic: string, value: string): Record<string, unknown> => ({
        _id: idAt(at, (n += 1)),
        time: wall,
        topic: `esp/${topic}`,
        value,
        group: 'gh-1',
      });
      await source.collection('groups').insertOne({ _id: oid(10), name: 'gh-1', package: 'small' });
      await source.collection('datas').insertMany([
        ...topics.map((topic) => reading(firstPass, topic, '10')),
        ...topics.map((topic) => reading(secondPass, topic, '10')),
        // Stored twice a second apart: a true duplicate in the second pass.
        reading(secondPass + 1, 'temperature', '10'),
      ]);

      const report = await migrate('--time-zone', 'Europe/Berlin');

      expect(collectionOf(report, 'datas')).to.include({ read: 11, written: 10, duplicates: 1 });
      const stored = await target.store.db.collection('readings').find({ topic: 'esp/lux' }).toArray();
      expect(stored.map((r) => (r['time'] as Date).toISOString()).sort()).to.deep.equal([
        '2024-10-27T00:00:00.000Z',
        '2024-10-27T01:00:00.000Z',
      ]);
    },
  );

  withMongo(
    when(
      'when the ids do not tell when readings were stored, then a repeat with another value is the second pass',
    ),
    async () => {
      const wall = new Date('2024-10-27T02:00:00.000Z');
      await source.collection('datas').insertMany([
        { _id: oid(40), time: wall, topic: 'esp/lux', value: '10', group: 'gh-1' },
        { _id: oid(41), time: wall, topic: 'esp/lux', value: '12', group: 'gh-1' },
        { _id: oid(42), time: wall, topic: 'esp/lux', value: '12', group: 'gh-1' },
      ]);

      const report = await migrate('--time-zone', 'Europe/Berlin', '--dry-run');

      expect(collectionOf(report, 'datas')).to.include({ read: 3, written: 2, duplicates: 1 });
    },
  );

  withMongo(
    when('when a dry run and then a real run read the same source, then they count the same'),
    async () => {
      await writeOriginal(source, hash);
      await source
        .collection('groups')
        .insertOne({ _id: oid(13), name: 'gh-1', package: 'medium', employee: 'Eve' });
      await source.collection('devices').insertMany([
        // The same box twice in its group, and once more in another group.
        { _id: oid(22), deviceId: '246F28AA0001', group: 'gh-1', type: 'sensor-box' },
        { _id: oid(23), deviceId: '246F28AA0001', group: 'gh-2', type: 'sensor-box' },
      ]);
      // A second chart record of the same user, with one chart the first has and one it lacks.
      await source.collection('history').insertOne({
        _id: oid(71),
        userId: userId.toHexString(),
        charts: [{ chartName: 'Bare' }, { chartId: 'c9', chartName: 'Soil', chartData: { max_count: 50 } }],
      });

      const dry = await migrate('--dry-run');
      const real = await migrate();

      const tally = (report: MigrationReport): unknown =>
        report.collections.map((c) => ({
          collection: c.collection,
          read: c.read,
          written: c.written,
          alreadyThere: c.alreadyThere,
          merged: c.merged,
          duplicates: c.duplicates,
          rejected: c.rejected,
          skipped: c.skipped,
        }));
      expect(tally(dry)).to.deep.equal(tally(real));
      expect(collectionOf(real, 'devices')).to.include({ written: 1, alreadyThere: 1, rejected: 2 });
    },
  );

  withMongo(
    when("when a box's own form of its id is copied, then the device list shows the MAC on its label"),
    async () => {
      await source.collection('devices').insertMany([
        // What the box sends for 24:6F:28:AA:00:1A and 24:6F:28:AA:00:01: its MAC's bytes reversed.
        { _id: oid(20), deviceId: '1a00aa286f24', group: 'gh-1', type: 'sensor-box' },
        { _id: oid(21), deviceId: '100aa286f24', group: 'gh-1', type: 'sensor-box' },
      ]);

      const report = await migrate();
      const listed = await hortus(target.container, ['device', 'list', '--json']);

      expect(collectionOf(report, 'devices')).to.include({ written: 2, rejected: 0 });
      const devices = JSON.parse(listed.stdout) as { label?: string; boxId?: string }[];
      expect(devices.map((d) => [d.label, d.boxId])).to.have.deep.members([
        ['24:6F:28:AA:00:1A', '1a00aa286f24'],
        ['24:6F:28:AA:00:01', '100aa286f24'],
      ]);
      // Copying again finds them.
      expect(collectionOf(await migrate(), 'devices')).to.include({ written: 0, alreadyThere: 2 });
    },
  );

  withMongo(
    when('when --from names a database of Hortus itself, then it refuses with exit 2 and says so'),
    async () => {
      const hortusUri = sourceUri.replace(source.databaseName, target.dbName);
      const { code, stderr } = await hortus(undefined, ['migrate', '--from', hortusUri, '--dry-run']);

      expect(code).to.equal(2);
      expect(stderr).to.include("is a Hortus database (it has Hortus's schemaversions)");
    },
  );
});
