/**
 * How long a look at `PRAGMA data_version` is trusted: another connection's commit (the CLI, another
 * server) shows in revisions at most this late. Asking is a read transaction with its file locks, which
 * cost a fifth of a poll's CPU when asked at every poll; polls arriving together share one look.
 */
export const DATA_VERSION_TRUSTED_MS = 1;

/**
 * Revision texts one handle has read, kept while no other connection committed: `PRAGMA data_version`
 * changes exactly then, and asking it reads no page of the file, where a lookup reads the revisions table.
 * This handle's own writes do not change it; SqliteRevisions.bump forgets what they touch instead, so
 * they show at once. The connection owns it and resets it whenever its handle changes.
 */
export class RevisionCache {
  dataVersion: unknown = undefined;
  /** performance.now() just before data_version was last asked. */
  checkedAt = Number.NEGATIVE_INFINITY;
  readonly texts = new Map<string, string>();

  reset(): void {
    this.dataVersion = undefined;
    this.checkedAt = Number.NEGATIVE_INFINITY;
    this.texts.clear();
  }
}
