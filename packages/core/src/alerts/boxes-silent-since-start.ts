import { inject, injectable } from 'inversify';
import { type AlertChange } from './alert-message.js';
import { backSinceStartText, silentSinceStartText } from './silent-boxes-text.js';
import { AUTOMATION_SETTINGS, type AutomationSettings } from '../automations/automation-settings.js';
import {
  ENGINE_STATE_REPOSITORY,
  type EngineState,
  engineStateKey,
  type EngineStateRepository,
  lastEngineRunKey,
} from '../automations/engine-state.port.js';
import { type WakeUps } from '../automations/wake-ups.js';
import { BOX_SETTINGS, type BoxSettings } from '../devices/box-settings.js';
import { type Device } from '../devices/device.js';
import { DEVICE_REPOSITORY, type DeviceRepository } from '../devices/device.port.js';
import { type Group } from '../groups/group.js';
import { NOTIFICATION_REPOSITORY, type NotificationRepository } from '../notifications/notification.port.js';
import { SERVER_START, type ServerStart } from '../shared/server-start.js';
import { CORE_LIMITS, CORE_SETTINGS, type CoreLimits, type CoreSettings } from '../shared/settings.js';
import { groupTimeZone } from '../groups/group-settings.js';

/** How often a group with an open alert is looked at again: a box that only polls its actions is no change. */
const RECHECK_MS = 60_000;

/** What one look at a group decided: a notification raised (or its return), or one withheld by the quota. */
export type SilentBoxesOutcome = AlertChange | { readonly withheld: true } | undefined;

/** The engine-state key of a group's alert; its value keeps the boxes named, space-separated (ids have none). */
export function silentSinceStartKey(group: string): string {
  return engineStateKey('alert', group, 'boxes-since-start', 'no-data');
}

/**
 * Firmware 1.0.4 tries to onboard 50 times at boot, then gives up and sends nothing until it is switched
 * off and on (COMPAT.md, "Boxes"): after a power cut that took the server down too, boxes that boot faster
 * than it stay silent. Once BOX_START_GRACE_MS has passed since this server started, one alert per group
 * names the registered boxes that were reporting before the start and have not made a request of any kind
 * since, and says to power-cycle them; it closes when every box it named has reported again.
 *
 * Not named: a box never seen (it was never set up), one already silent before (last seen more than the
 * group's no-data time, 30 minutes, before the server last ran: the box no-data alerts are for it), and a
 * locked box refused since the start (it does ask; its move is what needs approving). The alert opens at
 * most once per server start; a restart starts a new "since", and an alert of an earlier start stays open
 * until its boxes report.
 */
@injectable()
export class CheckBoxesSilentSinceStart {
  /** Groups with nothing more to decide in this process: judged past the grace, and no alert open. */
  private readonly settled = new Set<string>();
  /** Groups with boxes not heard from since the start, looked at again once the grace is over. */
  private readonly waiting = new Set<string>();
  /** Groups whose alert this process opened: once it is closed it is not opened again. */
  private readonly openedHere = new Set<string>();
  /** When an engine last ran before this server started; read once, before this process's engine writes it. */
  private previousRun: Promise<number | undefined> | undefined;

  constructor(
    @inject(DEVICE_REPOSITORY) private readonly devices: DeviceRepository,
    @inject(ENGINE_STATE_REPOSITORY) private readonly state: EngineStateRepository,
    @inject(NOTIFICATION_REPOSITORY) private readonly notifications: NotificationRepository,
    @inject(BOX_SETTINGS) private readonly boxes: BoxSettings,
    @inject(AUTOMATION_SETTINGS) private readonly settings: AutomationSettings,
    @inject(CORE_LIMITS) private readonly limits: CoreLimits,
    @inject(SERVER_START) private readonly start: ServerStart,
    @inject(CORE_SETTINGS) private readonly coreSettings: CoreSettings,
  ) {}

  /**
   * Reads when an engine last ran before this server started, before this process's engine first records
   * its own run: the engine calls it at the start of every tick (once read, it costs nothing). A failure
   * fails the tick before the run is recorded, so a store hiccup at start cannot lose what it knew.
   */
  async prepare(): Promise<void> {
    if (this.boxes.startGraceMs > 0) await this.lastRunBeforeStart();
  }

  /** One group: opens, keeps or closes its alert. */
  async check(group: Group, now: Date, wake?: WakeUps): Promise<SilentBoxesOutcome> {
    const graceMs = this.boxes.startGraceMs;
    if (graceMs <= 0 || this.settled.has(group.name)) return undefined;
    const key = silentSinceStartKey(group.name);
    const stored = await this.state.get(key);
    if (stored?.value['open'] === true) return this.whileOpen(group, key, stored, now, wake);
    const startAt = this.start.at.getTime();
    if (stored?.value['since'] === startAt || this.openedHere.has(group.name)) {
      this.settled.add(group.name);
      return undefined;
    }
    const judgedAt = startAt + graceMs;
    if (now.getTime() <= judgedAt && this.waiting.has(group.name)) {
      wake?.at(judgedAt + 1);
      return undefined;
    }
    // A box can only leave this list after the start, never join it: a group without one is done.
    const silent = await this.silentBoxes(group.name);
    if (silent.length === 0) {
      this.settled.add(group.name);
      return undefined;
    }
    if (now.getTime() <= judgedAt) {
      this.waiting.add(group.name);
      wake?.at(judgedAt + 1);
      return undefined;
    }
    if ((await this.notifications.countOpen(group.name)) >= this.limits.maxOpenNotificationsPerGroup)
      return { withheld: true };
    const ids = silent.map((device) => device.deviceId);
    const value = { open: true, openedAt: now.getTime(), since: startAt, boxes: ids.join(' ') };
    // Several servers may judge the group at once: the one whose write wins raises the alert.
    if (!(await this.state.compareAndSet(key, stored?.version ?? 0, value, now))) return undefined;
    this.openedHere.add(group.name);
    const notification = await this.notifications.create({
      group: group.name,
      time: now,
      message: silentSinceStartText(
        group.name,
        ids,
        this.start.at,
        groupTimeZone(group.settings, this.coreSettings.timeZone),
      ),
      severity: 'warning',
    });
    await this.state.compareAndSet(
      key,
      (stored?.version ?? 0) + 1,
      { ...value, notificationId: notification.id, severity: 'warning', sentAt: now.getTime() },
      now,
    );
    wake?.at(now.getTime() + RECHECK_MS);
    return { notification, event: 'no-data' };
  }

  /** Closes the alert once every box it named has made a request since the start it counts from. */
  private async whileOpen(
    group: Group,
    key: string,
    stored: EngineState,
    now: Date,
    wake: WakeUps | undefined,
  ): Promise<SilentBoxesOutcome> {
    const { boxes, since } = stored.value;
    const named = typeof boxes === 'string' ? boxes.split(' ').filter((id) => id !== '') : [];
    const sinceAt = typeof since === 'number' ? since : this.start.at.getTime();
    const registered = new Map(
      (await this.devices.listByGroup(group.name)).map((device) => [device.deviceId, device]),
    );
    // A box deleted or moved to another group is no longer this group's to wait for.
    const stillSilent = named.filter((id) => {
      const device = registered.get(id);
      return device !== undefined && (device.lastSeenAt?.getTime() ?? 0) < sinceAt;
    });
    if (stillSilent.length > 0) {
      wake?.at(now.getTime() + RECHECK_MS);
      return undefined;
    }
    if ((await this.notifications.countOpen(group.name)) >= this.limits.maxOpenNotificationsPerGroup)
      return { withheld: true };
    const closed = { open: false, since: sinceAt, boxes: named.join(' ') };
    if (!(await this.state.compareAndSet(key, stored.version, closed, now))) return undefined;
    if (sinceAt === this.start.at.getTime()) this.settled.add(group.name);
    const notification = await this.notifications.create({
      group: group.name,
      time: now,
      message: backSinceStartText(group.name, named),
      severity: 'warning',
    });
    return { notification, event: 'resolved' };
  }

  /** The group's boxes that were reporting before the start and have made no request since. */
  private async silentBoxes(group: string): Promise<Device[]> {
    const startAt = this.start.at.getTime();
    const lastRun = await this.lastRunBeforeStart();
    // With no engine run before (a new store) or one after the start (another server), the start itself.
    const reference = Math.min(lastRun ?? startAt, startAt);
    const silentBefore = reference - this.settings.noDataAlertMs;
    return (await this.devices.listByGroup(group)).filter((device) => {
      const seenAt = device.lastSeenAt?.getTime();
      if (seenAt === undefined || seenAt >= startAt || seenAt < silentBefore) return false;
      const refusedAt = device.moveRequest?.at.getTime();
      return refusedAt === undefined || refusedAt < startAt;
    });
  }

  private lastRunBeforeStart(): Promise<number | undefined> {
    this.previousRun ??= this.state.get(lastEngineRunKey).then(
      (stored) => {
        const at = stored?.value['at'];
        return typeof at === 'number' ? at : undefined;
      },
      (error: unknown) => {
        // Asked again next time; a store that cannot answer is the tick's failure to report.
        this.previousRun = undefined;
        throw error;
      },
    );
    return this.previousRun;
  }
}
