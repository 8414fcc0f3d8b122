import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { loadConfig, type MigrationReport, startServer } from '@hortus/cli';
import { type Db } from 'mongodb';
import { hortus } from './harness.js';
import {
  collectionOf,
  counts,
  eachMigrationPair,
  OLD_PASSWORD,
  originalHash,
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
      'when no MONGODB_URI is set, then it migrates into the SQLite file, a second run adds nothing, and the old password logs in',
    ),
    async () => {
      await writeOriginal(source, hash);
      const dataDir = await mkdtemp(join(tmpdir(), 'hortus-migrate-'));
      const env = { HORTUS_DATA_DIR: dataDir };
      try {
        const first = await hortus(
          undefined,
          ['migrate', '--from', sourceUri, '--time-zone', 'Europe/Berlin', '--json'],
          { env },
        );
        const second = await hortus(
          undefined,
          ['migrate', '--from', sourceUri, '--time-zone', 'Europe/Berlin', '--json'],
          { env },
        );
        const latest = await hortus(undefined, ['readings', 'latest', '--group', 'gh-1', '--json'], { env });

        expect(counts(collectionOf(JSON.parse(first.stdout) as MigrationReport, 'datas'))).to.include({
          written: 4,
          duplicates: 1,
          rejected: 2,
        });
        const again = JSON.parse(second.stdout) as MigrationReport;
        expect(
          again.collections.map((c) => [c.collection, c.written, c.merged]),
          JSON.stringify(again.collections.map((c) => [c.collection, c.notes])),
        ).to.deep.equal(again.collections.map((c) => [c.collection, 0, 0]));
        expect(counts(collectionOf(again, 'datas'))).to.include({ alreadyThere: 4 });
        const newest = JSON.parse(latest.stdout) as { topic: string; value: number; time: string }[];
        expect(newest.find((r) => r.topic === 'esp/air/temperature')).to.include({
          value: 24.1,
          time: '2024-05-01T12:05:00.000Z',
        });

        // The hash landed in the SQLite store's credentials: the old password logs in there too.
        const server = await startServer(
          loadConfig({ HORTUS_DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', AUTOMATIONS: 'off' }),
          { logger: { info: () => undefined, warn: () => undefined, error: () => undefined } },
        );
        try {
          const loggedIn = await fetch(`${server.url}/api/auth`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ email: 'ana@example.org', password: OLD_PASSWORD }),
          });
          expect(loggedIn.status).to.equal(200);
          expect(((await loggedIn.json()) as { data: { userId: string } }).data.userId).to.equal(
            userId.toHexString(),
          );
        } finally {
          await server.close();
        }
      } finally {
        await rm(dataDir, { recursive: true, force: true });
      }
    },
  );

  withMongo(
    when('when --dry-run is given, then everything is read and checked and nothing is written'),
    async () => {
      await writeOriginal(source, hash);
      const emptyTarget = target.store.db;

      const { code, stdout } = await hortus(undefined, [
        'migrate',
        '--from',
        sourceUri,
        '--dry-run',
        '--json',
      ]);

      const report = JSON.parse(stdout) as MigrationReport;
      expect(code).to.equal(2);
      expect(report.dryRun).to.equal(true);
      expect(counts(collectionOf(report, 'datas'))).to.include({
        read: 7,
        written: 4,
        duplicates: 1,
        rejected: 2,
      });
      for (const name of ['readings', 'users', 'groups', 'notifications', 'historycharts']) {
        expect(await emptyTarget.collection(name).countDocuments(), name).to.equal(0);
      }
    },
  );

  withMongo(
    when('when the source holds none of the original collections, then it exits 2 naming them'),
    async () => {
      await source.collection('something_else').insertOne({ a: 1 });

      const { code, stderr } = await hortus(target.container, ['migrate', '--from', sourceUri]);

      expect(code).to.equal(2);
      expect(stderr)
        .to.include('none of the original')
        .and.include(
          'looked for: groups, users, devices, actions, datas, notifications, alarms, history, tokens',
        );
    },
  );

  withMongo(
    when('when the source is the database Hortus uses, then it refuses before writing anything'),
    async () => {
      await writeOriginal(source, hash);

      const { code, stderr } = await hortus(undefined, ['migrate', '--from', sourceUri], {
        env: { MONGODB_URI: sourceUri },
      });

      expect(code).to.equal(2);
      expect(stderr).to.include('the original must stay untouched');
    },
  );
});
