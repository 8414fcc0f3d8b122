import { inject, injectable, optional } from 'inversify';
import { RecordAudit } from '../audit/record-audit.js';
import { type Actor } from '../shared/actor.js';
import { STAGE_REPOSITORY, type StageRepository } from '../stages/stage.port.js';
import {
  ACTION_HISTORY_REPOSITORY,
  type ActionHistoryRepository,
} from '../action-history/action-history.port.js';
import { ACCESS_KEY_REPOSITORY, type AccessKeyRepository } from '../access-keys/access-key.port.js';
import { ACTION_REPOSITORY, type ActionRepository } from '../actions/action.port.js';
import { ALERT_OUTBOX_REPOSITORY, type AlertOutboxRepository } from '../alerts/alert-outbox.port.js';
import {
  AUTOMATION_LOG_REPOSITORY,
  type AutomationLogRepository,
} from '../automations/automation-log.port.js';
import { DEVICE_REPOSITORY, type DeviceRepository } from '../devices/device.port.js';
import { NOTIFICATION_REPOSITORY, type NotificationRepository } from '../notifications/notification.port.js';
import { READING_REPOSITORY, type ReadingRepository } from '../readings/reading.port.js';
import { CLOCK, type Clock } from '../shared/clock.port.js';
import { ConflictError, NotFoundError } from '../shared/errors.js';
import { requireText } from '../shared/validation.js';
import { GROUP_REPOSITORY, type GroupRepository } from './group.port.js';

/** What deleting a group removed (or, refused, what it would have removed). */
export interface DeletedGroup {
  readonly group: string;
  /** Whether a group record (settings, employees) was there. */
  readonly record: boolean;
  readonly readings: number;
  readonly devices: number;
  /** Actions, with their automations. */
  readonly actions: number;
  readonly notifications: number;
  readonly automationEvents: number;
  /** Keys limited to this group alone (device keys, one-group client keys), revoked. */
  readonly accessKeys: number;
}

/** Every time a reading may have: the full range of a JavaScript Date. */
const EARLIEST = new Date(-8.64e15);
const LATEST = new Date(8.64e15);

/**
 * Removes a group and everything in it: readings (and their summaries), devices, actions with their
 * automations, notifications, the automation log, its webhooks and queued alert messages (cancelled), the
 * group record with its employee list, and revokes
 * the access keys that reach only this group. Keys that also name other groups keep them (dropping the
 * name would widen a key to every group), and user accounts are people, deleted on their own. A group
 * holding data is only deleted with `confirm`; without it a ConflictError says what it holds.
 */
@injectable()
export class DeleteGroup {
  constructor(
    @inject(GROUP_REPOSITORY) private readonly groups: GroupRepository,
    @inject(READING_REPOSITORY) private readonly readings: ReadingRepository,
    @inject(DEVICE_REPOSITORY) private readonly devices: DeviceRepository,
    @inject(ACTION_REPOSITORY) private readonly actions: ActionRepository,
    @inject(NOTIFICATION_REPOSITORY) private readonly notifications: NotificationRepository,
    @inject(AUTOMATION_LOG_REPOSITORY) private readonly automationLog: AutomationLogRepository,
    @inject(ACTION_HISTORY_REPOSITORY) private readonly actionHistory: ActionHistoryRepository,
    @inject(ACCESS_KEY_REPOSITORY) private readonly accessKeys: AccessKeyRepository,
    @inject(ALERT_OUTBOX_REPOSITORY) private readonly outbox: AlertOutboxRepository,
    @inject(CLOCK) private readonly clock: Clock,
    @inject(RecordAudit) private readonly audit: RecordAudit,
    @inject(STAGE_REPOSITORY) @optional() private readonly stages?: StageRepository,
  ) {}

  async execute(input: { group: unknown; confirm?: boolean; actor?: Actor }): Promise<DeletedGroup> {
    const group = requireText(input.group, 'group');
    const record = (await this.groups.findByName(group)) !== undefined;
    const keys = (await this.accessKeys.list()).filter(
      (key) => key.revokedAt === undefined && key.groups.length === 1 && key.groups[0] === group,
    );
    const held = {
      topics: await this.readings.countTopics(group),
      devices: (await this.devices.listByGroup(group)).length,
      actions: (await this.actions.listByGroup(group)).length,
      notifications: await this.notifications.countOpen(group),
      automationEvents: (await this.automationLog.listByGroup(group, 1)).length,
      accessKeys: keys.length,
    };
    const holdsData = Object.values(held).some((count) => count > 0);
    if (!record && !holdsData) throw new NotFoundError('group', 'Group not found');
    if (holdsData && input.confirm !== true) {
      const parts = Object.entries(held)
        .filter(([, count]) => count > 0)
        .map(([what, count]) => `${what}: ${count}`);
      throw new ConflictError(
        'group',
        `Group ${group} holds data (${parts.join(', ')}); confirm to delete it with everything in it`,
      );
    }
    // Keys first: a box of this group can no longer write while the rest goes.
    const now = this.clock.now();
    for (const key of keys) await this.accessKeys.revoke(key.id, now);
    const devices = await this.devices.deleteByGroup(group);
    const actions = await this.actions.deleteByGroup(group);
    const readings = await this.readings.deleteRange({ group, from: EARLIEST, to: LATEST });
    const notifications = await this.notifications.deleteByGroup(group);
    const automationEvents = await this.automationLog.deleteByGroup(group);
    await this.actionHistory.deleteByGroup(group);
    await this.stages?.delete(group);
    // Its webhooks (and their secrets) go too: a new group of that name must not feed them.
    await this.outbox.forgetGroup(group, 'cancelled: the group was deleted');
    const removedRecord = await this.groups.delete(group);
    // The group's own entries of the trail stay: they say who deleted it, and what it was.
    await this.audit.execute(input.actor, {
      action: 'group.delete',
      target: group,
      group,
      before: { ...held, record },
    });
    return {
      group,
      record: removedRecord,
      readings,
      devices,
      actions,
      notifications,
      automationEvents,
      accessKeys: keys.length,
    };
  }
}
