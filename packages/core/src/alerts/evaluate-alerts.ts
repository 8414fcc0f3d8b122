import { inject, injectable } from 'inversify';
import { type AlertChange } from './alert-message.js';
import { CheckBoxesSilentSinceStart } from './boxes-silent-since-start.js';
import { AUTOMATION_SETTINGS, type AutomationSettings } from '../automations/automation-settings.js';
import {
  ENGINE_STATE_REPOSITORY,
  type EngineState,
  engineStateKey,
  type EngineStateRepository,
} from '../automations/engine-state.port.js';
import { type WakeUps } from '../automations/wake-ups.js';
import { type Group } from '../groups/group.js';
import { GROUP_REPOSITORY, type GroupRepository } from '../groups/group.port.js';
import { type Notification, type Severity } from '../notifications/notification.js';
import { NOTIFICATION_REPOSITORY, type NotificationRepository } from '../notifications/notification.port.js';
import { type Reading } from '../readings/reading.js';
import { READING_REPOSITORY, type ReadingRepository } from '../readings/reading.port.js';
import { type Device } from '../devices/device.js';
import { DEVICE_REPOSITORY, type DeviceRepository } from '../devices/device.port.js';
import { CLOCK, type Clock } from '../shared/clock.port.js';
import { CORE_LIMITS, CORE_SETTINGS, type CoreLimits, type CoreSettings } from '../shared/settings.js';
import { formatLocalTime } from '../shared/time-zone.js';
import { groupTimeZone } from '../groups/group-settings.js';
import { withUnit } from '../readings/topics.js';
import { EVERY_BOX, readBoxAlerts, watchedRanges, type WatchedRange } from './topic-ranges.js';

/** How often a group with a silent box is looked at again, to see the box return (see checkSilentBoxes). */
const BOX_RECHECK_MS = 60_000;

/** `15 minutes`, `2 hours`, `90 seconds`: a deadline as the alert's words say it. */
export function durationWords(ms: number): string {
  const [unit, size] =
    ms % 3_600_000 === 0 ? ['hour', 3_600_000] : ms % 60_000 === 0 ? ['minute', 60_000] : ['second', 1000];
  const count = Math.round(ms / size);
  return `${count} ${unit}${count === 1 ? '' : 's'}`;
}

type AlertKind = 'low' | 'high' | 'no-data';

/** What an alert's notification says, and how loud it is. */
interface AlertText {
  /** Made only when the alert changes: the words format a local time, too dear for every reading of a tick. */
  readonly message: () => string;
  readonly topic?: string;
  readonly value?: number;
  readonly severity: Severity;
}

/** An alert change that was due but not written: the group holds the most open notifications allowed. */
export interface WithheldAlert {
  readonly group: string;
  readonly topic: string;
  readonly kind: AlertKind;
}

export interface GroupAlerts {
  readonly raised: Notification[];
  /** The raised notifications with what each means, for the messages sent out. */
  readonly changes: AlertChange[];
  readonly withheld: WithheldAlert[];
}

const key = (...parts: readonly string[]): string => engineStateKey('alert', ...parts);

/**
 * Raises a notification when a group's newest reading of a watched topic leaves the range its settings
 * give, and one when it returns; at most one alert per group, topic and kind is open at a time. Also
 * raises "no data received" when a group that used to report has gone quiet.
 */
@injectable()
export class EvaluateAlerts {
  constructor(
    @inject(GROUP_REPOSITORY) private readonly groups: GroupRepository,
    @inject(READING_REPOSITORY) private readonly readings: ReadingRepository,
    @inject(NOTIFICATION_REPOSITORY) private readonly notifications: NotificationRepository,
    @inject(ENGINE_STATE_REPOSITORY) private readonly state: EngineStateRepository,
    @inject(CLOCK) private readonly clock: Clock,
    @inject(AUTOMATION_SETTINGS) private readonly settings: AutomationSettings,
    @inject(CORE_LIMITS) private readonly limits: CoreLimits,
    @inject(DEVICE_REPOSITORY) private readonly devices: DeviceRepository,
    @inject(CheckBoxesSilentSinceStart) private readonly silentSinceStart: CheckBoxesSilentSinceStart,
    @inject(CORE_SETTINGS) private readonly coreSettings: CoreSettings,
  ) {}

  /** What must be read before the engine's tick records its run (see CheckBoxesSilentSinceStart.prepare). */
  async prepare(): Promise<void> {
    await this.silentSinceStart.prepare();
  }

  /** An instant in an alert's words: the group's local time (its `timeZone`, else TIME_ZONE), with the zone. */
  private stamp(group: Group, instant: Date): string {
    return formatLocalTime(instant, groupTimeZone(group.settings, this.coreSettings.timeZone));
  }

  /** Every group in turn; the engine calls evaluateGroup itself so that one failing group stops no other. */
  async execute(): Promise<Notification[]> {
    const now = this.clock.now();
    const raised: Notification[] = [];
    for (const group of await this.groups.list()) {
      for (const notification of (await this.evaluateGroup(group, now)).raised) raised.push(notification);
    }
    return raised;
  }

  /**
   * One group's alerts. A change due while the group holds MAX_OPEN_NOTIFICATIONS_PER_GROUP open
   * notifications is withheld, not written (its state stays, so it is tried again when the group's
   * notifications change). `wake` learns when the group must be evaluated again though nothing in it
   * changes: its no-data deadline, the end of an alert's reopen interval.
   */
  async evaluateGroup(group: Group, now: Date, wake?: WakeUps): Promise<GroupAlerts> {
    const outcome: GroupAlerts = { raised: [], changes: [], withheld: [] };
    await this.checkSilentBoxes(group, now, outcome, wake);
    const sinceStart = await this.silentSinceStart.check(group, now, wake);
    if (sinceStart !== undefined && 'withheld' in sinceStart)
      outcome.withheld.push({ group: group.name, topic: 'boxes-since-start', kind: 'no-data' });
    else if (sinceStart !== undefined) {
      outcome.raised.push(sinceStart.notification);
      outcome.changes.push(sinceStart);
    }
    const latest = await this.readings.latestOfEveryTopic(group.name);
    if (latest.length === 0) return outcome;
    // Appended one by one: a spread of a group's topics as arguments overflows the stack past ~100k.
    await this.checkSilence(group, latest, now, outcome, wake);
    const ranges = watchedRanges(group.settings);
    for (const reading of latest) {
      const watched = ranges.get(reading.topic)?.range;
      if (watched?.noDataMs !== undefined)
        await this.checkSilentTopic(group, reading, watched.noDataMs, watched.severity, now, outcome, wake);
      // A reading older than its topic's no-data delay is stale: it says "no data", never "out of range"
      // (a first tick after a restart or a restore would otherwise raise both for one old reading).
      const staleAfterMs = Math.min(
        this.settings.maxReadingAgeMs,
        watched?.noDataMs ?? Number.POSITIVE_INFINITY,
      );
      if (now.getTime() - reading.time.getTime() > staleAfterMs) {
        // Not judged, but a critical alert it left open is still sent again until someone answers it.
        if (watched?.severity === 'critical')
          await this.repeatStale(group.name, reading.topic, now, outcome, wake);
        continue;
      }
      await this.checkRange(group, ranges, reading, now, outcome, wake);
    }
    return outcome;
  }

  /** A topic with its own no-data deadline that has reported, and then nothing for that long. */
  private async checkSilentTopic(
    group: Group,
    reading: Reading,
    noDataMs: number,
    severity: Severity | undefined,
    now: Date,
    outcome: GroupAlerts,
    wake: WakeUps | undefined,
  ): Promise<void> {
    const deadline = reading.time.getTime() + noDataMs;
    const silent = now.getTime() > deadline;
    if (!silent) wake?.at(deadline + 1);
    await this.transition(group.name, reading.topic, 'no-data', silent, !silent, now, outcome, wake, {
      message: () =>
        silent
          ? `No data from ${reading.topic} in group ${group.name} for ${durationWords(noDataMs)} (last ${withUnit(reading.value, reading.topic)} at ${this.stamp(group, reading.time)})`
          : `Data from ${reading.topic} in group ${group.name} is arriving again: ${withUnit(reading.value, reading.topic)} at ${this.stamp(group, reading.time)}`,
      topic: reading.topic,
      value: reading.value,
      severity: severity ?? 'warning',
    });
  }

  /**
   * The boxes of the group with a no-data deadline (their own, or the group's `*`) that have been seen and
   * then not for that long; any request counts (readings, actions, onboarding). A box's return shows in no
   * change the engine is told of when it only polls its actions, so while one is silent the group is
   * looked at again every BOX_RECHECK_MS.
   */
  private async checkSilentBoxes(
    group: Group,
    now: Date,
    outcome: GroupAlerts,
    wake: WakeUps | undefined,
  ): Promise<void> {
    const alerts = readBoxAlerts(group.settings);
    if (alerts.size === 0) return;
    for (const box of await this.devices.listByGroup(group.name)) {
      const alert = alerts.get(box.deviceId) ?? alerts.get(EVERY_BOX);
      const noDataMs = alert?.noDataMs;
      const seenAt = box.lastSeenAt?.getTime();
      if (noDataMs === undefined || seenAt === undefined) continue;
      const silent = now.getTime() > seenAt + noDataMs;
      wake?.at(silent ? now.getTime() + BOX_RECHECK_MS : seenAt + noDataMs + 1);
      const lastSeen = box.lastSeenAt === undefined ? '' : this.stamp(group, box.lastSeenAt);
      await this.transition(
        group.name,
        `box:${box.deviceId}`,
        'no-data',
        silent,
        !silent,
        now,
        outcome,
        wake,
        {
          message: () =>
            silent
              ? `No data from box ${box.deviceId} in group ${group.name} for ${durationWords(noDataMs)} (last seen ${lastSeen})`
              : `Box ${box.deviceId} in group ${group.name} is reporting again`,
          severity: alert?.severity ?? 'warning',
        },
      );
    }
  }

  private async checkRange(
    group: Group,
    ranges: ReadonlyMap<string, WatchedRange>,
    reading: Reading,
    now: Date,
    outcome: GroupAlerts,
    wake: WakeUps | undefined,
  ): Promise<void> {
    const found = ranges.get(reading.topic);
    if (found === undefined) return;
    const { label, range } = found;
    const hysteresis = range.hysteresis ?? this.settings.deadBand;
    for (const [kind, bound] of [
      ['low', range.min],
      ['high', range.max],
    ] as const) {
      if (bound === undefined) continue;
      const outside = kind === 'low' ? reading.value < bound : reading.value > bound;
      const backInside =
        kind === 'low' ? reading.value >= bound + hysteresis : reading.value <= bound - hysteresis;
      const message = (): string => {
        const limit = withUnit(bound, reading.topic);
        const words = kind === 'low' ? `below its minimum of ${limit}` : `above its maximum of ${limit}`;
        const value = `${withUnit(reading.value, reading.topic)} at ${this.stamp(group, reading.time)}`;
        return outside ? `${label} is ${words}: ${value}` : `${label} is back in range: ${value}`;
      };
      await this.transition(
        group.name,
        reading.topic,
        kind,
        outside,
        backInside,
        now,
        outcome,
        wake,
        { message, topic: reading.topic, value: reading.value, severity: range.severity ?? 'warning' },
        range.delayMs ?? 0,
      );
    }
  }

  private async checkSilence(
    group: Group,
    latest: readonly Reading[],
    now: Date,
    outcome: GroupAlerts,
    wake: WakeUps | undefined,
  ): Promise<void> {
    const newest = latest.reduce((most, reading) => Math.max(most, reading.time.getTime()), -Infinity);
    const silentMs = now.getTime() - newest;
    const minutes = Math.round(this.settings.noDataAlertMs / 60_000);
    const silent = silentMs > this.settings.noDataAlertMs;
    // The first instant the group counts as silent, unless a reading (a change) comes first.
    if (!silent) wake?.at(newest + this.settings.noDataAlertMs + 1);
    const quiet = silent ? await this.silentBoxes(group, now) : [];
    await this.transition(group.name, '*', 'no-data', silent, !silent, now, outcome, wake, {
      message: () =>
        silent
          ? `No data received from group ${group.name} for ${minutes} minutes${this.namedBoxes(group, quiet)}`
          : `Data from group ${group.name} is arriving again`,
      severity: 'warning',
    });
  }

  /** The group's boxes that have been quiet as long, so the alert can say which one to look at. */
  private async silentBoxes(group: Group, now: Date): Promise<Device[]> {
    const quietSince = now.getTime() - this.settings.noDataAlertMs;
    return (await this.devices.listByGroup(group.name)).filter(
      (device) => device.lastSeenAt !== undefined && device.lastSeenAt.getTime() < quietSince,
    );
  }

  private namedBoxes(group: Group, quiet: readonly Device[]): string {
    if (quiet.length === 0) return '';
    const named = quiet
      .slice(0, 5)
      .map(
        (device) =>
          `${device.deviceId} (last seen ${device.lastSeenAt === undefined ? '' : this.stamp(group, device.lastSeenAt)})`,
      );
    return `; silent: ${named.join(', ')}${quiet.length > 5 ? ` and ${quiet.length - 5} more` : ''}`;
  }

  /**
   * Opens or closes one alert; the compare-and-set makes sure only one engine writes each notification. An
   * alert that opened less than ALERT_REOPEN_MS ago does not open again yet: a value flapping across its
   * bound gives one alert per interval, and if it is still outside once the interval has passed, it opens then.
   * With a delay, the value must be seen outside for that long first: the state keeps since when
   * (`outsideSince`), and a look inside the bound forgets it.
   */
  private async transition(
    group: string,
    topic: string,
    kind: AlertKind,
    open: boolean,
    close: boolean,
    now: Date,
    outcome: GroupAlerts,
    wake: WakeUps | undefined,
    notification: AlertText,
    delayMs = 0,
  ): Promise<void> {
    const alertKey = key(group, topic, kind);
    const stored = await this.state.get(alertKey);
    const isOpen = stored?.value['open'] === true;
    if (isOpen && !close) {
      if (stored !== undefined) await this.repeatIfDue(group, alertKey, kind, stored, now, outcome, wake);
      return;
    }
    if (!isOpen && !(await this.delayed(alertKey, stored, open, delayMs, now, wake))) return;
    if (open === isOpen || (!open && !close)) return;
    const openedAt = stored?.value['openedAt'];
    if (open && typeof openedAt === 'number' && now.getTime() - openedAt < this.limits.alertReopenMs) {
      wake?.at(openedAt + this.limits.alertReopenMs);
      return;
    }
    if ((await this.notifications.countOpen(group)) >= this.limits.maxOpenNotificationsPerGroup) {
      outcome.withheld.push({ group, topic, kind });
      return;
    }
    // Opening drops `outsideSince`: the next breach waits its own delay.
    const value = open
      ? { open, openedAt: now.getTime() }
      : { open, ...(openedAt === undefined ? {} : { openedAt }) };
    if (!(await this.state.compareAndSet(alertKey, stored?.version ?? 0, value, now))) return;
    const created = await this.notifications.create({
      group,
      time: now,
      ...notification,
      message: notification.message(),
    });
    if (open) {
      // What a reminder needs: which notification to look at (acknowledged? ignored?) and how loud it is.
      await this.state.compareAndSet(
        alertKey,
        (stored?.version ?? 0) + 1,
        { ...value, notificationId: created.id, severity: notification.severity, sentAt: now.getTime() },
        now,
      );
      if (notification.severity === 'critical' && this.limits.alertRepeatMs > 0)
        wake?.at(now.getTime() + this.limits.alertRepeatMs);
    }
    outcome.raised.push(created);
    const event = !open ? 'resolved' : kind === 'no-data' ? 'no-data' : 'opened';
    outcome.changes.push({ notification: created, event });
  }

  /**
   * A critical alert still open is sent again every ALERT_REPEAT_MS until its notification is acknowledged
   * or ignored (or the alert ends). The compare-and-set on its state claims each reminder, so several
   * engines on one store send it once. Escalation and quiet hours (docs/alerts.md) would read the same
   * state: `repeats` (how many reminders went) and `sentAt`.
   */
  private async repeatIfDue(
    group: string,
    alertKey: string,
    kind: AlertKind,
    stored: EngineState,
    now: Date,
    outcome: GroupAlerts,
    wake: WakeUps | undefined,
  ): Promise<void> {
    const { notificationId, severity, sentAt, openedAt, repeats } = stored.value;
    const repeatMs = this.limits.alertRepeatMs;
    if (severity !== 'critical' || typeof notificationId !== 'string' || repeatMs <= 0) return;
    const last =
      typeof sentAt === 'number' ? sentAt : typeof openedAt === 'number' ? openedAt : now.getTime();
    if (now.getTime() < last + repeatMs) {
      wake?.at(last + repeatMs);
      return;
    }
    const notification = await this.notifications.find(group, notificationId);
    // Answered (acknowledged, or ignored in the original client) or gone: no more reminders.
    if (
      notification === undefined ||
      notification.ignore !== 'false' ||
      notification.acknowledged !== undefined
    )
      return;
    const count = (typeof repeats === 'number' ? repeats : 0) + 1;
    const next = { ...stored.value, sentAt: now.getTime(), repeats: count };
    if (!(await this.state.compareAndSet(alertKey, stored.version, next, now))) return;
    wake?.at(now.getTime() + repeatMs);
    outcome.changes.push({ notification, event: kind === 'no-data' ? 'no-data' : 'opened', repeat: count });
  }

  /** The reminders of a topic's range alerts while its readings are too old to be judged. */
  private async repeatStale(
    group: string,
    topic: string,
    now: Date,
    outcome: GroupAlerts,
    wake: WakeUps | undefined,
  ): Promise<void> {
    for (const kind of ['low', 'high'] as const) {
      const alertKey = key(group, topic, kind);
      const stored = await this.state.get(alertKey);
      if (stored?.value['open'] === true)
        await this.repeatIfDue(group, alertKey, kind, stored, now, outcome, wake);
    }
  }

  /**
   * For a closed alert: whether it may open now. Without a delay, yes; with one, only once the value has
   * been outside for `delayMs` since it was first seen so. Keeps (or forgets) that time in the state.
   */
  private async delayed(
    alertKey: string,
    stored: EngineState | undefined,
    outside: boolean,
    delayMs: number,
    now: Date,
    wake: WakeUps | undefined,
  ): Promise<boolean> {
    const since = stored?.value['outsideSince'];
    const waiting = typeof since === 'number';
    if (!outside || delayMs <= 0) {
      if (waiting && stored !== undefined) {
        const rest = Object.fromEntries(
          Object.entries(stored.value).filter(([name]) => name !== 'outsideSince'),
        );
        await this.state.compareAndSet(alertKey, stored.version, rest, now);
      }
      return true;
    }
    if (!waiting) {
      // Another engine may have written first; either way the wait has begun, and the wake-up ends it.
      await this.state.compareAndSet(
        alertKey,
        stored?.version ?? 0,
        { ...stored?.value, outsideSince: now.getTime() },
        now,
      );
      wake?.at(now.getTime() + delayMs);
      return false;
    }
    if (now.getTime() - since < delayMs) {
      wake?.at(since + delayMs);
      return false;
    }
    return true;
  }
}
