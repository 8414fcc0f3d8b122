import 'reflect-metadata';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import * as chai from 'chai';
import chaiAsPromised from 'chai-as-promised';
import { ConflictError } from '@hortus/core';
import { migrations, SqliteStore } from '@hortus/adapter-sqlite';
import { BASE, count, GROUP, MINUTE, readings, TOPIC, useTempStores } from './fixture.js';

chai.use(chaiAsPromised);
const { expect } = chai;

describe('SQLite store specifics', () => {
  const { newDir } = useTempStores();

  describe('migrations', () => {
    it('when a version-1 file with readings is opened, then it is migrated to the current version and summaries come from the new rollups', async () => {
      const dir = newDir();
      const file = join(dir, 'hortus.db');
      // A file exactly as the first release left it: version 1's tables and two series of readings.
      const v1 = new Database(file);
      v1.pragma('journal_mode = WAL');
      v1.exec('CREATE TABLE schema_version (version INTEGER NOT NULL, applied_at INTEGER NOT NULL)');
      v1.exec(migrations.find(({ version }) => version === 1)?.sql ?? '');
      v1.prepare('INSERT INTO schema_version VALUES (1, 0)').run();
      v1.prepare("INSERT INTO series (id, grp, topic) VALUES (1, ?, ?), (2, ?, 'esp/air/humidity')").run(
        GROUP,
        TOPIC,
        GROUP,
      );
      const insert = v1.prepare('INSERT INTO readings (series, time, value) VALUES (?, ?, ?)');
      const old = readings(600); // 200 minutes at 20 s
      for (const reading of old) insert.run(1, reading.time.getTime(), reading.value);
      insert.run(2, BASE, 55);
      v1.close();

      const store = await SqliteStore.open({ file });
      try {
        const versions = store.database.prepare('SELECT version FROM schema_version ORDER BY version').all();
        expect(versions).to.deep.equal(migrations.map(({ version }) => ({ version })));
        expect(count(store.database, 'rollups_1m')).to.equal(200 + 1);
        expect(count(store.database, 'rollups_1h')).to.equal(4 + 1);

        const repository = store.repositories().readings;
        await repository.add(readings(3, { from: 600 }));
        const all = [...old, ...readings(3, { from: 600 })];
        const buckets = await repository.aggregate({ group: GROUP, topic: TOPIC }, 60 * MINUTE);
        expect(buckets.map((bucket) => bucket.count)).to.deep.equal([63, 180, 180, 180]);
        expect(buckets.reduce((sum, bucket) => sum + bucket.avg * bucket.count, 0)).to.be.closeTo(
          all.reduce((sum, reading) => sum + reading.value, 0),
          1e-6,
        );
        expect(buckets[3]).to.include({ min: 0, max: 20 });
        expect((await repository.latest(GROUP, 'esp/air/humidity'))?.value).to.equal(55);
      } finally {
        await store.close();
      }
    });
  });

  describe('migrations to version 3 (accounts)', () => {
    it('when a version-2 file with users is opened, then they are found by e-mail in any case, without a password, and a same-address duplicate keeps its record', async () => {
      const file = join(newDir(), 'hortus.db');
      const v2 = new Database(file);
      v2.exec('CREATE TABLE schema_version (version INTEGER NOT NULL, applied_at INTEGER NOT NULL)');
      for (const version of [1, 2]) {
        v2.exec(migrations.find((migration) => migration.version === version)?.sql ?? '');
        v2.prepare('INSERT INTO schema_version VALUES (?, 0)').run(version);
      }
      const insert = v2.prepare(
        "INSERT INTO users (id, first_name, last_name, email, grp) VALUES (?, 'A', 'B', ?, 'greenhouse-a')",
      );
      insert.run('0000000000000000000000a1', 'Ana@Example.org');
      // Version 2 compared e-mails case-sensitively, so a file may hold both.
      insert.run('0000000000000000000000a2', 'ANA@example.org');
      insert.run('0000000000000000000000b1', 'Ömer@Example.org');
      v2.close();

      const store = await SqliteStore.open({ file });
      try {
        const users = store.repositories().users;
        expect((await users.findByEmail('ana@EXAMPLE.org'))?.id).to.equal('0000000000000000000000a1');
        expect((await users.findByEmail('ömer@example.org'))?.id).to.equal('0000000000000000000000b1');
        expect(await users.findCredentials('0000000000000000000000a1')).to.deep.equal({ sessionVersion: 0 });
        expect((await users.findById('0000000000000000000000a2'))?.email).to.equal('ANA@example.org');
        await expect(
          users.create({ firstName: 'C', lastName: 'D', email: 'ana@example.ORG', group: 'g' }),
        ).to.be.rejectedWith(ConflictError);
        // The duplicate gets its key once its address changes to a free one.
        await users.changeEmail('0000000000000000000000a2', 'Ana.Two@example.org');
        expect((await users.findByEmail('ana.two@example.org'))?.id).to.equal('0000000000000000000000a2');
      } finally {
        await store.close();
      }
    });
  });
});
