import {
  accessRuleOf,
  apiRouters,
  declaredRoutes,
  metaRoutes,
  operationsRoutes,
  PolicyTable,
  policyProblem,
  routeAccessKinds,
  type RouterSpec,
  type RouteSpec,
} from '@hortus/http-koa';
import { expect } from './harness.js';

const everyRouter: readonly RouterSpec[] = [
  metaRoutes(
    () => ({}),
    () => '',
  ),
  ...apiRouters,
];

function routerWith(route: Partial<RouteSpec>): RouterSpec {
  return {
    prefix: '/api/new',
    tag: 'New',
    style: { body: 'message', serverError: 'Internal Server Error' },
    routes: [
      {
        method: 'get',
        path: '/thing',
        summary: 'A route added later',
        responses: { 200: { description: 'ok' } },
        handle: () => Promise.resolve({ status: 200, empty: true }),
        ...route,
      } as RouteSpec,
    ],
  };
}

describe('route policies', () => {
  it('when the routes are listed, then every one says who may call it and whether it writes', () => {
    for (const spec of everyRouter) {
      for (const route of spec.routes) {
        const name = `${route.method} ${spec.prefix}${route.path}`;
        expect(policyProblem(route), name).to.equal(undefined);
        expect(routeAccessKinds, name).to.include(route.access);
        expect(() => accessRuleOf(route, `${spec.prefix}${route.path}`), name).not.to.throw();
      }
    }
  });

  it('when a route is added without saying who may call it, then the routes are refused', () => {
    const withoutAccess = routerWith({ writes: false });
    expect(() => declaredRoutes([...apiRouters, withoutAccess])).to.throw(
      /GET \/thing does not say who may call it/u,
    );
  });

  it('when a route does not say whether it writes, or a POST says it does not, then the routes are refused', () => {
    expect(() => declaredRoutes([routerWith({ access: 'open' })])).to.throw(
      /does not say whether it writes/u,
    );
    expect(() => declaredRoutes([routerWith({ method: 'post', access: 'account', writes: false })])).to.throw(
      /not a GET, so it writes/u,
    );
  });

  it("when a group's route names no group, or a user's route no :userId, then its rule cannot be built", () => {
    const group = routerWith({ access: 'group', writes: false }).routes[0] as RouteSpec;
    expect(() => accessRuleOf(group, '/api/new/thing')).to.throw(/names no group/u);
    const user = routerWith({ access: 'user', writes: false }).routes[0] as RouteSpec;
    expect(() => accessRuleOf(user, '/api/new/thing')).to.throw(/without :userId/u);
  });

  describe('the table the edge reads before routing', () => {
    const table = new PolicyTable([...declaredRoutes(everyRouter), ...operationsRoutes]);

    it('then the GETs that change data are writes, whatever the case or trailing slash, and reads are not', () => {
      expect(table.writes('GET', '/api/actions')).to.equal(true);
      expect(table.writes('HEAD', '/API/Devices/create/')).to.equal(true);
      expect(table.writes('GET', '/api/devices')).to.equal(false);
      expect(table.writes('GET', '/api/actions/current_state')).to.equal(false);
      expect(table.writes('POST', '/api/anything')).to.equal(true);
      expect(table.writes('OPTIONS', '/api/actions')).to.equal(false);
    });

    it('then liveness and health are open, the account routes check themselves, and the rest needs a key', () => {
      expect(table.checkBeforeRouting('/')).to.equal('open');
      expect(table.checkBeforeRouting('/healthz/')).to.equal('open');
      expect(table.checkBeforeRouting('/api/data/latestdata')).to.equal('open');
      expect(table.checkBeforeRouting('/api/auth')).to.equal('account');
      expect(table.checkBeforeRouting('/api/apiUserData/u1')).to.equal('account');
      expect(table.checkBeforeRouting('/metrics')).to.equal('key');
      expect(table.checkBeforeRouting('/api/historyChart/all/u1')).to.equal('key');
      expect(table.checkBeforeRouting('/api/nowhere')).to.equal('key');
    });
  });
});
