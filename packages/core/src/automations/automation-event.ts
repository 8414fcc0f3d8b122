/**
 * `limit`: the action's maximum on-time switched it off; `safe`: every input went stale (safe mode);
 * `lockout`: a lockout became active while the engine had it on.
 */
export const automationTriggers = ['time', 'sensor', 'limit', 'safe', 'lockout'] as const;
export type AutomationTrigger = (typeof automationTriggers)[number];

/** One change the automation engine made to an action, kept so people can see why a pump switched. */
export interface AutomationEvent {
  readonly id: string;
  readonly group: string;
  readonly object: string;
  readonly value: string;
  readonly previousValue: string;
  readonly at: Date;
  readonly trigger: AutomationTrigger;
  /**
   * The rule in words, e.g. `06:30 weekdays -> on`, `temperature above 28 -> off`, or for the on-time
   * limit `on longer than 30m -> off`.
   */
  readonly rule: string;
  readonly reading?: { readonly topic: string; readonly value: number; readonly time: Date };
  /** For a time rule: the instant its slot was due. */
  readonly slot?: Date;
  /** Present when a time rule's slot fired after its grace: it was missed while no engine ran. */
  readonly late?: true;
}

export type NewAutomationEvent = Omit<AutomationEvent, 'id'>;

export const DEFAULT_AUTOMATION_EVENTS_LIMIT = 100;
export const MAX_AUTOMATION_EVENTS_LIMIT = 1000;
