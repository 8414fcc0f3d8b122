import { execFile } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import {
  type Env,
  envReader,
  isDomainError,
  type Logger,
  type ScheduledTask,
  type Scheduler,
} from '@hortus/core';

/** Scheduled backups of the SQLite store (BACKUP_DIR, BACKUP_INTERVAL in hours, BACKUP_KEEP). */
export interface BackupSettings {
  readonly dir: string;
  readonly intervalMs: number;
  readonly keep: number;
  /** BACKUP_HOOK: a shell command run after each backup, with the file as $1 and HORTUS_BACKUP_FILE. */
  readonly hook?: string;
}

/** A hook that has not ended by then is stopped (SIGTERM) and logged as failed. */
export const BACKUP_HOOK_TIMEOUT_MS = 30 * 60_000;

const HOUR_MS = 3_600_000;
export const backupDefaults = { BACKUP_INTERVAL: '24', BACKUP_KEEP: '7' } as const;
/** The longest interval: a month. The shortest, 0.001 h (3.6 s), is for trying it out. */
const MAX_INTERVAL_HOURS = 24 * 31;
/** How often the job looks whether a backup is due; it also bounds how late one is after a restart. */
const CHECK_MS = 60_000;

/** Undefined (off) without BACKUP_DIR; problems go into `problems`, as every settings parser does. */
export function backupSettingsFromEnv(env: Env, problems: string[]): BackupSettings | undefined {
  const { read, optional, integer } = envReader(env, backupDefaults, problems);
  const dir = optional('BACKUP_DIR');
  const hoursText = read('BACKUP_INTERVAL');
  const hours = /^\d+(\.\d+)?$/u.test(hoursText) ? Number(hoursText) : Number.NaN;
  if (!(hours >= 0.001 && hours <= MAX_INTERVAL_HOURS)) {
    problems.push(
      `BACKUP_INTERVAL must be a number of hours from 0.001 to ${MAX_INTERVAL_HOURS}, got "${hoursText}"`,
    );
  }
  const keep = integer('BACKUP_KEEP', 1, 10_000);
  const hook = optional('BACKUP_HOOK');
  if (hook !== undefined && dir === undefined)
    problems.push('BACKUP_HOOK needs BACKUP_DIR: it runs after each scheduled backup');
  if (dir === undefined) return undefined;
  return {
    dir: resolve(dir),
    intervalMs: Math.round(hours * HOUR_MS),
    keep,
    ...(hook === undefined ? {} : { hook }),
  };
}

const NAME = /^hortus-(\d{4}-\d\d-\d\d)T(\d\d)-(\d\d)-(\d\d)-(\d{3})Z\.db$/u;

/** The file name of a backup made at `at`: sorts by time, valid on every file system. */
export function backupFileName(at: Date): string {
  return `hortus-${at.toISOString().replace(/:/gu, '-').replace('.', '-')}.db`;
}

/** When the backup of that name was made; undefined for any other file (the job never touches those). */
export function backupTime(name: string): number | undefined {
  const parts = NAME.exec(name);
  if (parts === null) return undefined;
  const [, day, h, m, s, ms] = parts;
  const time = Date.parse(`${day}T${h}:${m}:${s}.${ms}Z`);
  return Number.isNaN(time) ? undefined : time;
}

/** The newest of the job's backups in `dir` up to `now` (name and time), if any; for metrics and config check. */
export function newestBackup(dir: string, now: number): { file: string; time: number } | undefined {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return undefined;
  }
  let newest: { file: string; time: number } | undefined;
  for (const name of names) {
    const time = backupTime(name);
    if (time !== undefined && time <= now && (newest === undefined || time > newest.time)) {
      newest = { file: join(dir, name), time };
    }
  }
  return newest;
}

/** What the job needs of the store: an online copy into a new file (SqliteStore.backup). */
export type OnlineBackup = (file: string) => Promise<{ readonly totalPages: number }>;

/**
 * Makes a backup whenever the newest one in the directory is `intervalMs` old (so a restart neither skips
 * one nor makes an extra one), names it by its time, and deletes the oldest of its own files beyond `keep`.
 * Never two at once: the scheduler skips a tick while a run is busy, and runOnce refuses to overlap too.
 */
export class BackupJob {
  private task: ScheduledTask | undefined;
  private running: Promise<void> | undefined;
  /** Future-dated files already warned about: a warning each, not one per tick. */
  private readonly futureWarned = new Set<string>();
  private permissionsChecked = false;
  /** When this job last made a backup: the directory need not be read at every scrape. */
  private lastBackupAt: number | undefined;

  constructor(
    private readonly backup: OnlineBackup,
    private readonly settings: BackupSettings,
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  start(scheduler: Scheduler): void {
    this.task = scheduler.every(Math.min(CHECK_MS, this.settings.intervalMs), () => this.runOnce());
    this.logger.info('scheduled backups on', {
      dir: this.settings.dir,
      intervalHours: this.settings.intervalMs / HOUR_MS,
      keep: this.settings.keep,
    });
    // The first look is at once: a server that was down for longer than the interval backs up now.
    void this.runOnce();
  }

  async stop(): Promise<void> {
    await this.task?.stop();
    await this.running;
  }

  /** Makes a backup when one is due, then prunes; failures are logged, never thrown. */
  runOnce(): Promise<void> {
    this.running ??= this.due().finally(() => (this.running = undefined));
    return this.running;
  }

  /**
   * The job's backups up to `now`, oldest first. A file named as a backup but dated after now (a clock that
   * was ahead, or a file someone put there) is left alone and warned about once: counted as the newest, it
   * would stop every backup until that date, and being kept it would push a real backup out of BACKUP_KEEP.
   */
  private ownBackups(now: number): { name: string; time: number }[] {
    let names: string[];
    try {
      names = readdirSync(this.settings.dir);
    } catch {
      return [];
    }
    const backups = names
      .map((name) => ({ name, time: backupTime(name) }))
      .filter((entry): entry is { name: string; time: number } => entry.time !== undefined);
    for (const { name, time } of backups) {
      if (time <= now || this.futureWarned.has(name)) continue;
      this.futureWarned.add(name);
      this.logger.warn('backup file dated in the future ignored', {
        file: join(this.settings.dir, name),
        dated: new Date(time).toISOString(),
      });
    }
    return backups.filter(({ time }) => time <= now).sort((a, b) => a.time - b.time);
  }

  /** Warns once when others may write in BACKUP_DIR: they could replace a backup or stop the schedule. */
  private checkPermissions(): void {
    if (this.permissionsChecked) return;
    let mode: number;
    try {
      mode = statSync(this.settings.dir).mode;
    } catch {
      return;
    }
    this.permissionsChecked = true;
    if ((mode & 0o002) === 0) return;
    this.logger.warn('backup directory writable by every user', {
      dir: this.settings.dir,
      mode: `0${(mode & 0o7777).toString(8)}`,
      advice: 'chmod 700 it (or o-w): anyone on the machine could replace a backup or stop the schedule',
    });
  }

  private async due(): Promise<void> {
    const now = this.now();
    this.checkPermissions();
    const newest = this.ownBackups(now).at(-1);
    if (newest !== undefined && now - newest.time < this.settings.intervalMs) return;
    const file = join(this.settings.dir, backupFileName(new Date(now)));
    try {
      mkdirSync(this.settings.dir, { recursive: true, mode: 0o700 });
      this.checkPermissions();
      const { totalPages } = await this.backup(file);
      this.logger.info('backup made', { file, pages: totalPages, ms: this.now() - now });
      this.lastBackupAt = now;
    } catch (error) {
      const level = isDomainError(error) ? 'warn' : 'error';
      this.logger[level]('backup failed', {
        file,
        error: error instanceof Error ? error.message : String(error),
      });
      return;
    }
    this.prune(now);
    if (this.settings.hook !== undefined) await this.runHook(this.settings.hook, file);
  }

  /** Seconds since the newest backup in the directory (Infinity when there is none), read at each scrape. */
  newestAgeSeconds(): number {
    const now = this.now();
    const time = this.lastBackupAt ?? newestBackup(this.settings.dir, now)?.time;
    return time === undefined ? Number.POSITIVE_INFINITY : Math.max(0, (now - time) / 1000);
  }

  /**
   * Runs BACKUP_HOOK (`sh -c`) with the new file as $1 and in HORTUS_BACKUP_FILE: the step that copies it off
   * the machine (rclone, rsync, scp). Its failure is logged as an error, the backup itself stays.
   */
  private runHook(hook: string, file: string): Promise<void> {
    const started = this.now();
    return new Promise((resolve) => {
      execFile(
        '/bin/sh',
        ['-c', hook, 'backup-hook', file],
        {
          env: { ...process.env, HORTUS_BACKUP_FILE: file },
          timeout: BACKUP_HOOK_TIMEOUT_MS,
          maxBuffer: 1024 * 1024,
        },
        (error, _stdout, stderr) => {
          if (error === null) {
            this.logger.info('backup hook done', { file, ms: this.now() - started });
          } else {
            this.logger.error('backup hook failed', {
              file,
              code: error.code ?? null,
              signal: error.signal ?? null,
              stderr: stderr.slice(-500).trim(),
            });
          }
          resolve();
        },
      );
    });
  }

  private prune(now: number): void {
    const backups = this.ownBackups(now);
    for (const { name } of backups.slice(0, Math.max(0, backups.length - this.settings.keep))) {
      const file = join(this.settings.dir, name);
      try {
        rmSync(file, { force: true });
        this.logger.info('backup deleted', { file, keep: this.settings.keep });
      } catch (error) {
        this.logger.warn('backup not deleted', {
          file,
          error: error instanceof Error ? error.message : String(error),
        });
      }
    }
  }
}
