import { inject, injectable } from 'inversify';
import { type Filter, MongoBulkWriteError, ObjectId } from 'mongodb';
import {
  mergeInTimeOrder,
  type ReadingScan,
  BucketSums,
  type NewReading,
  planRollupPieces,
  type Reading,
  type ReadingBucket,
  type ReadingRange,
  type ReadingRepository,
  type ReadingCursor,
  type ReadingExportSelection,
  type ReadingSelection,
  rollupLevelsFor,
  type RollupPiece,
} from '@hortus/core';
import { entryOf, type LatestDocument, LatestReadings, readingsOf } from './latest-readings.js';
import { StoredRevisions } from './revisions.js';
import { ReadingRollups, type RollupLevel, rollupLevels } from './rollups.js';
import {
  type CollectionSpec,
  isDuplicateKeyCode,
  isUnavailableError,
  MONGO_DATABASE,
  MongoRepository,
  toDate,
} from './support.js';
import { type MongoDatabase } from './database.js';

interface ReadingDocument {
  _id: ObjectId;
  group: string;
  topic: string;
  /** A number; records written before Hortus may hold numeric text. */
  value: number | string;
  time: Date;
}

export const readingCollection: CollectionSpec = {
  name: 'readings',
  indexes: [
    // Serves latest (first entry), ranges newest or oldest first, and the distinct topics of a group;
    // unique so a retried delivery of the same sample is stored once.
    { key: { group: 1, topic: 1, time: -1 }, name: 'group_topic_time_unique', unique: true },
  ],
};

const readingMapper = {
  toDocument(reading: NewReading): ReadingDocument {
    return {
      _id: new ObjectId(),
      group: reading.group,
      topic: reading.topic,
      value: reading.value,
      time: new Date(reading.time.getTime()),
    };
  },
  toEntity(document: ReadingDocument): Reading {
    return {
      id: document._id.toHexString(),
      group: document.group,
      topic: document.topic,
      value: Number(document.value),
      time: toDate(document.time),
    };
  },
};

function rangeFilter(range: ReadingRange): Filter<ReadingDocument> {
  const filter: Filter<ReadingDocument> = { group: range.group, topic: range.topic };
  if (range.startDate !== undefined || range.endDate !== undefined) {
    filter.time = {
      ...(range.startDate === undefined ? {} : { $gte: range.startDate }),
      ...(range.endDate === undefined ? {} : { $lte: range.endDate }),
    };
  }
  if (range.minValue !== undefined || range.maxValue !== undefined) {
    filter.value = {
      ...(range.minValue === undefined ? {} : { $gte: range.minValue }),
      ...(range.maxValue === undefined ? {} : { $lte: range.maxValue }),
    };
  }
  return filter;
}

@injectable()
export class MongoReadingRepository extends MongoRepository<ReadingDocument> implements ReadingRepository {
  private readonly rollups: ReadingRollups;
  private readonly revisions: StoredRevisions;
  private readonly latestRecords: LatestReadings;

  constructor(@inject(MONGO_DATABASE) db: MongoDatabase) {
    super(db, readingCollection, 'reading', 'That reading is already stored');
    this.rollups = new ReadingRollups(db);
    this.latestRecords = new LatestReadings(db);
    this.revisions = new StoredRevisions(db, 'readings');
  }

  /**
   * Inserts, then adds what was inserted (never a duplicate) to the rollups and to the latest records, then
   * bumps the revisions of the batch's groups (so a poll that sees the new revision sees the new latest). A
   * failure between the insert and the rollup update leaves those readings out of the rollups: a retry finds
   * them stored and does not add them again; the same holds for the latest records (until a deleteRange of
   * that entry or a rebuild after dropping the collection).
   */
  async add(readings: readonly NewReading[]): Promise<number> {
    if (readings.length === 0) return 0;
    return this.run(
      async () => {
        const completeWhenNew = await this.latestRecords.startedComplete(async () => this.isEmpty());
        let inserted: readonly NewReading[] = readings;
        const documents = readings.map(readingMapper.toDocument);
        try {
          await this.collection.insertMany(documents, { ordered: false });
        } catch (error) {
          // Unordered: every other document was still tried; duplicates are retried deliveries, not failures.
          // Unreachable store: fail at once (503 within the selection timeout), not after a rollup attempt too.
          if (!(error instanceof MongoBulkWriteError) || isUnavailableError(error)) throw error;
          // Without write errors nothing tells which readings were stored: none goes into the rollups then.
          const writeErrors = error.result.getWriteErrors();
          if (writeErrors.length === 0) throw error;
          const failed = new Set(writeErrors.map((writeError) => writeError.index));
          inserted = readings.filter((_, index) => !failed.has(index));
          if (!onlyDuplicates(error)) {
            await this.rollups.add(inserted);
            await this.latestRecords.offer(
              documents.filter((_, index) => !failed.has(index)),
              completeWhenNew,
            );
            throw error;
          }
        }
        // A duplicate's document holds the id of this attempt, not the stored one: only inserted ones count.
        const stored = new Set(inserted);
        await Promise.all([
          this.rollups.add(inserted),
          this.latestRecords.offer(
            documents.filter((_, index) => stored.has(readings[index] as NewReading)),
            completeWhenNew,
          ),
        ]);
        await this.revisions.bump(readings.map((reading) => reading.group));
        return inserted.length;
        // Three writes (readings, rollups, revisions), under the write lock of concurrent batches, and a
        // batch of 5000 is more work than one reading: twice the deadline plus one more per 1000 readings.
      },
      2 + readings.length / 1000,
    );
  }

  private async isEmpty(): Promise<boolean> {
    return (await this.collection.findOne({}, { projection: { _id: 1 } })) === null;
  }

  async revision(group: string): Promise<string> {
    return this.run(() => this.revisions.current(group));
  }

  /**
   * From the rollups where the bucket is a whole number of minutes or hours and no value filter applies;
   * edges of the range that are not whole minutes, value filters and series without rollups (readings that
   * reached the database another way) are summarised from the readings themselves.
   */
  async aggregate(range: ReadingRange, bucketMs: number): Promise<ReadingBucket[]> {
    const from = range.startDate?.getTime() ?? Number.NEGATIVE_INFINITY;
    const to = range.endDate === undefined ? Number.POSITIVE_INFINITY : range.endDate.getTime() + 1;
    const filtered = range.minValue !== undefined || range.maxValue !== undefined;
    const levels = rollupLevelsFor(rollupLevels, bucketMs, filtered);
    return this.run(async () => {
      const pieces = planRollupPieces(from, to, levels);
      let sums = new BucketSums(bucketMs);
      const found = await Promise.all(
        pieces.map((piece) =>
          piece.level === undefined
            ? this.addReadings(range, piece, sums)
            : this.rollups.addCells(piece.level, range.group, range.topic, piece, sums),
        ),
      );
      const fromRollups = found.filter((_, index) => pieces[index]?.level !== undefined);
      if (fromRollups.length > 0 && fromRollups.every((count) => count === 0)) {
        sums = new BucketSums(bucketMs);
        await this.addReadings(range, { from, to }, sums);
      }
      return sums.newestFirst();
    });
  }

  private async addReadings(
    range: ReadingRange,
    piece: RollupPiece<RollupLevel>,
    sums: BucketSums,
  ): Promise<number> {
    const filter = rangeFilter({
      ...range,
      ...(Number.isFinite(piece.from) ? { startDate: new Date(piece.from) } : {}),
      ...(Number.isFinite(piece.to) ? { endDate: new Date(piece.to - 1) } : {}),
    });
    const documents = await this.collection
      .find(filter, { projection: { _id: 0, time: 1, value: 1 } })
      .toArray();
    let found = 0;
    for (const document of documents) {
      const value = Number(document.value);
      if (!Number.isFinite(value)) continue;
      sums.addValue(toDate(document.time).getTime(), value);
      found += 1;
    }
    return found;
  }

  /**
   * Deletes, then corrects the rollups of every series that lost readings, then bumps the revision. A
   * failure in between leaves rollups counting removed readings: a second delete of the same selection
   * removes nothing more and corrects them.
   */
  async deleteRange({ group, topic, from, to, limit, keepSummaries }: ReadingSelection): Promise<number> {
    const filter: Filter<ReadingDocument> = {
      group,
      ...(topic === undefined ? {} : { topic }),
      time: { $gte: from, $lte: to },
    };
    return this.run(async () => {
      const topics = (await this.collection.distinct('topic', filter)).filter(
        (found): found is string => typeof found === 'string',
      );
      if (limit !== undefined) {
        // deleteMany takes no limit: the oldest ids first, series by series (each an index range of
        // (group, topic, time), never a sort of the whole group), then exactly those.
        const ids: ObjectId[] = [];
        for (const series of topics) {
          if (ids.length >= limit) break;
          const oldest = await this.collection
            .find(
              { ...filter, topic: series },
              { projection: { _id: 1 }, sort: { time: 1 }, limit: limit - ids.length },
            )
            .toArray();
          ids.push(...oldest.map(({ _id }) => _id));
        }
        filter._id = { $in: ids };
      }
      const { deletedCount } = await this.collection.deleteMany(filter);
      if (deletedCount > 0) await this.correctLatest(group, topic, from, to);
      if (keepSummaries === true) {
        if (deletedCount > 0) await this.revisions.bump([group]);
        return deletedCount;
      }
      for (const series of topics) {
        await this.rollups.removeSpan(group, series, from.getTime(), to.getTime(), async (fromMs, toMs) => {
          const documents = await this.collection
            .find(rangeFilter({ group, topic: series, startDate: new Date(fromMs), endDate: new Date(toMs) }))
            .toArray();
          return documents.map(readingMapper.toEntity).filter((reading) => Number.isFinite(reading.value));
        });
      }
      if (deletedCount > 0 || topics.length > 0) await this.revisions.bump([group]);
      return deletedCount;
    });
  }

  /**
   * Every latest entry inside the deleted span whose reading is gone gets its topic's newest remaining
   * reading (one indexed read per topic), or goes when the topic holds none. Retention deletes old readings,
   * so it rarely touches an entry.
   */
  private async correctLatest(group: string, topic: string | undefined, from: Date, to: Date): Promise<void> {
    await this.latestRecords.correct(group, topic, from, to, {
      isStored: async (id) => (await this.collection.countDocuments({ _id: id }, { limit: 1 })) > 0,
      newest: async (series) =>
        (await this.collection.findOne({ group, topic: series }, { sort: { time: -1 } })) ?? undefined,
    });
  }

  /** The merge of one time-ordered page per topic: see the port. */
  scanInTimeOrder(scan: ReadingScan, pageSize: number): AsyncIterable<readonly Reading[]> {
    return mergeInTimeOrder(scan, pageSize, (topic, fromMs, toMs, limit) =>
      this.page({ group: scan.group, topic, from: new Date(fromMs), to: new Date(toMs) }, undefined, limit),
    );
  }

  async groups(): Promise<string[]> {
    return this.run(async () =>
      (await this.collection.distinct('group')).filter((group): group is string => typeof group === 'string'),
    );
  }

  async deleteSummariesBefore(group: string, before: Date): Promise<number> {
    return this.run(() => this.rollups.removeBefore(group, before.getTime()));
  }

  /** The topics of the group's latest record: every topic holding readings, without touching the readings. */
  private async topicsOf(group: string): Promise<string[]> {
    return readingsOf(group, await this.latestRecord(group)).map((reading) => reading.topic);
  }

  async countTopics(group: string): Promise<number> {
    return this.run(async () => (await this.topicsOf(group)).length);
  }

  async knownTopics(group: string, topics: readonly string[]): Promise<string[]> {
    if (topics.length === 0) return [];
    // Asked for every batch stored: one record by key, not a distinct over the readings.
    const wanted = new Set(topics);
    return this.run(async () => (await this.topicsOf(group)).filter((topic) => wanted.has(topic)));
  }

  async latest(group: string, topic: string): Promise<Reading | undefined> {
    return this.run(async () => entryOf(group, await this.latestRecord(group), topic));
  }

  async latestOfEveryTopic(group: string): Promise<Reading[]> {
    return this.run(async () => readingsOf(group, await this.latestRecord(group)));
  }

  /**
   * The group's latest record, read by key. A group whose record was never checked against its readings
   * (a database of an earlier version, readings copied around Hortus) has it built once from the readings:
   * the distinct topics, then each topic's newest reading by the (group, topic, time) index.
   */
  private async latestRecord(group: string): Promise<LatestDocument | undefined> {
    const record = await this.latestRecords.read(group);
    if (record?.complete === true) return record;
    // No record in a database whose records are complete from the start: the group holds no readings.
    if (record === undefined && (await this.latestRecords.startedComplete(async () => this.isEmpty()))) {
      return undefined;
    }
    const topics = (await this.collection.distinct('topic', { group })).filter(
      (topic): topic is string => typeof topic === 'string',
    );
    const newest = await Promise.all(
      topics.map((topic) => this.collection.findOne({ group, topic }, { sort: { time: -1 } })),
    );
    await this.latestRecords.complete(
      group,
      newest.filter((document): document is ReadingDocument => document !== null),
    );
    return this.latestRecords.read(group);
  }

  async newestFirst(range: ReadingRange, limit: number): Promise<Reading[]> {
    // A limit of 0 means "no limit" to MongoDB.
    if (limit <= 0) return [];
    const documents = await this.run(() =>
      this.collection.find(rangeFilter(range)).sort({ time: -1 }).limit(limit).toArray(),
    );
    return documents.map(readingMapper.toEntity);
  }

  async page(
    { group, topic, from, to }: ReadingExportSelection,
    after: ReadingCursor | undefined,
    limit: number,
  ): Promise<Reading[]> {
    if (!(limit > 0)) return [];
    // One query per topic on the (group, topic, time) index: a sort on topic then time would be a blocking
    // sort over the whole group, as the index orders time descending within a topic.
    const stored = await this.run(() => this.collection.distinct('topic', { group }));
    const names = stored
      .filter((name): name is string => typeof name === 'string')
      .filter(
        (name) => (topic === undefined || name === topic) && (after === undefined || name >= after.topic),
      )
      .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const found: Reading[] = [];
    for (const name of names) {
      const resume =
        after !== undefined && name === after.topic ? new Date(after.time.getTime() + 1) : undefined;
      const start = resume !== undefined && (from === undefined || resume > from) ? resume : from;
      const documents = await this.run(() =>
        this.collection
          .find(
            rangeFilter({
              group,
              topic: name,
              ...(start === undefined ? {} : { startDate: start }),
              ...(to === undefined ? {} : { endDate: to }),
            }),
          )
          .sort({ time: 1 })
          .limit(limit - found.length)
          .toArray(),
      );
      found.push(...documents.map(readingMapper.toEntity));
      if (found.length >= limit) break;
    }
    return found;
  }

  async oldest(range: ReadingRange): Promise<Reading | undefined> {
    const document = await this.run(() => this.collection.findOne(rangeFilter(range), { sort: { time: 1 } }));
    return document === null ? undefined : readingMapper.toEntity(document);
  }
}

function onlyDuplicates(error: MongoBulkWriteError): boolean {
  const writeErrors = error.result.getWriteErrors();
  return (
    error.result.getWriteConcernError() === undefined &&
    writeErrors.length > 0 &&
    writeErrors.every((writeError) => isDuplicateKeyCode(writeError.code))
  );
}
