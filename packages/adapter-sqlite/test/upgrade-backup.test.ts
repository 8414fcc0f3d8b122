import 'reflect-metadata';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import * as chai from 'chai';
import chaiAsPromised from 'chai-as-promised';
import { InvalidInputError } from '@hortus/core';
import { migrations, SCHEMA_VERSION, SqliteStore } from '@hortus/adapter-sqlite';
import { BASE, GROUP, TOPIC, useTempStores } from './fixture.js';

chai.use(chaiAsPromised);
const { expect } = chai;

/** The schema the released 0.1.0 files had before the lock and firmware columns (versions 14 and 15). */
const OLD_VERSION = 13;

/** A file exactly as an older Hortus left it: the released migrations up to `version`, and a reading and a device. */
function oldFile(file: string, version = OLD_VERSION): void {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.exec('CREATE TABLE schema_version (version INTEGER NOT NULL, applied_at INTEGER NOT NULL)');
  for (const migration of migrations.filter((m) => m.version <= version)) {
    db.exec(migration.sql);
    migration.data?.(db);
    db.prepare('INSERT INTO schema_version VALUES (?, ?)').run(migration.version, Date.UTC(2026, 0, 1));
  }
  db.prepare('INSERT INTO series (id, grp, topic) VALUES (1, ?, ?)').run(GROUP, TOPIC);
  db.prepare('INSERT INTO readings (series, time, value) VALUES (1, ?, 21.5)').run(BASE);
  db.prepare(
    "INSERT INTO devices (id, device_id, grp, type) VALUES ('0000000000000000000000d1', 'aabbccddeeff', ?, 'box')",
  ).run(GROUP);
  db.close();
}

function versionOf(file: string): number {
  const db = new Database(file, { readonly: true });
  try {
    return (db.prepare('SELECT max(version) AS v FROM schema_version').get() as { v: number }).v;
  } finally {
    db.close();
  }
}

describe('SQLite upgrade of an older file', () => {
  const { newDir } = useTempStores();

  it('when a schema-13 file is opened, then a copy at 13 is kept beside it first and its data survives the upgrade', async () => {
    const dir = newDir();
    const file = join(dir, 'hortus.db');
    oldFile(file);

    const store = await SqliteStore.open({ file });
    try {
      const backup = store.lastUpgradeBackup();
      expect(backup).to.include({ fromVersion: OLD_VERSION, toVersion: SCHEMA_VERSION });
      expect(backup?.file).to.match(new RegExp(`^${file}\\.schema-13-\\d{8}T\\d{6}\\.\\d{3}Z\\.bak$`, 'u'));
      expect(versionOf(backup?.file ?? '')).to.equal(OLD_VERSION);
      expect(versionOf(file)).to.equal(SCHEMA_VERSION);
      expect((await store.repositories().readings.latest(GROUP, TOPIC))?.value).to.equal(21.5);
      expect((await store.repositories().devices.listByGroup(GROUP)).map(({ group }) => group)).to.deep.equal(
        [GROUP],
      );
      expect((await store.schema()).applied.map(({ version }) => version)).to.deep.equal(
        migrations.map(({ version }) => version),
      );
      const notes = await store.prepareToServe();
      expect(notes[0]).to.deep.include({
        level: 'info',
        event: 'data file backed up before its schema upgrade',
      });

      // The copy is a working store of the old version: putting it back undoes the upgrade.
      const copy = new Database(backup?.file ?? '', { readonly: true });
      expect(copy.prepare('SELECT value FROM readings').get()).to.deep.equal({ value: 21.5 });
      copy.close();
    } finally {
      await store.close();
    }
  });

  it('when the directory lacks room for the copy and the migration, then start refuses, naming the room, and changes nothing', async () => {
    const dir = newDir();
    const file = join(dir, 'hortus.db');
    oldFile(file);

    const refused = await expect(
      SqliteStore.open({ file, freeBytes: () => 10 * 1024 * 1024 }),
    ).to.be.rejectedWith(InvalidInputError);

    expect(refused.message).to.match(/needs an upgrade from schema version 13 to \d+/u);
    expect(refused.message).to.match(/needs \d+ MB free in .*, and 10 MB is free/u);
    expect(versionOf(file)).to.equal(OLD_VERSION);
    expect(readdirSync(dir).filter((name) => name.endsWith('.bak'))).to.deep.equal([]);
  });

  it('when the file is new or already current, then no copy is made', async () => {
    const dir = newDir();
    const file = join(dir, 'hortus.db');
    const created = await SqliteStore.open({ file });
    expect(created.lastUpgradeBackup()).to.equal(undefined);
    await created.close();
    const reopened = await SqliteStore.open({ file, freeBytes: () => 0 });
    expect(reopened.lastUpgradeBackup()).to.equal(undefined);
    await reopened.close();
    expect(readdirSync(dir).some((name) => name.endsWith('.bak'))).to.equal(false);
    expect(existsSync(file)).to.equal(true);
  });
});
