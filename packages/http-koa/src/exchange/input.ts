import { type IncomingHttpHeaders } from 'node:http';
import { type Caller } from '@hortus/core';
import { type RouteInput, type RouteSpec } from '../routes/routing.js';
import { validate } from '../routes/schemas.js';

/** What a door reads of a request beside its query, parameters and body, for the route's input. */
export interface RequestFacts {
  /** The client's address (from X-Forwarded-For behind a trusted proxy). */
  readonly clientAddress: string;
  readonly headers: IncomingHttpHeaders;
  /** The Host the client named, with its port, the host name alone, and whether it came over TLS. */
  readonly host: string;
  readonly hostname: string;
  readonly secure: boolean;
}

/** Whether a request came over TLS: its socket is a TLS socket. */
export function encryptedSocket(socket: object): boolean {
  return (socket as { encrypted?: unknown }).encrypted === true;
}

/** The first of a header's comma-separated values, as Koa reads X-Forwarded-Host and -Proto. */
function firstValue(value: string | string[] | undefined): string {
  const text = Array.isArray(value) ? value.join(',') : (value ?? '');
  const comma = text.indexOf(',');
  return (comma === -1 ? text : text.slice(0, comma)).trim();
}

/**
 * The host and scheme of a request, read as Koa reads them (`ctx.host`, `ctx.hostname`, `ctx.secure`: the
 * forwarded headers only behind a trusted proxy, where the edge's host check has already dropped
 * X-Forwarded-Host from untrusted peers), when they are plain: a name or IPv4 address with an optional
 * port. Anything Koa reads through a URL parser (user info, an IPv6 literal) answers undefined, so a lane
 * leaves that request to Koa rather than read it another way.
 */
export function plainHostOf(
  headers: IncomingHttpHeaders,
  encrypted: boolean,
  proxy: boolean,
): Pick<RequestFacts, 'host' | 'hostname' | 'secure'> | undefined {
  const forwarded = proxy ? headers['x-forwarded-host'] : undefined;
  const host = firstValue(forwarded === undefined || forwarded === '' ? headers.host : forwarded);
  if (host.includes('@') || host.startsWith('[')) return undefined;
  const colon = host.indexOf(':');
  const proto = proxy && !encrypted ? firstValue(headers['x-forwarded-proto']).toLowerCase() : '';
  return {
    host,
    hostname: colon === -1 ? host : host.slice(0, colon),
    secure: encrypted || proto === 'https',
  };
}

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
