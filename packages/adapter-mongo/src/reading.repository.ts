import { inject, injectable } from 'inversify';
import { type Db, type Filter, MongoBulkWriteError, ObjectId } from 'mongodb';
import { type NewReading, type Reading, type ReadingRange, type ReadingRepository } from '@hortus/core';
import { type CollectionSpec, isDuplicateKeyCode, MONGO_DB, MongoRepository, toDate } from './support.js';

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
  constructor(@inject(MONGO_DB) db: Db) {
    super(db, readingCollection, 'reading', 'That reading is already stored');
  }

  async add(readings: readonly NewReading[]): Promise<number> {
    if (readings.length === 0) return 0;
    return this.run(async () => {
      try {
        const result = await this.collection.insertMany(readings.map(readingMapper.toDocument), {
          ordered: false,
        });
        return result.insertedCount;
      } catch (error) {
        // Unordered: every other document was still tried; duplicates are retried deliveries, not failures.
        if (error instanceof MongoBulkWriteError && onlyDuplicates(error)) return error.insertedCount;
        throw error;
      }
    });
  }

  async latest(group: string, topic: string): Promise<Reading | undefined> {
    const document = await this.run(() => this.collection.findOne({ group, topic }, { sort: { time: -1 } }));
    return document === null ? undefined : readingMapper.toEntity(document);
  }

  async latestOfEveryTopic(group: string): Promise<Reading[]> {
    // FerretDB v1 has no $first accumulator; distinct plus one indexed lookup per topic works on both.
    const topics = await this.run(() => this.collection.distinct('topic', { group }));
    const latest = await Promise.all(
      topics
        .filter((topic): topic is string => typeof topic === 'string')
        .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
        .map((topic) => this.latest(group, topic)),
    );
    return latest.filter((reading): reading is Reading => reading !== undefined);
  }

  async newestFirst(range: ReadingRange, limit: number): Promise<Reading[]> {
    // A limit of 0 means "no limit" to MongoDB.
    if (limit <= 0) return [];
    const documents = await this.run(() =>
      this.collection.find(rangeFilter(range)).sort({ time: -1 }).limit(limit).toArray(),
    );
    return documents.map(readingMapper.toEntity);
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
