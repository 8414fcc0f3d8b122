import { runtimeMetrics } from './runtime-metrics.js';
import { decideAccess, decideSessionAccess } from '@hortus/core';
import { type Middleware } from 'koa';
import { accessOf, forbidden } from '../access/access.js';
import { type HttpMetrics } from './metrics.js';
import { type DeclaredRoute } from '../routes/policy.js';
import { json } from '../routes/routing.js';
import { send } from '../koa/send.js';

export interface OperationsOptions {
  /** Whether the store answers right now (a ping for MongoDB; always for the memory store). */
  readonly ready: () => Promise<boolean>;
  readonly metrics?: HttpMetrics;
}

/** The operator routes' policies: health is open to anyone, metrics are operator data. */
export const operationsRoutes: readonly DeclaredRoute[] = [
  { method: 'get', path: '/healthz', access: 'open', writes: false },
  { method: 'get', path: '/readyz', access: 'open', writes: false },
  { method: 'get', path: '/metrics', access: 'metrics', writes: false },
];

const PROMETHEUS_TEXT = 'text/plain; version=0.0.4; charset=utf-8';

const LONGEST_OPERATIONS_PATH = '/healthz/'.length;

function pathName(path: string): string {
  return (path.length > 1 ? path.replace(/\/$/u, '') : path).toLowerCase();
}

/**
 * The operator routes, for orchestrators and monitoring rather than clients: `/healthz` (the process
 * answers), `/readyz` (the store answers too) and `/metrics` (Prometheus). Health is always open; metrics
 * need an admin or metrics key (or an admin's log-in) once keys are in use (the access middleware has already checked the key itself).
 */
export function operationsMiddleware(options: OperationsOptions): Middleware {
  return async (ctx, next) => {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return next();
    // Longer than '/healthz/' or '/metrics/': no operator route, and no need to normalise the path.
    if (ctx.path.length > LONGEST_OPERATIONS_PATH) return next();
    const path = pathName(ctx.path);
    const state = ctx.state as { metricsRoute?: string };
    switch (path) {
      case '/healthz':
        state.metricsRoute = path;
        send(ctx, json({ status: 'ok' }));
        return undefined;
      case '/readyz':
        state.metricsRoute = path;
        send(
          ctx,
          (await options.ready())
            ? json({ status: 'ready' })
            : json({ status: 'unavailable', message: 'The data store does not answer' }, 503),
        );
        return undefined;
      case '/metrics': {
        if (options.metrics === undefined) return next();
        state.metricsRoute = path;
        const access = accessOf(ctx);
        // While keys are required only an admin (key or log-in) or a metrics key reads metrics.
        const decision =
          access?.key !== undefined
            ? decideAccess(access.key, 'read', { scope: 'metrics' })
            : access?.session !== undefined && access.required
              ? decideSessionAccess(access.session, 'read', { scope: 'metrics' })
              : access?.required === true
                ? ({ allowed: false, reason: 'Only an admin or a metrics key may read this' } as const)
                : undefined;
        if (decision !== undefined && !decision.allowed) {
          forbidden(ctx, decision.reason);
          return undefined;
        }
        ctx.status = 200;
        ctx.type = PROMETHEUS_TEXT;
        ctx.body = `${await options.metrics.scrape()}${await runtimeMetrics()}`;
        return undefined;
      }
      default:
        return next();
    }
  };
}
