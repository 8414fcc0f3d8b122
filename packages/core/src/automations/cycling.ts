import { type ActionHistoryRepository } from '../action-history/action-history.port.js';
import { type Action } from '../actions/action.js';
import { type ActionControls, ON_VALUE } from '../actions/action-limits.js';

/** The action keeps `value` until `until` (ms): its minimum on-time or off-time since `from` is not over. */
export interface CyclingHold {
  readonly value: string;
  readonly from: number;
  readonly until: number;
}

/**
 * The hold of the minimum on-time (value `on`) or off-time (any other value) since the action's last switch.
 * The last switch is the newest entry of the action's history, whoever made it (a person, a key, the CLI,
 * MQTT, a rule): it is in the store, so a restart or another server sees the same hold, and a person's
 * switch counts as a switch. An entry that does not match the current value (a history write that failed)
 * is not trusted: no hold.
 */
export async function cyclingHold(
  history: ActionHistoryRepository,
  action: Action,
  controls: ActionControls | undefined,
): Promise<CyclingHold | undefined> {
  const minMs = action.value === ON_VALUE ? controls?.minOnMs : controls?.minOffMs;
  if (minMs === undefined) return undefined;
  const [last] = await history.list(action.group, action.object, 1);
  if (last?.value !== action.value) return undefined;
  // Answered after it is over too: a time slot that came during it is still due a while (slotsToFire).
  return { value: action.value, from: last.at.getTime(), until: last.at.getTime() + minMs };
}

/** Whether the hold keeps the action from being switched to `value` now. */
export function holds(hold: CyclingHold | undefined, value: string, now: Date): boolean {
  return hold !== undefined && value !== hold.value && now.getTime() < hold.until;
}
