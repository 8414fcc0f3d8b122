import { inject, injectable } from 'inversify';
import { RecordAudit } from '../audit/record-audit.js';
import { type Actor } from '../shared/actor.js';
import { NotFoundError } from '../shared/errors.js';
import { requireText } from '../shared/validation.js';
import { type Action, parseAutomations } from './action.js';
import { ACTION_REPOSITORY, type ActionRepository } from './action.port.js';

@injectable()
export class ReplaceAutomations {
  constructor(
    @inject(ACTION_REPOSITORY) private readonly actions: ActionRepository,
    @inject(RecordAudit) private readonly audit: RecordAudit,
  ) {}

  async execute(input: {
    group: unknown;
    object: unknown;
    automations: unknown;
    actor?: Actor;
  }): Promise<Action> {
    const group = requireText(input.group, 'group');
    const object = requireText(input.object, 'object');
    const automations = parseAutomations(input.automations);
    const before = await this.actions.find(group, object);
    const updated = await this.actions.setAutomations(group, object, automations);
    if (updated === undefined) throw new NotFoundError('action', 'Action not found');
    await this.audit.execute(input.actor, {
      action: 'action.rules',
      target: object,
      group,
      before: before?.automations ?? null,
      after: updated.automations,
    });
    return updated;
  }
}
