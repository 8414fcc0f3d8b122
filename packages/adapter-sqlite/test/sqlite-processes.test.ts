import 'reflect-metadata';
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import * as chai from 'chai';
import chaiAsPromised from 'chai-as-promised';
import { InvalidInputError, StoreUnavailableError } from '@hortus/core';
import { DATA_VERSION_TRUSTED_MS, SqliteStore } from '@hortus/adapter-sqlite';
import { BASE, count, GROUP, readings, rejection, TOPIC, useTempStores } from './fixture.js';

chai.use(chaiAsPromised);
const { expect } = chai;

/** Past the time a handle trusts its last look at the file's data_version: another's commit now shows. */
const pastTrustedLook = (): Promise<void> => delay(5 * DATA_VERSION_TRUSTED_MS);

describe('SQLite store specifics', () => {
  const { open, newDir } = useTempStores();

  describe('faults', () => {
    it('when the disk is full, then add rejects with StoreUnavailableError and nothing of the batch is kept', async () => {
      const { store } = await open();
      const repository = store.repositories().readings;
      await repository.add(readings(10));
      const revision = await repository.revision(GROUP);
      const pages = store.database.pragma('page_count', { simple: true }) as number;
      // A database that may not grow past its current size behaves like a full disk: SQLITE_FULL.
      store.database.pragma(`max_page_count = ${pages}`);

      const error = await rejection(repository.add(readings(20_000, { from: 10 })));

      expect(error).to.be.an.instanceOf(StoreUnavailableError);
      expect(error.message).to.match(/full/u);
      expect(count(store.database, 'readings')).to.equal(10);
      expect(await repository.revision(GROUP)).to.equal(revision);
    });

    it('when another process holds the write lock past the busy timeout, then a write rejects with StoreUnavailableError and reads still answer', async () => {
      const first = await open();
      const second = await SqliteStore.open({ file: first.file, busyTimeoutMs: 50 });
      const locker = new Database(first.file);
      try {
        await first.store.repositories().readings.add(readings(1));
        locker.exec('BEGIN IMMEDIATE');

        const started = Date.now();
        const error = await rejection(second.repositories().readings.add(readings(1, { from: 1 })));
        expect(error).to.be.an.instanceOf(StoreUnavailableError);
        expect(Date.now() - started).to.be.at.least(40);
        expect(await second.repositories().readings.latest(GROUP, TOPIC)).to.include({ value: 0 });

        locker.exec('ROLLBACK');
        expect(await second.repositories().readings.add(readings(1, { from: 1 }))).to.equal(1);
      } finally {
        locker.close();
        await second.close();
      }
    });
  });

  describe('two processes on one file', () => {
    it('when one store writes, then the other store reads the change and its revisions change too', async () => {
      const first = await open();
      const second = await SqliteStore.open({ file: first.file });
      try {
        const a = first.store.repositories();
        const b = second.repositories();
        const before = await Promise.all([
          b.readings.revision(GROUP),
          b.actions.revision(GROUP),
          b.groups.revision(GROUP),
        ]);

        await a.readings.add(readings(2));
        await a.actions.create({ group: GROUP, object: 'pump_1', value: 'off', automations: [] });
        await a.groups.create({ name: GROUP, package: 'small', employee: [], settings: [] });
        await pastTrustedLook();

        const after = await Promise.all([
          b.readings.revision(GROUP),
          b.actions.revision(GROUP),
          b.groups.revision(GROUP),
        ]);
        expect(after.filter((revision, i) => revision === before[i])).to.deep.equal([]);
        expect(after).to.deep.equal(
          await Promise.all([
            a.readings.revision(GROUP),
            a.actions.revision(GROUP),
            a.groups.revision(GROUP),
          ]),
        );
        expect(await b.readings.latestOfEveryTopic(GROUP)).to.have.lengthOf(1);

        // Read again and again (kept by the handle), then written by the other: the change shows on the
        // first read once the handle's last look at the file is DATA_VERSION_TRUSTED_MS old.
        const notified = await b.notifications.revision(GROUP);
        expect(await b.notifications.revision(GROUP)).to.equal(notified);
        await a.notifications.create({ group: GROUP, time: new Date(), message: 'too dry' });
        await pastTrustedLook();
        expect(await b.notifications.revision(GROUP)).to.not.equal(notified);
        expect(await b.notifications.revision(GROUP)).to.equal(await a.notifications.revision(GROUP));

        await b.actions.setValue(GROUP, 'pump_1', 'on');
        await pastTrustedLook();
        expect(await a.actions.revision(GROUP)).to.equal(await b.actions.revision(GROUP));
        expect((await a.actions.find(GROUP, 'pump_1'))?.value).to.equal('on');
      } finally {
        await second.close();
      }
    });

    it('when both stores add readings of one new series at once, then every reading is stored once under one series', async () => {
      const first = await open();
      const second = await SqliteStore.open({ file: first.file });
      try {
        const stored = await Promise.all([
          first.store.repositories().readings.add(readings(100)),
          second.repositories().readings.add(readings(100, { from: 50 })),
        ]);
        expect(stored[0] + stored[1]).to.equal(150);
        expect(count(first.store.database, 'series')).to.equal(1);
        const buckets = await second
          .repositories()
          .readings.aggregate({ group: GROUP, topic: TOPIC }, 3_600_000);
        expect(buckets.reduce((sum, bucket) => sum + bucket.count, 0)).to.equal(150);
      } finally {
        await second.close();
      }
    });
  });

  describe('online backup', () => {
    it('when readings are written during a backup, then the copy passes integrity_check and holds one consistent state', async function () {
      this.timeout(30_000);
      const { store, dir } = await open();
      const repository = store.repositories().readings;
      for (let batch = 0; batch < 20; batch += 1)
        await repository.add(readings(2000, { from: batch * 2000 }));
      const target = join(dir, 'backup.db');

      let writing = true;
      let written = 40_000;
      const writer = (async () => {
        while (writing) {
          written += await repository.add(readings(200, { from: written }));
          await new Promise((resolve) => setImmediate(resolve));
        }
      })();
      const result = await store.backup(target);
      writing = false;
      await writer;

      expect(result.totalPages).to.be.greaterThan(0);
      const copy = new Database(target, { readonly: true });
      try {
        expect(copy.pragma('integrity_check', { simple: true })).to.equal('ok');
        const stored = count(copy, 'readings');
        expect(stored).to.be.at.least(40_000).and.at.most(written);
        // Readings and their rollups commit together, so a consistent copy has both or neither.
        expect((copy.prepare('SELECT sum(n) AS n FROM rollups_1h').get() as { n: number }).n).to.equal(
          stored,
        );
        const epochOf = (db: Database.Database): unknown =>
          (db.prepare("SELECT epoch FROM revisions WHERE subject = 'readings'").get() as { epoch: string })
            .epoch;
        expect(epochOf(copy)).not.to.equal(epochOf(store.database));
      } finally {
        copy.close();
      }
      expect(written).to.be.greaterThan(40_000);

      const restored = await SqliteStore.open({ file: target });
      try {
        expect((await restored.repositories().readings.latest(GROUP, TOPIC))?.time.getTime()).to.be.a(
          'number',
        );
      } finally {
        await restored.close();
      }
    });

    it('when the backup file exists, then backup rejects and leaves it alone', async () => {
      const { store, dir } = await open();
      const target = join(dir, 'existing.db');
      writeFileSync(target, 'keep me');

      await expect(store.backup(target)).to.be.rejectedWith(InvalidInputError, /exists already/u);
      expect(readFileSync(target, 'utf8')).to.equal('keep me');
    });
  });

  describe('durability', () => {
    it('when the writing process is killed with SIGKILL, then every acknowledged batch is in the file and it passes integrity_check', async function () {
      this.timeout(30_000);
      const dir = newDir();
      const file = join(dir, 'hortus.db');
      const entry = resolve(fileURLToPath(import.meta.url), '../../src/index.js');
      // The child acknowledges a batch on stdout only after add() resolved, i.e. after COMMIT.
      const script = `
        import { SqliteStore } from ${JSON.stringify(entry)};
        const store = await SqliteStore.open({ file: ${JSON.stringify(file)} });
        const readings = store.repositories().readings;
        for (let batch = 0; ; batch += 1) {
          const items = Array.from({ length: 500 }, (_, i) => ({
            group: 'g', topic: 't', value: i, time: new Date(${BASE} + (batch * 500 + i) * 1000),
          }));
          await readings.add(items);
          process.stdout.write('ack ' + (batch + 1) * 500 + '\\n');
        }
      `;
      const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let acknowledged = 0;
      await new Promise<void>((resolveKilled) => {
        child.stdout.setEncoding('utf8');
        child.stdout.on('data', (text: string) => {
          for (const match of text.matchAll(/ack (\d+)/gu)) acknowledged = Number(match[1]);
          if (acknowledged >= 20_000 && child.exitCode === null && !child.killed) child.kill('SIGKILL');
        });
        child.on('exit', () => resolveKilled());
      });

      expect(acknowledged).to.be.at.least(20_000);
      const store = await SqliteStore.open({ file });
      try {
        expect(store.database.pragma('integrity_check', { simple: true })).to.equal('ok');
        expect(count(store.database, 'readings')).to.be.at.least(acknowledged);
      } finally {
        await store.close();
      }
    });
  });
});
