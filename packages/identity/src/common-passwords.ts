import { createRequire } from 'node:module';
import { type CommonPasswords, PASSWORD_MIN_LENGTH } from '@hortus/core';

/**
 * How far down the ranking passwords count as common: of the 20,000 most used, the 7,348 that are long
 * enough to pass the length rule (the shorter ones fail it anyway).
 */
export const COMMON_PASSWORD_RANKS = 20_000;

/**
 * The most common passwords from zxcvbn-ts's list (MIT; `@zxcvbn-ts/language-common`, ranked by how often
 * they appear in leaked password sets), read once. Compared without letter case: `Dragon12` is as weak as
 * `dragon12`.
 */
export class RankedCommonPasswords implements CommonPasswords {
  private readonly passwords: ReadonlySet<string>;

  constructor(ranked: readonly string[] = bundledRanking(), ranks = COMMON_PASSWORD_RANKS) {
    this.passwords = new Set(
      ranked
        .slice(0, ranks)
        .map((password) => password.toLowerCase())
        .filter((password) => [...password].length >= PASSWORD_MIN_LENGTH),
    );
  }

  get size(): number {
    return this.passwords.size;
  }

  includes(password: string): boolean {
    return this.passwords.has(password.toLowerCase());
  }
}

function bundledRanking(): string[] {
  // The package's source data: a plain JSON array, most common first.
  return createRequire(import.meta.url)('@zxcvbn-ts/language-common/src/passwords.json') as string[];
}
