/**
 * A store's life as the application sees it. Every store module binds it beside its repositories, so the
 * composition root starts, checks and closes whichever store it chose without knowing which one it is.
 */
export interface StoreLifecycle {
  /** Connects and prepares (indexes, schema) before anything is served; rejects when unusable. */
  start(): Promise<void>;
  /** Releases connections and files; called once at shutdown. */
  close(): Promise<void>;
  /** Whether the store answers right now (readiness). */
  ping(): Promise<boolean>;
  /** What start found that the operator should hear about (data files other users may read); one sentence each. */
  startWarnings?(): readonly string[];
  /**
   * One-time work only a server does at start, before it listens (the SQLite file's switch to incremental
   * vacuum); answers what it did, for the log. CLI commands never call it.
   */
  prepareToServe?(): Promise<
    readonly {
      readonly level: 'info' | 'warn';
      readonly event: string;
      readonly fields: Readonly<Record<string, unknown>>;
    }[]
  >;
  /** A consistent copy into a new file while the store serves; only a store that is one file has it. */
  backup?(file: string): Promise<{ readonly totalPages: number }>;
}

export const STORE_LIFECYCLE = Symbol.for('hortus.StoreLifecycle');
