import { inject, injectable } from 'inversify';
import { type NewAction } from '../actions/action.js';
import { ACTION_REPOSITORY, type ActionRepository } from '../actions/action.port.js';
import {
  ENGINE_STATE_REPOSITORY,
  engineStateKey,
  type EngineStateRepository,
  type EngineValue,
} from '../automations/engine-state.port.js';
import { markEngineRun } from '../automations/automation-engine.js';
import { macOfRegisteredId } from '../devices/device-id.js';
import { type NewDevice } from '../devices/device.js';
import { DEVICE_REPOSITORY, type DeviceRepository } from '../devices/device.port.js';
import { type NewGroup } from '../groups/group.js';
import { GROUP_REPOSITORY, type GroupRepository } from '../groups/group.port.js';
import { type ChartChange, type ChartData, chartDataFields } from '../history-charts/history-chart.js';
import {
  HISTORY_CHART_REPOSITORY,
  type HistoryChartRepository,
} from '../history-charts/history-chart.port.js';
import { type ImportedNotification } from '../notifications/notification.js';
import { NOTIFICATION_REPOSITORY, type NotificationRepository } from '../notifications/notification.port.js';
import { type NewReading } from '../readings/reading.js';
import { READING_REPOSITORY, type ReadingRepository } from '../readings/reading.port.js';
import { CLOCK, type Clock } from '../shared/clock.port.js';
import { ConflictError } from '../shared/errors.js';
import { type ImportedUser } from '../users/user.js';
import { USER_REPOSITORY, type UserRepository } from '../users/user.port.js';
import { type LegacyChartRecord } from './legacy.js';

/** What copying one record did: stored it, found it stored already, or joined it with what was stored. */
export type CopyOutcome = 'written' | 'already-there' | 'merged';

export interface Copied {
  readonly outcome: CopyOutcome;
  /** What the merge changed or left as Hortus had it. */
  readonly notes: readonly string[];
}

/** A user copied, with the Hortus id chart records follow (absent: matched only by e-mail, or not stored). */
export interface CopiedUser extends Copied {
  readonly userId?: string;
}

const written: Copied = { outcome: 'written', notes: [] };
const alreadyThere: Copied = { outcome: 'already-there', notes: [] };

/**
 * Writes records converted from the original service (see legacy.ts) into whichever store is configured,
 * through the repository ports. Every write is keyed by what names the record in the original, so copying
 * the same record again stores nothing: readings by (group, topic, time), groups by name, users by id and
 * e-mail, devices by deviceId, actions by (group, object), notifications by
 * (group, time, message), charts by (user, chartId, chartName).
 */
@injectable()
export class CopyLegacyRecords {
  constructor(
    @inject(READING_REPOSITORY) private readonly readings: ReadingRepository,
    @inject(GROUP_REPOSITORY) private readonly groups: GroupRepository,
    @inject(USER_REPOSITORY) private readonly users: UserRepository,
    @inject(DEVICE_REPOSITORY) private readonly devices: DeviceRepository,
    @inject(ACTION_REPOSITORY) private readonly actions: ActionRepository,
    @inject(NOTIFICATION_REPOSITORY) private readonly notifications: NotificationRepository,
    @inject(HISTORY_CHART_REPOSITORY) private readonly charts: HistoryChartRepository,
  ) {}

  /** Answers how many were newly stored; the others were stored already. */
  async copyReadings(readings: readonly NewReading[]): Promise<number> {
    return readings.length === 0 ? 0 : this.readings.add(readings);
  }

  /** Answers how many were newly stored; the others were stored already. */
  async copyNotifications(notifications: readonly ImportedNotification[]): Promise<number> {
    return notifications.length === 0 ? 0 : this.notifications.addMissing(notifications);
  }

  /**
   * A group Hortus has under the same name is merged: employees it lacks are added, and its own package
   * and settings are kept (it may have been changed since), unless it has no settings yet. With `update`
   * the original's settings are brought over: its value wins for each key it has, keys only Hortus has
   * are kept (see mergeSettings).
   */
  async copyGroup(group: NewGroup, update = false): Promise<Copied> {
    const existing = await this.groups.findByName(group.name);
    if (existing === undefined) {
      try {
        await this.groups.create(group);
        return written;
      } catch (error) {
        // Created meanwhile by someone else: merge into that one.
        if (!(error instanceof ConflictError)) throw error;
        return this.copyGroup(group, update);
      }
    }
    const notes: string[] = [];
    const missing = [...new Set(group.employee)].filter((name) => !existing.employee.includes(name));
    // One addEmployee per name, as sign-up adds them: the one way a group's list grows on every store.
    for (const name of missing) await this.groups.addEmployee(group.name, name);
    if (missing.length > 0) notes.push(`added employees ${missing.join(', ')}`);
    const merged = mergeSettings(existing.settings, group.settings);
    if (JSON.stringify(existing.settings) === JSON.stringify(merged.settings)) {
      // Nothing the original has differs: Hortus's own keys alone are no difference.
    } else if (isEmptySettings(existing.settings)) {
      await this.groups.replaceSettings(group.name, group.settings);
      notes.push('took the settings of the original (Hortus had none)');
    } else if (update) {
      await this.groups.replaceSettings(group.name, merged.settings);
      notes.push(
        `settings brought over from the original (${merged.changed.join(', ')})` +
          (merged.kept.length === 0 ? '' : `; Hortus's own kept (${merged.kept.join(', ')})`),
      );
    } else {
      notes.push("settings differ: kept Hortus's; --update brings the original's over");
    }
    if (existing.package !== group.package) {
      notes.push(`package differs: kept Hortus's ${existing.package} (original: ${group.package})`);
    }
    return notes.length === 0 ? alreadyThere : { outcome: 'merged', notes };
  }

  /**
   * A user Hortus has under the same id and e-mail, or under exactly the same e-mail, is already there;
   * Hortus's record is left as it is. One whose e-mail Hortus has only in another case is another account
   * of the original (which told e-mails apart by case): it is kept as its own account, found at log-in by
   * its e-mail as written. `userId` is the Hortus id of a user copied now or matched by `_id`: the one
   * chart records may follow.
   */
  async copyUser(user: ImportedUser): Promise<CopiedUser> {
    if (user.id !== undefined) {
      const sameId = await this.users.findById(user.id);
      if (sameId !== undefined && sameId.email === user.email) return { ...alreadyThere, userId: sameId.id };
    }
    const holder = await this.users.findByEmail(user.email);
    if (holder !== undefined && holder.email === user.email) return alreadyThere;
    const notes: string[] = [];
    if (holder !== undefined) {
      notes.push(
        `e-mail differs only in case from user ${holder.id} (${holder.email}): kept as its own account, ` +
          'which logs in with its e-mail as written',
      );
    }
    try {
      // The hash lands where log-in reads credentials (findCredentials): the old password logs in.
      const stored = await this.users.createImported(
        holder === undefined ? user : { ...user, caseSensitiveEmail: true },
      );
      if (user.id !== undefined && stored.id !== user.id) {
        notes.push(`stored under the new id ${stored.id}: the old one is taken`);
      }
      return { outcome: 'written', notes, userId: stored.id };
    } catch (error) {
      if (error instanceof ConflictError) return alreadyThere;
      throw error;
    }
  }

  /**
   * ConflictError when Hortus has the deviceId in another group: one box is one device. A device Hortus
   * has under another spelling of the same MAC (label, bare, or the box's own form) is that device.
   */
  async copyDevice(device: NewDevice): Promise<Copied> {
    const holder = await this.devices.find(device.deviceId, macOfRegisteredId(device.deviceId));
    if (holder !== undefined) {
      if (holder.group === device.group) return alreadyThere;
      throw new ConflictError(
        'device',
        `deviceId ${device.deviceId} is registered in another group in Hortus: not copied`,
      );
    }
    try {
      await this.devices.create(device);
      return written;
    } catch (error) {
      if (!(error instanceof ConflictError)) throw error;
      const ofGroup = await this.devices.listByGroup(device.group);
      if (ofGroup.some((stored) => stored.deviceId === device.deviceId)) return alreadyThere;
      throw new ConflictError(
        'device',
        `deviceId ${device.deviceId} is registered in another group in Hortus: not copied`,
      );
    }
  }

  /**
   * An action Hortus has is already there. Where its value or rules differ from the original's (changed
   * in the old service since an earlier run, or in Hortus), `update` brings the original's over; without
   * it Hortus's are kept. Either way a note says what differs.
   */
  async copyAction(action: NewAction, update = false): Promise<Copied> {
    const existing = await this.actions.find(action.group, action.object);
    if (existing !== undefined) {
      const notes: string[] = [];
      const sameRules = JSON.stringify(existing.automations) === JSON.stringify(action.automations);
      if (existing.value !== action.value) {
        if (update) await this.actions.setValue(action.group, action.object, action.value);
        notes.push(
          update
            ? `value ${action.value} brought over from the original (Hortus had ${existing.value})`
            : `value differs: kept Hortus's ${existing.value} (original: ${action.value}); --update brings it over`,
        );
      }
      if (!sameRules) {
        if (update) await this.actions.setAutomations(action.group, action.object, action.automations);
        notes.push(
          update
            ? "rules brought over from the original (Hortus's differed)"
            : "rules differ: kept Hortus's; --update brings the original's over",
        );
      }
      return notes.length === 0 ? alreadyThere : { outcome: update ? 'merged' : 'already-there', notes };
    }
    try {
      await this.actions.create(action);
      return written;
    } catch (error) {
      if (error instanceof ConflictError) return alreadyThere;
      throw error;
    }
  }

  /**
   * Charts are appended to the owner's record unless one with the same chartId and chartName is there.
   * `ownerId` is the Hortus id of the original's user when this run copied it or matched it by `_id`
   * (see copyUser), never an account that merely has the same e-mail; without it the record stays under
   * the original's user id.
   */
  async copyChartRecord(record: LegacyChartRecord, ownerId?: string, update = false): Promise<Copied> {
    const userId = ownerId ?? record.userId;
    const existing = await this.charts.findByUser(userId);
    const have = new Map((existing?.charts ?? []).map((chart) => [chartKey(chart), chart]));
    const notes =
      ownerId === undefined
        ? [`user ${record.userId} was not copied: the charts are kept under that id`]
        : userId === record.userId
          ? []
          : [`charts of user ${record.userId} now belong to ${userId}`];
    // Changes reach the first chart of a name (as the web client's do): the charts in Hortus's order.
    const order = [...(existing?.charts ?? [])];
    let added = 0;
    let updated = 0;
    for (const chart of record.charts) {
      const stored = have.get(chartKey(chart));
      if (stored === undefined) {
        await this.charts.appendChart(userId, chart);
        have.set(chartKey(chart), chart);
        order.push(chart);
        added += 1;
        continue;
      }
      const changes = chartChanges(stored.chartData, chart.chartData);
      if (changes.length === 0) continue;
      const first = order.find((other) => other.chartName === chart.chartName);
      if (first !== undefined && chartKey(first) !== chartKey(chart)) {
        notes.push(
          `chart ${chart.chartName} (${chart.chartId}) differs from the original's, but an earlier chart ` +
            "has its name and changes reach only that one: not brought over, Hortus's kept",
        );
        continue;
      }
      if (update) {
        for (const change of changes)
          await this.charts.updateChart(userId, chart.chartName, change, chart.updatedAt);
        updated += 1;
      }
      notes.push(
        update
          ? `chart ${chart.chartName}: the original's settings brought over`
          : `chart ${chart.chartName} differs from the original's: kept Hortus's; --update brings it over`,
      );
    }
    if (record.charts.length === 0) return { outcome: 'written', notes: ['the record holds no charts'] };
    if (added === 0 && updated === 0) return { ...alreadyThere, notes };
    if (added === 0) return { outcome: 'merged', notes };
    if (added === record.charts.length) return { outcome: 'written', notes };
    return { outcome: 'merged', notes: [...notes, `added ${added} of ${record.charts.length} charts`] };
  }
}

/** The edits the web client can make (a field, a flag of the first dataset) that turn `from` into `to`. */
function chartChanges(from: ChartData, to: ChartData): ChartChange[] {
  const changes: ChartChange[] = [];
  for (const field of chartDataFields) {
    const value = to[field];
    if ((typeof value === 'string' || typeof value === 'number') && value !== from[field]) {
      changes.push({ kind: 'set-field', field, value });
    }
  }
  const firstDataset = (data: ChartData): Record<string, unknown> => {
    const datasets = data['datasets'];
    const first: unknown = Array.isArray(datasets) ? datasets[0] : undefined;
    return typeof first === 'object' && first !== null ? (first as Record<string, unknown>) : {};
  };
  const fromFlags = firstDataset(from);
  for (const [flag, checked] of Object.entries(firstDataset(to))) {
    if (typeof checked === 'boolean' && fromFlags[flag] !== checked) {
      changes.push({ kind: 'set-dataset-flag', flag, checked });
    }
  }
  return changes;
}

function chartKey(chart: { chartId: string; chartName: string }): string {
  return JSON.stringify([chart.chartId, chart.chartName]);
}

/** A group's settings as keyed entries: the original's list of one-key objects, or one object. */
function settingsEntries(settings: unknown): { list: boolean; entries: [string, unknown][] } | undefined {
  const isObject = (value: unknown): value is Record<string, unknown> =>
    typeof value === 'object' && value !== null && !Array.isArray(value);
  if (Array.isArray(settings)) {
    if (!settings.every((item) => isObject(item) && Object.keys(item).length === 1)) return undefined;
    return {
      list: true,
      entries: (settings as Record<string, unknown>[]).map(
        (item) => Object.entries(item)[0] as [string, unknown],
      ),
    };
  }
  return isObject(settings) ? { list: false, entries: Object.entries(settings) } : undefined;
}

/**
 * Hortus's settings with the original's brought over: the original's value wins for every key it has (in
 * its order), the keys only Hortus has follow, kept. Settings of another shape are replaced whole.
 */
export function mergeSettings(
  hortus: unknown,
  original: unknown,
): { settings: unknown; changed: string[]; kept: string[] } {
  const ours = settingsEntries(hortus);
  const theirs = settingsEntries(original);
  if (ours === undefined || theirs === undefined || ours.list !== theirs.list) {
    const same = JSON.stringify(hortus) === JSON.stringify(original);
    return { settings: original, changed: same ? [] : ['all: their shapes differ'], kept: [] };
  }
  const oursByKey = new Map(ours.entries);
  const theirKeys = new Set(theirs.entries.map(([key]) => key));
  const changed = theirs.entries
    .filter(([key, value]) => JSON.stringify(oursByKey.get(key)) !== JSON.stringify(value))
    .map(([key]) => key);
  const keptEntries = ours.entries.filter(([key]) => !theirKeys.has(key));
  const entries = [...theirs.entries, ...keptEntries];
  return {
    settings: ours.list ? entries.map(([key, value]) => ({ [key]: value })) : Object.fromEntries(entries),
    changed,
    kept: keptEntries.map(([key]) => key),
  };
}

function isEmptySettings(settings: unknown): boolean {
  if (settings === undefined || settings === null) return true;
  if (Array.isArray(settings)) return settings.length === 0;
  return typeof settings === 'object' && Object.keys(settings).length === 0;
}

/**
 * How far a copy of one collection got: `position` documents were copied, the last of them the one with
 * `_id` `after` (in the source's text form).
 */
export interface MigrationCheckpoint {
  readonly after: string;
  readonly position: number;
}

/**
 * Checkpoints of interrupted copies, kept in the target's engine state, per source and collection. A copy
 * that finishes clears its checkpoint, so the next run reads everything again (and stores nothing twice).
 * The engine forgets state older than its retention (days): a checkpoint that old is simply gone, and the
 * run starts over.
 */
@injectable()
export class MigrationCheckpoints {
  constructor(
    @inject(ENGINE_STATE_REPOSITORY) private readonly state: EngineStateRepository,
    @inject(CLOCK) private readonly clock: Clock,
  ) {}

  async get(source: string, collection: string): Promise<MigrationCheckpoint | undefined> {
    const stored = await this.state.get(checkpointKey(source, collection));
    const after = stored?.value['after'];
    const position = stored?.value['position'];
    return typeof after === 'string' && typeof position === 'number' && position > 0
      ? { after, position }
      : undefined;
  }

  /** Saves the checkpoint, or clears it when none is given. */
  async save(source: string, collection: string, checkpoint: MigrationCheckpoint | undefined): Promise<void> {
    const key = checkpointKey(source, collection);
    const value: EngineValue = { after: checkpoint?.after ?? null, position: checkpoint?.position ?? 0 };
    // One migration runs at a time; a lost race would only mean a lost checkpoint, never a wrong copy.
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const current = await this.state.get(key);
      if (await this.state.compareAndSet(key, current?.version ?? 0, value, this.clock.now())) return;
    }
  }
}

/**
 * Records the cut-over in the automation engine's state: the first `hortus serve` fires only time slots
 * after it, never the ones the old service ran before the move. Answers the time recorded.
 */
@injectable()
export class RecordCutOver {
  constructor(
    @inject(ENGINE_STATE_REPOSITORY) private readonly state: EngineStateRepository,
    @inject(CLOCK) private readonly clock: Clock,
  ) {}

  async execute(): Promise<Date> {
    const at = this.clock.now();
    await markEngineRun(this.state, at);
    return at;
  }
}

function checkpointKey(source: string, collection: string): string {
  return engineStateKey('migrate', source, collection);
}
