import { createReadStream } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { extname, join } from 'node:path';
import type { Middleware } from 'koa';

/** Where the console is answered; `/console` alone is sent there. */
export const CONSOLE_PATH = '/console/';

/**
 * The console's policy: its own script and style sheet only, no inline script or style (the build has
 * none), requests to this origin only, nothing from elsewhere, no framing.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

export interface ConsoleSettings {
  /** The console's build (packages/console/dist), holding index.html. */
  readonly dir: string;
}

const contentTypes: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};
/** The build names its script and style sheet by their content (`main.650fc7d1bf.css`). */
const hashedName = /^[a-z]+\.[0-9a-f]{10}\.(js|css)$/u;
const YEAR_SECONDS = 31_536_000;

/**
 * Serves the console under /console/ (GET and HEAD): index.html for /console/ itself and for any path
 * without an extension, the build's hashed files by name (cached a year), and /console/status.json,
 * whether the server wants a credential, which the page shows before anyone signs in. The files need
 * no key; the page signs in, then its API requests carry the session cookie. Only names the build made
 * are served: nothing else of the directory, no path outside it.
 */
export function consoleMiddleware(settings: ConsoleSettings, required: () => Promise<boolean>): Middleware {
  return async (ctx, next) => {
    const lower = ctx.path.toLowerCase();
    if (lower !== '/console' && !lower.startsWith(CONSOLE_PATH)) return next();
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return next();
    if (ctx.path === '/console') {
      ctx.status = 308;
      ctx.redirect(CONSOLE_PATH);
      return undefined;
    }
    const name = ctx.path.slice(CONSOLE_PATH.length);
    if (name === 'status.json') {
      ctx.set('Cache-Control', 'no-store');
      ctx.body = { accessControl: await required() };
      return undefined;
    }
    const asset = hashedName.test(name);
    if (!asset && extname(name) !== '') {
      ctx.status = 404;
      ctx.type = 'text/plain';
      ctx.body = 'Not found';
      return undefined;
    }
    const file = join(settings.dir, asset ? name : 'index.html');
    let size: number;
    try {
      // Only what the build wrote: a listing, not the path, decides (no `..`, links or other files).
      if (asset && !(await readdir(settings.dir)).includes(name)) throw new Error('not in the build');
      size = (await stat(file)).size;
    } catch {
      ctx.status = 404;
      ctx.type = 'text/plain';
      ctx.body = asset ? 'Not found' : 'The console is not built: run pnpm install (or pnpm build)';
      return undefined;
    }
    ctx.status = 200;
    ctx.type = contentTypes[extname(file)] ?? 'application/octet-stream';
    ctx.set('Cache-Control', asset ? `public, max-age=${YEAR_SECONDS}, immutable` : 'no-cache');
    if (!asset) ctx.set('Content-Security-Policy', CONSOLE_CSP);
    ctx.length = size;
    if (ctx.method === 'HEAD') return undefined;
    ctx.body = createReadStream(file);
    return undefined;
  };
}
