import { COMMIT_FEED, type CodeHostConfig, type CommitFeed, MAX_CODE_HOST_TIMEOUT_MS } from '@hortus/core';
import { ContainerModule, inject, injectable } from 'inversify';

export const CODE_HOST_CONFIG = Symbol.for('hortus.CodeHostConfig');

export const COMMITS_PER_PAGE = 10;
export const COMMITS_BRANCH = 'main';
/** Ten commits are a few tens of kilobytes; a body beyond this is refused before it is held in memory. */
export const MAX_COMMITS_BODY_BYTES = 1024 * 1024;
/** Redirects followed within the code host's own origin (a renamed repository); never to another origin. */
const MAX_REDIRECTS = 3;

/**
 * The core's CommitFeed over the GitHub REST API (or any host that speaks it): one GET, no retry (the core
 * falls back to its cached copy). One deadline covers the whole exchange, headers and body, the body is
 * read up to MAX_COMMITS_BODY_BYTES, and redirects are followed only within the API's origin: a slow,
 * flooding or redirecting host costs at most the timeout and a megabyte.
 */
@injectable()
export class KyCommitFeed implements CommitFeed {
  constructor(@inject(CODE_HOST_CONFIG) private readonly config: CodeHostConfig) {}

  async recentCommits(): Promise<unknown> {
    const { repository, token, apiUrl } = this.config;
    if (repository === undefined)
      throw new Error('No code-host repository is configured (CODE_HOST_REPOSITORY)');
    const [owner = '', name = ''] = repository.split('/');
    const first = new URL(`${apiUrl}/repos/${encodeURIComponent(owner)}/${encodeURIComponent(name)}/commits`);
    first.searchParams.set('sha', COMMITS_BRANCH);
    first.searchParams.set('per_page', String(COMMITS_PER_PAGE));
    // ky is loaded with the first request: this package is loaded by every command, few ask the code host.
    const { default: ky } = await import('ky');
    const deadline = AbortSignal.timeout(Math.min(this.config.timeoutMs, MAX_CODE_HOST_TIMEOUT_MS));
    let url = first;
    for (let redirects = 0; ; redirects += 1) {
      const response = await ky.get(url, {
        headers: {
          Accept: 'application/vnd.github+json',
          'User-Agent': 'hortus',
          ...(token === undefined ? {} : { Authorization: `Bearer ${token}` }),
        },
        signal: deadline,
        timeout: false,
        retry: 0,
        redirect: 'manual',
        throwHttpErrors: false,
      });
      if (response.status >= 300 && response.status < 400) {
        await response.body?.cancel();
        const location = response.headers.get('location');
        const next = location === null ? undefined : new URL(location, url);
        if (next === undefined || next.origin !== first.origin || redirects >= MAX_REDIRECTS) {
          throw new Error(`The code host redirected to ${next?.origin ?? 'nowhere'}, which is not followed`);
        }
        url = next;
        continue;
      }
      if (!response.ok) {
        await response.body?.cancel();
        throw new Error(`The code host answered ${response.status}`);
      }
      const body: unknown = JSON.parse(await readCapped(response, MAX_COMMITS_BODY_BYTES, deadline));
      // Anything but a list is not a commit page; refusing it keeps the last good copy in the cache.
      if (!Array.isArray(body))
        throw new Error('The code host answered something other than a list of commits');
      return body;
    }
  }
}

/** Binds the core's CommitFeed to the code host's REST API; the HTTP transport's commits route uses it. */
export function commitFeedModule(config: CodeHostConfig): ContainerModule {
  return new ContainerModule(({ bind }) => {
    bind<CodeHostConfig>(CODE_HOST_CONFIG).toConstantValue(config);
    bind<CommitFeed>(COMMIT_FEED).to(KyCommitFeed).inSingletonScope();
  });
}

/** The body as text, refused (and the download cancelled) once it passes `maxBytes` or the deadline. */
async function readCapped(response: Response, maxBytes: number, deadline: AbortSignal): Promise<string> {
  const declared = Number(response.headers.get('content-length') ?? 0);
  if (declared > maxBytes) {
    await response.body?.cancel();
    throw new Error(`The code host's answer is larger than ${maxBytes} bytes`);
  }
  const reader = response.body?.getReader();
  if (reader === undefined) return '';
  const chunks: Uint8Array[] = [];
  let total = 0;
  const aborted = new Promise<never>((_resolve, reject) => {
    const fail = (): void => reject(new Error('The code host did not send its answer in time'));
    if (deadline.aborted) fail();
    else deadline.addEventListener('abort', fail, { once: true });
  });
  // The reader rejects too when the deadline aborts the request; this race also covers a stalled stream.
  aborted.catch(() => undefined);
  try {
    for (;;) {
      const { done, value } = await Promise.race([reader.read(), aborted]);
      if (done) break;
      total += value.byteLength;
      if (total > maxBytes) throw new Error(`The code host's answer is larger than ${maxBytes} bytes`);
      chunks.push(value);
    }
  } catch (error) {
    await reader.cancel().catch(() => undefined);
    throw error;
  }
  return Buffer.concat(chunks).toString('utf8');
}
