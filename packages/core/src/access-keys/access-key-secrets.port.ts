/** Randomness and hashing for access keys; the transport binds node:crypto, tests may bind a fake. */
export interface AccessKeySecrets {
  /** A new secret: ACCESS_KEY_PREFIX followed by at least 128 random bits, URL-safe. */
  generate(): string;
  /** A one-way digest of the secret, what the store keeps and finds keys by. */
  hash(secret: string): string;
}

export const ACCESS_KEY_SECRETS = Symbol.for('hortus.AccessKeySecrets');
