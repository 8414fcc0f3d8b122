import { InvalidInputError } from '../shared/errors.js';

export const groupPackages = ['small', 'medium', 'big'] as const;
export type GroupPackage = (typeof groupPackages)[number];

export interface Group {
  readonly id: string;
  readonly name: string;
  readonly package: GroupPackage;
  /** User names of the people who work with this group. */
  readonly employee: readonly string[];
  /** Whatever JSON the clients wrote, handed back unchanged (clients use an array of one-key objects). */
  readonly settings: unknown;
  /**
   * The operator's retention override for this group's raw readings, in days; 0 keeps them forever.
   * Absent: the service's RETENTION_DAYS applies. Set only by operators, never by clients.
   */
  readonly retentionDays?: number;
}

export type NewGroup = Omit<Group, 'id' | 'retentionDays'>;

/** Settings are stored as given, but a bounded size keeps one client from filling the store. */
export const MAX_SETTINGS_BYTES = 64 * 1024;

export function requireSettings(value: unknown): unknown {
  if (value === undefined) throw InvalidInputError.forField('settings', 'is required');
  let encoded: string | undefined;
  try {
    encoded = JSON.stringify(value);
  } catch {
    encoded = undefined;
  }
  if (encoded === undefined) throw InvalidInputError.forField('settings', 'must be JSON');
  if (new TextEncoder().encode(encoded).length > MAX_SETTINGS_BYTES) {
    throw InvalidInputError.forField('settings', `must be at most ${MAX_SETTINGS_BYTES} bytes of JSON`);
  }
  return JSON.parse(encoded) as unknown;
}
