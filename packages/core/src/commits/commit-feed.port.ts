/** The ten newest commits of the configured repository's main branch, as the code host answers them. */
export interface CommitFeed {
  /** Rejects when the code host fails or times out. */
  recentCommits(): Promise<unknown>;
}

export const COMMIT_FEED = Symbol.for('hortus.CommitFeed');

/** Where the CommitFeed asks: read with the HTTP settings (CODE_HOST_*), whose CSP names the same host. */
export interface CodeHostConfig {
  /** Base URL of the code host's REST API; tests point it at a fake host on 127.0.0.1. */
  readonly apiUrl: string;
  /** `owner/name` of the repository whose main branch is passed through; unset answers the route's 500. */
  readonly repository?: string;
  readonly token?: string;
  readonly timeoutMs: number;
}

/** The longest CODE_HOST_TIMEOUT_MS: the commits route's caller waits at most this long. */
export const MAX_CODE_HOST_TIMEOUT_MS = 5000;
