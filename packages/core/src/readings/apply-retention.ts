import { inject, injectable } from 'inversify';
import { RecordAudit } from '../audit/record-audit.js';
import { type Actor } from '../shared/actor.js';
import { GROUP_REPOSITORY, type GroupRepository } from '../groups/group.port.js';
import { CLOCK, type Clock } from '../shared/clock.port.js';
import { InvalidInputError, NotFoundError } from '../shared/errors.js';
import { ConfigError, type Env, envReader } from '../shared/env.js';
import { requireText } from '../shared/validation.js';
import { type Group } from '../groups/group.js';
import { READING_REPOSITORY, type ReadingRepository } from './reading.port.js';

export interface RetentionSettings {
  /** Raw readings older than this many days are deleted; undefined keeps them forever. */
  readonly readingDays?: number;
  /** Rollups (the summaries behind hourly and minute buckets) older than this; undefined keeps them. */
  readonly rollupDays?: number;
  /** Readings deleted per store call: small, so each write transaction is short. */
  readonly batchSize: number;
}

export const RETENTION_SETTINGS = Symbol.for('hortus.RetentionSettings');
export const defaultRetentionSettings: RetentionSettings = { batchSize: 5000 };
export const MAX_RETENTION_DAYS = 36_500;
const DAY_MS = 86_400_000;
/** Every time a reading may have: the start of a JavaScript Date's range. */
const EARLIEST = new Date(-8.64e15);

export interface RetentionResult {
  /** Raw readings deleted, per group (groups with none deleted are left out). */
  readonly readings: Readonly<Record<string, number>>;
  readonly summaries: number;
}

/** The days of a group: its own override (0: forever), else the service's setting. */
function daysFor(group: Group | undefined, settings: RetentionSettings): number | undefined {
  const own = group?.retentionDays;
  if (own === undefined) return settings.readingDays;
  return own === 0 ? undefined : own;
}

/**
 * Deletes raw readings older than their group's retention, in batches of `batchSize`, oldest first, and
 * the rollups older than the rollup retention. Between two batches it awaits `pause`, which the caller
 * makes a real pause (a timer), so requests and ingest are served in between: a purge of millions of
 * readings is many short write transactions, not one long one.
 */
@injectable()
export class ApplyRetention {
  constructor(
    @inject(READING_REPOSITORY) private readonly readings: ReadingRepository,
    @inject(GROUP_REPOSITORY) private readonly groups: GroupRepository,
    @inject(CLOCK) private readonly clock: Clock,
    @inject(RETENTION_SETTINGS) private readonly settings: RetentionSettings,
  ) {}

  /** Whether any retention is configured at all (a global setting, or a group's override). */
  async configured(): Promise<boolean> {
    if (this.settings.readingDays !== undefined || this.settings.rollupDays !== undefined) return true;
    return (await this.groups.list()).some((group) => (group.retentionDays ?? 0) > 0);
  }

  async execute(pause: () => Promise<void> = () => Promise.resolve()): Promise<RetentionResult> {
    const now = this.clock.now().getTime();
    const records = new Map((await this.groups.list()).map((group) => [group.name, group]));
    const deleted: Record<string, number> = {};
    let summaries = 0;
    for (const group of await this.readings.groups()) {
      const days = daysFor(records.get(group), this.settings);
      if (days === undefined) continue;
      const to = new Date(now - days * DAY_MS - 1);
      // Summaries stand in for their readings (whole hours), so they go only where readings are gone too.
      const summaryDays =
        this.settings.rollupDays === undefined ? undefined : Math.max(days, this.settings.rollupDays);
      for (;;) {
        const removed = await this.readings.deleteRange({
          group,
          from: EARLIEST,
          to,
          limit: this.settings.batchSize,
          keepSummaries: true,
        });
        if (removed > 0) deleted[group] = (deleted[group] ?? 0) + removed;
        if (removed < this.settings.batchSize) break;
        await pause();
      }
      if (summaryDays !== undefined) {
        summaries += await this.readings.deleteSummariesBefore(group, new Date(now - summaryDays * DAY_MS));
      }
    }
    return { readings: deleted, summaries };
  }
}

/** Sets or clears a group's retention override: a number of days, `off` (keep forever) or `default`. */
@injectable()
export class SetGroupRetention {
  constructor(
    @inject(GROUP_REPOSITORY) private readonly groups: GroupRepository,
    @inject(RecordAudit) private readonly audit: RecordAudit,
  ) {}

  async execute(input: { group: unknown; days: unknown; actor?: Actor }): Promise<Group> {
    const name = requireText(input.group, 'group');
    const days = parseRetention(input.days);
    const before = await this.groups.findByName(name);
    const updated = before === undefined ? undefined : await this.groups.setRetention(name, days);
    if (before === undefined || updated === undefined) throw new NotFoundError('group', 'Group not found');
    // null: the server's default; 0: kept forever.
    await this.audit.execute(input.actor, {
      action: 'group.retention',
      target: updated.name,
      group: updated.name,
      before: { retentionDays: before.retentionDays ?? null },
      after: { retentionDays: updated.retentionDays ?? null },
    });
    return updated;
  }
}

function parseRetention(value: unknown): number | undefined {
  const text = typeof value === 'number' ? String(value) : typeof value === 'string' ? value.trim() : '';
  if (text === 'default') return undefined;
  if (text === 'off') return 0;
  const days = /^\d{1,6}$/u.test(text) ? Number(text) : Number.NaN;
  if (!(days >= 1 && days <= MAX_RETENTION_DAYS)) {
    throw InvalidInputError.forField(
      'days',
      `must be a whole number of days from 1 to ${MAX_RETENTION_DAYS}, off (keep forever) or default`,
    );
  }
  return days;
}

/**
 * Reads RETENTION_DAYS and ROLLUP_RETENTION_DAYS: whole days from 1 to MAX_RETENTION_DAYS, or unset / `off`
 * to keep forever. Rollups are what history charts of past months read, so they may be kept longer than the
 * readings, never shorter. Throws a ConfigError naming every problem.
 */
export function retentionSettingsFromEnv(env: Env): Partial<RetentionSettings> {
  const problems: string[] = [];
  const { optional } = envReader(env, {}, problems);
  const days = (name: string): number | undefined => {
    const text = optional(name);
    if (text === undefined || text.toLowerCase() === 'off') return undefined;
    const value = /^\d{1,6}$/u.test(text) ? Number(text) : Number.NaN;
    if (value >= 1 && value <= MAX_RETENTION_DAYS) return value;
    problems.push(
      `${name} must be a whole number of days from 1 to ${MAX_RETENTION_DAYS} or off, got "${text}"`,
    );
    return undefined;
  };
  const readingDays = days('RETENTION_DAYS');
  const rollupDays = days('ROLLUP_RETENTION_DAYS');
  if (readingDays !== undefined && rollupDays !== undefined && rollupDays < readingDays) {
    problems.push(
      `ROLLUP_RETENTION_DAYS (${rollupDays}) must not be shorter than RETENTION_DAYS (${readingDays}): ` +
        'rollups stand in for the readings of whole hours',
    );
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return {
    ...(readingDays === undefined ? {} : { readingDays }),
    ...(rollupDays === undefined ? {} : { rollupDays }),
  };
}
