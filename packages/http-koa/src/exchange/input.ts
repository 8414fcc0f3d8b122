import { type Caller } from '@hortus/core';
import { type RouteInput, type RouteSpec } from '../routes/routing.js';
import { validate } from '../routes/schemas.js';
import { type RequestFacts } from './request.js';

/** What a route's input is read from: the parsed query, the path parameters and the body. */
export interface InputParts {
  readonly query: Record<string, unknown>;
  readonly params: Readonly<Record<string, string>>;
  readonly body: unknown;
}

/** Checks the parts against the route's schemas; a part that fails is an InvalidInputError (400). */
export function validateParts(route: RouteSpec, parts: InputParts): void {
  if (route.params !== undefined) validate(route.params, 'params', parts.params);
  if (route.query !== undefined) validate(route.query, 'query', parts.query);
  if (route.body !== undefined) validate(route.body, 'body', parts.body);
}

/** The one builder of a route's input, whichever door the request came through. */
export function routeInputOf(
  parts: InputParts,
  who: { readonly caller: Caller; readonly accessRequired: boolean },
  facts: RequestFacts,
): RouteInput {
  return {
    query: parts.query,
    params: parts.params,
    body: parts.body as Record<string, unknown>,
    caller: who.caller,
    accessRequired: who.accessRequired,
    clientAddress: facts.clientAddress,
    headers: facts.headers,
    hostname: facts.hostname,
    host: facts.host,
    secure: facts.secure,
  };
}
