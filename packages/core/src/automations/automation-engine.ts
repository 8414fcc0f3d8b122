import { inject, injectable } from 'inversify';
import { type OutboxMessage } from '../alerts/alert-message.js';
import { QueueAlertMessages } from '../alerts/queue-alert-messages.js';
import { EvaluateAlerts, type WithheldAlert } from '../alerts/evaluate-alerts.js';
import { GROUP_REPOSITORY, type GroupRepository } from '../groups/group.port.js';
import { type Notification } from '../notifications/notification.js';
import { CLOCK, type Clock } from '../shared/clock.port.js';
import { type AutomationEvent } from './automation-event.js';
import { AUTOMATION_SETTINGS, type AutomationSettings } from './automation-settings.js';
import { ENGINE_STATE_REPOSITORY, engineStateKey, type EngineStateRepository } from './engine-state.port.js';
import { RunAutomations } from './run-automations.js';
import { SCHEDULER, type ScheduledTask, type Scheduler } from './scheduler.port.js';

/** A group whose rules or alerts failed in one tick; the other groups were still evaluated. */
export interface GroupFailure {
  readonly group: string;
  readonly stage: 'automations' | 'alerts';
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
}

/** Drives the rules and the alerts on the scheduler, and forgets old slot claims now and then. */
@injectable()
export class AutomationEngine {
  private lastPurge = 0;

  constructor(
    @inject(GROUP_REPOSITORY) private readonly groups: GroupRepository,
    @inject(RunAutomations) private readonly automations: RunAutomations,
    @inject(EvaluateAlerts) private readonly alerts: EvaluateAlerts,
    @inject(QueueAlertMessages) private readonly queue: QueueAlertMessages,
    @inject(ENGINE_STATE_REPOSITORY) private readonly state: EngineStateRepository,
    @inject(SCHEDULER) private readonly scheduler: Scheduler,
    @inject(CLOCK) private readonly clock: Clock,
    @inject(AUTOMATION_SETTINGS) private readonly settings: AutomationSettings,
  ) {}

  start(onTick?: (result: TickResult) => void): ScheduledTask {
    return this.scheduler.every(this.settings.tickMs, async () => {
      const result = await this.tick();
      onTick?.(result);
    });
  }

  /**
   * Rules, then alerts, group by group: a group that fails (a broken record, a store error on its data) is
   * reported in `failures` and every other group is still evaluated; the purge runs regardless.
   */
  async tick(): Promise<TickResult> {
    const switched: AutomationEvent[] = [];
    const alerts: Notification[] = [];
    const withheld: WithheldAlert[] = [];
    const failures: GroupFailure[] = [];
    const queued: OutboxMessage[] = [];
    const groups = await this.groups.list();
    const startedAt = this.clock.now();
    const missedSince = await this.lastRun();
    for (const group of groups) {
      await this.scheduler.pause?.();
      try {
        for (const event of await this.automations.runGroup(group, startedAt, missedSince))
          switched.push(event);
      } catch (error) {
        failures.push({ group: group.name, stage: 'automations', error });
      }
    }
    const alertsAt = this.clock.now();
    for (const group of groups) {
      await this.scheduler.pause?.();
      try {
        const outcome = await this.alerts.evaluateGroup(group, alertsAt);
        for (const notification of outcome.raised) alerts.push(notification);
        for (const alert of outcome.withheld) withheld.push(alert);
        const groupSwitches = switched.filter((event) => event.group === group.name);
        for (const message of await this.queue.execute(group, outcome.changes, groupSwitches))
          queued.push(message);
      } catch (error) {
        failures.push({ group: group.name, stage: 'alerts', error });
      }
    }
    await this.markRun(startedAt);
    const now = this.clock.now().getTime();
    if (now - this.lastPurge > 3_600_000) {
      this.lastPurge = now;
      await this.state.purgeBefore(new Date(now - this.settings.stateRetentionMs));
    }
    return { switched, alerts, withheld, queued, failures };
  }

  /**
   * When an engine (this one or another on the store) last evaluated the rules: slots after it were missed
   * and are caught up. A store no engine ever ran on counts as missing the whole lookback, so a fresh
   * start (or the demo) shows what the rules say now.
   */
  private async lastRun(): Promise<Date> {
    const at = (await this.state.get(lastRunKey))?.value['at'];
    return new Date(typeof at === 'number' ? at : 0);
  }

  private async markRun(at: Date): Promise<void> {
    await markEngineRun(this.state, at);
  }
}

const lastRunKey = engineStateKey('engine', 'lastRun');

/**
 * Records that the rules were evaluated up to `at` (unless a later run is recorded): the engine then
 * catches up only slots after it. A migration records its cut-over so, so slots from before the move,
 * which the old service ran, do not fire again.
 */
export async function markEngineRun(state: EngineStateRepository, at: Date): Promise<void> {
  const stored = await state.get(lastRunKey);
  const previous = stored?.value['at'];
  if (typeof previous === 'number' && previous >= at.getTime()) return;
  // Losing the race to another engine is fine: it ran just as recently.
  await state.compareAndSet(lastRunKey, stored?.version ?? 0, { at: at.getTime() }, at);
}
