import { EventEmitter } from 'node:events';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { expect } from 'chai';
import { BackupJob, backupFileName, type BackupSettings, IntervalScheduler, loadConfig } from '@hortus/cli';
import { ConfigError, type LogFields, type Logger, silentLogger } from '@hortus/core';
import { Capture, eventually, hortus, scratchDataDir } from './harness.js';

const HOUR_MS = 3_600_000;

interface LogLine {
  readonly event: string;
  readonly file?: string;
  readonly [field: string]: unknown;
}

/** A logger that keeps each event with its fields. */
function recordingLogger(into: LogLine[]): Logger {
  const keep = (event: string, fields?: LogFields): void => {
    into.push({ event, ...fields });
  };
  return { info: keep, warn: keep, error: keep };
}

/** A job on a scratch directory, a clock the test moves, and a fake copy that writes a small file. */
function jobOn(settings: Partial<BackupSettings> = {}) {
  const dir = scratchDataDir();
  let now = Date.parse('2026-11-26T06:00:00.000Z');
  const logged: LogLine[] = [];
  const copies: string[] = [];
  const logger = recordingLogger(logged);
  const job = new BackupJob(
    async (file) => {
      copies.push(file);
      writeFileSync(file, 'copy');
      return { totalPages: 1 };
    },
    { dir, intervalMs: 24 * HOUR_MS, keep: 3, ...settings },
    logger,
    () => now,
  );
  return {
    dir,
    job,
    logged,
    copies,
    advance: (ms: number) => (now += ms),
    backups: () =>
      readdirSync(dir)
        .filter((name) => name.startsWith('hortus-'))
        .sort(),
  };
}

describe('Scheduled backups (BACKUP_DIR)', () => {
  it('when backups are due day after day, then each is named by its time, logged, and only the newest BACKUP_KEEP stay; other files stay too', async () => {
    const { dir, job, logged, advance, backups } = jobOn();
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'hortus-by-hand.db'), 'mine');

    await job.runOnce();
    advance(12 * HOUR_MS);
    await job.runOnce();

    expect(backups()).to.deep.equal(['hortus-2026-11-26T06-00-00-000Z.db', 'hortus-by-hand.db']);
    for (let day = 0; day < 4; day += 1) {
      advance(12 * HOUR_MS);
      await job.runOnce();
      advance(12 * HOUR_MS);
    }

    expect(backups()).to.deep.equal([
      'hortus-2026-11-28T06-00-00-000Z.db',
      'hortus-2026-11-29T06-00-00-000Z.db',
      'hortus-2026-11-30T06-00-00-000Z.db',
      'hortus-by-hand.db',
    ]);
    expect(logged.filter(({ event }) => event === 'backup made')).to.have.length(5);
    expect(logged.filter(({ event }) => event === 'backup deleted').map(({ file }) => file)).to.deep.equal([
      join(dir, 'hortus-2026-11-26T06-00-00-000Z.db'),
      join(dir, 'hortus-2026-11-27T06-00-00-000Z.db'),
    ]);
  });

  it('when the server restarts before the interval is over, then no extra backup is made; once it is over, one is', async () => {
    const first = jobOn();
    await first.job.runOnce();
    const again = new BackupJob(
      async (file) => {
        writeFileSync(file, 'copy');
        return { totalPages: 1 };
      },
      { dir: first.dir, intervalMs: 24 * HOUR_MS, keep: 3 },
      silentLogger,
      () => Date.parse('2026-11-26T20:00:00.000Z'),
    );

    await again.runOnce();

    expect(first.backups()).to.have.length(1);
    const later = new BackupJob(
      async (file) => {
        writeFileSync(file, 'copy');
        return { totalPages: 1 };
      },
      { dir: first.dir, intervalMs: 24 * HOUR_MS, keep: 3 },
      silentLogger,
      () => Date.parse('2026-11-27T06:00:00.000Z'),
    );
    await later.runOnce();
    expect(first.backups()).to.have.length(2);
  });

  it('when a backup file is dated in the future, then it is ignored with one warning: backups go on, and it neither stops them nor counts in BACKUP_KEEP', async () => {
    const { dir, job, logged, advance, backups } = jobOn();
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const future = 'hortus-2099-01-01T00-00-00-000Z.db';
    writeFileSync(join(dir, future), 'planted');

    for (let day = 0; day < 4; day += 1) {
      await job.runOnce();
      advance(24 * HOUR_MS);
    }

    expect(logged.filter(({ event }) => event === 'backup made')).to.have.length(4);
    expect(backups()).to.deep.equal([
      'hortus-2026-11-27T06-00-00-000Z.db',
      'hortus-2026-11-28T06-00-00-000Z.db',
      'hortus-2026-11-29T06-00-00-000Z.db',
      future,
    ]);
    const warnings = logged.filter(({ event }) => event === 'backup file dated in the future ignored');
    expect(warnings.map(({ file }) => file)).to.deep.equal([join(dir, future)]);
  });

  it('when BACKUP_DIR is writable by every user, then one warning says so; a private one gets none', async () => {
    const open = jobOn();
    mkdirSync(open.dir, { recursive: true });
    chmodSync(open.dir, 0o777);
    await open.job.runOnce();
    open.advance(24 * HOUR_MS);
    await open.job.runOnce();
    const warned = (logged: LogLine[]): number =>
      logged.filter(({ event }) => event === 'backup directory writable by every user').length;
    expect(warned(open.logged)).to.equal(1);
    expect(open.copies).to.have.length(2);

    const kept = jobOn();
    await kept.job.runOnce();
    expect(statSync(kept.dir).mode & 0o777).to.equal(0o700);
    expect(warned(kept.logged)).to.equal(0);
  });

  it('when a backup is still running, then another run makes none (never two at once)', async () => {
    const dir = scratchDataDir();
    let calls = 0;
    let finish = (): void => undefined;
    const job = new BackupJob(
      (file) => {
        calls += 1;
        return new Promise((resolve) => {
          finish = () => {
            writeFileSync(file, 'copy');
            resolve({ totalPages: 1 });
          };
        });
      },
      { dir, intervalMs: HOUR_MS, keep: 3 },
      silentLogger,
    );

    const first = job.runOnce();
    const second = job.runOnce();
    await sleep(20);
    finish();
    await Promise.all([first, second]);

    expect(calls).to.equal(1);
    expect(readdirSync(dir)).to.have.length(1);
  });

  it('when BACKUP_HOOK is set, then it runs after each backup with the file as $1 and HORTUS_BACKUP_FILE; a failing hook is logged and the backup stays', async () => {
    const out = join(scratchDataDir(), 'hook.txt');
    mkdirSync(join(out, '..'), { recursive: true });
    const { job, logged, backups } = jobOn({
      hook: `echo "$1 $HORTUS_BACKUP_FILE" >> '${out}'`,
    });

    await job.runOnce();

    const made = logged.find(({ event }) => event === 'backup made')?.file ?? '';
    expect(readFileSync(out, 'utf8')).to.equal(`${made} ${made}\n`);
    expect(logged.map(({ event }) => event)).to.include('backup hook done');

    const failing = jobOn({ hook: 'echo no route to host >&2; exit 3' });
    await failing.job.runOnce();
    const failed = failing.logged.find(({ event }) => event === 'backup hook failed') as
      (LogLine & { code?: unknown; stderr?: unknown }) | undefined;
    expect(failed).to.include({ code: 3, stderr: 'no route to host' });
    expect(failing.backups()).to.have.length(1);
    expect(backups()).to.have.length(1);
  });

  it('when backups are made, then the age of the newest one is known (Infinity before the first), for /metrics and config check', async () => {
    const { job, advance } = jobOn();
    expect(job.newestAgeSeconds()).to.equal(Number.POSITIVE_INFINITY);
    await job.runOnce();
    advance(90_000);
    expect(job.newestAgeSeconds()).to.equal(90);
  });

  it('when a backup fails, then it is logged and the next run tries again', async () => {
    const dir = scratchDataDir();
    const logged: LogLine[] = [];
    let fail = true;
    const job = new BackupJob(
      async (file) => {
        if (fail) throw new Error('disk full');
        writeFileSync(file, 'copy');
        return { totalPages: 1 };
      },
      { dir, intervalMs: HOUR_MS, keep: 3 },
      recordingLogger(logged),
    );

    await job.runOnce();
    fail = false;
    await job.runOnce();

    expect(logged.map(({ event }) => event)).to.deep.equal(['backup failed', 'backup made']);
    expect(readdirSync(dir)).to.have.length(1);
  });

  it('when the scheduler runs the job, then stop() waits for the backup under way', async () => {
    const { job, backups } = jobOn({ intervalMs: 20 });
    job.start(new IntervalScheduler(silentLogger));
    await eventually(() => expect(backups()).to.have.length(1));
    await job.stop();
    expect(backupFileName(new Date(0))).to.equal('hortus-1970-01-01T00-00-00-000Z.db');
  });

  it('when BACKUP_HOOK is set without BACKUP_DIR, then it is a configuration error', () => {
    expect(() => loadConfig({ BACKUP_HOOK: 'rclone copy "$1" remote:' })).to.throw(
      ConfigError,
      'BACKUP_HOOK needs BACKUP_DIR',
    );
    expect(loadConfig({ BACKUP_DIR: '/srv/b', BACKUP_HOOK: 'true' }).backups).to.include({ hook: 'true' });
  });

  it('when configured, then BACKUP_INTERVAL is in hours (default 24) and BACKUP_KEEP defaults to 7; without BACKUP_DIR it is off', () => {
    expect(loadConfig({ BACKUP_DIR: '/srv/backups' }).backups).to.deep.equal({
      dir: '/srv/backups',
      intervalMs: 24 * HOUR_MS,
      keep: 7,
    });
    expect(
      loadConfig({ BACKUP_DIR: '/srv/backups', BACKUP_INTERVAL: '0.5', BACKUP_KEEP: '30' }).backups,
    ).to.deep.equal({ dir: '/srv/backups', intervalMs: HOUR_MS / 2, keep: 30 });
    expect(loadConfig({}).backups).to.equal(undefined);
    expect(() => loadConfig({ BACKUP_DIR: '/b', BACKUP_INTERVAL: '6h', BACKUP_KEEP: '0' }))
      .to.throw(ConfigError)
      .with.property('message')
      .that.contains('BACKUP_INTERVAL must be a number of hours')
      .and.contains('BACKUP_KEEP');
  });
});

describe('hortus serve with BACKUP_DIR', function () {
  this.timeout(30_000);

  async function serveFor(env: Record<string, string>, until: (log: string) => boolean): Promise<string> {
    const signals = new EventEmitter();
    const stdout = new Capture();
    const server = hortus(undefined, ['serve', '--port', '0'], {
      env: { HOST: '127.0.0.1', LOG_FORMAT: 'json', ...env },
      signals,
      stdout,
    });
    try {
      await eventually(() => expect(until(stdout.text), stdout.text).to.equal(true), 15_000);
    } finally {
      signals.emit('SIGTERM');
      await server;
    }
    return stdout.text;
  }

  it('when the store is SQLite, then it makes sound online backups in BACKUP_DIR, mode 0600', async () => {
    const backupDir = join(scratchDataDir(), 'backups');
    const log = await serveFor(
      {
        HORTUS_DATA_DIR: scratchDataDir(),
        BACKUP_DIR: backupDir,
        BACKUP_INTERVAL: '0.001',
        BACKUP_KEEP: '2',
      },
      (text) => text.split('"backup made"').length > 2,
    );

    expect(log).to.contain('"scheduled backups on"');
    const names = readdirSync(backupDir);
    expect(names.length).to.be.within(1, 2);
    for (const name of names) {
      expect(statSync(join(backupDir, name)).mode & 0o777).to.equal(0o600);
      const copy = new Database(join(backupDir, name), { readonly: true });
      try {
        expect(copy.pragma('integrity_check', { simple: true })).to.equal('ok');
      } finally {
        copy.close();
      }
    }
  });

  const mongoUri = process.env['MONGODB_URI']?.trim() ?? '';
  (mongoUri === '' ? it.skip : it)(
    `when the store is MongoDB, then it warns that scheduled backups do not apply and names mongodump${mongoUri === '' ? ' [skipped: MONGODB_URI is unset]' : ''}`,
    async () => {
      const backupDir = join(scratchDataDir(), 'backups');
      const log = await serveFor(
        { MONGODB_URI: mongoUri, BACKUP_DIR: backupDir, AUTOMATIONS: 'off' },
        (text) => text.includes('"listening"'),
      );

      const warning = log
        .split('\n')
        .filter((line) => line.includes('"scheduled backups do not apply to this store"'))
        .map((line) => JSON.parse(line) as { store: string; hint: string });
      expect(warning).to.have.length(1);
      expect(warning[0]).to.include({ store: 'mongodb', hint: 'back MongoDB up with mongodump' });
      expect(existsSync(backupDir)).to.equal(false);
    },
  );

  it('when the store has no file (memory), then it warns that scheduled backups do not apply', async () => {
    const backupDir = join(scratchDataDir(), 'backups');
    const log = await serveFor({ STORE: 'memory', BACKUP_DIR: backupDir }, (text) =>
      text.includes('"listening"'),
    );

    expect(log).to.contain('"scheduled backups do not apply to this store"');
    expect(existsSync(backupDir)).to.equal(false);
  });
});
