import { inject, injectable } from 'inversify';
import { ACTION_HISTORY_KEEP } from '../action-history/action-history.js';
import {
  ACTION_HISTORY_REPOSITORY,
  type ActionHistoryRepository,
} from '../action-history/action-history.port.js';
import { ON_VALUE } from '../actions/action-limits.js';
import { type Action } from '../actions/action.js';
import { ACTION_REPOSITORY, type ActionRepository } from '../actions/action.port.js';
import { groupTimeZone } from '../groups/group-settings.js';
import { GROUP_REPOSITORY, type GroupRepository } from '../groups/group.port.js';
import { type Reading } from '../readings/reading.js';
import { READING_REPOSITORY, type ReadingRepository } from '../readings/reading.port.js';
import { InvalidInputError, NotFoundError } from '../shared/errors.js';
import { CORE_SETTINGS, type CoreSettings } from '../shared/settings.js';
import { requireDate, requireText } from '../shared/validation.js';
import { AUTOMATION_SETTINGS, type AutomationSettings } from './automation-settings.js';
import { simulatedSwitch, type SimulatedSwitch } from './preview-automations.js';
import { SimulatedEngine, simulationTopics } from './simulated-engine.js';

export const MAX_BACKTEST_DAYS = 31;
/** Readings from this long before `from` are replayed first: the rules and safe mode start warm. */
const WARM_UP_MS = 3_600_000;
const SCAN_PAGE = 4096;

export interface BacktestOnTime {
  readonly object: string;
  /** How long the action was `on` within the range, by the simulated switches. */
  readonly onMs: number;
  readonly switches: number;
}

export interface AutomationBacktest {
  readonly group: string;
  readonly timeZone: string;
  readonly from: Date;
  readonly to: Date;
  readonly switches: readonly SimulatedSwitch[];
  readonly actions: readonly BacktestOnTime[];
  /** Readings replayed (of the topics the sensor rules and lockouts read, warm-up included). */
  readonly readings: number;
  /** Ticks at which the group was evaluated (those with a change or a wake-up). */
  readonly evaluations: number;
}

/**
 * Replays the stored readings of a range through today's rules on a simulated clock: the live engine's
 * rule code (SimulatedEngine: dead band, switch interval, cycling limits, maximum on-time, safe states)
 * ticking every AUTOMATION_TICK_MS from `from`, each reading arriving at its own time. A tick evaluates
 * the group when the live engine's evaluation would do something: a reading came that a rule sees on
 * another side of its threshold (or that ends safe mode; see SimulatedEngine.readingsMatter), a wake-up is
 * due, it switched at the previous tick, or an hour passed (the full pass). The readings are streamed in time order from the
 * store (scanInTimeOrder), never all loaded. Each action starts at its value at `from` by its history (its
 * value now when the history does not reach back), with an engine that remembers nothing. Nothing is
 * written to the store.
 */
@injectable()
export class BacktestAutomations {
  constructor(
    @inject(GROUP_REPOSITORY) private readonly groups: GroupRepository,
    @inject(ACTION_REPOSITORY) private readonly actions: ActionRepository,
    @inject(READING_REPOSITORY) private readonly readings: ReadingRepository,
    @inject(ACTION_HISTORY_REPOSITORY) private readonly history: ActionHistoryRepository,
    @inject(CORE_SETTINGS) private readonly coreSettings: CoreSettings,
    @inject(AUTOMATION_SETTINGS) private readonly settings: AutomationSettings,
  ) {}

  async execute(input: { group: unknown; from: unknown; to: unknown }): Promise<AutomationBacktest> {
    const name = requireText(input.group, 'group');
    const { from, to } = requireBacktestRange(input.from, input.to);
    const group = await this.groups.findByName(name);
    if (group === undefined) throw new NotFoundError('group', `Group ${name} not found`);
    const timeZone = groupTimeZone(group.settings, this.coreSettings.timeZone);
    const actions = await this.valuesAt(await this.actions.listByGroup(group.name), from);
    const engine = new SimulatedEngine({ group, actions, at: from }, this.coreSettings, this.settings);
    const topics = [...new Set(actions.flatMap(simulationTopics))];
    const range = { group: group.name, topics, from: new Date(from - WARM_UP_MS), to: new Date(to) };
    const scan = this.readings.scanInTimeOrder(range, SCAN_PAGE)[Symbol.asyncIterator]();
    let page: readonly Reading[] = [];
    let index = 0;
    let done = topics.length === 0;
    let replayed = 0;
    /** Hands the engine the readings whose time has come; answers whether any came. */
    const arrive = async (at: number): Promise<boolean> => {
      let arrived = false;
      for (;;) {
        const reading = page[index];
        if (reading === undefined) {
          if (done) return arrived;
          const next = await scan.next();
          if (next.done === true) done = true;
          else [page, index] = [next.value, 0];
          continue;
        }
        if (reading.time.getTime() > at) return arrived;
        engine.readings.push(reading);
        index += 1;
        replayed += 1;
        arrived = true;
      }
    };
    const { tickMs, fullPassMs } = this.settings;
    let dueAt = Number.NEGATIVE_INFINITY;
    let lastFullPass = Number.NEGATIVE_INFINITY;
    let switchedBefore = false;
    let evaluations = 0;
    for (let at = from; at <= to; at += tickMs) {
      const arrived = await arrive(at);
      const fullPass = at - lastFullPass >= fullPassMs;
      const matters = arrived && engine.readingsMatter();
      if (!(matters || switchedBefore || fullPass || at >= dueAt)) continue;
      if (fullPass) lastFullPass = at;
      // The previous tick ran (every live tick records that it ran): slots after it count as missed.
      const { switched, wakeAt } = await engine.evaluate(at, Math.max(from, at - tickMs));
      evaluations += 1;
      switchedBefore = switched.length > 0;
      dueAt = wakeAt ?? Number.POSITIVE_INFINITY;
    }
    await scan.return?.();
    const events = engine.events;
    return {
      group: group.name,
      timeZone,
      from: new Date(from),
      to: new Date(to),
      switches: events.map((event) => simulatedSwitch(event, timeZone)),
      actions: actions.map((action) => onTime(action, events, from, to)),
      readings: replayed,
      evaluations,
    };
  }

  /** Each action with the value its history gives it at `from` (the newest entry at or before it). */
  private async valuesAt(actions: readonly Action[], from: number): Promise<Action[]> {
    const found: Action[] = [];
    for (const action of actions) {
      const entries = await this.history.list(action.group, action.object, ACTION_HISTORY_KEEP);
      const then = entries.find((entry) => entry.at.getTime() <= from);
      found.push(then === undefined ? action : { ...action, value: then.value });
    }
    return found;
  }
}

/** The range of a backtest: two instants, `from` before `to`, at most MAX_BACKTEST_DAYS apart. */
export function requireBacktestRange(fromText: unknown, toText: unknown): { from: number; to: number } {
  const from = requireDate(fromText, 'from').getTime();
  const to = requireDate(toText, 'to').getTime();
  if (!(from < to)) throw InvalidInputError.forField('to', 'must be after from');
  if (to - from > MAX_BACKTEST_DAYS * 86_400_000)
    throw InvalidInputError.forField('to', `must be at most ${MAX_BACKTEST_DAYS} days after from`);
  return { from, to };
}

function onTime(
  action: Action,
  events: readonly { object: string; value: string; at: Date }[],
  from: number,
  to: number,
): BacktestOnTime {
  let onMs = 0;
  let switches = 0;
  let on = action.value === ON_VALUE;
  let since = from;
  for (const event of events) {
    if (event.object !== action.object) continue;
    switches += 1;
    const at = event.at.getTime();
    if (on) onMs += at - since;
    on = event.value === ON_VALUE;
    since = at;
  }
  return { object: action.object, onMs: on ? onMs + to - since : onMs, switches };
}
