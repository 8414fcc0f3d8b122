import { NAME_MAX_LENGTH } from '../shared/validation.js';
import { type AccessKey } from './access-key.js';

export const accessOperations = ['read', 'write', 'ingest'] as const;
export type AccessOperation = (typeof accessOperations)[number];

/** What a request touches, as the transport reads it from the route and the request. */
export type AccessTarget =
  /** Data of the named groups. A value that is not a group name (malformed input) counts as a foreign group. */
  | { readonly groups: readonly unknown[] }
  /** Data not tied to one group (a user's charts or e-mail): keys limited to groups may not touch it. */
  | { readonly scope: 'all-groups' }
  /** One user's own data (their charts, e-mail, profile), named by the user id in the request. */
  | { readonly scope: 'user'; readonly userId: unknown }
  /** Service information (the API description, the commit feed): any admin or client key. */
  | { readonly scope: 'service' }
  /** Operator data (metrics): admin keys only. */
  | { readonly scope: 'operator' };

export type AccessDecision =
  { readonly allowed: true } | { readonly allowed: false; readonly reason: string };

const allowed: AccessDecision = { allowed: true };
const denied = (reason: string): AccessDecision => ({ allowed: false, reason });

function groupNamed(value: unknown): string {
  return typeof value === 'string' && value.length <= NAME_MAX_LENGTH ? `group "${value}"` : 'that group';
}

/** The first requested value the allowed groups do not hold; undefined when all are held. */
function foreignGroup(requested: readonly unknown[], allowedGroups: readonly string[]): unknown {
  return requested.find((group) => typeof group !== 'string' || !allowedGroups.includes(group));
}

/**
 * The access policy: whether the key may perform the operation on the target, and if not, why (the
 * reason is shown to the caller, so it names only what the caller sent).
 */
export function decideAccess(
  key: AccessKey,
  operation: AccessOperation,
  target: AccessTarget,
): AccessDecision {
  if (key.revokedAt !== undefined) return denied('This access key is revoked');
  if (key.kind === 'admin') return allowed;
  if (key.kind === 'device') {
    if (operation !== 'ingest' || !('groups' in target)) {
      return denied('A device key may only send readings for its group');
    }
    const foreign = foreignGroup(target.groups, key.groups);
    return foreign === undefined
      ? allowed
      : denied(`A device key may only send readings for its group, not for ${groupNamed(foreign)}`);
  }
  if ('scope' in target) {
    switch (target.scope) {
      case 'operator':
        return denied('Only an admin key may read this');
      case 'service':
        return allowed;
      case 'all-groups':
      case 'user':
        return key.groups.length === 0
          ? allowed
          : denied('This key is limited to groups and may not reach data outside them');
    }
  }
  if (key.groups.length === 0) return allowed;
  const foreign = foreignGroup(target.groups, key.groups);
  return foreign === undefined ? allowed : denied(`This key may not reach ${groupNamed(foreign)}`);
}

/** A user's log-in session as a credential: the user's id and (stored) group. */
export interface SessionPrincipal {
  readonly userId: string;
  readonly group: string;
}

/**
 * The access policy of a log-in token: like a client key limited to the user's own group, plus the user's
 * own per-user data, and never another user's.
 */
export function decideSessionAccess(
  session: SessionPrincipal,
  _operation: AccessOperation,
  target: AccessTarget,
): AccessDecision {
  if ('scope' in target) {
    switch (target.scope) {
      case 'service':
        return allowed;
      case 'user':
        return target.userId === session.userId
          ? allowed
          : denied("A log-in token reaches only its own user's data");
      case 'all-groups':
        return denied('A log-in token reaches only its own group');
      case 'operator':
        return denied('Only an admin key may read this');
    }
  }
  const foreign = foreignGroup(target.groups, [session.group]);
  return foreign === undefined ? allowed : denied(`This log-in token may not reach ${groupNamed(foreign)}`);
}
