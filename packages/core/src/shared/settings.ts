import { type AutomationSettings } from '../automations/automation-settings.js';

/** Policy values the use cases need; each transport's composition root binds them from its configuration. */
export interface CoreSettings {
  /** IANA time zone in which "today" is counted (the /tem route). */
  readonly timeZone: string;
  /** How long a fetched commit list is served before the code host is asked again. */
  readonly commitsCacheMs: number;
  /** Overrides of the automation engine's defaults. */
  readonly automation?: Partial<AutomationSettings>;
}

export const CORE_SETTINGS = Symbol.for('hortus.CoreSettings');

export const defaultCoreSettings: CoreSettings = { timeZone: 'UTC', commitsCacheMs: 60_000 };
