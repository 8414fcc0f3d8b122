import { inject, injectable } from 'inversify';
import { RecordAudit } from '../audit/record-audit.js';
import { type Actor } from '../shared/actor.js';
import { GROUP_REPOSITORY, type GroupRepository } from '../groups/group.port.js';
import { requireSettings } from '../groups/group.js';
import { requireSeverity } from '../notifications/notification.js';
import { requireTopic } from '../readings/reading.js';
import { InvalidInputError, NotFoundError } from '../shared/errors.js';
import { requireInteger, requireNumber, requireText } from '../shared/validation.js';
import {
  MAX_ALERT_DELAY_MS,
  MAX_NO_DATA_MS,
  MIN_NO_DATA_MS,
  MAX_TOPIC_RANGES,
  readTopicRanges,
  type TopicRange,
  withTopicRanges,
} from './topic-ranges.js';

/** A field left out keeps its value; `null` drops it. */
export interface TopicAlertChange {
  readonly group: unknown;
  readonly topic: unknown;
  readonly min?: unknown;
  readonly max?: unknown;
  readonly hysteresis?: unknown;
  readonly delayMs?: unknown;
  readonly noDataMs?: unknown;
  /** `warning` or `critical`; `null` drops it (a warning). */
  readonly severity?: unknown;
  /** Drops the topic's range altogether. */
  readonly remove?: boolean;
  readonly actor?: Actor;
}

export interface TopicAlertView {
  readonly group: string;
  readonly topic: string;
  /** Absent once removed (or when the topic has none). */
  readonly range?: TopicRange;
}

function field<K extends keyof TopicRange>(
  current: TopicRange,
  key: K,
  given: unknown,
  parse: (value: unknown) => NonNullable<TopicRange[K]>,
): Partial<TopicRange> {
  if (given === null) return {};
  if (given === undefined) return current[key] === undefined ? {} : { [key]: current[key] };
  return { [key]: parse(given) };
}

/**
 * Sets, changes or removes the alert range of one topic of a group, in the group's settings beside the
 * original's keys (the settings as a whole are replaced, every other key kept).
 */
@injectable()
export class SetTopicAlert {
  constructor(
    @inject(GROUP_REPOSITORY) private readonly groups: GroupRepository,
    @inject(RecordAudit) private readonly audit: RecordAudit,
  ) {}

  async execute(change: TopicAlertChange): Promise<TopicAlertView> {
    const name = requireText(change.group, 'group');
    const topic = requireTopic(change.topic);
    const group = await this.groups.findByName(name);
    if (group === undefined) throw new NotFoundError('group', `Group ${name} not found`);
    const ranges = readTopicRanges(group.settings);
    const current = ranges.get(topic) ?? {};
    const before = ranges.get(topic) ?? null;
    if (change.remove === true) {
      if (!ranges.delete(topic)) return { group: group.name, topic };
    } else {
      const range: TopicRange = {
        ...field(current, 'min', change.min, (value) => requireNumber(value, 'min')),
        ...field(current, 'max', change.max, (value) => requireNumber(value, 'max')),
        ...field(current, 'hysteresis', change.hysteresis, (value) => {
          const hysteresis = requireNumber(value, 'hysteresis');
          if (hysteresis < 0) throw InvalidInputError.forField('hysteresis', 'must not be negative');
          return hysteresis;
        }),
        ...field(current, 'delayMs', change.delayMs, (value) =>
          requireInteger(value, 'delay', 0, MAX_ALERT_DELAY_MS),
        ),
        ...field(current, 'noDataMs', change.noDataMs, requireNoDataMs),
        ...field(current, 'severity', change.severity, (value) => requireSeverity(value)),
      };
      if (range.min === undefined && range.max === undefined && range.noDataMs === undefined)
        throw InvalidInputError.forField('min', 'max or no-data is required');
      if (range.min !== undefined && range.max !== undefined) {
        if (range.min >= range.max) throw InvalidInputError.forField('min', 'must be below max');
        // Past this, leaving one bound could never end before crossing the other.
        if ((range.hysteresis ?? 0) >= range.max - range.min)
          throw InvalidInputError.forField('hysteresis', 'must be less than max - min');
      }
      if (!ranges.has(topic) && ranges.size >= MAX_TOPIC_RANGES)
        throw InvalidInputError.forField('topic', `a group holds at most ${MAX_TOPIC_RANGES} alert ranges`);
      ranges.set(topic, range.delayMs === 0 ? without(range, 'delayMs') : range);
    }
    const settings = requireSettings(withTopicRanges(group.settings, ranges));
    const updated = await this.groups.replaceSettings(group.name, settings);
    if (updated === undefined) throw new NotFoundError('group', `Group ${name} not found`);
    const saved = readTopicRanges(updated.settings).get(topic);
    await this.audit.execute(change.actor, {
      action: 'alert.range',
      target: topic,
      group: group.name,
      before,
      after: saved ?? null,
    });
    return { group: group.name, topic, ...(saved === undefined ? {} : { range: saved }) };
  }
}

function without(range: TopicRange, key: keyof TopicRange): TopicRange {
  return Object.fromEntries(Object.entries(range).filter(([name]) => name !== key)) as TopicRange;
}

/** A no-data deadline as given: whole milliseconds within MIN_NO_DATA_MS and MAX_NO_DATA_MS. */
export function requireNoDataMs(value: unknown): number {
  return requireInteger(value, 'no-data', MIN_NO_DATA_MS, MAX_NO_DATA_MS);
}
