import { inject, injectable } from 'inversify';
import { RecordAudit } from '../audit/record-audit.js';
import { type Actor } from '../shared/actor.js';
import { ACTION_LIMITS_KEY } from '../actions/action-limits.js';
import { ALERT_RANGES_KEY, BOX_ALERTS_KEY } from '../alerts/topic-ranges.js';
import { assertMetricsSetting, METRICS_KEY } from '../readings/metrics-settings.js';
import { NotFoundError } from '../shared/errors.js';
import { requireText } from '../shared/validation.js';
import { type Group, requireSettings } from './group.js';
import { keepSettingsNotGiven } from './group-settings.js';
import { GROUP_REPOSITORY, type GroupRepository } from './group.port.js';

/**
 * What Hortus keeps in a group's settings beyond the original's keys, set by its own commands and routes:
 * the actions' safety limits, the alert ranges of any topic, the boxes' no-data deadlines and the derived
 * series (`metrics`). A client
 * that writes the settings it knows (the web client, `group set-settings` with an older file) keeps them.
 */
const KEPT_UNLESS_GIVEN = [ACTION_LIMITS_KEY, ALERT_RANGES_KEY, BOX_ALERTS_KEY, METRICS_KEY] as const;

/**
 * Replaces a group's settings as a whole, as clients write them, except the keys of KEPT_UNLESS_GIVEN that
 * the new settings do not hold.
 */
@injectable()
export class UpdateGroupSettings {
  constructor(
    @inject(GROUP_REPOSITORY) private readonly groups: GroupRepository,
    @inject(RecordAudit) private readonly audit: RecordAudit,
  ) {}

  async execute(input: { name: unknown; settings: unknown; actor?: Actor }): Promise<Group> {
    const name = requireText(input.name, 'groupId');
    const given = requireSettings(input.settings);
    assertMetricsSetting(given);
    const stored = await this.groups.findByName(name);
    if (stored === undefined) throw new NotFoundError('group', 'Group not found');
    const updated = await this.groups.replaceSettings(
      name,
      requireSettings(keepSettingsNotGiven(stored.settings, given, KEPT_UNLESS_GIVEN)),
    );
    if (updated === undefined) throw new NotFoundError('group', 'Group not found');
    await this.audit.execute(input.actor, {
      action: 'group.settings',
      target: name,
      group: name,
      before: stored.settings,
      after: updated.settings,
    });
    return updated;
  }
}
