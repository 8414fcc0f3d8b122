import { inject, injectable } from 'inversify';
import {
  ACTION_HISTORY_REPOSITORY,
  type ActionHistoryRepository,
} from '../action-history/action-history.port.js';
import { ACTION_REPOSITORY, type ActionRepository } from '../actions/action.port.js';
import { groupTimeZone } from '../groups/group-settings.js';
import { GROUP_REPOSITORY, type GroupRepository } from '../groups/group.port.js';
import { CLOCK, type Clock } from '../shared/clock.port.js';
import { NotFoundError } from '../shared/errors.js';
import { CORE_SETTINGS, type CoreSettings } from '../shared/settings.js';
import { localTimeText } from '../shared/time-zone.js';
import { requireInteger, requireText } from '../shared/validation.js';
import { type AutomationEvent } from './automation-event.js';
import { AUTOMATION_SETTINGS, type AutomationSettings } from './automation-settings.js';
import { ENGINE_STATE_REPOSITORY, type EngineStateRepository } from './engine-state.port.js';
import { lockoutTopics } from '../actions/action-lockouts.js';
import { READING_REPOSITORY, type ReadingRepository } from '../readings/reading.port.js';
import { SimulatedEngine } from './simulated-engine.js';

export const DEFAULT_PREVIEW_HOURS = 24;
export const MAX_PREVIEW_HOURS = 168;
/** A bound on evaluations, so no set of rules can keep a preview going: far above a week of wake-ups. */
const MAX_PREVIEW_EVALUATIONS = 100_000;

/** One switch the engine will make (preview) or would have made (backtest). */
export interface SimulatedSwitch {
  readonly at: Date;
  /** `at` on the group's wall clock with its offset then (DST included): `2026-03-29T03:30:00+02:00`. */
  readonly local: string;
  readonly object: string;
  readonly value: string;
  readonly previousValue: string;
  readonly trigger: AutomationEvent['trigger'];
  readonly rule: string;
  readonly reading?: AutomationEvent['reading'];
}

export interface AutomationPreview {
  readonly group: string;
  readonly timeZone: string;
  readonly from: Date;
  readonly to: Date;
  readonly switches: readonly SimulatedSwitch[];
}

export function simulatedSwitch(event: AutomationEvent, timeZone: string): SimulatedSwitch {
  return {
    at: event.at,
    local: localTimeText(event.at, timeZone),
    object: event.object,
    value: event.value,
    previousValue: event.previousValue,
    trigger: event.trigger,
    rule: event.rule,
    ...(event.reading === undefined ? {} : { reading: event.reading }),
  };
}

/**
 * Every switch the time rules, the maximum on-time and the minimum on/off-times will make in the next
 * hours, from the actions, engine state and history as they are now: the live engine's rule code
 * (SimulatedEngine) evaluated at each moment it would be due, with no new readings, so sensor rules
 * switch nothing and no action enters safe mode (one in safe mode now stays so). Nothing is written.
 */
@injectable()
export class PreviewAutomations {
  constructor(
    @inject(GROUP_REPOSITORY) private readonly groups: GroupRepository,
    @inject(ACTION_REPOSITORY) private readonly actions: ActionRepository,
    @inject(ENGINE_STATE_REPOSITORY) private readonly state: EngineStateRepository,
    @inject(ACTION_HISTORY_REPOSITORY) private readonly history: ActionHistoryRepository,
    @inject(READING_REPOSITORY) private readonly readings: ReadingRepository,
    @inject(CLOCK) private readonly clock: Clock,
    @inject(CORE_SETTINGS) private readonly coreSettings: CoreSettings,
    @inject(AUTOMATION_SETTINGS) private readonly settings: AutomationSettings,
  ) {}

  async execute(input: { group: unknown; hours?: unknown }): Promise<AutomationPreview> {
    const name = requireText(input.group, 'group');
    const hours =
      input.hours === undefined
        ? DEFAULT_PREVIEW_HOURS
        : requireInteger(input.hours, 'hours', 1, MAX_PREVIEW_HOURS);
    const group = await this.groups.findByName(name);
    if (group === undefined) throw new NotFoundError('group', `Group ${name} not found`);
    const timeZone = groupTimeZone(group.settings, this.coreSettings.timeZone);
    const from = this.clock.now().getTime();
    const to = from + hours * 3_600_000;
    const actions = await this.actions.listByGroup(group.name);
    const engine = new SimulatedEngine(
      {
        group,
        actions,
        engineState: this.state,
        history: this.history,
        at: from,
      },
      this.coreSettings,
      this.settings,
    );
    // A lockout reads the newest readings there are (the same sample safe mode measures the usual interval
    // on): without them it would block throughout, as unknown. They go stale in the preview as they would live.
    for (const topic of new Set(actions.flatMap(lockoutTopics)))
      for (const reading of (await this.readings.newestFirst({ group: group.name, topic }, 11)).reverse())
        engine.readings.push(reading);
    // Evaluated now, then at each wake-up (a slot, a deadline, the end of a hold), and one tick after a
    // switch, as the live engine's change feed makes it.
    let at = from;
    let previous = from;
    for (let count = 0; at <= to && count < MAX_PREVIEW_EVALUATIONS; count += 1) {
      const { switched, wakeAt } = await engine.evaluate(at, previous);
      previous = at;
      const next = Math.min(
        switched.length > 0 ? at + this.settings.tickMs : Number.POSITIVE_INFINITY,
        wakeAt ?? Number.POSITIVE_INFINITY,
      );
      at = Math.max(next, at + 1);
    }
    return {
      group: group.name,
      timeZone,
      from: new Date(from),
      to: new Date(to),
      switches: engine.events
        .filter((event) => event.at.getTime() <= to)
        .map((event) => simulatedSwitch(event, timeZone)),
    };
  }
}
