import { type CommitFeed } from '@hortus/core';
import { inject, injectable } from 'inversify';
import ky from 'ky';
import { type CodeHostConfig, MAX_CODE_HOST_TIMEOUT_MS } from './config.js';

export const CODE_HOST_CONFIG = Symbol.for('hortus.http.CodeHostConfig');

export const COMMITS_PER_PAGE = 10;
export const COMMITS_BRANCH = 'main';

/**
 * The core's CommitFeed over the GitHub REST API (or any host that speaks it): one GET, no retry (the core
 * falls back to its cached copy), at most five seconds.
 */
@injectable()
export class KyCommitFeed implements CommitFeed {
  constructor(@inject(CODE_HOST_CONFIG) private readonly config: CodeHostConfig) {}

  async recentCommits(): Promise<unknown> {
    const { repository, token, apiUrl } = this.config;
    if (repository === undefined)
      throw new Error('No code-host repository is configured (CODE_HOST_REPOSITORY)');
    const [owner = '', name = ''] = repository.split('/');
    const url = `${apiUrl}/repos/${encodeURIComponent(owner)}/${encodeURIComponent(name)}/commits`;
    const body = await ky
      .get(url, {
        searchParams: { sha: COMMITS_BRANCH, per_page: COMMITS_PER_PAGE },
        headers: {
          Accept: 'application/vnd.github+json',
          'User-Agent': 'hortus',
          ...(token === undefined ? {} : { Authorization: `Bearer ${token}` }),
        },
        timeout: Math.min(this.config.timeoutMs, MAX_CODE_HOST_TIMEOUT_MS),
        retry: 0,
      })
      .json<unknown>();
    // Anything but a list is not a commit page; refusing it keeps the last good copy in the cache.
    if (!Array.isArray(body))
      throw new Error('The code host answered something other than a list of commits');
    return body;
  }
}
