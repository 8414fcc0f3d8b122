import { inject, injectable } from 'inversify';
import { type Action } from '../actions/action.js';
import { ACTION_REPOSITORY, type ActionRepository } from '../actions/action.port.js';
import { InvalidInputError } from '../shared/errors.js';
import { isPlainObject } from '../shared/validation.js';
import { type Device } from './device.js';

/** Fields of an action a box may filter on, and the operators it may use. */
const filterable = new Set(['object', 'value']);
const operators = new Set(['$eq', '$ne', '$in', '$nin']);

type Condition = (value: unknown) => boolean;

/** The relays firmware 1.0.4 switches, by object name (COMPAT "Boxes"); it reads no other object. */
export const BOX_RELAY_OBJECTS = ['pump_1', 'led_1', 'ventilator_1', 'ventilator_2'] as const;

/**
 * The actions a box is answered: the group's own, and `off` for each relay object the group does not have.
 * The firmware keeps a relay as it is when its object is missing from the answer, so without this a relay
 * stays on after its action is deleted, its box moved to another group, or its group renamed. The filled-in
 * ones are made up (id of zeros and the object's place, no automations); nothing stores them.
 */
export function withRelaysOff(group: string, actions: readonly Action[]): Action[] {
  const present = new Set(actions.map((action) => action.object));
  const missing = BOX_RELAY_OBJECTS.filter((object) => !present.has(object)).map((object): Action => ({
    id: String(BOX_RELAY_OBJECTS.indexOf(object) + 1).padStart(24, '0'),
    group,
    object,
    value: 'off',
    automations: [],
  }));
  return [...actions, ...missing];
}

function conditionOf(field: string, spec: unknown): Condition {
  if (!isPlainObject(spec)) return (value) => value === spec;
  const tests = Object.entries(spec).map(([operator, operand]): Condition => {
    if (!operators.has(operator)) {
      throw InvalidInputError.forField(
        `filter.${field}`,
        `operator ${operator.slice(0, 20)} is not supported`,
      );
    }
    if (operator === '$eq') return (value) => value === operand;
    if (operator === '$ne') return (value) => value !== operand;
    if (!Array.isArray(operand))
      throw InvalidInputError.forField(`filter.${field}.${operator}`, 'must be a list');
    return operator === '$in' ? (value) => operand.includes(value) : (value) => !operand.includes(value);
  });
  return (value) => tests.every((test) => test(value));
}

/**
 * `find` on `actions` for a box: the actions of the device's own group only, whatever the filter names
 * (the original showed every box every group's actions), with `off` for each relay object the group lacks
 * (withRelaysOff; only once the group's actions were read, so a store outage, which answers no 200, never
 * switches a relay). A filter on `object` or `value` narrows them; a filter on `group` or `_id` is ignored
 * (the group is the device's), any other field is refused.
 */
@injectable()
export class FindBoxActions {
  constructor(@inject(ACTION_REPOSITORY) private readonly actions: ActionRepository) {}

  async execute(device: Device, filter: unknown): Promise<Action[]> {
    const given = filter ?? {};
    if (!isPlainObject(given)) throw InvalidInputError.forField('filter', 'must be an object');
    const conditions: [keyof Action, Condition][] = [];
    for (const [field, spec] of Object.entries(given)) {
      if (field === 'group' || field === '_id') continue;
      if (!filterable.has(field)) {
        throw InvalidInputError.forField(
          'filter',
          `may name only object and value, not ${field.slice(0, 40)}`,
        );
      }
      conditions.push([field as keyof Action, conditionOf(field, spec)]);
    }
    const actions = withRelaysOff(device.group, await this.actions.listByGroup(device.group));
    return actions.filter((action) => conditions.every(([field, test]) => test(action[field])));
  }
}
