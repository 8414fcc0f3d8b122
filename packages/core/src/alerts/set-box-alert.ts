import { inject, injectable } from 'inversify';
import { RecordAudit } from '../audit/record-audit.js';
import { type Actor } from '../shared/actor.js';
import { DEVICE_REPOSITORY, type DeviceRepository } from '../devices/device.port.js';
import { deviceNamed } from '../devices/find-device.js';
import { GROUP_REPOSITORY, type GroupRepository } from '../groups/group.port.js';
import { requireSettings } from '../groups/group.js';
import { requireSeverity } from '../notifications/notification.js';
import { InvalidInputError, NotFoundError } from '../shared/errors.js';
import { requireText } from '../shared/validation.js';
import { requireNoDataMs } from './set-topic-alert.js';
import { type BoxAlert, EVERY_BOX, MAX_TOPIC_RANGES, readBoxAlerts, withBoxAlerts } from './topic-ranges.js';

export interface BoxAlertChange {
  readonly group: unknown;
  /** A box of the group, or `*` for every box of it without its own deadline. */
  readonly deviceId: unknown;
  /** Milliseconds; `null` or `remove` drops the box's deadline. */
  readonly noDataMs?: unknown;
  /** `warning` or `critical`; left out keeps the box's, `null` drops it (a warning). */
  readonly severity?: unknown;
  readonly remove?: boolean;
  readonly actor?: Actor;
}

export interface BoxAlertView {
  readonly group: string;
  readonly deviceId: string;
  /** Absent once removed. */
  readonly alert?: BoxAlert;
}

/**
 * Sets or removes the no-data deadline of one box of a group (or of every box: `*`), in the group settings
 * beside the ranges (the settings as a whole are replaced, every other key kept).
 */
@injectable()
export class SetBoxAlert {
  constructor(
    @inject(GROUP_REPOSITORY) private readonly groups: GroupRepository,
    @inject(DEVICE_REPOSITORY) private readonly devices: DeviceRepository,
    @inject(RecordAudit) private readonly audit: RecordAudit,
  ) {}

  async execute(change: BoxAlertChange): Promise<BoxAlertView> {
    const name = requireText(change.group, 'group');
    const given = requireText(change.deviceId, 'device');
    const group = await this.groups.findByName(name);
    if (group === undefined) throw new NotFoundError('group', `Group ${name} not found`);
    // Any spelling of a box's MAC names it, as everywhere else; the deadline is kept under the id it is
    // registered with, which is what the engine looks it up by.
    const device = given === EVERY_BOX ? undefined : await deviceNamed(this.devices, given);
    const deviceId = device?.group === group.name ? device.deviceId : given;
    const alerts = readBoxAlerts(group.settings);
    const before = alerts.get(deviceId) ?? null;
    const remove = change.remove === true || change.noDataMs === null;
    if (remove) {
      if (!alerts.delete(deviceId)) return { group: group.name, deviceId };
    } else {
      // Only the severity given: the box keeps its deadline.
      const current = alerts.get(deviceId)?.noDataMs;
      const noDataMs =
        change.noDataMs === undefined && current !== undefined ? current : requireNoDataMs(change.noDataMs);
      if (deviceId !== EVERY_BOX && device?.group !== group.name)
        throw new NotFoundError('device', `No device ${given} in group ${group.name}`);
      if (!alerts.has(deviceId) && alerts.size >= MAX_TOPIC_RANGES)
        throw InvalidInputError.forField('device', `a group holds at most ${MAX_TOPIC_RANGES} box alerts`);
      const kept = change.severity === undefined ? alerts.get(deviceId)?.severity : undefined;
      const severity =
        change.severity === undefined || change.severity === null ? kept : requireSeverity(change.severity);
      alerts.set(deviceId, { noDataMs, ...(severity === undefined ? {} : { severity }) });
    }
    const updated = await this.groups.replaceSettings(
      group.name,
      requireSettings(withBoxAlerts(group.settings, alerts)),
    );
    if (updated === undefined) throw new NotFoundError('group', `Group ${name} not found`);
    const saved = readBoxAlerts(updated.settings).get(deviceId);
    await this.audit.execute(change.actor, {
      action: 'alert.box',
      target: deviceId,
      group: group.name,
      before,
      after: saved ?? null,
    });
    return { group: group.name, deviceId, ...(saved === undefined ? {} : { alert: saved }) };
  }
}
