import 'reflect-metadata';
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import * as chai from 'chai';
import chaiAsPromised from 'chai-as-promised';
import { Container } from 'inversify';
import {
  ACCESS_KEY_REPOSITORY,
  ACTION_REPOSITORY,
  AUTOMATION_LOG_REPOSITORY,
  DEVICE_REPOSITORY,
  ENGINE_STATE_REPOSITORY,
  GROUP_REPOSITORY,
  type GroupRepository,
  HISTORY_CHART_REPOSITORY,
  InvalidInputError,
  NOTIFICATION_REPOSITORY,
  READING_REPOSITORY,
  SERVER_SECRET_REPOSITORY,
  STORE_LIFECYCLE,
  StoreUnavailableError,
  USER_REPOSITORY,
} from '@hortus/core';
import {
  SCHEMA_VERSION,
  SqliteAccessKeyRepository,
  SqliteActionRepository,
  SqliteAutomationLogRepository,
  SqliteDeviceRepository,
  SqliteEngineStateRepository,
  SqliteGroupRepository,
  SqliteHistoryChartRepository,
  SqliteNotificationRepository,
  SqliteReadingRepository,
  SqliteServerSecretRepository,
  sqliteSettingsFromEnv,
  SqliteStore,
  SqliteUserRepository,
} from '@hortus/adapter-sqlite';
import { BASE, GROUP, MINUTE, readings, rejection, TOPIC, useTempStores } from './fixture.js';

chai.use(chaiAsPromised);
const { expect } = chai;

describe('SQLite store specifics', () => {
  const { open, newDir } = useTempStores();

  describe('settings and start', () => {
    it('when HORTUS_DATA_DIR is not set, then the file is hortus.db in ./data; when set, in that directory', () => {
      expect(sqliteSettingsFromEnv({})).to.deep.equal({ file: resolve('data', 'hortus.db') });
      expect(
        sqliteSettingsFromEnv({
          HORTUS_DATA_DIR: '/srv/hortus',
          HORTUS_SQLITE_BUSY_TIMEOUT_MS: '250',
          HORTUS_SQLITE_SYNCHRONOUS: 'normal',
        }),
      ).to.deep.equal({ file: '/srv/hortus/hortus.db', busyTimeoutMs: 250, synchronous: 'normal' });
      expect(() => sqliteSettingsFromEnv({ HORTUS_SQLITE_BUSY_TIMEOUT_MS: 'soon' })).to.throw(
        InvalidInputError,
      );
      expect(() => sqliteSettingsFromEnv({ HORTUS_SQLITE_SYNCHRONOUS: 'off' })).to.throw(InvalidInputError);
    });

    it('when the data directory is missing, then start creates it and the file, in WAL mode with the busy timeout and schema version', async () => {
      const dir = newDir();
      const file = join(dir, 'nested', 'data', 'hortus.db');
      const store = await SqliteStore.open({ file, busyTimeoutMs: 1234 });
      try {
        expect(existsSync(file)).to.equal(true);
        expect(store.database.pragma('journal_mode', { simple: true })).to.equal('wal');
        expect(store.database.pragma('busy_timeout', { simple: true })).to.equal(1234);
        // FULL (2) unless asked for NORMAL (1): a commit is on disk before the write is acknowledged.
        expect(store.database.pragma('synchronous', { simple: true })).to.equal(2);
        expect(store.database.prepare('SELECT max(version) AS v FROM schema_version').get()).to.deep.equal({
          v: SCHEMA_VERSION,
        });
        expect(await store.ping()).to.equal(true);
      } finally {
        await store.close();
      }
      expect(await store.ping()).to.equal(false);
      await expect(store.repositories().groups.list()).to.be.rejectedWith(StoreUnavailableError);
    });

    it('when a store is closed and opened again, then everything written before is there', async () => {
      const { store, file } = await open();
      await store.repositories().readings.add(readings(10));
      await store.repositories().groups.create({ name: GROUP, package: 'small', employee: [], settings: [] });
      const revision = await store.repositories().readings.revision(GROUP);
      await store.close();

      const again = await SqliteStore.open({ file, synchronous: 'normal' });
      try {
        expect(again.database.pragma('synchronous', { simple: true })).to.equal(1);
        expect((await again.repositories().readings.latest(GROUP, TOPIC))?.time).to.deep.equal(
          new Date(BASE + 9 * 20_000),
        );
        expect(await again.repositories().groups.findByName(GROUP)).to.include({ package: 'small' });
        expect(await again.repositories().readings.revision(GROUP)).to.equal(revision);
      } finally {
        await again.close();
      }
    });

    it('when the container module is loaded, then every repository port resolves to its SQLite class on the one file, and the lifecycle to the store', async () => {
      const { store } = await open();
      const container = new Container();
      container.load(store.module());
      const bound = [
        [READING_REPOSITORY, SqliteReadingRepository],
        [ACTION_REPOSITORY, SqliteActionRepository],
        [DEVICE_REPOSITORY, SqliteDeviceRepository],
        [NOTIFICATION_REPOSITORY, SqliteNotificationRepository],
        [HISTORY_CHART_REPOSITORY, SqliteHistoryChartRepository],
        [GROUP_REPOSITORY, SqliteGroupRepository],
        [USER_REPOSITORY, SqliteUserRepository],
        [ENGINE_STATE_REPOSITORY, SqliteEngineStateRepository],
        [AUTOMATION_LOG_REPOSITORY, SqliteAutomationLogRepository],
        [ACCESS_KEY_REPOSITORY, SqliteAccessKeyRepository],
        [SERVER_SECRET_REPOSITORY, SqliteServerSecretRepository],
      ] as const;
      for (const [token, type] of bound) {
        expect(container.get(token), String(token)).to.be.an.instanceOf(type);
        expect(container.get(token), 'one instance per container').to.equal(container.get(token));
      }
      expect(container.get(STORE_LIFECYCLE)).to.equal(store);
      await container
        .get<GroupRepository>(GROUP_REPOSITORY)
        .create({ name: 'via-container', package: 'big', employee: [], settings: [] });
      expect(await store.repositories().groups.findByName('via-container')).to.include({ package: 'big' });
    });
  });

  it('when a user is imported with a bcrypt hash, then the file keeps the hash beside the user and no read answers it', async () => {
    const { store } = await open();
    const hash = `$2b$10$${'c'.repeat(53)}`;

    const user = await store.repositories().users.createImported({
      id: '65a000000000000000000001',
      firstName: 'Ana',
      lastName: 'Grower',
      email: 'ana@example.org',
      group: GROUP,
      passwordHash: hash,
    });

    expect(user).to.not.have.property('passwordHash');
    expect(await store.repositories().users.findByEmail('ana@example.org')).to.deep.equal(user);
    expect(store.database.prepare('SELECT password_hash FROM users WHERE id = ?').get(user.id)).to.deep.equal(
      {
        password_hash: hash,
      },
    );
  });

  describe('file modes: the file holds the signing key and password hashes', () => {
    const modeOf = (path: string): string => (statSync(path).mode & 0o777).toString(8);
    let umask: number;
    // The usual umask of a shell or service: without care, files come out 0644 in a 0755 directory.
    beforeEach(() => {
      umask = process.umask(0o022);
    });
    afterEach(() => {
      process.umask(umask);
    });

    it('when the store creates its directory and file, then the directory is 0700 and the file, -wal and -shm are 0600, with nothing to warn of', async function () {
      if (process.platform === 'win32') this.skip();
      const dir = newDir();
      const file = join(dir, 'data', 'hortus.db');
      const store = await SqliteStore.open({ file });
      try {
        await store.repositories().readings.add(readings(3));
        expect(modeOf(join(dir, 'data'))).to.equal('700');
        for (const path of [file, `${file}-wal`, `${file}-shm`]) expect(modeOf(path), path).to.equal('600');
        expect(store.startWarnings()).to.deep.equal([]);
      } finally {
        await store.close();
      }
    });

    it('when a backup is made, then the copy is 0600', async function () {
      if (process.platform === 'win32') this.skip();
      const { store, dir } = await open();
      const target = join(dir, 'copy.db');

      await store.backup(target);

      expect(modeOf(target)).to.equal('600');
    });

    it('when the directory and files exist with wider modes, then start leaves them and warns of each with its fix', async function () {
      if (process.platform === 'win32') this.skip();
      const dir = join(newDir(), 'data');
      mkdirSync(dir, { mode: 0o755 });
      chmodSync(dir, 0o755);
      const file = join(dir, 'hortus.db');
      const first = await SqliteStore.open({ file });
      await first.close();
      chmodSync(file, 0o644);

      const store = await SqliteStore.open({ file });
      try {
        expect(modeOf(file)).to.equal('644');
        expect(store.startWarnings()).to.include.members([
          `${dir} is 0755, other users may read it: chmod 700 ${dir}`,
          `${file} is 0644, other users may read it: chmod 600 ${file}`,
        ]);
      } finally {
        await store.close();
      }
    });
  });

  describe('files it must refuse, left as they were', () => {
    it('when the data directory cannot be created (a file is in the way), then start rejects with a one-line InvalidInputError', async () => {
      const dir = newDir();
      writeFileSync(join(dir, 'occupied'), 'a file, not a directory');
      const file = join(dir, 'occupied', 'data', 'hortus.db');

      const error = await rejection(SqliteStore.open({ file }));

      expect(error).to.be.an.instanceOf(InvalidInputError);
      expect(error.message).to.match(
        /^Cannot use the data file .*hortus\.db: its directory cannot be created/u,
      );
      expect(error.message).not.to.include('\n');
      expect(readFileSync(join(dir, 'occupied'), 'utf8')).to.equal('a file, not a directory');
    });

    it('when the data directory is read-only, then start rejects with a one-line InvalidInputError', async function () {
      // Root writes through any permission bits, so only another user can see this refusal.
      if (process.getuid?.() === 0) this.skip();
      const dir = newDir();
      const { chmodSync } = await import('node:fs');
      chmodSync(dir, 0o555);
      try {
        const error = await rejection(SqliteStore.open({ file: join(dir, 'hortus.db') }));
        expect(error).to.be.an.instanceOf(InvalidInputError);
        expect(error.message).not.to.include('\n');
      } finally {
        chmodSync(dir, 0o755);
      }
    });

    it('when the file is not a SQLite database, then start rejects saying so and the file is unchanged', async () => {
      const dir = newDir();
      const file = join(dir, 'hortus.db');
      const content = Buffer.from("these are somebody else's notes, not a database\n".repeat(200));
      writeFileSync(file, content);

      const error = await rejection(SqliteStore.open({ file }));

      expect(error).to.be.an.instanceOf(InvalidInputError);
      expect(error.message).to.equal(`Cannot use the data file ${file}: it is not a SQLite database`);
      expect(readFileSync(file).equals(content)).to.equal(true);
      expect(existsSync(`${file}-wal`)).to.equal(false);
    });

    it("when the file is another application's SQLite database, then start rejects and adds no table", async () => {
      const dir = newDir();
      const file = join(dir, 'hortus.db');
      const other = new Database(file);
      other.exec("CREATE TABLE recipes (name TEXT); INSERT INTO recipes VALUES ('soup')");
      other.close();
      const before = readFileSync(file);

      const error = await rejection(SqliteStore.open({ file }));

      expect(error).to.be.an.instanceOf(InvalidInputError);
      expect(error.message).to.match(/holds tables of another application/u);
      expect(readFileSync(file).equals(before)).to.equal(true);
    });

    it('when the file was written by a newer schema version, then start rejects naming both versions and changes nothing', async () => {
      const { store, file } = await open();
      await store.repositories().readings.add(readings(3));
      await store.close();
      const raw = new Database(file);
      raw
        .prepare('INSERT INTO schema_version (version, applied_at) VALUES (?, ?)')
        .run(SCHEMA_VERSION + 1, 0);
      raw.close();
      const before = readFileSync(file);

      const error = await rejection(SqliteStore.open({ file }));

      expect(error).to.be.an.instanceOf(InvalidInputError);
      expect(error.message).to.equal(
        `Cannot use the data file ${file}: it was written by a newer Hortus (schema version ${SCHEMA_VERSION + 1}; this one knows up to ${SCHEMA_VERSION})`,
      );
      expect(readFileSync(file).equals(before)).to.equal(true);
    });
  });

  describe('indexes', () => {
    it('when the reads of readings run, then every query plan searches an index and none scans readings or sorts', async () => {
      const { store } = await open();
      const repository = store.repositories().readings;
      await repository.add([...readings(500), ...readings(500, { topic: 'esp/air/humidity' })]);
      const range = {
        group: GROUP,
        topic: TOPIC,
        startDate: new Date(BASE),
        endDate: new Date(BASE + 3_600_000),
      };
      await repository.latest(GROUP, TOPIC);
      await repository.latestOfEveryTopic(GROUP);
      await repository.newestFirst(range, 10);
      await repository.newestFirst({ ...range, minValue: 3 }, 10);
      await repository.oldest(range);
      await repository.aggregate(range, MINUTE);

      const reads = store.connection.preparedSql.filter((sql) =>
        /^\s*SELECT[\s\S]*FROM (readings|series)/u.test(sql),
      );
      expect(reads.length).to.be.at.least(5);
      for (const sql of reads) {
        // Planning needs every parameter bound; their values do not change the plan.
        const named = Object.fromEntries([...sql.matchAll(/@(\w+)/gu)].map((match) => [match[1], 1]));
        const positional = [...sql.matchAll(/\?/gu)].map(() => 1);
        const explain = store.database.prepare(`EXPLAIN QUERY PLAN ${sql}`);
        const steps = (Object.keys(named).length > 0 ? explain.all(named) : explain.all(...positional)) as {
          detail: string;
        }[];
        const plan = steps.map((step) => step.detail);
        expect(plan.join(' | '), sql).not.to.match(/\bSCAN (readings|r|s|series)\b/u);
        expect(plan.join(' | '), sql).not.to.match(/TEMP B-TREE FOR ORDER BY/u);
        expect(plan.join(' | '), sql).to.match(
          /SEARCH (readings|r|series|s) USING (PRIMARY KEY|COVERING INDEX)/u,
        );
      }
    });
  });
});
