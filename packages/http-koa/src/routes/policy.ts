/**
 * What every route declares beside its handler, so that the edge, the access check, the poll lane and the API
 * description read one declaration instead of lists kept by path.
 *
 * Who may call a route:
 * - `open`: anyone, without a credential (the liveness texts);
 * - `account`: the route checks its caller itself (log-in, sign-up, reset, profile), so no 401 comes first;
 * - `group`: the data of the groups the request names (`group` or `groupId` in its query, path or body);
 * - `ingest`: readings for the groups the body names, which device keys may send too;
 * - `user`: one user's own data, named by the `userId` path parameter;
 * - `all-groups`: data outside any one group, for keys that reach every group;
 * - `service`: service information (the API description, the commit feed), for any key or log-in;
 * - `metrics`: monitoring (`/metrics`), for admins and metrics keys;
 * - `admin`: running the installation (boxes, keys, users, alert settings), for admins (keys and users).
 *
 * What each role may do there is core's decision (access-policy.ts): a viewer only reads, an operator
 * also writes in its group, an admin reaches every group and the `admin` routes.
 */
export const routeAccessKinds = [
  'open',
  'account',
  'group',
  'ingest',
  'user',
  'all-groups',
  'service',
  'metrics',
  'admin',
] as const;
export type RouteAccess = (typeof routeAccessKinds)[number];

/** The part of a route's declaration that says who may call it and whether it changes data. */
export interface RoutePolicy {
  readonly access: RouteAccess;
  /**
   * Whether it changes data. Every route but a GET does; a GET that does (docs/api.md has some) is refused to HEAD
   * and to cross-site pages like any POST.
   */
  readonly writes: boolean;
}

/** Why a route's policy cannot be right, or undefined when it can. */
export function policyProblem(route: {
  readonly method: string;
  readonly path: string;
  readonly access?: unknown;
  readonly writes?: unknown;
}): string | undefined {
  const name = `${route.method.toUpperCase()} ${route.path}`;
  if (!(routeAccessKinds as readonly unknown[]).includes(route.access)) {
    return `${name} does not say who may call it (access: ${routeAccessKinds.join(', ')})`;
  }
  if (typeof route.writes !== 'boolean') return `${name} does not say whether it writes`;
  if (route.method !== 'get' && !route.writes) return `${name} is not a GET, so it writes`;
  return undefined;
}

/** A path as routes are matched: lower case, without a trailing slash (but `/` itself). */
export function normalisedPath(path: string): string {
  const lower = path.toLowerCase();
  return lower.length > 1 ? lower.replace(/\/+$/u, '') : lower;
}

/** A route with its full path (prefix included) and its policy. */
export interface DeclaredRoute extends RoutePolicy {
  readonly method: string;
  readonly path: string;
}

/**
 * The policies of every route by path, for the edge middleware that runs before a route is matched (the
 * access middleware, HEAD and Fetch Metadata checks). Paths with parameters match any one segment there.
 */
export class PolicyTable {
  private readonly exact = new Map<string, DeclaredRoute[]>();
  private readonly patterns: { readonly pattern: RegExp; readonly route: DeclaredRoute }[] = [];

  constructor(routes: readonly DeclaredRoute[]) {
    for (const route of routes) {
      const path = normalisedPath(route.path);
      if (!path.includes(':')) {
        const held = this.exact.get(path);
        if (held === undefined) this.exact.set(path, [route]);
        else held.push(route);
        continue;
      }
      const source = path
        .split('/')
        .map((segment) =>
          segment.startsWith(':')
            ? '[^/]+'
            : segment.startsWith('*')
              ? '.+'
              : segment.replace(/[.*+?^${}()|[\]\\]/gu, '\\$&'),
        )
        .join('/');
      this.patterns.push({ pattern: new RegExp(`^${source}$`, 'u'), route });
    }
  }

  /** The routes at a path, whatever their method. */
  routesAt(path: string): readonly DeclaredRoute[] {
    const normalised = normalisedPath(path);
    const exact = this.exact.get(normalised) ?? [];
    if (this.patterns.length === 0) return exact;
    const matching = this.patterns
      .filter(({ pattern }) => pattern.test(normalised))
      .map(({ route }) => route);
    return matching.length === 0 ? exact : [...exact, ...matching];
  }

  /**
   * What the access middleware, before routing, asks of a request to the path: nothing (`open`: some route
   * there is open), no 401 (`account`: the route there checks its caller itself), or a credential (`key`:
   * every other path, unknown ones too). A wrong method on an open path is then the router's 405, not a 401.
   */
  checkBeforeRouting(path: string): 'open' | 'account' | 'key' {
    let check: 'open' | 'account' | 'key' = 'key';
    for (const route of this.routesAt(path)) {
      if (route.access === 'open') return 'open';
      if (route.access === 'account') check = 'account';
    }
    return check;
  }

  /** Whether the request changes data: any method but GET, HEAD and OPTIONS, or a GET declared writing. */
  writes(method: string, path: string): boolean {
    if (method === 'OPTIONS') return false;
    if (method !== 'GET' && method !== 'HEAD') return true;
    return this.routesAt(path).some((route) => route.method === 'get' && route.writes);
  }
}
