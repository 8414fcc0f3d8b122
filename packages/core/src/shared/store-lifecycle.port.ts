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
  /** The migrations applied to the store, read without changing anything (start is not needed). */
  schema?(): Promise<StoreSchema>;
}

/** A store's schema: the migrations applied to it, and the newest this Hortus knows. */
export interface StoreSchema {
  /** The newest migration applied; 0 for a new store. */
  readonly version: number;
  /** The newest migration this Hortus knows; a store above it is refused at start. */
  readonly known: number;
  readonly applied: readonly { readonly version: number; readonly appliedAt: Date }[];
}

export const STORE_LIFECYCLE = Symbol.for('hortus.StoreLifecycle');
