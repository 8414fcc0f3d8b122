import { request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';

/** Requests the way hostile clients send them: any Host, raw bytes, sockets held open. */

export interface RawReply {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly text: string;
}

/** A request through node:http, which (unlike fetch) may name any Host and send raw bytes as the body. */
export function raw(
  url: string,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: Buffer | string,
): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(`${url}${path}`, { method, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({
          status: response.statusCode ?? 0,
          headers: response.headers,
          text: Buffer.concat(chunks).toString('utf8'),
        }),
      );
      response.on('error', reject);
    });
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

export function portOf(url: string): number {
  return Number(new URL(url).port);
}

/** Opens a TCP connection and resolves once connected. */
export function openSocket(url: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(portOf(url), '127.0.0.1', () => resolve(socket));
    socket.once('error', reject);
  });
}

/** Everything the server sends on a socket until it closes it, and how long that took. */
export function untilClosed(socket: Socket): Promise<{ text: string; ms: number }> {
  const started = performance.now();
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', () => undefined);
    socket.once('close', () =>
      resolve({ text: Buffer.concat(chunks).toString('utf8'), ms: performance.now() - started }),
    );
  });
}

export function deep(levels: number): string {
  return `${'['.repeat(levels)}1${']'.repeat(levels)}`;
}
