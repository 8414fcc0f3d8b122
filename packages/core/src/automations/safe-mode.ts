import { inject, injectable } from 'inversify';
import { type Action } from '../actions/action.js';
import {
  type ActionControls,
  defaultSafeState,
  durationText,
  type SafeState,
  safeModeStateKey,
} from '../actions/action-limits.js';
import { NOTIFICATION_REPOSITORY, type NotificationRepository } from '../notifications/notification.port.js';
import { READING_REPOSITORY, type ReadingRepository } from '../readings/reading.port.js';
import { AUTOMATION_SETTINGS, type AutomationSettings } from './automation-settings.js';
import {
  ENGINE_STATE_REPOSITORY,
  type EngineStateRepository,
  sensorRuleStateKey,
} from './engine-state.port.js';
import { sensorTopic } from './rules.js';
import { type WakeUps } from './wake-ups.js';

/** The freshness limit is at least this many of a topic's usual intervals between readings. */
export const STALE_INTERVALS = 3;
/** How many of a topic's newest readings its usual interval is measured on. */
const INTERVAL_SAMPLE = 11;
/** How long a measured usual interval is reused before it is measured again. */
const INTERVAL_REUSE_MS = 3_600_000;

/** What the engine decided about one action's inputs at one evaluation. */
export type SafetyVerdict =
  /** A fresh reading of at least one input, or no input at all (only time rules): the rules decide. */
  | { readonly kind: 'normal' }
  /** Every input has gone stale and this engine claimed the change: switch to `safe` (unless `hold`). */
  | { readonly kind: 'enter'; readonly safe: SafeState; readonly rule: string }
  /** Still every input stale: the safe state was applied already; the rules do nothing. */
  | { readonly kind: 'safe' }
  /** Fresh data is back and this engine closed safe mode: the rules take over from now, as if new. */
  | { readonly kind: 'left' };

/** One action's safety as the listing shows it. */
export interface ActionSafetyState {
  readonly safe: SafeState;
  /** Its freshness limit: the one chosen, else the default of its topics (undefined: no sensor rules). */
  readonly staleAfterMs?: number;
  readonly staleAfterChosen: boolean;
  readonly topics: readonly string[];
  readonly inSafeMode: boolean;
  readonly since?: Date;
  /** Why: the silent topics. */
  readonly silentTopics?: readonly string[];
}

/** The topics an action's sensor rules read, each once, in rule order (names that map to none left out). */
export function inputTopics(action: Action): string[] {
  const topics = new Set<string>();
  for (const set of action.automations) {
    for (const rule of set.sensorAutomations) {
      const topic = sensorTopic(rule.sensor);
      if (topic !== undefined) topics.add(topic);
    }
  }
  return [...topics];
}

/**
 * Safe mode: when every sensor an action's rules read has gone stale (its box went quiet, or it sends only
 * values refused as invalid, such as a failed sensor's `nan`), the action goes to its safe state once, and
 * its rules rest until fresh data returns. The state is kept in the engine state (`safe` key), claimed by
 * compare-and-set as every other engine decision, so one engine of several switches and notifies, once,
 * and a restart keeps it. Staleness is a deadline (the newest reading plus the freshness limit) handed to
 * the wake-ups, so an idle group is evaluated at that moment and at no other.
 */
@injectable()
export class SafeMode {
  private readonly intervals = new Map<string, { readonly at: number; readonly ms: number }>();

  constructor(
    @inject(READING_REPOSITORY) private readonly readings: ReadingRepository,
    @inject(ENGINE_STATE_REPOSITORY) private readonly state: EngineStateRepository,
    @inject(NOTIFICATION_REPOSITORY) private readonly notifications: NotificationRepository,
    @inject(AUTOMATION_SETTINGS) private readonly settings: AutomationSettings,
  ) {}

  async check(
    action: Action,
    controls: ActionControls | undefined,
    now: Date,
    wake: WakeUps | undefined,
  ): Promise<SafetyVerdict> {
    const key = safeModeStateKey(action.group, action.object);
    const stored = await this.state.get(key);
    const inSafeMode = typeof stored?.value['since'] === 'number';
    const topics = inputTopics(action);
    const silent: string[] = [];
    let freshUntil = Number.NEGATIVE_INFINITY;
    let limitMs = 0;
    for (const topic of topics) {
      const reading = await this.readings.latest(action.group, topic);
      if (reading === undefined) continue;
      const staleAfterMs = await this.staleAfter(action.group, topic, controls, now);
      limitMs = Math.max(limitMs, staleAfterMs);
      const until = reading.time.getTime() + staleAfterMs;
      if (now.getTime() <= until) freshUntil = Math.max(freshUntil, until);
      else silent.push(topic);
    }
    const fresh = Number.isFinite(freshUntil);
    // A topic that never reported has nothing to go stale: it alone puts no action in safe mode.
    const allStale = !fresh && (silent.length > 0 || (inSafeMode && topics.length > 0));
    if (fresh) wake?.at(freshUntil + 1);
    if (allStale) {
      if (inSafeMode) return { kind: 'safe' };
      const safe = controls?.safe ?? defaultSafeState(action.object);
      const value = { since: now.getTime(), topics: silent.join(', '), safe };
      if (!(await this.state.compareAndSet(key, stored?.version ?? 0, value, now))) return { kind: 'safe' };
      const rule = `no fresh reading of ${silent.join(', ')} for ${durationText(limitMs)} -> ${safe}`;
      await this.notifications.create({
        group: action.group,
        time: now,
        message:
          `Safe mode: ${action.object} ` +
          (safe === 'hold' ? 'is held as it is' : `is switched ${safe}`) +
          `: no fresh reading of ${silent.join(', ')} for ${durationText(limitMs)}`,
      });
      return { kind: 'enter', safe, rule };
    }
    if (!inSafeMode) return { kind: 'normal' };
    if (!(await this.state.compareAndSet(key, stored.version, { since: null }, now)))
      return { kind: 'normal' };
    await this.rearmRules(action, now);
    await this.notifications.create({
      group: action.group,
      time: now,
      message:
        topics.length === 0
          ? `Safe mode over: ${action.object} has no sensor rules any more`
          : `Safe mode over: fresh data for ${action.object} is arriving again; its rules apply again`,
    });
    return { kind: 'left' };
  }

  /** One action's safety for the listing: its settings, and safe mode as the engine state holds it. */
  async describe(
    action: Action,
    controls: ActionControls | undefined,
    now: Date,
  ): Promise<ActionSafetyState> {
    const stored = (await this.state.get(safeModeStateKey(action.group, action.object)))?.value;
    const since = stored?.['since'];
    const topics = inputTopics(action);
    let staleAfterMs = controls?.staleAfterMs;
    if (staleAfterMs === undefined && topics.length > 0) {
      staleAfterMs = 0;
      for (const topic of topics)
        staleAfterMs = Math.max(staleAfterMs, await this.staleAfter(action.group, topic, controls, now));
    }
    const silent = stored?.['topics'];
    return {
      safe: controls?.safe ?? defaultSafeState(action.object),
      ...(staleAfterMs === undefined ? {} : { staleAfterMs }),
      staleAfterChosen: controls?.staleAfterMs !== undefined,
      topics,
      inSafeMode: typeof since === 'number',
      ...(typeof since === 'number'
        ? {
            since: new Date(since),
            silentTopics: typeof silent === 'string' && silent !== '' ? silent.split(', ') : [],
          }
        : {}),
    };
  }

  /**
   * Forgets which side of its threshold each sensor rule of the action was on: the first fresh reading
   * then counts as a crossing, so "temperature less than 18 -> on" switches the heater on again at once
   * when it is still cold, rather than waiting for the value to cross again.
   */
  async rearmRules(action: Action, now: Date): Promise<void> {
    for (const set of action.automations) {
      for (const rule of set.sensorAutomations) {
        const ruleKey = sensorRuleStateKey(action, rule);
        const stored = await this.state.get(ruleKey);
        if (stored !== undefined) await this.state.compareAndSet(ruleKey, stored.version, {}, now);
      }
    }
  }

  /**
   * The freshness limit of one input: the action's own, else the engine's staleness rule (10 minutes) or
   * STALE_INTERVALS times the topic's usual interval as observed (the median gap of its newest readings),
   * whichever is longer.
   */
  async staleAfter(
    group: string,
    topic: string,
    controls: ActionControls | undefined,
    now: Date,
  ): Promise<number> {
    if (controls?.staleAfterMs !== undefined) return controls.staleAfterMs;
    const usual = await this.usualInterval(group, topic, now);
    return Math.max(this.settings.maxReadingAgeMs, STALE_INTERVALS * usual);
  }

  private async usualInterval(group: string, topic: string, now: Date): Promise<number> {
    const cacheKey = JSON.stringify([group, topic]);
    const cached = this.intervals.get(cacheKey);
    if (cached !== undefined && now.getTime() - cached.at < INTERVAL_REUSE_MS) return cached.ms;
    const newest = await this.readings.newestFirst({ group, topic }, INTERVAL_SAMPLE);
    const gaps = newest
      .slice(1)
      .map((reading, index) => (newest[index]?.time.getTime() ?? 0) - reading.time.getTime())
      .filter((gap) => gap > 0)
      .sort((a, b) => a - b);
    const ms = gaps[Math.floor(gaps.length / 2)] ?? 0;
    // Only a full sample is kept: a topic that just began reporting is measured again next time.
    if (newest.length === INTERVAL_SAMPLE) this.intervals.set(cacheKey, { at: now.getTime(), ms });
    return ms;
  }
}
