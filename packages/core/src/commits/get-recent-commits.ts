import { inject, injectable } from 'inversify';
import { CLOCK, type Clock } from '../shared/clock.port.js';
import { UpstreamError } from '../shared/errors.js';
import { CORE_SETTINGS, type CoreSettings } from '../shared/settings.js';
import { COMMIT_FEED, type CommitFeed } from './commit-feed.port.js';

/**
 * Serves the commit list from a cache so that polling clients do not exhaust the code host's rate limit,
 * asks the host at most once at a time, and falls back to the last good copy when the host fails. Once a
 * copy exists no caller waits for the host: an expired copy is answered while one refresh runs behind it
 * (stale-while-revalidate), so a slow or hostile host cannot hold requests open.
 * Bind it as a singleton: the cache lives in the instance.
 */
@injectable()
export class GetRecentCommits {
  private cached: { body: unknown; fetchedAt: number } | undefined;
  private inFlight: Promise<unknown> | undefined;

  constructor(
    @inject(COMMIT_FEED) private readonly feed: CommitFeed,
    @inject(CLOCK) private readonly clock: Clock,
    @inject(CORE_SETTINGS) private readonly settings: CoreSettings,
  ) {}

  async execute(): Promise<unknown> {
    const now = this.clock.now().getTime();
    if (this.cached !== undefined && now - this.cached.fetchedAt < this.settings.commitsCacheMs) {
      return this.cached.body;
    }
    this.inFlight ??= this.refresh().finally(() => {
      this.inFlight = undefined;
    });
    // refresh() never rejects while a copy exists, so the promise left running cannot go unhandled.
    return this.cached === undefined ? this.inFlight : this.cached.body;
  }

  private async refresh(): Promise<unknown> {
    try {
      const body = await this.feed.recentCommits();
      this.cached = { body, fetchedAt: this.clock.now().getTime() };
      return body;
    } catch (error) {
      if (this.cached !== undefined) return this.cached.body;
      throw new UpstreamError('An error occurred while fetching data from the code host', { cause: error });
    }
  }
}
