import { type Collection, ObjectId } from 'mongodb';
import { type Reading } from '@hortus/core';
import {
  type CollectionSpec,
  type DatabaseHandle,
  headOf,
  type RevisionFields,
  toDate,
  writeRevision,
} from './support.js';

/** The newest reading of one topic, as kept in its group's latest record. */
interface LatestEntry {
  topic: string;
  id: ObjectId;
  value: number | string;
  time: Date;
}

/**
 * One small record per group: the newest reading of each of its topics, so `latestdata/*`, the engine and
 * alerts read one record by key whatever the history holds (FerretDB v1 answers `distinct` and sorted reads
 * by scanning; real MongoDB by index, but one record is cheaper on both). A change stores the record's next
 * revision and deletes the one it was built on (writeRevision), as the rollups do: concurrent writers never
 * lose each other's entries, also where updates of one document are not isolated (FerretDB v1).
 */
export interface LatestDocument extends RevisionFields {
  /** JSON `[group]`, `.`, the revision's `v` as fixed-width digits, `.` and a unique token. */
  _id: string;
  group: string;
  v: number;
  parent?: string;
  /**
   * The record was checked against the readings once. Records written only by `add` may lack topics whose
   * readings came before them (a database of an earlier version, readings copied around Hortus).
   */
  complete: boolean;
  /** Ordered by topic. */
  topics: LatestEntry[];
}

export const latestReadingCollection: CollectionSpec = {
  name: 'latestreadings',
  // Serves the read of a group's revisions (by `group`: MongoDB would serve an `_id` range as well, FerretDB
  // v1 reads its whole collection for one) and arbitrates each revision of a group's record.
  indexes: [{ key: { group: 1, v: 1 }, name: 'group_v_unique', unique: true }],
};

/** A reading as the readings collection stores it. */
export interface StoredReading {
  readonly _id: ObjectId;
  readonly group: string;
  readonly topic: string;
  readonly value: number | string;
  readonly time: Date;
}

const VERSION_DIGITS = 10;
/**
 * Present when the database held no readings when Hortus first used it: every record `add` creates is then
 * complete from the start. Without it (a database of an earlier version, or after the collection was
 * dropped) each group's record is checked against its readings once, at its first read. Its `_id` cannot be
 * a group's, which all start with `[`.
 */
const COMPLETE_FROM_START = 'complete-from-start';
/** A record changed under one writer's feet at most this often before it gives up. */
const MAX_WRITE_ATTEMPTS = 50;

/** The start of every `_id` of the group's revisions. */
function revisionPrefix(group: string): string {
  return `${JSON.stringify([group])}.`;
}

function entryOfReading(reading: StoredReading): LatestEntry {
  return { topic: reading.topic, id: reading._id, value: reading.value, time: reading.time };
}

function byTopic(a: LatestEntry, b: LatestEntry): number {
  return a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : 0;
}

/** What a change makes of the record's entries: undefined when nothing changes. */
type Change = (
  entries: Map<string, LatestEntry>,
  complete: boolean,
  exists: boolean,
) => Promise<{ entries: Map<string, LatestEntry>; complete: boolean } | undefined>;

export class LatestReadings {
  private readonly collection: Collection<LatestDocument>;

  private completeFromStart: Promise<boolean> | undefined;

  constructor(db: DatabaseHandle) {
    this.collection = db.collection<LatestDocument>(latestReadingCollection.name);
  }

  /**
   * Whether records are complete from their creation (see COMPLETE_FROM_START); asked once per process,
   * before the first reading is stored. `readingsEmpty` tells whether the readings collection is empty.
   */
  async startedComplete(readingsEmpty: () => Promise<boolean>): Promise<boolean> {
    this.completeFromStart ??= (async () => {
      const markers = this.collection as unknown as Collection<{ _id: string }>;
      if ((await markers.findOne({ _id: COMPLETE_FROM_START })) !== null) return true;
      const empty = (await this.collection.findOne({}, { projection: { _id: 1 } })) === null;
      if (!empty || !(await readingsEmpty())) return false;
      await markers.updateOne(
        { _id: COMPLETE_FROM_START },
        { $set: { _id: COMPLETE_FROM_START } },
        { upsert: true },
      );
      return true;
    })();
    this.completeFromStart.catch(() => {
      this.completeFromStart = undefined;
    });
    return this.completeFromStart;
  }

  /** The group's current record (undefined when it has none). */
  async read(group: string): Promise<LatestDocument | undefined> {
    return headOf(await this.collection.find({ group }).toArray());
  }

  /**
   * Makes each reading its topic's entry where it is newer than the entry or there is none. A record it
   * creates is complete when `completeWhenNew` (see startedComplete).
   */
  async offer(readings: readonly StoredReading[], completeWhenNew: boolean): Promise<void> {
    const byGroup = new Map<string, StoredReading[]>();
    for (const reading of readings) {
      const ofGroup = byGroup.get(reading.group);
      if (ofGroup === undefined) byGroup.set(reading.group, [reading]);
      else ofGroup.push(reading);
    }
    await Promise.all(
      [...byGroup].map(([group, offered]) =>
        this.change(group, async (entries, complete, exists) => {
          const merged = mergeNewer(entries, offered);
          return merged === undefined
            ? undefined
            : { entries: merged, complete: exists ? complete : completeWhenNew };
        }),
      ),
    );
  }

  /**
   * Checks the record against the newest reading of each topic (found by the caller) and marks it complete.
   * Entries only move forward (a concurrent add may have written a newer one meanwhile); an entry of a topic
   * the readings no longer hold is left to `correct`, which deleteRange calls for every span it removes.
   */
  async complete(group: string, newestOfEachTopic: readonly StoredReading[]): Promise<void> {
    await this.change(group, async (entries, complete) => {
      const merged = mergeNewer(entries, newestOfEachTopic);
      return merged === undefined && complete ? undefined : { entries: merged ?? entries, complete: true };
    });
  }

  /**
   * After readings in [from, to] (of one topic when given) were deleted: each entry in that span whose
   * reading is gone gets its topic's newest remaining reading, or goes when the topic holds none.
   */
  async correct(
    group: string,
    topic: string | undefined,
    from: Date,
    to: Date,
    lookup: {
      isStored(id: ObjectId): Promise<boolean>;
      newest(topic: string): Promise<StoredReading | undefined>;
    },
  ): Promise<void> {
    await this.change(group, async (entries, complete) => {
      let changed = false;
      const next = new Map(entries);
      for (const entry of entries.values()) {
        const time = toDate(entry.time);
        if ((topic !== undefined && entry.topic !== topic) || time < from || time > to) continue;
        if (await lookup.isStored(entry.id)) continue;
        const newest = await lookup.newest(entry.topic);
        if (newest === undefined) next.delete(entry.topic);
        else next.set(entry.topic, entryOfReading(newest));
        changed = true;
      }
      return changed ? { entries: next, complete } : undefined;
    });
  }

  private async change(group: string, change: Change): Promise<void> {
    for (let attempt = 0; attempt < MAX_WRITE_ATTEMPTS; attempt += 1) {
      const loaded = await this.collection.find({ group }).toArray();
      const head = headOf(loaded);
      const entries = new Map((head?.topics ?? []).map((entry) => [entry.topic, entry]));
      const changed = await change(entries, head?.complete ?? false, head !== undefined);
      if (changed === undefined) return;
      const v = (head?.v ?? 0) + 1;
      const next: LatestDocument = {
        _id: `${revisionPrefix(group)}${String(v).padStart(VERSION_DIGITS, '0')}.${new ObjectId().toHexString()}`,
        group,
        v,
        ...(head === undefined ? {} : { parent: head._id }),
        complete: changed.complete,
        topics: [...changed.entries.values()].sort(byTopic),
      };
      const written = await writeRevision(this.collection, loaded, next, () =>
        this.collection.find({ group }, { projection: { v: 1, parent: 1 } }).toArray(),
      );
      if (written) return;
    }
    throw new Error(`the latest record of group ${group} kept changing under concurrent writers`);
  }
}

/** The entries with each reading that is newer than its topic's entry, or undefined when none is. */
function mergeNewer(
  entries: Map<string, LatestEntry>,
  readings: readonly StoredReading[],
): Map<string, LatestEntry> | undefined {
  let merged: Map<string, LatestEntry> | undefined;
  for (const reading of readings) {
    const known = (merged ?? entries).get(reading.topic);
    if (known !== undefined && toDate(known.time) >= reading.time) continue;
    merged ??= new Map(entries);
    merged.set(reading.topic, entryOfReading(reading));
  }
  return merged;
}

function toReading(group: string, entry: LatestEntry): Reading {
  return {
    id: entry.id.toHexString(),
    group,
    topic: entry.topic,
    value: Number(entry.value),
    time: toDate(entry.time),
  };
}

/** The record's entries as readings, ordered by topic. */
export function readingsOf(group: string, document: LatestDocument | undefined): Reading[] {
  return (document?.topics ?? []).map((entry) => toReading(group, entry));
}

export function entryOf(
  group: string,
  document: LatestDocument | undefined,
  topic: string,
): Reading | undefined {
  const entry = document?.topics.find((found) => found.topic === topic);
  return entry === undefined ? undefined : toReading(group, entry);
}
