import { inject, injectable, optional } from 'inversify';
import { type OutboxMessage } from '../alerts/alert-message.js';
import { QueueAlertMessages } from '../alerts/queue-alert-messages.js';
import { EvaluateAlerts, type WithheldAlert } from '../alerts/evaluate-alerts.js';
import { GROUP_REPOSITORY, type GroupRepository } from '../groups/group.port.js';
import { type Group } from '../groups/group.js';
import { type Notification } from '../notifications/notification.js';
import { DeriveMetrics } from '../readings/derive-metrics.js';
import { CHANGE_FEED, type ChangeFeed } from '../revisions/change-feed.port.js';
import { CLOCK, type Clock } from '../shared/clock.port.js';
import { type AutomationEvent } from './automation-event.js';
import { DueSchedule } from './due-schedule.js';
import { AUTOMATION_SETTINGS, type AutomationSettings } from './automation-settings.js';
import {
  ENGINE_STATE_REPOSITORY,
  type EngineStateRepository,
  lastEngineRunKey,
} from './engine-state.port.js';
import { type BlockedSwitch } from './lockouts.js';
import { AdvanceStages } from '../stages/advance-stages.js';
import { type StageStarted } from '../stages/start-stage.js';
import { RunAutomations } from './run-automations.js';
import { SCHEDULER, type ScheduledTask, type Scheduler } from './scheduler.port.js';
import { WakeUps } from './wake-ups.js';

/** A group whose rules or alerts failed in one tick; the other groups were still evaluated. */
export interface GroupFailure {
  readonly group: string;
  readonly stage: 'metrics' | 'automations' | 'alerts';
  readonly error: unknown;
}

export interface TickResult {
  readonly switched: readonly AutomationEvent[];
  readonly alerts: readonly Notification[];
  /** Alert changes not written because their group holds the most open notifications allowed. */
  readonly withheld: readonly WithheldAlert[];
  /** Messages put in the outbox for the delivery worker (e-mail, webhooks). */
  readonly queued: readonly OutboxMessage[];
  readonly failures: readonly GroupFailure[];
  /** The groups this tick evaluated (changed, due, retried; every group on a full pass), by name. */
  readonly evaluated: readonly string[];
  /** Actions in safe mode at this engine's last look at their groups (the `/metrics` gauge). */
  readonly inSafeMode: number;
  /** Switches `on` a lockout kept the engine from making, each reported once per reason (see Lockouts). */
  readonly blocked: readonly BlockedSwitch[];
  /** Groups moved to their next recipe stage by date (checked about once a minute). */
  readonly stagesStarted: readonly StageStarted[];
}

/** How often the engine looks for recipe stages whose length is over: stages last days, not seconds. */
export const STAGE_CHECK_MS = 60_000;

/**
 * Drives the derived series (DeriveMetrics), the rules and the alerts on the scheduler, and forgets old
 * slot claims now and then.
 *
 * A tick evaluates only the groups that need it: those the store's change feed names (readings, actions,
 * settings or notifications written, by any server or the CLI), those whose wake-up came (a time slot, a
 * no-data deadline, the end of a wait; see WakeUps), and those that failed last time. An idle tick is one
 * read of the feed, whatever the number of groups. Every group is evaluated on the first tick, when the
 * feed cannot say what changed (reset), and every `fullPassMs` as a safety net. Without a change feed bound
 * every tick evaluates every group. Several engines on one store may evaluate a group at the same time, as
 * before: the claims in the engine state let one of them act.
 */
@injectable()
export class AutomationEngine {
  private lastPurge = 0;
  private lastStageCheck = Number.NEGATIVE_INFINITY;
  private cursor: string | undefined;
  private lastFullPassAt = Number.NEGATIVE_INFINITY;
  private readonly schedule = new DueSchedule();
  /** Groups whose last evaluation failed: tried again at the next tick. */
  private readonly retry = new Set<string>();

  constructor(
    @inject(GROUP_REPOSITORY) private readonly groups: GroupRepository,
    @inject(RunAutomations) private readonly automations: RunAutomations,
    @inject(EvaluateAlerts) private readonly alerts: EvaluateAlerts,
    @inject(QueueAlertMessages) private readonly queue: QueueAlertMessages,
    @inject(ENGINE_STATE_REPOSITORY) private readonly state: EngineStateRepository,
    @inject(SCHEDULER) private readonly scheduler: Scheduler,
    @inject(CLOCK) private readonly clock: Clock,
    @inject(AUTOMATION_SETTINGS) private readonly settings: AutomationSettings,
    @inject(CHANGE_FEED) @optional() private readonly feed: ChangeFeed | undefined,
    @inject(DeriveMetrics) @optional() private readonly metrics: DeriveMetrics | undefined,
    @inject(AdvanceStages) @optional() private readonly stages: AdvanceStages | undefined,
  ) {}

  /**
   * Ticks on the scheduler; `onTick` is told each tick's result and how long it took in seconds, by the
   * engine's clock (so a simulated clock times ticks too; a clock set back mid-tick reads 0).
   */
  start(onTick?: (result: TickResult, seconds: number) => void): ScheduledTask {
    return this.scheduler.every(this.settings.tickMs, async () => {
      const startedAt = this.clock.now().getTime();
      const result = await this.tick();
      onTick?.(result, Math.max(0, this.clock.now().getTime() - startedAt) / 1000);
    });
  }

  /**
   * Rules, then alerts, group by group: a group that fails (a broken record, a store error on its data) is
   * reported in `failures` and tried again next tick, and every other group is still evaluated; the purge
   * runs regardless.
   */
  async tick(): Promise<TickResult> {
    const switched: AutomationEvent[] = [];
    const alerts: Notification[] = [];
    const withheld: WithheldAlert[] = [];
    const failures: GroupFailure[] = [];
    const queued: OutboxMessage[] = [];
    const blocked: BlockedSwitch[] = [];
    const startedAt = this.clock.now();
    await this.alerts.prepare();
    // Before the groups are read, so a stage's new ranges and thresholds count in this very tick.
    const stagesStarted = await this.advanceStages(startedAt);
    const groups = await this.groupsToEvaluate(startedAt.getTime());
    const missedSince = groups.length === 0 ? startedAt : await this.lastRun();
    const wakeUps = new Map<string, WakeUps>();
    for (const group of groups) {
      await this.scheduler.pause?.();
      const wake = new WakeUps();
      wakeUps.set(group.name, wake);
      try {
        // First, so the rules and alerts of this tick see the windows that have just closed.
        await this.metrics?.deriveGroup(group, startedAt, wake);
      } catch (error) {
        failures.push({ group: group.name, stage: 'metrics', error });
      }
      try {
        for (const event of await this.automations.runGroup(group, startedAt, missedSince, wake, blocked))
          switched.push(event);
      } catch (error) {
        failures.push({ group: group.name, stage: 'automations', error });
      }
    }
    const alertsAt = this.clock.now();
    for (const group of groups) {
      await this.scheduler.pause?.();
      try {
        const outcome = await this.alerts.evaluateGroup(group, alertsAt, wakeUps.get(group.name));
        for (const notification of outcome.raised) alerts.push(notification);
        for (const alert of outcome.withheld) withheld.push(alert);
        const groupSwitches = switched.filter((event) => event.group === group.name);
        for (const message of await this.queue.execute(group, outcome.changes, groupSwitches))
          queued.push(message);
      } catch (error) {
        failures.push({ group: group.name, stage: 'alerts', error });
      }
    }
    const failed = new Set(failures.map((failure) => failure.group));
    for (const group of groups) {
      if (failed.has(group.name)) {
        this.schedule.delete(group.name);
        this.retry.add(group.name);
      } else {
        this.schedule.set(group.name, wakeUps.get(group.name)?.earliest);
      }
    }
    await this.markRun(startedAt);
    const now = this.clock.now().getTime();
    if (now - this.lastPurge > 3_600_000) {
      this.lastPurge = now;
      await this.state.purgeBefore(new Date(now - this.settings.stateRetentionMs));
    }
    const evaluated = groups.map((group) => group.name);
    const inSafeMode = this.automations.safeModeCount();
    return { switched, alerts, withheld, queued, failures, evaluated, inSafeMode, stagesStarted, blocked };
  }

  /** A store error here is the next check's to retry; it must not stop the rules and alerts. */
  private async advanceStages(now: Date): Promise<StageStarted[]> {
    if (this.stages === undefined || now.getTime() - this.lastStageCheck < STAGE_CHECK_MS) return [];
    this.lastStageCheck = now.getTime();
    try {
      return await this.stages.execute(now);
    } catch {
      this.lastStageCheck = Number.NEGATIVE_INFINITY;
      return [];
    }
  }

  /**
   * The groups this tick evaluates, in name order. The feed's cursor moves on only once they are read, so a
   * store error here loses no change: the next tick asks the feed again.
   */
  private async groupsToEvaluate(now: number): Promise<Group[]> {
    if (this.feed === undefined) return this.groups.list();
    const changes = await this.feed.changesSince(this.cursor);
    if (changes.reset || now - this.lastFullPassAt >= this.settings.fullPassMs) {
      const all = await this.groups.list();
      this.cursor = changes.cursor;
      this.lastFullPassAt = now;
      this.schedule.clear();
      this.retry.clear();
      return all;
    }
    const names = new Set([...this.retry, ...changes.groups, ...this.schedule.takeDue(now)]);
    const found: Group[] = [];
    try {
      for (const name of names) {
        const group = await this.groups.findByName(name);
        if (group === undefined) this.schedule.delete(name);
        else found.push(group);
      }
    } catch (error) {
      // Taken off the schedule already: kept for the next tick instead.
      for (const name of names) this.retry.add(name);
      throw error;
    }
    this.cursor = changes.cursor;
    this.retry.clear();
    return found.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /**
   * When an engine (this one or another on the store) last evaluated the rules: slots after it were missed
   * and are caught up. A store no engine ever ran on counts as missing the whole lookback, so a fresh
   * start (or the demo) shows what the rules say now.
   */
  private async lastRun(): Promise<Date> {
    const at = (await this.state.get(lastEngineRunKey))?.value['at'];
    return new Date(typeof at === 'number' ? at : 0);
  }

  private async markRun(at: Date): Promise<void> {
    await markEngineRun(this.state, at);
  }
}

/**
 * Records that the rules were evaluated up to `at` (unless a later run is recorded): the engine then
 * catches up only slots after it. A migration records its cut-over so, so slots from before the move,
 * which the old service ran, do not fire again.
 */
export async function markEngineRun(state: EngineStateRepository, at: Date): Promise<void> {
  const stored = await state.get(lastEngineRunKey);
  const previous = stored?.value['at'];
  if (typeof previous === 'number' && previous >= at.getTime()) return;
  // Losing the race to another engine is fine: it ran just as recently.
  await state.compareAndSet(lastEngineRunKey, stored?.version ?? 0, { at: at.getTime() }, at);
}
