import { inject, injectable } from 'inversify';
import { RecordAudit } from '../audit/record-audit.js';
import { type Actor } from '../shared/actor.js';
import { GROUP_REPOSITORY, type GroupRepository } from '../groups/group.port.js';
import { requireSettings } from '../groups/group.js';
import { NotFoundError } from '../shared/errors.js';
import { requireText } from '../shared/validation.js';
import {
  type MetricsSettings,
  parseMetricsSettings,
  readMetricsSettings,
  withMetricsSettings,
} from './metrics-settings.js';

/** What to change of a group's derived series; what is left out stays as it is. */
export interface MetricsChange {
  readonly group: unknown;
  readonly vpd?: unknown;
  readonly dewPoint?: unknown;
  readonly dli?: unknown;
  readonly leafOffset?: unknown;
  readonly light?: unknown;
  readonly dayStart?: unknown;
  readonly actor?: Actor;
}

export interface GroupMetricsView {
  readonly group: string;
  readonly metrics: MetricsSettings;
}

/**
 * Shows or changes which derived series a group has on and how they are derived (`hortus group metrics`):
 * the `metrics` group setting, every other key kept where it was.
 */
@injectable()
export class SetGroupMetrics {
  constructor(
    @inject(GROUP_REPOSITORY) private readonly groups: GroupRepository,
    @inject(RecordAudit) private readonly audit: RecordAudit,
  ) {}

  async execute(change: MetricsChange): Promise<GroupMetricsView> {
    const name = requireText(change.group, 'group');
    const group = await this.groups.findByName(name);
    if (group === undefined) throw new NotFoundError('group', `Group ${name} not found`);
    const current = readMetricsSettings(group.settings);
    const given = Object.fromEntries(
      (['vpd', 'dewPoint', 'dli', 'leafOffset', 'light', 'dayStart'] as const)
        .filter((key) => change[key] !== undefined)
        .map((key) => [key, change[key]]),
    );
    if (Object.keys(given).length === 0) return { group: group.name, metrics: current };
    const metrics = parseMetricsSettings({ ...current, ...given });
    const updated = await this.groups.replaceSettings(
      group.name,
      requireSettings(withMetricsSettings(group.settings, metrics)),
    );
    if (updated === undefined) throw new NotFoundError('group', `Group ${name} not found`);
    const after = readMetricsSettings(updated.settings);
    await this.audit.execute(change.actor, {
      action: 'group.metrics',
      target: group.name,
      group: group.name,
      before: current,
      after,
    });
    return { group: group.name, metrics: after };
  }
}
