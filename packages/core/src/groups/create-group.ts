import { inject, injectable } from 'inversify';
import { RecordAudit } from '../audit/record-audit.js';
import { type Actor } from '../shared/actor.js';
import { assertMetricsSetting } from '../readings/metrics-settings.js';
import { InvalidInputError } from '../shared/errors.js';
import { requireText } from '../shared/validation.js';
import { type Group, type GroupPackage, groupPackages, requireSettings } from './group.js';
import { GROUP_REPOSITORY, type GroupRepository } from './group.port.js';

@injectable()
export class CreateGroup {
  constructor(
    @inject(GROUP_REPOSITORY) private readonly groups: GroupRepository,
    @inject(RecordAudit) private readonly audit: RecordAudit,
  ) {}

  async execute(input: {
    name: unknown;
    package?: unknown;
    employee?: unknown;
    settings?: unknown;
    actor?: Actor;
  }): Promise<Group> {
    const pkg = input.package ?? 'small';
    if (typeof pkg !== 'string' || !(groupPackages as readonly string[]).includes(pkg)) {
      throw InvalidInputError.forField('package', `must be one of: ${groupPackages.join(', ')}`);
    }
    const employee = input.employee ?? [];
    if (!Array.isArray(employee))
      throw InvalidInputError.forField('employee', 'must be a list of user names');
    const settings = input.settings === undefined ? [] : requireSettings(input.settings);
    assertMetricsSetting(settings);
    const created = await this.groups.create({
      name: requireText(input.name, 'name'),
      package: pkg as GroupPackage,
      employee: employee.map((name: unknown, i) => requireText(name, `employee[${i}]`)),
      settings,
    });
    await this.audit.execute(input.actor, {
      action: 'group.create',
      target: created.name,
      group: created.name,
      after: { package: created.package, employee: created.employee, settings: created.settings },
    });
    return created;
  }
}
