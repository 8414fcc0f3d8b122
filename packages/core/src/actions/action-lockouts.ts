import { sensorTopic } from '../automations/rules.js';
import {
  type InterlockLockout,
  type Lockout,
  type LockoutCondition,
  lockoutConditions,
  lockoutStates,
  type SensorLockout,
} from './action.js';
import { InvalidInputError } from '../shared/errors.js';
import { isPlainObject, requireNumber, requireText } from '../shared/validation.js';

/** A lockout before it has its id. */
export type NewLockout = Omit<SensorLockout, 'id'> | Omit<InterlockLockout, 'id'>;

/** Bounds the engine's work per action, as MAX_RULES_PER_KIND does for rules. */
export const MAX_LOCKOUTS_PER_ACTION = 20;

export const isSensorLockout = (lockout: Lockout): lockout is SensorLockout => 'topic' in lockout;

/** `esp/air/temperature below 2`, `ventilator_1 is on`: the lockout in words, as logs and listings say it. */
export function describeLockout(lockout: Lockout): string {
  return isSensorLockout(lockout)
    ? `${lockout.topic} ${lockout.condition} ${lockout.value}`
    : `${lockout.while} is ${lockout.is}`;
}

/** Two lockouts that block on the same condition (their ids aside). */
export function sameLockout(a: Lockout, b: Lockout): boolean {
  return describeLockout(a) === describeLockout(b);
}

/** A new lockout as a client or the CLI gives it: `{sensor, below|above}` or `{while, is}`, without id. */
export function parseLockout(raw: Record<string, unknown>, object: string): NewLockout {
  const given = (field: string) => raw[field] !== undefined && raw[field] !== null;
  const sensorPart = given('sensor') || given('below') || given('above');
  const interlockPart = given('while') || given('is');
  if (sensorPart === interlockPart)
    throw InvalidInputError.forField(
      'lockout',
      'give either --sensor with --below or --above, or --while with --is',
    );
  if (sensorPart) {
    const sensor = requireText(raw['sensor'], 'sensor');
    const topic = sensorTopic(sensor);
    if (topic === undefined)
      throw InvalidInputError.forField('sensor', `is no sensor name or topic Hortus knows: ${sensor}`);
    if (given('below') === given('above'))
      throw InvalidInputError.forField('below', 'give one of --below or --above');
    const condition: LockoutCondition = given('below') ? 'below' : 'above';
    return { topic, condition, value: requireNumber(raw[condition], condition) };
  }
  const other = requireText(raw['while'], 'while');
  if (other === object) throw InvalidInputError.forField('while', 'must name another action');
  const is = typeof raw['is'] === 'string' ? raw['is'].trim().toLowerCase() : raw['is'];
  if (!(lockoutStates as readonly unknown[]).includes(is))
    throw InvalidInputError.forField('is', `must be one of: ${lockoutStates.join(', ')}`);
  return { while: other, is: is as InterlockLockout['is'] };
}

/**
 * The lockouts as a store holds them, reshaped to exactly the domain's shape; an entry that is not one is
 * left out (they were validated on the way in, so this never throws).
 */
export function storedLockouts(value: unknown): Lockout[] {
  if (!Array.isArray(value)) return [];
  const lockouts: Lockout[] = [];
  for (const entry of value) {
    if (!isPlainObject(entry)) continue;
    const id = entry['id'];
    if (typeof id !== 'number' || !Number.isInteger(id)) continue;
    const [topic, condition, threshold] = [entry['topic'], entry['condition'], entry['value']];
    if (
      typeof topic === 'string' &&
      (lockoutConditions as readonly unknown[]).includes(condition) &&
      typeof threshold === 'number' &&
      Number.isFinite(threshold)
    ) {
      lockouts.push({ id, topic, condition: condition as LockoutCondition, value: threshold });
      continue;
    }
    const [other, is] = [entry['while'], entry['is']];
    if (typeof other === 'string' && (lockoutStates as readonly unknown[]).includes(is))
      lockouts.push({ id, while: other, is: is as InterlockLockout['is'] });
  }
  return lockouts;
}

/** Lockouts for a store or an answer: absent (not an empty list) when there are none. */
export function lockoutsPart(lockouts: readonly Lockout[] | undefined): { lockouts?: Lockout[] } {
  const kept = storedLockouts(lockouts);
  return kept.length === 0 ? {} : { lockouts: kept };
}

/** The topics an action's sensor lockouts read, each once. */
export function lockoutTopics(action: { readonly lockouts?: readonly Lockout[] }): string[] {
  return [...new Set((action.lockouts ?? []).filter(isSensorLockout).map((lockout) => lockout.topic))];
}
