import { inject, injectable } from 'inversify';
import { RecordAudit } from '../audit/record-audit.js';
import { type Actor } from '../shared/actor.js';
import { requireText } from '../shared/validation.js';
import { type Action, parseAutomations, requireActionValue } from './action.js';
import { ACTION_REPOSITORY, type ActionRepository } from './action.port.js';

@injectable()
export class CreateAction {
  constructor(
    @inject(ACTION_REPOSITORY) private readonly actions: ActionRepository,
    @inject(RecordAudit) private readonly audit: RecordAudit,
  ) {}

  async execute(input: {
    group: unknown;
    object: unknown;
    value?: unknown;
    automations?: unknown;
    actor?: Actor;
  }): Promise<Action> {
    const created = await this.actions.create({
      group: requireText(input.group, 'group'),
      object: requireText(input.object, 'object'),
      value: input.value === undefined ? 'off' : requireActionValue(input.value),
      automations: input.automations === undefined ? [] : parseAutomations(input.automations),
    });
    await this.audit.execute(input.actor, {
      action: 'action.create',
      target: created.object,
      group: created.group,
      after: { value: created.value, automations: created.automations },
    });
    return created;
  }
}
