import { type Collection, type Db, type Document } from 'mongodb';
import {
  RevisionMirror,
  type RevisionDocument,
  revisionCollection,
  type RevisionsHandle,
} from './revisions.js';
import { type DatabaseHandle } from './support.js';

/** What a database context is opened with (see openDatabase). */
export interface DatabaseContextSettings {
  /** The deadline of every store operation; 0 or less: none. */
  readonly operationDeadlineMs: number;
  /** How often the revisions are mirrored; 0 turns the mirror off (every question is a query). */
  readonly revisionPollMs: number;
}

/**
 * One database handle with what every repository on it shares: the operation deadline and the one mirror
 * of the revisions collection. Passed to each repository explicitly (the MONGO_DATABASE binding), where
 * module-level maps keyed by the `Db` handle once held them.
 */
export class MongoDatabase implements DatabaseHandle, RevisionsHandle {
  readonly operationDeadlineMs: number | undefined;
  private mirror: RevisionMirror | undefined;

  constructor(
    readonly db: Db,
    private readonly settings: DatabaseContextSettings,
  ) {
    this.operationDeadlineMs = settings.operationDeadlineMs;
  }

  collection<TDocument extends Document>(name: string): Collection<TDocument> {
    return this.db.collection<TDocument>(name);
  }

  /** Made with the first repository that asks; the mirror itself starts polling on its first question. */
  revisionMirror(): RevisionMirror | undefined {
    if (this.mirror === undefined && this.settings.revisionPollMs > 0) {
      this.mirror = new RevisionMirror(
        this.collection<RevisionDocument>(revisionCollection.name),
        this.settings.revisionPollMs,
        this.operationDeadlineMs,
      );
    }
    return this.mirror;
  }

  /** Stops the mirror, if one runs (the store closes); a later question starts it again. */
  stopRevisionMirror(): void {
    this.mirror?.stop();
  }
}
