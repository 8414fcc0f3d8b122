import { inject, injectable } from 'inversify';
import { type Action, type SensorAutomation, type TimeAutomation } from '../actions/action.js';
import {
  ACTION_HISTORY_REPOSITORY,
  type ActionHistoryRepository,
} from '../action-history/action-history.port.js';
import {
  type ActionControls,
  type ActionLimit,
  durationText,
  OFF_VALUE,
  ON_VALUE,
  onTimeStateKey,
  readActionControls,
} from '../actions/action-limits.js';
import { ACTION_REPOSITORY, type ActionRepository } from '../actions/action.port.js';
import { SetActionValue } from '../actions/set-action-value.js';
import { groupTimeZone } from '../groups/group-settings.js';
import { type Group } from '../groups/group.js';
import { GROUP_REPOSITORY, type GroupRepository } from '../groups/group.port.js';
import { READING_REPOSITORY, type ReadingRepository } from '../readings/reading.port.js';
import { CLOCK, type Clock } from '../shared/clock.port.js';
import { CORE_SETTINGS, coreLimitsOf, type CoreSettings } from '../shared/settings.js';
import { type AutomationEvent, type AutomationTrigger, type NewAutomationEvent } from './automation-event.js';
import { type WakeUps } from './wake-ups.js';
import { type CyclingHold, cyclingHold, holds } from './cycling.js';
import { SafeMode } from './safe-mode.js';
import { type BlockedSwitch, type LockoutCheck, lockoutReason, Lockouts, onByPerson } from './lockouts.js';
import { AUTOMATION_LOG_REPOSITORY, type AutomationLogRepository } from './automation-log.port.js';
import { AUTOMATION_SETTINGS, type AutomationSettings } from './automation-settings.js';
import {
  ENGINE_STATE_REPOSITORY,
  engineStateKey as key,
  type EngineStateRepository,
  sensorRuleStateKey,
} from './engine-state.port.js';
import {
  describeSensorRule,
  describeTimeRule,
  latestSlot,
  nextSlot,
  ruleSide,
  type RuleSide,
  sensorTopic,
  type Slot,
} from './rules.js';

/**
 * One evaluation of every automation rule of every group. Time rules fire once per slot: the slot is
 * claimed in the shared engine state first, so a restart or a second server cannot fire it again. Sensor
 * rules fire when the newest fresh reading crosses the threshold, not on every evaluation.
 *
 * Catch-up: given `missedSince` (the last time an engine ran), a slot that came after it was missed while
 * no engine ran; it still fires, late and once, if it is the latest slot of its action's time rules (a
 * later slot of the same action supersedes it: a missed "on" is not worth switching when "off" followed).
 *
 * Maximum on-time: an action with a limit (group setting `actionLimits`) that has been `on` longer than it,
 * whoever switched it on, is switched `off` once, and its rules may not switch it on again for as long as
 * the limit (its rest). "On since" is when an engine first saw it on, kept in the engine state.
 *
 * When they disagree, the first of these wins (docs/automations.md, "Safety"): the maximum on-time (always
 * enforced), the lockouts (the engine never switches an action on while one is active, and switches it off
 * when one becomes active, unless a person switched it on; see lockouts.ts), the safe state (every input
 * stale: see SafeMode; the rules rest meanwhile), the minimum on-time and off-time (they hold the rules
 * back, see cycling.ts), then the rules.
 */
@injectable()
export class RunAutomations {
  constructor(
    @inject(GROUP_REPOSITORY) private readonly groups: GroupRepository,
    @inject(ACTION_REPOSITORY) private readonly actions: ActionRepository,
    @inject(READING_REPOSITORY) private readonly readings: ReadingRepository,
    @inject(ENGINE_STATE_REPOSITORY) private readonly state: EngineStateRepository,
    @inject(AUTOMATION_LOG_REPOSITORY) private readonly log: AutomationLogRepository,
    @inject(SetActionValue) private readonly setValue: SetActionValue,
    @inject(CLOCK) private readonly clock: Clock,
    @inject(CORE_SETTINGS) private readonly coreSettings: CoreSettings,
    @inject(AUTOMATION_SETTINGS) private readonly settings: AutomationSettings,
    @inject(SafeMode) private readonly safeMode: SafeMode,
    @inject(ACTION_HISTORY_REPOSITORY) private readonly history: ActionHistoryRepository,
    @inject(Lockouts) private readonly lockouts: Lockouts,
  ) {}

  /** The actions in safe mode at this engine's last look at their groups, by group. */
  private readonly inSafeMode = new Map<string, number>();

  /** How many actions were in safe mode at this engine's last look at their groups (the metrics gauge). */
  safeModeCount(): number {
    let count = 0;
    for (const actions of this.inSafeMode.values()) count += actions;
    return count;
  }

  /** Every group in turn; the engine calls runGroup itself so that one failing group stops no other. */
  async execute(missedSince?: Date): Promise<AutomationEvent[]> {
    const now = this.clock.now();
    const events: AutomationEvent[] = [];
    for (const group of await this.groups.list()) {
      for (const event of await this.runGroup(group, now, missedSince)) events.push(event);
    }
    return events;
  }

  /**
   * One group's rules. `wake` learns when the group must be looked at again though nothing in it changes:
   * the next slot of each time rule, the end of a switch interval that held a sensor rule back.
   */
  async runGroup(
    group: Group,
    now: Date,
    missedSince?: Date,
    wake?: WakeUps,
    blocked?: BlockedSwitch[],
  ): Promise<AutomationEvent[]> {
    const events: AutomationEvent[] = [];
    const timeZone = groupTimeZone(group.settings, this.coreSettings.timeZone);
    const controls = readActionControls(group.settings);
    const actions = await this.actions.listByGroup(group.name);
    // Each action's value as the engine sees it during this evaluation: interlocks read it.
    const values = new Map(actions.map((action) => [action.object, action.value]));
    const switchedNow = new Set<string>();
    let safeActions = 0;
    for (const action of actions) {
      if (wake !== undefined) this.wakeForSlots(action, now, timeZone, wake);
      const own = controls.get(action.object);
      let current = action;
      const push = (switched: Switched | undefined) => {
        if (switched === undefined) return;
        current = switched.action;
        values.set(current.object, current.value);
        switchedNow.add(current.object);
        events.push(switched.event);
      };
      const block = await this.lockouts.check(current, own, values, now, { wake, record: true });
      const note = async (by: string) => {
        const noted = await this.lockouts.noteBlocked(current, block, by, now);
        if (noted !== undefined) blocked?.push(noted);
      };
      // A lockout wins over safe mode, the cycling limits and the rules (docs/automations.md, "Safety").
      push(await this.enforceLockout(current, block, now, note));
      const locked = block.active.length > 0;
      // As after safe mode: a rule still beyond its threshold switches again (a heater locked out while
      // the fan ran goes on again once the fan is off, if it is still cold).
      if (block.ended === true) await this.safeMode.rearmRules(current, now);
      const verdict = await this.safeMode.check(action, own, now, wake);
      if (verdict.kind === 'enter' || verdict.kind === 'safe') safeActions += 1;
      if (verdict.kind === 'enter' && verdict.safe === ON_VALUE && locked) await note(verdict.rule);
      else if (verdict.kind === 'enter' && verdict.safe !== 'hold')
        push(await this.switchAction(current, verdict.safe, 'safe', verdict.rule, now, {}));
      if (verdict.kind === 'normal' || verdict.kind === 'left') {
        let hold = await cyclingHold(this.history, current, own);
        if (hold !== undefined && now.getTime() < hold.until) wake?.at(hold.until);
        for (const { rule, slot } of this.slotsToFire(action, now, timeZone, missedSince, hold)) {
          // Not claimed: the slot fires when the hold ends (slotsToFire keeps it due until then).
          if (holds(hold, rule.action, now)) continue;
          // Not claimed either: it fires if the lockout ends within the slot's grace.
          if (locked && rule.action === ON_VALUE && current.value !== ON_VALUE) {
            await note(describeTimeRule(rule));
            continue;
          }
          const before = current;
          push(await this.runTimeRule(current, rule, slot, now));
          if (current !== before) hold = holdAfterSwitch(current.value, own, now);
        }
        for (const set of action.automations) {
          for (const rule of set.sensorAutomations) {
            const before = current;
            push(await this.runSensorRule(current, rule, now, wake, hold, locked ? note : undefined));
            if (current !== before) hold = holdAfterSwitch(current.value, own, now);
          }
        }
      }
      const limit = own?.maxOnMs === undefined ? undefined : { maxOnMs: own.maxOnMs };
      const limited = limit === undefined ? undefined : await this.enforceLimit(current, limit, now, wake);
      if (limited !== undefined) push(limited);
    }
    // An interlock whose other action the engine switched after it was looked at: looked at again, so no
    // lockout is crossed until the next tick.
    for (const action of switchedNow.size === 0 ? [] : actions) {
      if (!(action.lockouts ?? []).some((lockout) => 'while' in lockout && switchedNow.has(lockout.while)))
        continue;
      const current = { ...action, value: values.get(action.object) ?? action.value };
      const block = await this.lockouts.check(current, controls.get(action.object), values, now, { wake });
      const switched = await this.enforceLockout(current, block, now, async (by) => {
        const noted = await this.lockouts.noteBlocked(current, block, by, now);
        if (noted !== undefined) blocked?.push(noted);
      });
      if (switched !== undefined) {
        values.set(action.object, switched.action.value);
        events.push(switched.event);
      }
    }
    if (safeActions > 0) this.inSafeMode.set(group.name, safeActions);
    else this.inSafeMode.delete(group.name);
    return events;
  }

  /**
   * Switches off an action that is on while a lockout is active, whoever's rule switched it on, unless a
   * person switched it on (the newest history entry): a person's switch overrides a lockout, and is
   * reported once instead. Not held by the minimum on-time (safety first).
   */
  private async enforceLockout(
    action: Action,
    block: LockoutCheck,
    now: Date,
    note: (by: string) => Promise<void>,
  ): Promise<Switched | undefined> {
    if (block.active.length === 0 || action.value !== ON_VALUE) return undefined;
    const [last] = await this.history.list(action.group, action.object, 1);
    if (onByPerson(action, last)) {
      await note(PERSON_SWITCH);
      return undefined;
    }
    const rule = `lockout: ${lockoutReason(block)} -> ${OFF_VALUE}`;
    return this.switchAction(action, OFF_VALUE, 'lockout', rule, now, {});
  }

  /**
   * Switches the action off when it has been on longer than its limit. The first engine to see it on
   * records since when (`since`); the deadline is a wake-up, so an idle group is still switched off in
   * time. The switch-off is claimed by clearing `since`, so only one engine makes it, once; `restUntil`
   * then holds its rules back (see switchAction).
   */
  private async enforceLimit(
    action: Action,
    limit: ActionLimit,
    now: Date,
    wake: WakeUps | undefined,
  ): Promise<Switched | undefined> {
    const onKey = onTimeStateKey(action.group, action.object);
    const stored = await this.state.get(onKey);
    const since = stored?.value['since'];
    const on = action.value === ON_VALUE;
    if (!on || typeof since !== 'number') {
      if (on || typeof since === 'number') {
        // Another engine may have recorded it first: either way the clock has started.
        const value = { ...stored?.value, since: on ? now.getTime() : null };
        await this.state.compareAndSet(onKey, stored?.version ?? 0, value, now);
      }
      if (on) wake?.at(now.getTime() + limit.maxOnMs);
      return undefined;
    }
    const deadline = since + limit.maxOnMs;
    if (now.getTime() < deadline) {
      wake?.at(deadline);
      return undefined;
    }
    const value = { since: null, restUntil: now.getTime() + limit.maxOnMs };
    if (!(await this.state.compareAndSet(onKey, stored?.version ?? 0, value, now))) return undefined;
    const rule = `${ON_VALUE} longer than ${durationText(limit.maxOnMs)} -> ${OFF_VALUE}`;
    return this.switchAction(action, OFF_VALUE, 'limit', rule, now, {});
  }

  private wakeForSlots(action: Action, now: Date, timeZone: string, wake: WakeUps): void {
    for (const set of action.automations) {
      for (const rule of set.timeAutomations) {
        const next = nextSlot(rule, now, timeZone);
        if (next !== undefined) wake.at(next.at.getTime());
      }
    }
  }

  /**
   * The time rules of an action whose latest slot is the action's latest (several when they share the
   * minute, in rule order), if that slot is due: within the grace, or missed since `missedSince`.
   */
  private slotsToFire(
    action: Action,
    now: Date,
    timeZone: string,
    missedSince: Date | undefined,
    hold: CyclingHold | undefined,
  ): { rule: TimeAutomation; slot: Slot }[] {
    const slots = action.automations.flatMap((set) =>
      set.timeAutomations.flatMap((rule) => {
        const slot = latestSlot(rule, now, timeZone);
        return slot === undefined ? [] : [{ rule, slot }];
      }),
    );
    const latest = Math.max(...slots.map(({ slot }) => slot.at.getTime()));
    const onTime = now.getTime() - latest < this.settings.slotGraceMs;
    const missed = missedSince !== undefined && latest > missedSince.getTime();
    // A slot that came while a minimum on/off-time held the action is due until the grace after the hold.
    const held =
      hold !== undefined && latest >= hold.from && now.getTime() - hold.until < this.settings.slotGraceMs;
    if (!onTime && !missed && !held) return [];
    return slots.filter(({ slot }) => slot.at.getTime() === latest);
  }

  private async runTimeRule(
    action: Action,
    rule: TimeAutomation,
    slot: Slot,
    now: Date,
  ): Promise<Switched | undefined> {
    const slotKey = key(
      'slot',
      action.group,
      action.object,
      rule.time,
      rule.frequency,
      rule.action,
      slot.localDate,
    );
    const claimed = await this.state.compareAndSet(slotKey, 0, { firedAt: now.getTime() }, now);
    if (!claimed) return undefined;
    const late = now.getTime() - slot.at.getTime() >= this.settings.slotGraceMs;
    return this.switchAction(action, rule.action, 'time', describeTimeRule(rule), now, {
      slot: slot.at,
      ...(late ? { late: true as const } : {}),
    });
  }

  private async runSensorRule(
    action: Action,
    rule: SensorAutomation,
    now: Date,
    wake: WakeUps | undefined,
    hold: CyclingHold | undefined,
    locked?: (by: string) => Promise<void>,
  ): Promise<Switched | undefined> {
    const topic = sensorTopic(rule.sensor);
    if (topic === undefined) return undefined;
    const reading = await this.readings.latest(action.group, topic);
    if (reading === undefined) return undefined;
    const age = now.getTime() - reading.time.getTime();
    // Too old, or further ahead than ingest allows: a clock stepped back (NTP) leaves stamps ahead of it,
    // and a rule acts on them only once the clock has caught up to within the allowed skew.
    if (age > this.settings.maxReadingAgeMs || -age > coreLimitsOf(this.coreSettings).maxClockSkewMs) {
      return undefined;
    }
    const ruleKey = sensorRuleStateKey(action, rule);
    const stored = await this.state.get(ruleKey);
    const previous = stored?.value['side'] as RuleSide | undefined;
    const side = ruleSide(rule, reading.value, previous, this.settings.deadBand);
    if (side === previous) return undefined;
    // A crossing that finds the action at its value switches nothing, so it takes no switch slot: a fresh
    // demo's "less than 24 -> off" on an action already off would hold "above 28 -> on" back for a minute.
    const switches = side === 'beyond' && action.value !== rule.action;
    if (switches && hold !== undefined && holds(hold, rule.action, now)) {
      // Like the switch interval: the crossing is not recorded, so it switches once the hold is over.
      wake?.at(hold.until);
      return undefined;
    }
    if (switches && locked !== undefined && rule.action === ON_VALUE) {
      // Not recorded either: the crossing switches once the lockout ends, if the value is still beyond.
      await locked(describeSensorRule(rule));
      return undefined;
    }
    if (switches && !(await this.mayTakeSwitch(action, now, wake))) return undefined;
    // Only the engine that records the crossing acts on it.
    if (!(await this.state.compareAndSet(ruleKey, stored?.version ?? 0, { side }, now))) return undefined;
    if (side === 'within') return undefined;
    return this.switchAction(action, rule.action, 'sensor', describeSensorRule(rule), now, {
      reading: { topic: reading.topic, value: reading.value, time: reading.time },
    });
  }

  /** Claims the action's switch slot unless a sensor rule switched it less than the minimum interval ago. */
  private async mayTakeSwitch(action: Action, now: Date, wake: WakeUps | undefined): Promise<boolean> {
    const switchKey = key('switch', action.group, action.object);
    const last = await this.state.get(switchKey);
    const lastAt = last?.value['at'];
    if (typeof lastAt === 'number' && now.getTime() - lastAt < this.settings.minSwitchIntervalMs) {
      // The rule is still beyond once the interval is over: it switches then, without a new reading.
      wake?.at(lastAt + this.settings.minSwitchIntervalMs);
      return false;
    }
    return this.state.compareAndSet(switchKey, last?.version ?? 0, { at: now.getTime() }, now);
  }

  private async switchAction(
    action: Action,
    value: string,
    trigger: AutomationTrigger,
    rule: string,
    now: Date,
    why: Pick<NewAutomationEvent, 'reading' | 'slot' | 'late'>,
  ): Promise<Switched | undefined> {
    if (action.value === value) return undefined;
    if (value === ON_VALUE && (await this.resting(action, now))) return undefined;
    // The last guard: every switch `on` of the engine passes here; a lockout is never crossed.
    if (value === ON_VALUE && (await this.lockoutActiveNow(action, now))) return undefined;
    // The same use case as a client's or the CLI's switch: one path for every change of a value, recorded
    // in the action history with the engine and the kind of rule as its actor.
    const updated = await this.setValue.apply(action.group, action.object, value, {
      kind: 'engine',
      id: trigger,
    });
    if (updated === undefined) return undefined;
    const event = await this.log.record({
      group: action.group,
      object: action.object,
      value,
      previousValue: action.value,
      at: now,
      trigger,
      rule,
      ...why,
    });
    return { action: updated, event };
  }

  /** Whether a lockout blocks the action now, with the group's values as the store holds them. */
  private async lockoutActiveNow(action: Action, now: Date): Promise<boolean> {
    if ((action.lockouts ?? []).length === 0) return false;
    const [group, siblings] = await Promise.all([
      this.groups.findByName(action.group),
      this.actions.listByGroup(action.group),
    ]);
    const values = new Map(siblings.map((sibling) => [sibling.object, sibling.value]));
    const own = readActionControls(group?.settings).get(action.object);
    return (await this.lockouts.check(action, own, values, now)).active.length > 0;
  }

  /**
   * Whether the on-time limit switched the action off less than its rest ago: a rule may not switch it
   * on again yet (its slot or crossing is spent, so it does not switch it on when the rest ends either).
   */
  private async resting(action: Action, now: Date): Promise<boolean> {
    const restUntil = (await this.state.get(onTimeStateKey(action.group, action.object)))?.value['restUntil'];
    return typeof restUntil === 'number' && now.getTime() < restUntil;
  }
}

/** The hold a switch to `value` starts now, by the action's minimum on-time or off-time. */
function holdAfterSwitch(
  value: string,
  controls: ActionControls | undefined,
  now: Date,
): CyclingHold | undefined {
  const minMs = value === ON_VALUE ? controls?.minOnMs : controls?.minOffMs;
  return minMs === undefined ? undefined : { value, from: now.getTime(), until: now.getTime() + minMs };
}

/** What a person's switch is called where it overrides a lockout (it is kept: docs/automations.md). */
const PERSON_SWITCH = "a person's switch";

interface Switched {
  readonly action: Action;
  readonly event: AutomationEvent;
}
