import {
  type AccessKey,
  type AccessOperation,
  type AccessTarget,
  decideAccess,
  decideSessionAccess,
  type SessionPrincipal,
} from '@hortus/core';
import { type IncomingHttpHeaders } from 'node:http';
import { sessionCookieIn } from '../access/session-cookie.js';
import { type RouteSpec } from '../routes/routing.js';

/** What the request carries once the access middleware has run. */
export interface RequestAccess {
  /** Whether keys are required right now (AUTH on, or auto with keys in use). */
  readonly required: boolean;
  readonly key?: AccessKey;
  /** The session of a valid log-in token. */
  readonly session?: SessionPrincipal;
}

/** What a route's target is read from: the parsed query, the path parameters and the body. */
export interface RequestParts {
  readonly query: unknown;
  readonly params: unknown;
  readonly body: unknown;
}

/** How one route is guarded, derived once from its declaration when the router is built. */
export type AccessRule =
  | { readonly open: true }
  | {
      readonly open?: false;
      readonly operation: AccessOperation;
      readonly target: (request: RequestParts) => AccessTarget;
      /**
       * Decided even while keys are not required (the admin routes): on an open server anyone may read
       * and switch, as in the original service, but not create keys, claim boxes or give roles.
       */
      readonly always?: true;
    };

/** Whether a schema declares the named property. */
function declares(schema: unknown, name: string): boolean {
  const properties = (schema as { properties?: Record<string, unknown> } | undefined)?.properties;
  return properties !== undefined && name in properties;
}

const groupFields = ['group', 'groupId'];

function declaredFields(schema: unknown): string[] {
  const properties = (schema as { properties?: Record<string, unknown> } | undefined)?.properties;
  return properties === undefined ? [] : Object.keys(properties).filter((name) => groupFields.includes(name));
}

/** The values given for the named fields: strings as they are, repeated query parameters one by one. */
function valuesOf(source: unknown, fields: readonly string[]): unknown[] {
  if (typeof source !== 'object' || source === null || Array.isArray(source)) return [];
  const record = source as Record<string, unknown>;
  return fields.flatMap((field) => {
    const value = record[field];
    if (value === undefined) return [];
    return Array.isArray(value) ? (value as unknown[]) : [value];
  });
}

/** The groups of a reading batch: one object, the compact form, or an array of either. */
function ingestGroups(body: unknown): unknown[] {
  const items: unknown[] = Array.isArray(body) ? body : [body];
  return items.flatMap((item) => valuesOf(item, ['group']));
}

/**
 * The access rule of a route, from the access it declares. A `group` route touches the groups its request
 * names in the `group` or `groupId` fields its schemas declare (query, path or body); absent values are left
 * to the route's validation (every group field is required there), and present values that are not group
 * names count as foreign groups. A route whose declaration cannot be checked is refused when it is built.
 */
export function accessRuleOf(route: RouteSpec, fullPath: string): AccessRule {
  const name = `${route.method.toUpperCase()} ${fullPath}`;
  const operation: AccessOperation = route.writes ? 'write' : 'read';
  switch (route.access) {
    case 'open':
    case 'account':
      return { open: true };
    case 'ingest':
      return { operation: 'ingest', target: (request) => ({ groups: ingestGroups(request.body) }) };
    case 'service':
      return { operation, target: () => ({ scope: 'service' }) };
    case 'metrics':
      return { operation, target: () => ({ scope: 'metrics' }) };
    case 'admin':
      return { operation, target: () => ({ scope: 'administration' }), always: true };
    case 'all-groups':
      return { operation, target: () => ({ scope: 'all-groups' }) };
    case 'user': {
      // One user's data (charts, e-mail): a log-in token reaches only its own user's.
      if (!declares(route.params, 'userId')) throw new Error(`${name} is a user's route without :userId`);
      return {
        operation,
        target: (request) => ({
          scope: 'user',
          userId: (request.params as Record<string, unknown> | undefined)?.['userId'],
        }),
      };
    }
    case 'group': {
      const queryFields = [...declaredFields(route.query), ...declaredFields(route.unvalidatedQuery)];
      const paramFields = declaredFields(route.params);
      const bodyFields = declaredFields(route.body);
      if (queryFields.length + paramFields.length + bodyFields.length === 0) {
        throw new Error(`${name} is a group's route that names no group or groupId`);
      }
      return {
        operation,
        target: (request) => ({
          groups: [
            ...valuesOf(request.query, queryFields),
            ...valuesOf(request.params, paramFields),
            ...valuesOf(request.body, bodyFields),
          ],
        }),
      };
    }
  }
}

export type RouteDecision =
  | { readonly allowed: true }
  | { readonly allowed: false; readonly status: 401 | 403; readonly message: string };

const ROUTE_ALLOWED: RouteDecision = { allowed: true };

/** Whether the caller may use one route on what the request names; the guard's decision, without a context. */
export function decideRoute(
  rule: AccessRule,
  access: RequestAccess | undefined,
  request: RequestParts,
): RouteDecision {
  if (rule.open === true) return ROUTE_ALLOWED;
  if (access?.required === false && rule.always !== true) return ROUTE_ALLOWED;
  if (access?.session !== undefined) {
    const decision = decideSessionAccess(access.session, rule.operation, rule.target(request));
    return decision.allowed ? ROUTE_ALLOWED : { allowed: false, status: 403, message: decision.reason };
  }
  // Keys are required (or the route always needs a credential) but none was checked or sent: refuse.
  if (access?.key === undefined) {
    return {
      allowed: false,
      status: 401,
      message:
        rule.always === true && access?.required === false
          ? "This route needs an admin's log-in token or an admin key: send the header Authorization: Bearer <key>"
          : 'An access key is required: send the header Authorization: Bearer <key>',
    };
  }
  const decision = decideAccess(access.key, rule.operation, rule.target(request));
  return decision.allowed ? ROUTE_ALLOWED : { allowed: false, status: 403, message: decision.reason };
}

/**
 * Whether an answer is given to a credential, so that it varies by the credential headers and is private:
 * on every path that is not open, when the route checks its caller itself (`account`), when keys are
 * required, or when the request sends a credential at all (the header or the session cookie). The access
 * check of the Koa chain and the poll lane both ask this.
 */
export function answersToCredential(
  check: 'open' | 'account' | 'key',
  required: boolean,
  credentialSent: boolean,
): boolean {
  return check !== 'open' && (check === 'account' || required || credentialSent);
}

/** Whether a request sends a credential at all: the Authorization header or the session cookie. */
export function credentialSentIn(headers: IncomingHttpHeaders): boolean {
  return (headers.authorization ?? '') !== '' || sessionCookieIn(headers.cookie) !== undefined;
}
