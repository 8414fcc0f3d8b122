import { Readable } from 'node:stream';
import { type Context } from 'koa';
import { type Outgoing, outgoingOf } from '../exchange/answer.js';
import { type Reply, type RouteErrorPolicy } from '../routes/routing.js';

/** Sets headers given as name, value, …; Set-Cookie is added to, never replaced. */
export function setHeaderPairs(ctx: Context, headers: readonly string[]): void {
  for (let index = 0; index < headers.length; index += 2) {
    const name = headers[index] ?? '';
    const value = headers[index + 1] ?? '';
    if (name.toLowerCase() === 'set-cookie') ctx.append(name, value);
    else ctx.set(name, value);
  }
}

/** Writes an exchange's answer onto Koa's context (Koa adds the charset and the Content-Length). */
export function writeOutgoing(ctx: Context, out: Outgoing): void {
  const { body } = out;
  if (body === undefined) {
    // Null first, then the status: Koa would otherwise turn an empty 200 into a 204.
    ctx.body = null;
    ctx.status = out.status;
  } else {
    ctx.status = out.status;
    if (out.type !== undefined) ctx.type = out.type;
    if (out.filename !== undefined) ctx.attachment(out.filename);
    if (typeof body === 'string') ctx.body = body;
    // A Buffer body: Koa sends its Content-Length.
    else if (body instanceof Uint8Array)
      ctx.body = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
    // A failure after the first bytes cannot change the status any more: the stream ends with an error,
    // and the client sees a truncated body instead of a complete-looking one.
    else ctx.body = Readable.from(body);
  }
  setHeaderPairs(ctx, out.headers);
}

/** Writes a reply, as the exchange writes it out. */
export function send(ctx: Context, reply: Reply): void {
  writeOutgoing(ctx, outgoingOf(reply, ctx.secure));
}

/** The error middleware reads the policy of the route that is running; outside a route it uses its own. */
export function errorPolicyOf(ctx: Context): RouteErrorPolicy | undefined {
  return (ctx.state as { errorPolicy?: RouteErrorPolicy }).errorPolicy;
}
