import bodyParser from 'koa-bodyparser';
import { type Middleware } from 'koa';
import { EdgeError, isClientStreamError } from '../exchange/errors.js';

export const DEFAULT_BODY_TIMEOUT_MS = 30_000;
/** JSON nested deeper than this is refused at the edge: no route's data comes near it. */
export const MAX_JSON_DEPTH = 32;
const supportedEncodings = new Set(['identity', 'gzip', 'deflate', 'br']);

/** The media types read as JSON (koa-bodyparser's JSON types; anything else leaves the body empty). */
const jsonTypes = [
  'application/json',
  'application/json-patch+json',
  'application/vnd.api+json',
  'application/csp-report',
  'application/scim+json',
];

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Whether JSON text nests objects and arrays deeper than `max`, read in one pass over the text before it is
 * parsed: a megabyte of `[[[…` is refused for the price of reading it, not of building it.
 */
export function textNestedDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    if (inString) {
      if (code === BACKSLASH) index += 1;
      else if (code === QUOTE) inString = false;
    } else if (code === QUOTE) {
      inString = true;
    } else if (code === OPEN_BRACE || code === OPEN_BRACKET) {
      depth += 1;
      if (depth > max) return true;
    } else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
      depth -= 1;
    }
  }
  return false;
}

/** RFC 8259 whitespace, then an object or an array: the only bodies routes take. */
const objectOrArray = /^[ \t\n\r]*[[{]/u;
/** `__proto__` as a key, possibly escaped: only then is the parsed value searched for one. */
const suspectProto =
  /"(?:_|\\u005[Ff])(?:_|\\u005[Ff])(?:p|\\u0070)(?:r|\\u0072)(?:o|\\u006[Ff])(?:t|\\u0074)(?:o|\\u006[Ff])(?:_|\\u005[Ff])(?:_|\\u005[Ff])"\s*:/u;

/** A JSON failure as the body parser's own: a 400 SyntaxError, answered "not valid JSON". */
function invalidJson(message: string): SyntaxError {
  return Object.assign(new SyntaxError(message), { status: 400 });
}

function hasOwnProto(value: unknown): boolean {
  const stack: unknown[] = [value];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    if (typeof item !== 'object' || item === null) continue;
    if (Object.hasOwn(item, '__proto__')) return true;
    stack.push(...Object.values(item));
  }
  return false;
}

/**
 * A JSON body's text to its value: the depth is checked on the text first (MAX_JSON_DEPTH), then it must be
 * an object or array, and no object may carry a `__proto__` key. An empty body is an empty object.
 */
export function parseJsonBody(text: string): unknown {
  if (text === '') return {};
  if (textNestedDeeperThan(text, MAX_JSON_DEPTH)) {
    throw new EdgeError(400, `Request body is nested deeper than ${MAX_JSON_DEPTH} levels`);
  }
  if (!objectOrArray.test(text)) throw invalidJson('invalid JSON, only supports object and array');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw invalidJson(error instanceof Error ? error.message : 'invalid JSON');
  }
  if (suspectProto.test(text) && hasOwnProto(value)) {
    throw invalidJson('Object contains forbidden prototype property');
  }
  return value;
}

const noMore = (): Promise<void> => Promise.resolve();

/**
 * The JSON body parser with the edge's limits: a body arriving slower than `timeoutMs` is answered 408 and
 * its connection closed (half-sent bodies must not pin memory), an unknown Content-Encoding is a 415 naming
 * it, a body that does not decompress a 400, and JSON nested deeper than MAX_JSON_DEPTH a 400 before it is
 * parsed. The body is read as text (koa-bodyparser's reading, limits and decompression) and parsed here.
 */
export function jsonBodyParser(limitBytes: number, timeoutMs: number): Middleware {
  const read = bodyParser({
    enableTypes: ['text'],
    extendTypes: { text: jsonTypes },
    textLimit: `${limitBytes}b`,
  });
  return async (ctx, next) => {
    const encoding = ctx.get('Content-Encoding').trim().toLowerCase() || 'identity';
    if (!supportedEncodings.has(encoding)) {
      throw new EdgeError(
        415,
        `Content-Encoding "${encoding.slice(0, 64)}" is not supported: send identity, gzip, deflate or br`,
      );
    }
    // Content codings are case-insensitive; the decompressing library compares them as written.
    ctx.req.headers['content-encoding'] = encoding;
    // Only JSON is read; any other body (text/plain among them) is left unread, as an empty object.
    if (ctx.request.is(jsonTypes) === false) {
      ctx.request.body = {};
      await next();
      return;
    }
    const reading = read(ctx, noMore);
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new EdgeError(
              408,
              `Request body was not received within ${timeoutMs} ms`,
              'request body timed out',
            ),
          ),
        timeoutMs,
      );
    });
    // The losing side of the race settles later; its outcome is already answered.
    reading.catch(() => undefined);
    try {
      await Promise.race([reading, timedOut]);
    } catch (error) {
      const undecodable =
        encoding !== 'identity' &&
        !(error instanceof EdgeError) &&
        (error as { status?: unknown }).status === undefined &&
        !isClientStreamError(error);
      if (!undecodable) throw error;
      throw new EdgeError(400, `Request body could not be decompressed (${encoding})`, 'undecodable body');
    } finally {
      clearTimeout(timer);
    }
    const text: unknown = ctx.request.body;
    ctx.request.body = parseJsonBody(typeof text === 'string' ? text : '');
    await next();
  };
}
