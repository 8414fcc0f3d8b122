import { type DeclaredRoute, policyProblem } from './policy.js';
import { type RouterSpec } from './routing.js';

/** Every route of the routers with its full path, after checking that each declares its policy. */
export function declaredRoutes(specs: readonly RouterSpec[]): DeclaredRoute[] {
  return specs.flatMap((spec) =>
    spec.routes.map((route) => {
      const problem = policyProblem(route);
      if (problem !== undefined) throw new Error(`Route ${spec.prefix}: ${problem}`);
      return {
        method: route.method,
        path: `${spec.prefix}${route.path}`,
        access: route.access,
        writes: route.writes,
      };
    }),
  );
}
