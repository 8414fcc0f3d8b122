import { InvalidInputError } from '../shared/errors.js';
import { requireText } from '../shared/validation.js';

/**
 * Each kind is a role of the one permission model (access-policy.ts): admin: every route and group, the
 * administration routes and metrics (the admin role). client: the API as an operator, limited to its
 * groups when it names any. viewer: reads only, likewise limited. device: only sends readings, for its one
 * group. metrics: only reads /metrics (Prometheus), nothing else.
 */
export const accessKeyKinds = ['admin', 'client', 'viewer', 'device', 'metrics'] as const;
export type AccessKeyKind = (typeof accessKeyKinds)[number];

/** An access key as every caller sees it: the secret is shown once at creation, and only its hash is kept. */
export interface AccessKey {
  readonly id: string;
  readonly name: string;
  readonly kind: AccessKeyKind;
  /** Groups the key may reach; empty means every group (admin, client and viewer keys; none for metrics). */
  readonly groups: readonly string[];
  readonly createdAt: Date;
  readonly revokedAt?: Date;
}

/** A key with the digest of its secret: what `hortus store copy` reads and writes as it is. */
export interface AccessKeyCopy extends AccessKey {
  readonly secretHash: string;
}

export interface NewAccessKey {
  readonly name: string;
  readonly kind: AccessKeyKind;
  readonly groups: readonly string[];
  /** The one-way digest of the secret (AccessKeySecrets.hash); unique across keys. */
  readonly secretHash: string;
  readonly createdAt: Date;
}

/** Every secret starts with it, so a leaked key is recognisable in logs and by secret scanners. */
export const ACCESS_KEY_PREFIX = 'hk_';
/** No secret we issue is longer; longer text is refused before it is hashed. */
export const ACCESS_KEY_MAX_LENGTH = 200;
export const MAX_GROUPS_PER_KEY = 100;

export function requireAccessKeyKind(value: unknown): AccessKeyKind {
  if (typeof value === 'string' && (accessKeyKinds as readonly string[]).includes(value)) {
    return value as AccessKeyKind;
  }
  throw InvalidInputError.forField('kind', `must be one of ${accessKeyKinds.join(', ')}`);
}

/** The groups a key of this kind may be limited to, deduplicated in the order given. */
export function requireKeyGroups(kind: AccessKeyKind, value: unknown): string[] {
  const given = value ?? [];
  if (!Array.isArray(given)) throw InvalidInputError.forField('groups', 'must be a list of group names');
  const groups = [...new Set(given.map((group) => requireText(group, 'groups')))];
  if (groups.length > MAX_GROUPS_PER_KEY) {
    throw InvalidInputError.forField('groups', `must name at most ${MAX_GROUPS_PER_KEY} groups`);
  }
  if (kind === 'admin' && groups.length > 0) {
    throw InvalidInputError.forField(
      'groups',
      'must be empty for an admin key, which reaches every group; limit a client key instead',
    );
  }
  if (kind === 'metrics' && groups.length > 0) {
    throw InvalidInputError.forField('groups', 'must be empty for a metrics key, which reads no group');
  }
  if (kind === 'device' && groups.length !== 1) {
    throw InvalidInputError.forField('groups', 'must name exactly one group for a device key');
  }
  return groups;
}
