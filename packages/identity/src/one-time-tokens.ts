import { createHash, randomBytes } from 'node:crypto';
import { type OneTimeTokens } from '@hortus/core';

/** Reset tokens: 32 random bytes in hex, kept in the store only as their SHA-256 digest. */
export class NodeOneTimeTokens implements OneTimeTokens {
  generate(): string {
    return randomBytes(32).toString('hex');
  }

  /** A fast digest suffices: the token is 256 random bits, so there is nothing to guess from the digest. */
  digest(token: string): string {
    return createHash('sha256').update(token, 'utf8').digest('hex');
  }
}
