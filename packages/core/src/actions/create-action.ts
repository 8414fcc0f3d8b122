import { inject, injectable } from 'inversify';
import { requireText } from '../shared/validation.js';
import { type Action, parseAutomations, requireActionValue } from './action.js';
import { ACTION_REPOSITORY, type ActionRepository } from './action.port.js';

@injectable()
export class CreateAction {
  constructor(@inject(ACTION_REPOSITORY) private readonly actions: ActionRepository) {}

  async execute(input: {
    group: unknown;
    object: unknown;
    value?: unknown;
    automations?: unknown;
  }): Promise<Action> {
    return this.actions.create({
      group: requireText(input.group, 'group'),
      object: requireText(input.object, 'object'),
      value: input.value === undefined ? 'off' : requireActionValue(input.value),
      automations: input.automations === undefined ? [] : parseAutomations(input.automations),
    });
  }
}
