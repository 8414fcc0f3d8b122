import { expect } from 'chai';
import { compareSync } from 'bcryptjs';
import { type MigrationReport } from '@hortus/cli';
import { type Db } from 'mongodb';
import { hortus } from './harness.js';
import {
  collectionOf,
  counts,
  eachMigrationPair,
  oid,
  OLD_PASSWORD,
  originalHash,
  serveTarget,
  snapshot,
  type Target,
  uri,
  userId,
  when,
  withMongo,
  writeOriginal,
} from './migrate-fixture.js';

describe('hortus migrate: moving over from the original service', function () {
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

  withMongo(
    when(
      'when the original is migrated with its time zone, then Hortus serves its data, the old password logs in, and the source is untouched',
    ),
    async () => {
      await writeOriginal(source, hash);
      const before = await snapshot(source);

      const { code, stdout, stderr } = await hortus(target.container, [
        'migrate',
        '--from',
        sourceUri,
        '--time-zone',
        'Europe/Berlin',
        '--json',
      ]);

      const report = JSON.parse(stdout) as MigrationReport;
      // Rejected documents make the exit code 2, as with `readings import`; everything else was copied.
      expect(code, stderr).to.equal(2);
      expect(report).to.include({
        complete: true,
        interrupted: false,
        dryRun: false,
        timeZone: 'Europe/Berlin',
      });
      expect(counts(collectionOf(report, 'datas'))).to.deep.equal({
        read: 7,
        written: 4,
        alreadyThere: 0,
        merged: 0,
        duplicates: 1,
        rejected: 2,
      });
      expect(collectionOf(report, 'datas').rejections).to.deep.equal([
        { id: oid(43).toHexString(), text: 'value must be a number, got "n/a"' },
        { id: oid(46).toHexString(), text: 'group must be a string' },
      ]);
      expect(counts(collectionOf(report, 'groups'))).to.include({ read: 3, written: 2, rejected: 1 });
      expect(counts(collectionOf(report, 'users'))).to.include({ read: 2, written: 1, rejected: 1 });
      expect(collectionOf(report, 'users').rejections[0]).to.deep.equal({
        id: oid(2).toHexString(),
        text: 'email is required',
      });
      expect(counts(collectionOf(report, 'devices'))).to.include({ written: 1, rejected: 1 });
      expect(counts(collectionOf(report, 'actions'))).to.include({ written: 2, rejected: 0 });
      expect(counts(collectionOf(report, 'notifications'))).to.include({ written: 2 });
      expect(counts(collectionOf(report, 'alarms'))).to.include({ written: 1 });
      expect(counts(collectionOf(report, 'history'))).to.include({ written: 1 });
      expect(collectionOf(report, 'tokens')).to.include({ into: null, read: 1, written: 0 });
      expect(await snapshot(source)).to.equal(before);

      const server = await serveTarget(target.dbName);
      try {
        const get = async (path: string): Promise<unknown> => {
          const response = await fetch(`${server.url}${path}`);
          expect(response.status, path).to.equal(200);
          return response.json();
        };
        // 14:00 Berlin summer time is 12:00 UTC; the text value is a number now.
        const newest = (await get('/api/data/latestdata/Temperature?groupId=gh-1')) as unknown[];
        expect(newest).to.have.lengthOf(1);
        expect(newest[0]).to.include({
          group: 'gh-1',
          topic: 'esp/air/temperature',
          value: 24.1,
          time: '2024-05-01T12:05:00.000Z',
        });
        const temperatures = (await get('/api/data/All/temperature?groupId=gh-1')) as {
          value: number;
          time: string;
        }[];
        expect(temperatures.map((r) => [r.value, r.time])).to.deep.equal([
          [24.1, '2024-05-01T12:05:00.000Z'],
          [23.45, '2024-05-01T12:00:00.000Z'],
        ]);
        const latest = (await get('/api/data/latestdata/All?groupId=gh-1')) as {
          topic: string;
          value: number;
        }[];
        expect(latest.map((r) => [r.topic, r.value])).to.have.deep.members([
          ['esp/air/temperature', 24.1],
          ['esp/air/humidity', 61],
          ['esp/ground/moisture/1', 40.5],
        ]);
        const actions = (await get('/api/actions/current_state?group=gh-1')) as {
          message: { object: string; value: string; automations: unknown }[];
        };
        expect(actions.message.map((a) => [a.object, a.value])).to.deep.equal([
          ['led_1', 'off'],
          ['pump_1', 'on'],
        ]);
        expect(actions.message[1]?.automations).to.deep.equal([
          {
            timeAutomations: [{ action: 'on', time: '06:30', frequency: 'every day' }],
            sensorAutomations: [{ action: 'off', sensor: 'humidity', condition: 'above', value: '80' }],
          },
        ]);
        const group = (await get('/api/group/abo?group=gh-1')) as {
          employee: string[];
          settings: unknown;
          package: string;
        };
        expect(group.employee).to.deep.equal(['Ana Grower', 'Ben Hill']);
        expect(group.package).to.equal('medium');
        expect(group.settings).to.deep.equal([
          { tempMin: 15 },
          { tempMax: 30 },
          { emailNotification: true },
          { email: 'ana@example.org' },
        ]);
        const open = (await get('/api/notification/latestdata/notifications?groupId=gh-1')) as {
          message: string;
          ignore: string;
          value?: number;
        }[];
        expect(open.map((n) => [n.message, n.ignore, n.value])).to.have.deep.members([
          ['Temperature above 24', 'false', 24.1],
          ['Moisture low', 'false', 12],
        ]);
        // The user keeps its id, so the chart record and the id the web client holds stay valid.
        const charts = (await get(`/api/historyChart/all/${userId.toHexString()}`)) as {
          charts: { chartId: string; chartName: string; chartData: Record<string, unknown> }[];
        };
        expect(charts.charts.map((c) => [c.chartId, c.chartName])).to.deep.equal([
          ['c1', 'Climate'],
          ['defaultId', 'Bare'],
        ]);
        expect(charts.charts[0]?.chartData).to.deep.include({
          type: 'scatter',
          max_count: 500,
          data_interval: 60000,
        });
        expect(charts.charts[0]?.chartData['datasets']).to.deep.equal([
          {
            checked_temperature: true,
            checked_humidity: true,
            checked_lux: false,
            checked_moisture_1: false,
            checked_moisture_2: false,
            checked_moisture_3: false,
          },
        ]);
        const bare = (await get(`/api/historyChart/settings/${userId.toHexString()}/Bare`)) as Record<
          string,
          unknown
        >;
        expect(JSON.stringify(bare)).to.include('"max_count":100').and.include('"update_interval":15000');

        // The original's cost-10 hash logs in with the old password (the e-mail in any case); a wrong one does not.
        const logIn = (email: string, password: string): Promise<Response> =>
          fetch(`${server.url}/api/auth`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ email, password }),
          });
        const wrong = await logIn('ana@example.org', 'Not-the-old-1!');
        expect(wrong.status).to.equal(401);
        const loggedIn = await logIn('Ana@Example.org', OLD_PASSWORD);
        expect(loggedIn.status).to.equal(200);
        const session = (await loggedIn.json()) as { data: { token: string; userId: string; group: string } };
        expect(session.data).to.include({ userId: userId.toHexString(), group: 'gh-1' });
        const profile = await fetch(`${server.url}/api/apiuserdata/${userId.toHexString()}`, {
          headers: { authorization: `Bearer ${session.data.token}` },
        });
        expect(profile.status).to.equal(200);
        const person = (await profile.json()) as Record<string, unknown>;
        expect(person).to.include({ email: 'ana@example.org', firstName: 'Ana', group: 'gh-1' });
        expect(JSON.stringify(person)).to.not.include('$2');
      } finally {
        await server.close();
      }
      // The user kept its id; the log-in may have rehashed the cost-10 hash, which still matches the old password.
      const stored = await target.store.db.collection('users').findOne({ email: 'ana@example.org' });
      expect(stored?.['_id']).to.deep.equal(userId);
      expect(compareSync(OLD_PASSWORD, String(stored?.['password']))).to.equal(true);
      expect(await target.store.db.collection('tokens').countDocuments()).to.equal(0);
    },
  );

  withMongo(
    when('when the migration runs a second time, then nothing is added twice and the report says so'),
    async () => {
      await writeOriginal(source, hash);
      await hortus(target.container, ['migrate', '--from', sourceUri, '--json']);
      const readingsAfterFirst = await target.store.db.collection('readings').countDocuments();

      const { stdout } = await hortus(target.container, ['migrate', '--from', sourceUri, '--json']);

      const report = JSON.parse(stdout) as MigrationReport;
      expect(counts(collectionOf(report, 'datas'))).to.deep.equal({
        read: 7,
        written: 0,
        alreadyThere: 4,
        merged: 0,
        duplicates: 1,
        rejected: 2,
      });
      for (const name of ['groups', 'users', 'devices', 'actions', 'notifications', 'alarms', 'history']) {
        expect(collectionOf(report, name).written, name).to.equal(0);
        expect(collectionOf(report, name).merged, name).to.equal(0);
      }
      expect(collectionOf(report, 'notifications').alreadyThere).to.equal(2);
      expect(collectionOf(report, 'history').alreadyThere).to.equal(1);
      const db = target.store.db;
      expect(await db.collection('readings').countDocuments()).to.equal(readingsAfterFirst);
      expect(await db.collection('notifications').countDocuments()).to.equal(3);
      expect(await db.collection('users').countDocuments()).to.equal(1);
      expect(await db.collection('actions').countDocuments()).to.equal(2);
      expect(await db.collection('devices').countDocuments()).to.equal(1);
      expect(await db.collection('groups').countDocuments()).to.equal(2);
    },
  );

  withMongo(
    when(
      'when a group of the same name is in Hortus already, then it is merged and the report says what changed',
    ),
    async () => {
      await writeOriginal(source, hash);
      const created = await hortus(target.container, ['group', 'create', 'gh-2', '--package', 'small']);
      expect(created.code, created.stderr).to.equal(0);

      const { stdout } = await hortus(target.container, ['migrate', '--from', sourceUri, '--json']);

      const groups = collectionOf(JSON.parse(stdout) as MigrationReport, 'groups');
      expect(counts(groups)).to.include({ written: 1, merged: 1 });
      expect(groups.notes.map((n) => n.text)).to.include.members([
        'added employees Cy Dee, Dee Ek',
        "package differs: kept Hortus's small (original: big)",
      ]);
      const shown = await hortus(target.container, ['group', 'show', 'gh-2', '--json']);
      expect((JSON.parse(shown.stdout) as { employee: string[] }).employee).to.deep.equal([
        'Cy Dee',
        'Dee Ek',
      ]);

      // A second run finds them listed and adds none again.
      await hortus(target.container, ['migrate', '--from', sourceUri, '--json']);
      const again = await hortus(target.container, ['group', 'show', 'gh-2', '--json']);
      expect((JSON.parse(again.stdout) as { employee: string[] }).employee).to.deep.equal([
        'Cy Dee',
        'Dee Ek',
      ]);
    },
  );
});

describe('hortus migrate: bad input without any database', () => {
  it('when the source cannot be reached, then it exits 5 with a clear message', async () => {
    const { code, stderr } = await hortus(undefined, [
      'migrate',
      '--from',
      'mongodb://127.0.0.1:9/original?serverSelectionTimeoutMS=200',
    ]);

    expect(code).to.equal(5);
    expect(stderr).to.include('cannot reach the source database at mongodb://127.0.0.1:9/original');
  });

  it('when --from is not a MongoDB URI or the time zone is unknown, then it exits 2', async () => {
    const notUri = await hortus(undefined, ['migrate', '--from', 'postgres://x/y']);
    const badZone = await hortus(undefined, [
      'migrate',
      '--from',
      'mongodb://127.0.0.1:9/x',
      '--time-zone',
      'Mars/Olympus',
    ]);

    expect(notUri.code).to.equal(2);
    expect(notUri.stderr).to.include('--from must be a MongoDB URI');
    expect(badZone.code).to.equal(2);
    expect(badZone.stderr).to.include('--time-zone must be an IANA time zone');
  });
});
