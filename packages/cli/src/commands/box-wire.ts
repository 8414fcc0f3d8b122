import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';

/**
 * The HTTP/1.1 exchanges of a box, written byte for byte as the firmware's HTTP client writes them (COMPAT
 * "Boxes", the wire). Node's HTTP client would choose its own header set and order and refuses what the box
 * does on TLS (an IP address as SNI), so the request is written by hand on a raw socket.
 */

/** What the box's HTTP client sends before a request's own headers, after `Host`, in this order. */
export const HTTP_CLIENT_HEADERS: readonly (readonly [name: string, value: string])[] = [
  ['User-Agent', 'ESP32HTTPClient'],
  ['Connection', 'keep-alive'],
  ['Accept-Encoding', 'identity;q=1,chunked;q=0.1,*;q=0'],
];

/** The box's HTTP client gives up on a connection or an answer after 5 s. */
const TIMEOUT_MS = 5000;
/** More than any answer a box reads; a server that sends more is cut off rather than buffered. */
const MAX_ANSWER_BYTES = 1024 * 1024;

export interface BoxRequest {
  readonly method: 'GET' | 'POST';
  /** http:// or https://, as the firmware was given it (`https://<host><url>/action/...`). */
  readonly url: string;
  /** The request's own headers, in the order the firmware adds them. */
  readonly headers: readonly (readonly [name: string, value: string])[];
  readonly body?: string;
}

export interface BoxAnswer {
  /** 0 when there was no answer (refused, TLS failed, timed out); `error` says why. */
  readonly status: number;
  readonly text: string;
  readonly error?: string;
  /** The TLS version negotiated, for an https:// request that got that far. */
  readonly tls?: string;
}

interface Target {
  readonly secure: boolean;
  readonly host: string;
  readonly port: number;
  readonly path: string;
}

/**
 * The URL split as the box's client splits it: the host as written (an IP address stays one), the port
 * from the URL or the scheme's, the path with its query (`/` when empty).
 */
function targetOf(url: string): Target {
  const match = /^(https?):\/\/([^/?#]*)([^#]*)/iu.exec(url);
  if (match === null) throw new Error(`not an http(s) address: ${url}`);
  const secure = match[1]!.toLowerCase() === 'https';
  const authority = match[2]!;
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/u.exec(authority);
  const plain = /^([^:]*)(?::(\d+))?$/u.exec(authority);
  const host = bracketed?.[1] ?? plain?.[1] ?? authority;
  const port = Number(bracketed?.[2] ?? plain?.[2] ?? (secure ? 443 : 80));
  return { secure, host, port, path: match[3] === '' ? '/' : match[3]! };
}

/**
 * The request head: request line, `Host` (with the port unless it is 80 or 443, whatever the scheme), the
 * client's three headers, the request's own, then `Content-Length` last and only for a body.
 */
export function requestHead(request: BoxRequest): string {
  const target = targetOf(request.url);
  // An IPv6 address keeps its brackets, as in the URL: `Host: ::1:8080` names no host.
  const name = target.host.includes(':') ? `[${target.host}]` : target.host;
  const host = target.port === 80 || target.port === 443 ? name : `${name}:${target.port}`;
  const lines = [`${request.method} ${target.path} HTTP/1.1`, `Host: ${host}`];
  for (const [name, value] of [...HTTP_CLIENT_HEADERS, ...request.headers]) lines.push(`${name}: ${value}`);
  const body = Buffer.from(request.body ?? '', 'utf8');
  if (body.length > 0) lines.push(`Content-Length: ${body.length}`);
  return `${lines.join('\r\n')}\r\n\r\n`;
}

/** The socket's own SNI setter, which `tls.connect` itself uses; @types/node does not declare it. */
interface NamedSocket {
  setServername(name: string): void;
}

/**
 * A new connection per request. TLS as the box's mbedTLS makes it: 1.2 only, no certificate check, no
 * ALPN, no session resumption, and the host as SNI also when it is an IP address. `tls.connect` warns
 * (DEP0123) when `servername` is an IP address; the name set on the socket before its handshake starts
 * (once the TCP connection is up) is sent without a warning. The capture test checks that it is sent.
 */
function open(target: Target): Socket {
  if (!target.secure) return netConnect({ host: target.host, port: target.port });
  const socket = tlsConnect({
    host: target.host,
    port: target.port,
    minVersion: 'TLSv1.2',
    maxVersion: 'TLSv1.2',
    rejectUnauthorized: false,
  });
  (socket as unknown as NamedSocket).setServername(target.host);
  return socket;
}

interface Parsed {
  readonly status: number;
  readonly text: string;
}

/** The answer once complete: by Content-Length, chunked, or (neither) at the end of the connection. */
function parse(bytes: Buffer, ended: boolean): Parsed | undefined {
  const headEnd = bytes.indexOf('\r\n\r\n');
  if (headEnd < 0) return undefined;
  const head = bytes.subarray(0, headEnd).toString('latin1').split('\r\n');
  const status = /^HTTP\/1\.[01] (\d{3})/u.exec(head[0] ?? '');
  if (status === null) throw new Error(`not an HTTP answer: ${JSON.stringify(head[0]?.slice(0, 80))}`);
  const headers = new Map(
    head.slice(1).map((line) => {
      const colon = line.indexOf(':');
      return [line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim()] as const;
    }),
  );
  const code = Number(status[1]);
  const body = bytes.subarray(headEnd + 4);
  if (code === 204 || code === 304 || (code >= 100 && code < 200)) return { status: code, text: '' };
  if (/chunked/iu.test(headers.get('transfer-encoding') ?? '')) {
    const chunks: Buffer[] = [];
    let at = 0;
    for (;;) {
      const lineEnd = body.indexOf('\r\n', at);
      if (lineEnd < 0) return undefined;
      const size = Number.parseInt(body.subarray(at, lineEnd).toString('latin1'), 16);
      if (Number.isNaN(size)) throw new Error('a broken chunked answer');
      if (size === 0) return { status: code, text: Buffer.concat(chunks).toString('utf8') };
      if (body.length < lineEnd + 2 + size + 2) return undefined;
      chunks.push(body.subarray(lineEnd + 2, lineEnd + 2 + size));
      at = lineEnd + 2 + size + 2;
    }
  }
  const length = headers.get('content-length');
  if (length !== undefined) {
    const size = Number(length);
    return body.length >= size ? { status: code, text: body.subarray(0, size).toString('utf8') } : undefined;
  }
  return ended ? { status: code, text: body.toString('utf8') } : undefined;
}

/**
 * One request as the box makes it: the head in one write and the body in a second, then the answer read
 * and the connection closed (the box's client says keep-alive, but makes a new connection every time).
 */
export function exchange(request: BoxRequest): Promise<BoxAnswer> {
  const target = targetOf(request.url);
  return new Promise((resolve) => {
    const socket = open(target);
    let received = Buffer.alloc(0);
    let done = false;
    let negotiated: string | undefined;
    const finish = (answer: BoxAnswer): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(negotiated === undefined ? answer : { ...answer, tls: negotiated });
    };
    const fail = (error: string): void => finish({ status: 0, text: '', error });
    const timer = setTimeout(() => fail(`no answer within ${TIMEOUT_MS / 1000} s`), TIMEOUT_MS);
    const check = (ended: boolean): void => {
      if (done) return;
      try {
        const parsed = parse(received, ended);
        if (parsed !== undefined) finish(parsed);
        else if (ended) fail('the connection closed before a whole answer');
      } catch (error) {
        fail(error instanceof Error ? error.message : String(error));
      }
    };
    socket.once(target.secure ? 'secureConnect' : 'connect', () => {
      if ('getProtocol' in socket && typeof socket.getProtocol === 'function') {
        negotiated = (socket.getProtocol() as string | null) ?? undefined;
      }
      socket.write(requestHead(request));
      if (request.body !== undefined && request.body !== '') socket.write(request.body);
    });
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      if (received.length > MAX_ANSWER_BYTES) fail('an answer of over 1 MiB');
      else check(false);
    });
    socket.on('end', () => check(true));
    socket.on('error', (error: NodeJS.ErrnoException) =>
      fail(`${error.code === undefined ? '' : `${error.code}: `}${error.message.split('\n')[0] ?? ''}`),
    );
    socket.on('close', () => check(true));
  });
}
