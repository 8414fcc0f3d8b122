import { inject, injectable } from 'inversify';
import { type Action, type InterlockLockout, type Lockout, type SensorLockout } from '../actions/action.js';
import { type ActionControls, durationText, ON_VALUE } from '../actions/action-limits.js';
import { describeLockout, isSensorLockout } from '../actions/action-lockouts.js';
import { READING_REPOSITORY, type ReadingRepository } from '../readings/reading.port.js';
import { AUTOMATION_SETTINGS, type AutomationSettings } from './automation-settings.js';
import { ENGINE_STATE_REPOSITORY, engineStateKey, type EngineStateRepository } from './engine-state.port.js';
import { SafeMode } from './safe-mode.js';
import { type WakeUps } from './wake-ups.js';

/** One lockout of an action that blocks it now, and why in words. */
export interface ActiveLockout {
  readonly lockout: Lockout;
  /** `esp/air/temperature below 2 (1.4)`, `no fresh reading of esp/air/temperature for 15m`, `ventilator_1 is on`. */
  readonly reason: string;
}

/** What an action's lockouts say at one look: `active` is empty when none blocks it. */
export interface LockoutCheck {
  readonly active: readonly ActiveLockout[];
  /** Recorded only: every lockout that was active at the last look has ended now. */
  readonly ended?: true;
}

/** A switch `on` the engine did not make because of a lockout, or a person's switch that overrides one. */
export interface BlockedSwitch {
  readonly group: string;
  readonly object: string;
  /** What wanted the action on: a rule in words, `safe state on`, or `a person's switch` (kept: see docs). */
  readonly by: string;
  /** The active lockouts, in words. */
  readonly reason: string;
}

export const lockoutStateKey = (group: string, object: string): string =>
  engineStateKey('lockout', group, object);

/** The reasons of the active lockouts, in lockout order, as one text. */
export const lockoutReason = (check: LockoutCheck): string =>
  check.active.map(({ reason }) => reason).join('; ');

/**
 * Lockouts as the engine decides them (the one implementation: the engine, the listings and any replay go
 * through `check`). A lockout is active while its condition holds; unknown counts as blocked (unknown is not
 * safe): a sensor without a reading, or whose newest reading is older than the action's freshness limit (the
 * same as safe mode's), and an interlock whose other action does not exist. A sensor lockout that was active
 * at the last look stays so until its value is back by the engine's dead band (`below 2` ends at 2.5), so a
 * value hovering at the threshold does not switch the action on and off. The lockouts active at the last look
 * and the last reason logged are kept in the engine state (`lockout` key), so a blocked switch is reported once
 * per reason, by one engine of several, across restarts.
 */
@injectable()
export class Lockouts {
  constructor(
    @inject(READING_REPOSITORY) private readonly readings: ReadingRepository,
    @inject(ENGINE_STATE_REPOSITORY) private readonly state: EngineStateRepository,
    @inject(AUTOMATION_SETTINGS) private readonly settings: AutomationSettings,
    @inject(SafeMode) private readonly safeMode: SafeMode,
  ) {}

  /**
   * Which of the action's lockouts block it now. `values` holds the value of each action of the group as
   * the engine sees it now (an interlock reads it). With `record`, the active set is kept for the dead band
   * (and forgotten once none is active); a listing does not record. `wake` learns when a sensor input goes
   * stale, so an idle group is looked at then.
   */
  async check(
    action: Action,
    controls: ActionControls | undefined,
    values: ReadonlyMap<string, string>,
    now: Date,
    options: { readonly wake?: WakeUps | undefined; readonly record?: boolean } = {},
  ): Promise<LockoutCheck> {
    const lockouts = action.lockouts ?? [];
    // Most actions have none: they cost no read.
    if (lockouts.length === 0) return { active: [] };
    const key = lockoutStateKey(action.group, action.object);
    const stored = await this.state.get(key);
    const before = new Set(
      String(stored?.value['active'] ?? '')
        .split(',')
        .filter(Boolean)
        .map(Number),
    );
    const active: ActiveLockout[] = [];
    for (const lockout of lockouts) {
      const reason = isSensorLockout(lockout)
        ? await this.sensorReason(action, lockout, controls, before.has(lockout.id), now, options.wake)
        : interlockReason(lockout, values);
      if (reason !== undefined) active.push({ lockout, reason });
    }
    if (options.record === true) {
      const ids = active.map(({ lockout }) => lockout.id).join(',');
      const changed = ids !== String(stored?.value['active'] ?? '');
      // Nothing active: the record goes, so the next block is reported again.
      const value = ids === '' ? {} : { ...stored?.value, active: ids };
      if (changed || (ids === '' && stored?.value['logged'] !== undefined))
        await this.state.compareAndSet(key, stored?.version ?? 0, value, now);
      if (ids === '' && before.size > 0) return { active, ended: true };
    }
    return { active };
  }

  /**
   * Records that a switch `on` was blocked (or a person's switch kept against a lockout), once per reason:
   * answers it only when it was not recorded already and this engine's write won.
   */
  async noteBlocked(
    action: Action,
    check: LockoutCheck,
    by: string,
    now: Date,
  ): Promise<BlockedSwitch | undefined> {
    const key = lockoutStateKey(action.group, action.object);
    const stored = await this.state.get(key);
    const reason = lockoutReason(check);
    const logged = `${by}: ${reason}`;
    if (stored?.value['logged'] === logged) return undefined;
    const active = check.active.map(({ lockout }) => lockout.id).join(',');
    if (!(await this.state.compareAndSet(key, stored?.version ?? 0, { active, logged }, now)))
      return undefined;
    return { group: action.group, object: action.object, by, reason };
  }

  private async sensorReason(
    action: Action,
    lockout: SensorLockout,
    controls: ActionControls | undefined,
    wasActive: boolean,
    now: Date,
    wake: WakeUps | undefined,
  ): Promise<string | undefined> {
    const reading = await this.readings.latest(action.group, lockout.topic);
    if (reading === undefined) return `no reading of ${lockout.topic}`;
    const limitMs = await this.safeMode.staleAfter(action.group, lockout.topic, controls, now);
    const staleAt = reading.time.getTime() + limitMs;
    if (now.getTime() > staleAt) return `no fresh reading of ${lockout.topic} for ${durationText(limitMs)}`;
    wake?.at(staleAt + 1);
    return sensorLockoutHolds(lockout, reading.value, wasActive, this.settings.deadBand)
      ? `${describeLockout(lockout)} (${reading.value})`
      : undefined;
  }
}

/** Whether a sensor lockout holds at this value: once active, until the value is back by the dead band. */
export function sensorLockoutHolds(
  lockout: SensorLockout,
  value: number,
  wasActive: boolean,
  deadBand: number,
): boolean {
  const band = wasActive ? deadBand : 0;
  return lockout.condition === 'below' ? value < lockout.value + band : value > lockout.value - band;
}

function interlockReason(lockout: InterlockLockout, values: ReadonlyMap<string, string>): string | undefined {
  const value = values.get(lockout.while);
  if (value === undefined) return `no action ${lockout.while}`;
  return value === lockout.is ? describeLockout(lockout) : undefined;
}

/** Whether the action is on through a person's switch (the newest history entry): the engine keeps it. */
export function onByPerson(
  action: Action,
  last: { readonly value: string; readonly actor: { readonly kind: string } } | undefined,
): boolean {
  return action.value === ON_VALUE && last?.value === ON_VALUE && last.actor.kind !== 'engine';
}
