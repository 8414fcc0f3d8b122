import 'reflect-metadata';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { expect } from 'chai';
import { migrations, SqliteStore } from '@hortus/adapter-sqlite';
import { tempDir } from './fixture.js';

const reading = (group: string) => ({ group, topic: 'esp/air/temperature', value: 20, time: new Date() });

describe('SQLite change feed across connections', () => {
  let dir: string;
  const opened: SqliteStore[] = [];
  beforeEach(() => {
    dir = tempDir();
  });
  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function open(file: string): Promise<SqliteStore> {
    const store = await SqliteStore.open({ file });
    opened.push(store);
    return store;
  }

  it('when another server on the file writes, then this server’s feed names the group, and then nothing more', async () => {
    const file = join(dir, 'hortus.db');
    const mine = (await open(file)).repositories();
    const theirs = (await open(file)).repositories();
    const { cursor } = await mine.changeFeed.changesSince(undefined);

    await theirs.readings.add([reading('gh-1')]);
    await theirs.actions.create({ group: 'gh-2', object: 'pump', value: 'off', automations: [] });
    const changed = await mine.changeFeed.changesSince(cursor);
    const after = await mine.changeFeed.changesSince(changed.cursor);

    expect([...changed.groups].sort()).to.deep.equal(['gh-1', 'gh-2']);
    expect(after.groups).to.deep.equal([]);
  });

  it('when a file from before the feed is migrated, then its old counters are not named until they change', async () => {
    const file = join(dir, 'hortus.db');
    // A file as version 11 left it: every migration before the feed's.
    const old = new Database(file);
    old.exec('CREATE TABLE schema_version (version INTEGER NOT NULL, applied_at INTEGER NOT NULL)');
    for (const { version, sql } of migrations.filter((migration) => migration.version <= 11)) {
      old.exec(sql);
      old.prepare('INSERT INTO schema_version VALUES (?, 0)').run(version);
    }
    old
      .prepare(`INSERT INTO revisions (subject, grp, epoch, n) VALUES ('readings', 'old-group', 'abc', 3)`)
      .run();
    old.close();
    const store = (await open(file)).repositories();
    const { cursor } = await store.changeFeed.changesSince(undefined);

    const quiet = await store.changeFeed.changesSince(cursor);
    await store.readings.add([reading('old-group')]);
    const changed = await store.changeFeed.changesSince(quiet.cursor);

    expect(quiet.groups).to.deep.equal([]);
    expect(changed.groups).to.deep.equal(['old-group']);
    expect(await store.readings.revision('old-group')).to.equal('abc.4');
  });
});
