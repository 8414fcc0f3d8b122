import {
  type AutomationSet,
  MAX_RULES_PER_KIND,
  type Condition,
  type SensorAutomation,
} from '../actions/action.js';
import { readTopicRanges, type TopicRange, withTopicRanges } from '../alerts/topic-ranges.js';
import { sensorTopic } from '../automations/rules.js';
import { groupSettingKeys } from '../groups/group-setting-keys.js';
import { withSetting } from '../groups/group-settings.js';
import { sensorTopics } from '../readings/reading.js';
import { derivedTopics } from '../readings/topics.js';
import { type Band, type RecipeStage, type StageRule } from './recipe.js';

/** The topics a stage's bands become the alert ranges of. */
export const stageTopics = {
  temperature: sensorTopics.temperature,
  humidity: sensorTopics.humidity,
  vpd: derivedTopics.vpd,
  dli: derivedTopics.dli,
} as const;

/** What a stage changed in the group's alert ranges, for the log and the command's answer. */
export interface RangeChange {
  readonly topic: string;
  readonly min?: number;
  readonly max?: number;
}

function without<T extends object>(value: T, ...keys: readonly string[]): T {
  return Object.fromEntries(Object.entries(value).filter(([key]) => !keys.includes(key))) as T;
}

function bounds(band: Band): Pick<TopicRange, 'min' | 'max'> {
  return {
    ...(band.min === undefined ? {} : { min: band.min }),
    ...(band.max === undefined ? {} : { max: band.max }),
  };
}

/** The range with its bounds replaced; its delay, no-data deadline and (if it still fits) hysteresis kept. */
function rebound(current: TopicRange | undefined, band: Band): TopicRange {
  const kept = without(current ?? {}, 'min', 'max', 'hysteresis');
  const hysteresis = current?.hysteresis;
  const fits =
    hysteresis !== undefined &&
    (band.min === undefined || band.max === undefined || hysteresis < band.max - band.min);
  return { ...bounds(band), ...(fits ? { hysteresis } : {}), ...kept };
}

/**
 * The group's settings with a stage's bands as its alert ranges. Temperature goes to the group's own
 * `tempMin`/`tempMax`, which the web client shows and edits, so a person's later edit there wins until the
 * next stage change; a temperature range of its own loses its bounds for that (its delay and deadline
 * stay). Humidity and VPD become their topics' ranges. DLI only bounds its maximum: the day's integral
 * starts at 0 every day, so a minimum would alert every morning.
 */
export function withStageBands(
  settings: unknown,
  stage: RecipeStage,
): { settings: unknown; changes: RangeChange[] } {
  const changes: RangeChange[] = [];
  let next = settings;
  const ranges = readTopicRanges(settings);
  if (stage.temperature !== undefined) {
    next = withSetting(next, groupSettingKeys.tempMin, stage.temperature.min);
    next = withSetting(next, groupSettingKeys.tempMax, stage.temperature.max);
    const own = ranges.get(stageTopics.temperature);
    if (own !== undefined) {
      ranges.set(stageTopics.temperature, without(own, 'min', 'max'));
    }
    changes.push({ topic: stageTopics.temperature, ...bounds(stage.temperature) });
  }
  const own: [string, Band | undefined][] = [
    [stageTopics.humidity, stage.humidity],
    [stageTopics.vpd, stage.vpd],
    [stageTopics.dli, stage.dli?.max === undefined ? undefined : { max: stage.dli.max }],
  ];
  for (const [topic, band] of own) {
    if (band === undefined) continue;
    ranges.set(topic, rebound(ranges.get(topic), band));
    changes.push({ topic, ...bounds(band) });
  }
  return { settings: withTopicRanges(next, ranges), changes };
}

const sameCondition = (a: Condition, b: Condition): boolean => a === b || (a !== 'above' && b !== 'above');

function matches(rule: SensorAutomation, wanted: StageRule): boolean {
  return (
    rule.action === wanted.action &&
    sameCondition(rule.condition, wanted.condition) &&
    sensorTopic(rule.sensor) === sensorTopic(wanted.sensor)
  );
}

export interface RuleOutcome {
  readonly automations: AutomationSet[];
  readonly updated: number;
  readonly added: number;
}

/**
 * An action's automations with a stage's thresholds written in as numbers: every sensor rule that watches
 * the same sensor with the same condition and switch gets the value; when none does, the rule is added to
 * the first set (unless it is full).
 */
export function withStageThresholds(
  automations: readonly AutomationSet[],
  wanted: readonly StageRule[],
): RuleOutcome {
  let updated = 0;
  let added = 0;
  const sets = automations.map((set) => ({ ...set, sensorAutomations: [...set.sensorAutomations] }));
  for (const rule of wanted) {
    const value = String(rule.value);
    let found = false;
    for (const set of sets)
      set.sensorAutomations = set.sensorAutomations.map((current) => {
        if (!matches(current, rule)) return current;
        found = true;
        if (current.value === value) return current;
        updated += 1;
        return { ...current, value };
      });
    if (found) continue;
    const fresh: SensorAutomation = {
      action: rule.action,
      sensor: rule.sensor,
      condition: rule.condition,
      value,
    };
    const first = sets[0];
    if (first === undefined) sets.push({ timeAutomations: [], sensorAutomations: [fresh] });
    else if (first.sensorAutomations.length < MAX_RULES_PER_KIND) first.sensorAutomations.push(fresh);
    else continue;
    added += 1;
  }
  return { automations: sets, updated, added };
}
