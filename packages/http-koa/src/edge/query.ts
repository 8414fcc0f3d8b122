import { type Context, type Middleware } from 'koa';
import { EdgeError } from '../exchange/errors.js';

/**
 * The most parameters a query may have. No route takes more than a handful; bounding the count before
 * anything is parsed keeps a query of thousands of repeated names (each repeat copying what came before in
 * some parsers) from costing the event loop seconds.
 */
export const MAX_QUERY_PARAMETERS = 64;

export const tooManyParametersMessage = `A query may have at most ${MAX_QUERY_PARAMETERS} parameters`;

/** Whether a query string (without `?`) has more than MAX_QUERY_PARAMETERS parameters; counts, parses nothing. */
export function tooManyParameters(search: string): boolean {
  let separators = 0;
  for (let index = search.indexOf('&'); index !== -1; index = search.indexOf('&', index + 1)) {
    separators += 1;
    if (separators >= MAX_QUERY_PARAMETERS) return true;
  }
  return false;
}

/** A query of plain names and values only: nothing to decode, so it is split rather than parsed. */
const plainQuery = /^[\w.~-]+=[\w.~-]*(?:&[\w.~-]+=[\w.~-]*)*$/u;

/**
 * The query of both request paths (Koa's chain and the poll lane): a repeated name gives an array,
 * `__proto__` is an ordinary name. Callers bound the count first (tooManyParameters).
 */
export function parseQuery(search: string): Record<string, unknown> {
  const query: Record<string, unknown> = {};
  if (search === '') return query;
  const plain = plainQuery.test(search);
  const parameters = plain ? undefined : new URLSearchParams(search);
  const pairs = parameters ?? search.split('&').map((pair) => pair.split('=') as [string, string]);
  for (const [name, value] of pairs) {
    const held = Object.hasOwn(query, name) ? query[name] : undefined;
    if (Array.isArray(held)) {
      (held as string[]).push(value);
      continue;
    }
    Object.defineProperty(query, name, {
      value: held === undefined ? value : [held, value],
      writable: true,
      enumerable: true,
      configurable: true,
    });
  }
  return query;
}

/** The parsed query of a request in the Koa chain, parsed once (the access guard and the route both read it). */
export function queryOf(ctx: Context): Record<string, unknown> {
  const state = ctx.state as { query?: Record<string, unknown> };
  state.query ??= parseQuery(ctx.querystring);
  return state.query;
}

/** Refuses (400) a query with more than MAX_QUERY_PARAMETERS parameters before anything parses it. */
export const queryBoundMiddleware: Middleware = (ctx, next) => {
  if (tooManyParameters(ctx.querystring)) throw new EdgeError(400, tooManyParametersMessage);
  return next();
};
