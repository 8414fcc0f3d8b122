import { CreateAccessKey, CreateGroup, CreateUser, LogIn, type UserRole } from '@hortus/core';
import {
  apiRouters,
  boxRouters,
  declaredRoutes,
  type DeclaredRoute,
  metaRoutes,
  operationsRoutes,
} from '@hortus/http-koa';
import { type AppOnMemory, expect, startAppOnMemory } from './harness.js';

/**
 * The route table walked for every role and key kind: each declared route is called with each credential,
 * on the caller's home group and on another group, and the answer is a 403 exactly where the table below
 * says the credential is refused. The table is written out here, apart from core's decision, so a change of
 * either shows as a failure.
 */
type Credential =
  | { readonly name: string; readonly session: UserRole }
  | {
      readonly name: string;
      readonly key: 'admin' | 'client' | 'viewer' | 'device' | 'metrics';
      readonly limited: boolean;
    };

const credentials: readonly Credential[] = [
  { name: 'viewer log-in', session: 'viewer' },
  { name: 'operator log-in', session: 'operator' },
  { name: 'admin log-in', session: 'admin' },
  { name: 'admin key', key: 'admin', limited: false },
  { name: 'client key', key: 'client', limited: false },
  { name: 'client key of the home group', key: 'client', limited: true },
  { name: 'viewer key', key: 'viewer', limited: false },
  { name: 'viewer key of the home group', key: 'viewer', limited: true },
  { name: 'device key', key: 'device', limited: true },
  { name: 'metrics key', key: 'metrics', limited: false },
];

const HOME = 'tomatoes';
const OTHER = 'basil';

/** What a credential is: what it may do and where it reaches, as the documentation states it. */
function traits(credential: Credential): {
  readonly reads: boolean;
  readonly writes: boolean;
  readonly ingests: boolean;
  readonly everyGroup: boolean;
  readonly admin: boolean;
  readonly metrics: boolean;
  /** Reaches data outside groups (other users' charts and e-mails). */
  readonly outside: boolean;
} {
  if ('session' in credential) {
    const admin = credential.session === 'admin';
    const writes = credential.session !== 'viewer';
    return { reads: true, writes, ingests: writes, everyGroup: admin, admin, metrics: admin, outside: admin };
  }
  switch (credential.key) {
    case 'admin':
      return {
        reads: true,
        writes: true,
        ingests: true,
        everyGroup: true,
        admin: true,
        metrics: true,
        outside: true,
      };
    case 'client':
    case 'viewer': {
      const writes = credential.key === 'client';
      const everyGroup = !credential.limited;
      return {
        reads: true,
        writes,
        ingests: writes,
        everyGroup,
        admin: false,
        metrics: false,
        outside: everyGroup,
      };
    }
    case 'device':
      return {
        reads: false,
        writes: false,
        ingests: true,
        everyGroup: false,
        admin: false,
        metrics: false,
        outside: false,
      };
    case 'metrics':
      return {
        reads: false,
        writes: false,
        ingests: false,
        everyGroup: false,
        admin: false,
        metrics: true,
        outside: false,
      };
  }
}

/** Whether the credential may call the route on the group (its home group or another). */
function allowed(credential: Credential, route: DeclaredRoute, group: string): boolean {
  const can = traits(credential);
  const reaches = group === HOME || can.everyGroup;
  switch (route.access) {
    case 'open':
    case 'account':
      return true;
    case 'group':
      return reaches && (route.writes ? can.writes : can.reads);
    case 'ingest':
      return reaches && can.ingests;
    case 'user':
    case 'all-groups':
      return can.outside && (route.writes ? can.writes : can.reads);
    case 'service':
      return can.reads;
    case 'metrics':
      return can.metrics;
    case 'admin':
      return can.admin;
  }
}

/** A request to the route naming the group wherever a group may be named, and another user's id. */
function requestTo(route: DeclaredRoute, group: string, otherUser: string): { path: string; body?: string } {
  const path = route.path
    .split('/')
    .map((segment) => {
      if (!segment.startsWith(':')) return segment;
      const name = segment.slice(1);
      if (name === 'group' || name === 'groupId') return group;
      if (name === 'userId' || name === 'id') return otherUser;
      return 'x';
    })
    .join('/');
  const query = `?group=${group}&groupId=${group}`;
  if (route.method === 'get') return { path: `${path}${query}` };
  return { path: `${path}${query}`, body: JSON.stringify({ group, groupId: group }) };
}

describe('the route table walked for every role and key kind', () => {
  let app: AppOnMemory;
  const headers = new Map<string, string>();
  let otherUser = '';

  before(async () => {
    app = await startAppOnMemory({ AUTH: 'on', RATE_LIMIT_PER_MINUTE: '0', POLL_LANE: 'on' });
    const createUser = app.container.get(CreateUser);
    const logIn = app.container.get(LogIn);
    for (const name of [HOME, OTHER]) await app.container.get(CreateGroup).execute({ name });
    otherUser = (
      await createUser.execute({ firstName: 'O', lastName: 'T', email: 'other@example.org', group: OTHER })
    ).id;
    for (const credential of credentials) {
      if ('session' in credential) {
        const email = `${credential.session}@example.org`;
        const password = 'correct horse battery staple 7';
        await createUser.execute({
          firstName: 'A',
          lastName: 'B',
          email,
          group: HOME,
          password,
          role: credential.session,
        });
        const { token } = await logIn.execute({ email, password }, '127.0.0.1');
        headers.set(credential.name, `Bearer ${token}`);
      } else {
        const { secret } = await app.container.get(CreateAccessKey).execute({
          name: credential.name,
          kind: credential.key,
          groups: credential.limited ? [HOME] : [],
        });
        headers.set(credential.name, `Bearer ${secret}`);
      }
    }
  });
  after(() => app.close());

  const routes = [
    ...declaredRoutes([
      metaRoutes(
        () => ({}),
        () => '',
      ),
      ...apiRouters,
      ...boxRouters({ httpsPort: 8443 }),
    ]),
    ...operationsRoutes,
  ];

  it('then every declared route answers each credential as its role allows, on its home group and another', async () => {
    const mismatches: string[] = [];
    let requests = 0;
    let refusals = 0;
    for (const route of routes) {
      // Open routes and the account routes (which check their caller themselves) never refuse by role.
      if (route.access === 'open' || route.access === 'account') continue;
      const groups = route.access === 'group' || route.access === 'ingest' ? [HOME, OTHER] : [HOME];
      for (const group of groups) {
        const { path, body } = requestTo(route, group, otherUser);
        for (const credential of credentials) {
          const answer = await fetch(`${app.url}${path}`, {
            method: route.method.toUpperCase(),
            headers: {
              authorization: headers.get(credential.name) ?? '',
              ...(body === undefined ? {} : { 'content-type': 'application/json' }),
            },
            ...(body === undefined ? {} : { body }),
          });
          await answer.arrayBuffer();
          requests += 1;
          const expected = allowed(credential, route, group);
          const refused = answer.status === 403;
          if (refused) refusals += 1;
          if (answer.status === 401 || refused === expected) {
            mismatches.push(
              `${route.method.toUpperCase()} ${route.path} (${group}) as ${credential.name}: ${answer.status}, expected ${expected ? 'allowed' : '403'}`,
            );
          }
        }
      }
    }
    expect(mismatches).to.deep.equal([]);
    expect(requests).to.be.greaterThan(routes.length * credentials.length);
    // Both answers occur: the walk would pass vacuously if every request were refused, or none.
    expect(refusals).to.be.greaterThan(requests / 4);
    expect(refusals).to.be.lessThan((requests * 3) / 4);
  });

  it('then GET /api/me answers every credential with its role and the groups it may see', async () => {
    const roles: Record<string, [string, string[]]> = {
      'viewer log-in': ['viewer', [HOME]],
      'operator log-in': ['operator', [HOME]],
      'admin log-in': ['admin', [OTHER, HOME]],
      'admin key': ['admin', [OTHER, HOME]],
      'client key': ['operator', [OTHER, HOME]],
      'client key of the home group': ['operator', [HOME]],
      'viewer key': ['viewer', [OTHER, HOME]],
      'viewer key of the home group': ['viewer', [HOME]],
      'device key': ['device', [HOME]],
      'metrics key': ['metrics', []],
    };
    for (const credential of credentials) {
      const answer = await fetch(`${app.url}/api/me`, {
        headers: { authorization: headers.get(credential.name) ?? '' },
      });
      const me = (await answer.json()) as { role: string; groups: string[]; kind: string; group?: string };
      expect(answer.status, credential.name).to.equal(200);
      expect([me.role, me.groups], credential.name).to.deep.equal(roles[credential.name]);
      expect(me.kind).to.equal('session' in credential ? 'user' : 'key');
      if ('session' in credential) expect(me.group).to.equal(HOME);
    }
    const none = await fetch(`${app.url}/api/me`);
    expect(none.status).to.equal(401);
  });
});
