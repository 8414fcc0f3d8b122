import 'reflect-metadata';
import { statSync } from 'node:fs';
import { expect } from 'chai';
import { type NewReading } from '@hortus/core';
import { type SqliteStore, switchToIncrementalVacuum } from '@hortus/adapter-sqlite';
import { openTestStore } from './fixture.js';

const READINGS = 60_000;
const BATCH = 5000;

async function seed(store: SqliteStore): Promise<void> {
  const readings = store.repositories().readings;
  for (let first = 0; first < READINGS; first += 10_000) {
    const batch: NewReading[] = [];
    for (let i = first; i < first + 10_000; i += 1) {
      batch.push({
        group: 'g',
        topic: 'air/temperature',
        value: 20 + (i % 50) / 10,
        time: new Date(i * 20_000),
      });
    }
    await readings.add(batch);
  }
}

/** Deletes every reading in batches, as a retention pass does (summaries kept). */
async function purge(store: SqliteStore): Promise<number> {
  let deleted = 0;
  for (;;) {
    const removed = await store.repositories().readings.deleteRange({
      group: 'g',
      from: new Date(0),
      to: new Date(READINGS * 20_000),
      limit: BATCH,
      keepSummaries: true,
    });
    deleted += removed;
    if (removed < BATCH) return deleted;
  }
}

function bytesOf(store: SqliteStore, file: string): number {
  // The shrink reaches the file at the checkpoint; the log is emptied so that only the file is measured.
  store.database.pragma('wal_checkpoint(TRUNCATE)');
  return statSync(file).size;
}

describe('SQLite file size after purges (incremental vacuum)', function () {
  this.timeout(60_000);

  it('when a new file has its readings purged in batches, then the pages they held go back and the file shrinks', async () => {
    const { store, file, dispose } = await openTestStore();
    try {
      expect(store.database.pragma('auto_vacuum', { simple: true })).to.equal(2);
      await seed(store);
      const seeded = bytesOf(store, file);

      expect(await purge(store)).to.equal(READINGS);

      expect(store.database.pragma('freelist_count', { simple: true })).to.equal(0);
      expect(bytesOf(store, file)).to.be.below(seeded * 0.75);
    } finally {
      await dispose();
    }
  });

  it('when a file made without auto_vacuum is opened, then only a server start switches it, once, keeping its data', async () => {
    const { store, file, dispose } = await openTestStore();
    try {
      await seed(store);
      // What files made before this version are like.
      store.database.pragma('auto_vacuum = NONE');
      store.database.exec('VACUUM');
      await store.close();
      await store.start();
      expect(store.database.pragma('auto_vacuum', { simple: true })).to.equal(0);

      const notes = await store.prepareToServe();
      const again = await store.prepareToServe();

      expect(notes.map(({ level, event }) => ({ level, event }))).to.deep.equal([
        { level: 'info', event: 'data file switched to incremental vacuum' },
      ]);
      expect(notes[0]?.fields).to.include.keys('bytesBefore', 'bytesAfter', 'ms');
      expect(again).to.deep.equal([]);
      expect(store.database.pragma('auto_vacuum', { simple: true })).to.equal(2);
      expect(store.database.pragma('integrity_check', { simple: true })).to.equal('ok');
      const seeded = bytesOf(store, file);
      expect(await purge(store)).to.equal(READINGS);
      expect(bytesOf(store, file)).to.be.below(seeded * 0.75);
    } finally {
      await dispose();
    }
  });

  it('when the disk lacks room for the one-time rewrite, then it warns with the figures and leaves the file as it was', async () => {
    const { store, file, dispose } = await openTestStore();
    try {
      await seed(store);
      store.database.pragma('auto_vacuum = NONE');
      store.database.exec('VACUUM');

      const notes = switchToIncrementalVacuum(store.database, file, () => 1024);

      expect(notes.map(({ level, event }) => ({ level, event }))).to.deep.equal([
        { level: 'warn', event: 'data file not switched to incremental vacuum' },
      ]);
      expect(String(notes[0]?.fields['reason'])).to.match(
        /has 1024 bytes free, the one-time rewrite needs \d+/u,
      );
      expect(store.database.pragma('auto_vacuum', { simple: true })).to.equal(0);
    } finally {
      await dispose();
    }
  });
});
