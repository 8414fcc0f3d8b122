// Reading configuration from the environment, shared by every package's settings parser. Kept apart from
// settings.ts so that use cases owning their settings (retention, boxes) can parse them without importing
// the core's settings, which import their types back.

/** Environment variables as a process sees them; every package's settings parser reads this shape. */
export type Env = Readonly<Record<string, string | undefined>>;

/** A configuration that cannot be used, with every problem found, so one start reports all of them. */
export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`Invalid configuration:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

export interface EnvReader<N extends string> {
  /** The trimmed value, or the default when unset or empty. */
  read(name: N): string;
  /** The trimmed value, or undefined when unset or empty. */
  optional(name: string): string | undefined;
  /** A whole number within bounds; a bad value is reported and the default returned. */
  integer(name: N, min: number, max: number): number;
  /** `on` or `off` in any case; a bad value is reported and the default taken. */
  onOff(name: N): boolean;
}

/**
 * Reads variables with defaults, pushing each unusable value onto `problems` instead of stopping at the
 * first, so a parser can report every mistake of a configuration at once.
 */
export function envReader<N extends string>(
  env: Env,
  defaults: Readonly<Record<N, string>>,
  problems: string[],
): EnvReader<N> {
  const optional = (name: string): string | undefined => {
    const value = env[name]?.trim();
    return value === undefined || value === '' ? undefined : value;
  };
  const read = (name: N): string => optional(name) ?? defaults[name];
  return {
    read,
    optional,
    integer: (name, min, max) => {
      const text = read(name);
      const value = /^\d+$/u.test(text) ? Number(text) : Number.NaN;
      if (!Number.isSafeInteger(value) || value < min || value > max) {
        problems.push(`${name} must be a whole number from ${min} to ${max}, got "${text}"`);
        return Number(defaults[name]);
      }
      return value;
    },
    onOff: (name) => {
      const text = read(name).toLowerCase();
      if (text !== 'on' && text !== 'off') {
        problems.push(`${name} must be on or off, got "${read(name)}"`);
        return defaults[name].toLowerCase() === 'on';
      }
      return text === 'on';
    },
  };
}

/** Runs one package's settings parser, moving its ConfigError's problems onto the caller's list. */
export function collectProblems<T>(problems: string[], parse: () => T): T | undefined {
  try {
    return parse();
  } catch (error) {
    if (error instanceof ConfigError) problems.push(...error.problems);
    else problems.push(error instanceof Error ? error.message : String(error));
    return undefined;
  }
}
