import { createReadStream, realpathSync, statSync } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import { extname, join, posix, sep } from 'node:path';
import type { Context, Middleware } from 'koa';

/**
 * The content policy of the client's pages: everything from this origin (the build's scripts and styles,
 * the API it calls once served here), inline styles (React components and chart libraries set them), images
 * and fonts from data URLs, and reads from the code host whose commits the server passes on (the web
 * client's release notes ask it directly); no plug-ins, no framing, no other origins. CLIENT_CSP replaces
 * it, for a build that calls other services.
 */
export function clientCsp(codeHostOrigin?: string): string {
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    `connect-src 'self'${codeHostOrigin === undefined ? '' : ` ${codeHostOrigin}`}`,
    "worker-src 'self' blob:",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

export const DEFAULT_CLIENT_CSP = clientCsp('https://api.github.com');

export interface ClientSettings {
  /** The single-page build's directory (holding index.html). */
  readonly dir: string;
  readonly csp: string;
}

const contentTypes: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.webmanifest': 'application/manifest+json',
  '.txt': 'text/plain; charset=utf-8',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.avif': 'image/avif',
  '.svg': 'image/svg+xml',
  '.ico': 'image/x-icon',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.ttf': 'font/ttf',
  '.otf': 'font/otf',
  '.pdf': 'application/pdf',
  '.wasm': 'application/wasm',
};

/** A build tool's content hash in a file name (`main.0214b58c.js`, `logo.6b539340967d4f21ee42.pdf`). */
const hashedName = /\.[0-9a-f]{8,}\.[a-z0-9]+$/iu;
const YEAR_SECONDS = 31_536_000;

/** Paths that stay the server's own, whatever the build holds. */
function belongsToServer(path: string): boolean {
  const lower = path.toLowerCase();
  return (
    lower === '/api' ||
    lower.startsWith('/api/') ||
    ['/healthz', '/readyz', '/metrics'].includes(lower.replace(/\/+$/u, ''))
  );
}

/** The client's directory, checked once at start: it must exist and hold index.html. */
export function checkClientDir(dir: string): string | undefined {
  try {
    const root = realpathSync(dir);
    if (!statSync(root).isDirectory()) return `CLIENT_DIR must be a directory, got "${dir}"`;
    if (!statSync(join(root, 'index.html')).isFile()) return `CLIENT_DIR must hold index.html: "${dir}"`;
    return undefined;
  } catch {
    return `CLIENT_DIR must be a directory holding index.html, got "${dir}"`;
  }
}

/**
 * Serves a single-page build under `/` for GET and HEAD; the API (`/api`), health and metrics stay the
 * server's. A path naming a file in the build gets that file: hashed assets cached for a year (their name
 * changes with their content), everything else revalidated (`no-cache`, with ETag), so a new build is seen
 * at once. A path that names no file and has no extension is a page of the client's own router: it gets
 * index.html (the history fallback). Directories are never listed, dot-files never served, and a path
 * that leaves the directory (`..`, encoded or through a link) is answered 404.
 */
export function clientMiddleware(settings: ClientSettings): Middleware {
  const root = realpathSync(settings.dir);
  const inside = (file: string): boolean => file === root || file.startsWith(root + sep);

  /** The file a URL path names, inside the build, or undefined. */
  const fileOf = async (
    urlPath: string,
  ): Promise<{ file: string; size: number; mtime: Date } | undefined> => {
    const normalised = posix.normalize(urlPath);
    if (normalised.split('/').some((segment) => segment.startsWith('.'))) return undefined;
    const candidate = join(root, normalised);
    if (!inside(candidate)) return undefined;
    try {
      const real = await realpath(candidate);
      if (!inside(real)) return undefined;
      const info = await stat(real);
      return info.isFile() ? { file: real, size: info.size, mtime: info.mtime } : undefined;
    } catch {
      return undefined;
    }
  };

  // Outside the server's paths the build is all there is: what it does not hold is 404, needing no key.
  const notFound = (ctx: Context): undefined => {
    ctx.status = 404;
    ctx.type = 'text/plain';
    ctx.body = 'Not found';
    return undefined;
  };

  return async (ctx, next) => {
    if ((ctx.method !== 'GET' && ctx.method !== 'HEAD') || belongsToServer(ctx.path)) return next();
    let urlPath: string;
    try {
      urlPath = decodeURIComponent(ctx.path);
    } catch {
      return notFound(ctx);
    }
    if (urlPath.includes('\0') || urlPath.includes('\\')) return notFound(ctx);
    // Dot-files and `..` are never the client's: no fallback page either.
    if (urlPath.split('/').some((segment) => segment.startsWith('.'))) return notFound(ctx);
    let found = await fileOf(urlPath === '/' ? '/index.html' : urlPath);
    let page = found !== undefined && found.file === join(root, 'index.html');
    if (found === undefined) {
      // A file that is not there (a stale asset, a typo) is a 404, never the page in its place.
      if (extname(urlPath) !== '') return notFound(ctx);
      found = await fileOf('/index.html');
      page = true;
    }
    if (found === undefined) return notFound(ctx);
    ctx.status = 200;
    ctx.type = contentTypes[extname(found.file).toLowerCase()] ?? 'application/octet-stream';
    ctx.set(
      'Cache-Control',
      !page && hashedName.test(found.file) ? `public, max-age=${YEAR_SECONDS}, immutable` : 'no-cache',
    );
    const tag = `W/"${found.size.toString(16)}-${found.mtime.getTime().toString(16)}"`;
    ctx.set('ETag', tag);
    ctx.lastModified = found.mtime;
    if (page) {
      ctx.set('Content-Security-Policy', settings.csp);
      // The page may be embedded nowhere, and says nothing about where the visitor came from.
      ctx.set('X-Frame-Options', 'DENY');
    }
    const named = ctx
      .get('If-None-Match')
      .split(',')
      .map((entry) => entry.trim().replace(/^W\//u, ''));
    if (named.includes(tag.slice(2))) {
      ctx.status = 304;
      return undefined;
    }
    ctx.length = found.size;
    if (ctx.method === 'HEAD') return undefined;
    ctx.body = createReadStream(found.file);
    return undefined;
  };
}
