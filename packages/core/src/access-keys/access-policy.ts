import { NAME_MAX_LENGTH } from '../shared/validation.js';
import { type UserRole } from '../users/user.js';
import { type AccessKey, type AccessKeyKind } from './access-key.js';

export const accessOperations = ['read', 'write', 'ingest'] as const;
export type AccessOperation = (typeof accessOperations)[number];

/** What a request touches, as the transport reads it from the route and the request. */
export type AccessTarget =
  /** Data of the named groups. A value that is not a group name (malformed input) counts as a foreign group. */
  | { readonly groups: readonly unknown[] }
  /** Data not tied to one group: credentials limited to groups may not touch it. */
  | { readonly scope: 'all-groups' }
  /** One user's own data (their charts, e-mail, profile), named by the user id in the request. */
  | { readonly scope: 'user'; readonly userId: unknown }
  /** Service information (the API description, the commit feed): any credential but device and metrics keys. */
  | { readonly scope: 'service' }
  /** Monitoring (`/metrics`): admins and metrics keys. */
  | { readonly scope: 'metrics' }
  /** Running the installation (boxes, keys, users, alert settings): admins only. */
  | { readonly scope: 'administration' };

/**
 * The roles of the one permission model: a user's role (viewer, operator, admin), and the two roles only
 * keys have: `device` (sends readings for its group) and `metrics` (reads /metrics). Every key kind is one
 * of them (roleOfKeyKind).
 */
export const accessRoles = ['viewer', 'operator', 'admin', 'device', 'metrics'] as const;
export type AccessRole = (typeof accessRoles)[number];

/** The role each key kind has: a client key is an operator, as it could switch before roles existed. */
export function roleOfKeyKind(kind: AccessKeyKind): AccessRole {
  switch (kind) {
    case 'admin':
      return 'admin';
    case 'client':
      return 'operator';
    case 'viewer':
      return 'viewer';
    case 'device':
      return 'device';
    case 'metrics':
      return 'metrics';
  }
}

/** What one credential may do, whatever it is: its role and where it reaches. */
export interface AccessGrant {
  readonly role: AccessRole;
  /** The groups it reaches, or every group. */
  readonly groups: readonly string[] | 'all';
  /** A log-in session's own user: its per-user data is its own whatever the role. */
  readonly userId?: string;
  /** How the refusals name the credential: `key` or `log-in token`. */
  readonly credential: 'key' | 'log-in token';
}

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

const ADMIN_ONLY = 'Only an admin may do this';
const READ_ONLY = 'A viewer may only read';

/**
 * The permission model, for every credential and every door (the HTTP chain, both lanes, MQTT commands):
 * whether the grant may perform the operation on the target, and if not, why (the reason is shown to the
 * caller, so it names only what the caller sent).
 */
export function decideGrant(
  grant: AccessGrant,
  operation: AccessOperation,
  target: AccessTarget,
): AccessDecision {
  const { role } = grant;
  if (role === 'metrics') {
    return 'scope' in target && target.scope === 'metrics' && operation === 'read'
      ? allowed
      : denied('A metrics key may only read /metrics and health');
  }
  if (role === 'device') {
    if (operation !== 'ingest' || !('groups' in target)) {
      return denied('A device key may only send readings for its group');
    }
    const foreign = foreignGroup(target.groups, grant.groups === 'all' ? [] : grant.groups);
    return foreign === undefined
      ? allowed
      : denied(`A device key may only send readings for its group, not for ${groupNamed(foreign)}`);
  }
  if ('scope' in target) {
    switch (target.scope) {
      case 'administration':
        return role === 'admin' ? allowed : denied(ADMIN_ONLY);
      case 'metrics':
        return role === 'admin' ? allowed : denied('Only an admin or a metrics key may read this');
      case 'service':
        return allowed;
      case 'user':
        // Its own account stays a user's whatever its role (a viewer keeps its charts, e-mail and profile).
        if (grant.userId !== undefined && target.userId === grant.userId) return allowed;
        if (role === 'admin') return allowed;
        if (grant.credential === 'log-in token') {
          return denied("A log-in token reaches only its own user's data");
        }
        return reachAll(grant, operation);
      case 'all-groups':
        if (role === 'admin') return allowed;
        if (grant.credential === 'log-in token') return denied('A log-in token reaches only its own group');
        return reachAll(grant, operation);
    }
  }
  if (role === 'viewer' && operation !== 'read') return denied(READ_ONLY);
  if (grant.groups === 'all') return allowed;
  const foreign = foreignGroup(target.groups, grant.groups);
  return foreign === undefined
    ? allowed
    : denied(`This ${grant.credential} may not reach ${groupNamed(foreign)}`);
}

/** Data outside any group, for a key: only one that reaches every group, and a viewer only reads it. */
function reachAll(grant: AccessGrant, operation: AccessOperation): AccessDecision {
  if (grant.groups !== 'all')
    return denied('This key is limited to groups and may not reach data outside them');
  return grant.role === 'viewer' && operation !== 'read' ? denied(READ_ONLY) : allowed;
}

/** What an access key may do: its kind's role, over its groups (none named: every group). */
export function grantOfKey(key: AccessKey): AccessGrant {
  const role = roleOfKeyKind(key.kind);
  return {
    role,
    groups: key.groups.length === 0 && role !== 'device' ? 'all' : key.groups,
    credential: 'key',
  };
}

/** A user's log-in session as a credential: the user's id, (stored) home group and role. */
export interface SessionPrincipal {
  readonly userId: string;
  readonly group: string;
  readonly role: UserRole;
}

/** What a log-in session may do: its user's role, over its home group (an admin: every group). */
export function grantOfSession(session: SessionPrincipal): AccessGrant {
  return {
    role: session.role,
    groups: session.role === 'admin' ? 'all' : [session.group],
    userId: session.userId,
    credential: 'log-in token',
  };
}

/** The access policy of a key. A revoked key may do nothing. */
export function decideAccess(
  key: AccessKey,
  operation: AccessOperation,
  target: AccessTarget,
): AccessDecision {
  if (key.revokedAt !== undefined) return denied('This access key is revoked');
  return decideGrant(grantOfKey(key), operation, target);
}

/**
 * The access policy of a log-in token: its user's role over its home group, plus the user's own per-user
 * data; never another user's, unless an admin's.
 */
export function decideSessionAccess(
  session: SessionPrincipal,
  operation: AccessOperation,
  target: AccessTarget,
): AccessDecision {
  return decideGrant(grantOfSession(session), operation, target);
}
