import { conditions, type Condition, switchStates, type SwitchState } from '../actions/action.js';
import { sensorTopic } from '../automations/rules.js';
import { InvalidInputError } from '../shared/errors.js';
import { isPlainObject, requireText, TEXT_MAX_LENGTH } from '../shared/validation.js';

/** A target band; at least one bound, and min below max when both are given. */
export interface Band {
  readonly min?: number;
  readonly max?: number;
}

/**
 * A threshold a stage writes into the group's sensor rules when it starts: the rules of action `object`
 * that watch `sensor` with this condition and switch to `action` get `value` (a number, as the web client
 * edits it); when the action has none, the rule is added.
 */
export interface StageRule {
  readonly object: string;
  readonly sensor: string;
  readonly condition: Condition;
  readonly action: SwitchState;
  readonly value: number;
}

export interface RecipeStage {
  readonly name: string;
  /** Length in days; absent: the stage lasts until it is changed by hand. */
  readonly days?: number;
  readonly temperature?: Band;
  readonly humidity?: Band;
  readonly vpd?: Band;
  readonly dli?: Band;
  /** Hours of light a day. */
  readonly photoperiod?: number;
  readonly rules: readonly StageRule[];
}

export interface Recipe {
  readonly name: string;
  /** Where the figures come from. */
  readonly source?: string;
  readonly stages: readonly RecipeStage[];
}

export const MAX_RECIPE_STAGES = 20;
export const MAX_STAGE_RULES = 20;
export const MAX_STAGE_DAYS = 3650;

/** The bands a stage may carry, with the values that make sense for each. */
const bandLimits = {
  temperature: { low: -50, high: 80 },
  humidity: { low: 0, high: 100 },
  vpd: { low: 0, high: 10 },
  dli: { low: 0, high: 100 },
} as const;

export const bandNames = Object.keys(bandLimits) as (keyof typeof bandLimits)[];

function fail(field: string, message: string): never {
  throw InvalidInputError.forField(field, message);
}

function number(value: unknown, field: string, low: number, high: number): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) fail(field, 'must be a number');
  if (value < low || value > high) fail(field, `must be between ${low} and ${high}`);
  return value;
}

function band(value: unknown, field: string, low: number, high: number): Band | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isPlainObject(value)) fail(field, 'must be an object with min and/or max');
  for (const key of Object.keys(value))
    if (key !== 'min' && key !== 'max') fail(`${field}.${key}`, 'is not a band field (min, max)');
  const min = value['min'] === undefined ? undefined : number(value['min'], `${field}.min`, low, high);
  const max = value['max'] === undefined ? undefined : number(value['max'], `${field}.max`, low, high);
  if (min === undefined && max === undefined) fail(field, 'needs min or max');
  if (min !== undefined && max !== undefined && min >= max) fail(`${field}.min`, 'must be below max');
  return { ...(min === undefined ? {} : { min }), ...(max === undefined ? {} : { max }) };
}

function oneOf<T extends string>(allowed: readonly T[], value: unknown, field: string): T {
  const given = typeof value === 'string' ? value.trim().toLowerCase() : undefined;
  if (given !== undefined && (allowed as readonly string[]).includes(given)) return given as T;
  return fail(field, `must be one of: ${allowed.join(', ')}`);
}

function stageRule(value: unknown, field: string): StageRule {
  if (!isPlainObject(value)) fail(field, 'must be an object');
  const sensor = requireText(value['sensor'], `${field}.sensor`);
  if (sensorTopic(sensor) === undefined)
    fail(`${field}.sensor`, 'must be a sensor name (temperature, humidity, vpd, ...) or a topic');
  const threshold = value['value'];
  if (typeof threshold !== 'number' || !Number.isFinite(threshold))
    fail(`${field}.value`, 'must be a number');
  return {
    object: requireText(value['object'], `${field}.object`),
    sensor,
    condition: oneOf(conditions, value['condition'], `${field}.condition`),
    action: oneOf(switchStates, value['action'], `${field}.action`),
    value: threshold,
  };
}

const stageKeys = new Set(['name', 'days', 'photoperiod', 'rules', 'notes', ...bandNames]);

function recipeStage(value: unknown, field: string): RecipeStage {
  if (!isPlainObject(value)) fail(field, 'must be an object');
  for (const key of Object.keys(value))
    if (!stageKeys.has(key)) fail(`${field}.${key}`, `is not a stage field (${[...stageKeys].join(', ')})`);
  const days = value['days'];
  if (
    days !== undefined &&
    (typeof days !== 'number' || !Number.isInteger(days) || days < 1 || days > MAX_STAGE_DAYS)
  )
    fail(`${field}.days`, `must be a whole number of days from 1 to ${MAX_STAGE_DAYS}`);
  const rules = value['rules'] ?? [];
  if (!Array.isArray(rules)) fail(`${field}.rules`, 'must be a list');
  if (rules.length > MAX_STAGE_RULES) fail(`${field}.rules`, `must hold at most ${MAX_STAGE_RULES} rules`);
  const bands: Partial<Record<(typeof bandNames)[number], Band>> = {};
  for (const name of bandNames) {
    const parsed = band(value[name], `${field}.${name}`, bandLimits[name].low, bandLimits[name].high);
    if (parsed !== undefined) bands[name] = parsed;
  }
  const photoperiod = value['photoperiod'];
  return {
    name: requireText(value['name'], `${field}.name`),
    ...(typeof days === 'number' ? { days } : {}),
    ...bands,
    ...(photoperiod === undefined ? {} : { photoperiod: number(photoperiod, `${field}.photoperiod`, 0, 24) }),
    rules: rules.map((rule, index) => stageRule(rule, `${field}.rules[${index}]`)),
  };
}

/** A recipe as a file holds it (parsed from JSON or YAML), checked field by field. */
export function parseRecipe(value: unknown): Recipe {
  if (!isPlainObject(value)) fail('recipe', 'must be an object with name and stages');
  const stages = value['stages'];
  if (!Array.isArray(stages) || stages.length === 0) fail('stages', 'must be a list of at least one stage');
  if (stages.length > MAX_RECIPE_STAGES) fail('stages', `must hold at most ${MAX_RECIPE_STAGES} stages`);
  const parsed = stages.map((stage, index) => recipeStage(stage, `stages[${index}]`));
  const names = new Set<string>();
  for (const [index, stage] of parsed.entries()) {
    if (names.has(stage.name)) fail(`stages[${index}].name`, `names stage ${stage.name} twice`);
    names.add(stage.name);
  }
  const source = value['source'];
  return {
    name: requireText(value['name'], 'name'),
    ...(source === undefined ? {} : { source: requireText(source, 'source', TEXT_MAX_LENGTH) }),
    stages: parsed,
  };
}

/** The stage of that name, or a usage error naming the recipe's stages. */
export function requireStage(recipe: Recipe, name: unknown): RecipeStage {
  const given = requireText(name, 'stage');
  const stage = recipe.stages.find((candidate) => candidate.name === given);
  if (stage === undefined)
    fail(
      'stage',
      `${given} is not a stage of ${recipe.name} (${recipe.stages.map((s) => s.name).join(', ')})`,
    );
  return stage;
}
