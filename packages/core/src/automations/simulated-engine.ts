import { type ActionHistoryRepository } from '../action-history/action-history.port.js';
import { type Action } from '../actions/action.js';
import { ActionChanges } from '../actions/action-changes.js';
import { SetActionValue } from '../actions/set-action-value.js';
import { type Group } from '../groups/group.js';
import { type CoreSettings } from '../shared/settings.js';
import { type AutomationEvent } from './automation-event.js';
import { type AutomationSettings } from './automation-settings.js';
import { type SensorAutomation, type SensorLockout } from '../actions/action.js';
import { safeModeStateKey } from '../actions/action-limits.js';
import { type EngineStateRepository, type EngineValue, sensorRuleStateKey } from './engine-state.port.js';
import { type RuleSide, ruleSide, sensorTopic } from './rules.js';
import { RunAutomations } from './run-automations.js';
import { inputTopics, SafeMode } from './safe-mode.js';
import { Lockouts, lockoutStateKey, sensorLockoutHolds } from './lockouts.js';
import { lockoutTopics } from '../actions/action-lockouts.js';
import {
  overlayEngineState,
  overlayHistory,
  ReplayReadings,
  SimulatedClock,
  simulatedActions,
  simulatedGroups,
  simulatedLog,
  simulatedNotifications,
} from './simulation-stores.js';
import { WakeUps } from './wake-ups.js';

/** The topics a simulation of the action reads: its sensor rules' and its lockouts'. */
export function simulationTopics(action: Action): string[] {
  return [...new Set([...inputTopics(action), ...lockoutTopics(action)])];
}

/** Where a simulation starts: the group and its actions as they are, and what the engine remembers. */
export interface SimulationStart {
  readonly group: Group;
  readonly actions: readonly Action[];
  /** Read through for keys the simulation has not written (the preview); none: a fresh engine. */
  readonly engineState?: EngineStateRepository;
  /** Read through for the last switch before the simulation's own (the preview); none: no history. */
  readonly history?: ActionHistoryRepository;
  readonly at: number;
}

/**
 * The live engine's own rule code (RunAutomations, SafeMode, the cycling holds, SetActionValue) built over
 * sandbox stores (simulation-stores.ts) on a simulated clock: no second implementation of the rules, and
 * nothing written to the real store, published or notified. The caller drives it like the live engine's
 * ticks: `evaluate` is one evaluation of the group at one instant, and answers when it is next due.
 */
export class SimulatedEngine {
  readonly clock: SimulatedClock;
  readonly readings = new ReplayReadings();
  private readonly run: RunAutomations;
  private readonly log = simulatedLog();
  private readonly actions: ReturnType<typeof simulatedActions>;
  private readonly group: Group;
  private readonly written: (key: string) => EngineValue | undefined;
  private readonly deadBand: number;
  private readonly watched: readonly { rule: SensorAutomation; topic: string; key: string }[];
  private readonly safeKeys: readonly string[];
  private readonly sensorLockouts: readonly { lockout: SensorLockout; key: string }[];
  /** Topics whose every reading is evaluated (inputs the look-ahead does not model). */
  private readonly everyReadingMatters: readonly string[] = [];

  constructor(start: SimulationStart, coreSettings: CoreSettings, settings: AutomationSettings) {
    this.group = start.group;
    this.clock = new SimulatedClock(start.at);
    this.actions = simulatedActions(start.actions);
    const overlay = overlayEngineState(start.engineState);
    const state = overlay.repository;
    this.written = overlay.written;
    this.deadBand = settings.deadBand;
    this.watched = start.actions.flatMap((action) =>
      action.automations.flatMap((set) =>
        set.sensorAutomations.flatMap((rule) => {
          const topic = sensorTopic(rule.sensor);
          return topic === undefined ? [] : [{ rule, topic, key: sensorRuleStateKey(action, rule) }];
        }),
      ),
    );
    this.safeKeys = start.actions.map((action) => safeModeStateKey(action.group, action.object));
    const history = overlayHistory(start.history);
    const setValue = new SetActionValue(this.actions.repository, new ActionChanges(), history, this.clock);
    const safeMode = new SafeMode(this.readings.repository, state, simulatedNotifications(), settings);
    // The live engine's lockout decisions too (no second implementation).
    const lockouts = new Lockouts(this.readings.repository, state, settings, safeMode);
    this.sensorLockouts = start.actions.flatMap((action) =>
      (action.lockouts ?? []).flatMap((lockout) =>
        'topic' in lockout ? [{ lockout, key: lockoutStateKey(action.group, action.object) }] : [],
      ),
    );
    this.run = new RunAutomations(
      simulatedGroups(start.group),
      this.actions.repository,
      this.readings.repository,
      state,
      this.log.repository,
      setValue,
      this.clock,
      coreSettings,
      settings,
      safeMode,
      history,
      lockouts,
    );
  }

  /**
   * One evaluation of the group's rules at `at`, as a live tick makes it; `missedSince` is when the
   * previous tick ran (slots after it count as missed). Answers the switches and when the group is next
   * due without a change (undefined: only a change makes it due).
   */
  async evaluate(
    at: number,
    missedSince: number,
  ): Promise<{ readonly switched: readonly AutomationEvent[]; readonly wakeAt: number | undefined }> {
    this.clock.at = at;
    const wake = new WakeUps();
    const switched = await this.run.runGroup(this.group, new Date(at), new Date(missedSince), wake);
    return { switched, wakeAt: wake.earliest };
  }

  /**
   * Whether the readings pushed since the last evaluation may change what an evaluation does: a sensor
   * rule whose newest reading is on another side of its threshold than the side the engine recorded (by
   * the engine's own ruleSide), or an action in safe mode (fresh data ends it). When not, the evaluation
   * the live engine would make on that change writes nothing and switches nothing, so a backtest skips it;
   * deadlines are wake-ups either way.
   */
  readingsMatter(): boolean {
    const arrived = this.readings.takeArrived();
    for (const topic of this.everyReadingMatters) if (arrived.has(topic)) return true;
    for (const { rule, topic, key } of this.watched) {
      const reading = this.readings.newestOf(topic);
      if (reading === undefined) continue;
      const previous = this.written(key)?.['side'] as RuleSide | undefined;
      if (ruleSide(rule, reading.value, previous, this.deadBand) !== previous) return true;
    }
    // A sensor lockout that would start or end (its dead band as Lockouts applies it); staleness is a wake-up.
    for (const { lockout, key } of this.sensorLockouts) {
      const reading = this.readings.newestOf(lockout.topic);
      const active = String(this.written(key)?.['active'] ?? '')
        .split(',')
        .includes(String(lockout.id));
      if (reading === undefined) {
        if (!active) return true;
        continue;
      }
      if (sensorLockoutHolds(lockout, reading.value, active, this.deadBand) !== active) return true;
    }
    return this.safeKeys.some((key) => typeof this.written(key)?.['since'] === 'number');
  }

  /** Every switch so far, in order. */
  get events(): readonly AutomationEvent[] {
    return this.log.events;
  }

  /** Each action's value now. */
  values(): Map<string, string> {
    return this.actions.values();
  }
}
