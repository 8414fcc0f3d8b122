import { inject, injectable } from 'inversify';
import { EvaluateAlerts } from '../alerts/evaluate-alerts.js';
import { type Notification } from '../notifications/notification.js';
import { CLOCK, type Clock } from '../shared/clock.port.js';
import { type AutomationEvent } from './automation-event.js';
import { AUTOMATION_SETTINGS, type AutomationSettings } from './automation-settings.js';
import { ENGINE_STATE_REPOSITORY, type EngineStateRepository } from './engine-state.port.js';
import { RunAutomations } from './run-automations.js';
import { SCHEDULER, type ScheduledTask, type Scheduler } from './scheduler.port.js';

export interface TickResult {
  readonly switched: readonly AutomationEvent[];
  readonly alerts: readonly Notification[];
}

/** Drives the rules and the alerts on the scheduler, and forgets old slot claims now and then. */
@injectable()
export class AutomationEngine {
  private lastPurge = 0;

  constructor(
    @inject(RunAutomations) private readonly automations: RunAutomations,
    @inject(EvaluateAlerts) private readonly alerts: EvaluateAlerts,
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

  async tick(): Promise<TickResult> {
    const switched = await this.automations.execute();
    const alerts = await this.alerts.execute();
    const now = this.clock.now().getTime();
    if (now - this.lastPurge > 3_600_000) {
      this.lastPurge = now;
      await this.state.purgeBefore(new Date(now - this.settings.stateRetentionMs));
    }
    return { switched, alerts };
  }
}
