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
 * (the original showed every box every group's actions). A filter on `object` or `value` narrows them;
 * a filter on `group` or `_id` is ignored (the group is the device's), any other field is refused.
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
    const actions = await this.actions.listByGroup(device.group);
    return actions.filter((action) => conditions.every(([field, test]) => test(action[field])));
  }
}
