/** The ten newest commits of the configured repository's main branch, as the code host answers them. */
export interface CommitFeed {
  /** Rejects when the code host fails or times out. */
  recentCommits(): Promise<unknown>;
}

export const COMMIT_FEED = Symbol.for('hortus.CommitFeed');
