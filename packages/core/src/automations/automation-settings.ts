/** Tuning of the automation engine and the alerts; every value has a sensible default. */
export interface AutomationSettings {
  /** How often rules and alerts are evaluated. */
  readonly tickMs: number;
  /** A time slot still fires this long after its minute, so a tick delayed by load or a restart is not lost. */
  readonly slotGraceMs: number;
  /** A sensor rule re-arms only once the value is this far back on the other side of its threshold. */
  readonly deadBand: number;
  /** Least time between two switches of one action by sensor rules, so a hovering value cannot flap. */
  readonly minSwitchIntervalMs: number;
  /** Readings older than this never trigger a rule or an alert. */
  readonly maxReadingAgeMs: number;
  /** A group whose newest reading is older than this gets a "no data received" alert. */
  readonly noDataAlertMs: number;
  /**
   * Every group is evaluated at least this often, changed or not: a safety net under the change feed and
   * the wake-ups, which alone decide what the ticks in between evaluate.
   */
  readonly fullPassMs: number;
  /** Slot claims older than this are purged; longer than the 7 days a missed slot is looked back for. */
  readonly stateRetentionMs: number;
}

export const AUTOMATION_SETTINGS = Symbol.for('hortus.AutomationSettings');

export const defaultAutomationSettings: AutomationSettings = {
  tickMs: 10_000,
  slotGraceMs: 5 * 60_000,
  deadBand: 0.5,
  minSwitchIntervalMs: 60_000,
  maxReadingAgeMs: 10 * 60_000,
  noDataAlertMs: 30 * 60_000,
  stateRetentionMs: 8 * 24 * 3_600_000,
  fullPassMs: 3_600_000,
};
