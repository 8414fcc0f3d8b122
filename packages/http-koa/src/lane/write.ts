import { type ServerResponse } from 'node:http';
import { type Outgoing } from '../exchange/outgoing.js';
import { securityHeaders } from '../edge/security.js';

const securityHeaderPairs = Object.entries(securityHeaders).flat();
/** The Content-Type Koa writes for the two types a lane answers in. */
const contentTypes: Readonly<Record<string, string>> = {
  'application/json': 'application/json; charset=utf-8',
  'text/plain': 'text/plain; charset=utf-8',
};

/**
 * Writes an exchange's answer on Node's response, with the headers the chain's middleware add to every
 * answer (request id, security headers, then `leading`: CORS, Vary). A lane answers text only (JSON, plain
 * text or nothing); false, writing nothing, for any other body, which the lane must answer as an error.
 */
export function writeOnResponse(
  response: ServerResponse,
  requestId: string,
  leading: readonly string[],
  out: Outgoing,
): boolean {
  const { body } = out;
  if (body !== undefined && typeof body !== 'string') return false;
  const type = out.type === undefined ? undefined : contentTypes[out.type];
  if (out.type !== undefined && type === undefined) return false;
  const headers: string[] = ['X-Request-Id', requestId, ...securityHeaderPairs, ...leading, ...out.headers];
  if (type !== undefined) headers.push('Content-Type', type);
  if (body !== undefined) headers.push('Content-Length', String(Buffer.byteLength(body)));
  response.writeHead(out.status, headers);
  response.end(body);
  return true;
}
