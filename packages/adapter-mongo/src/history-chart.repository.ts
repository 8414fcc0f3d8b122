import { createHash } from 'node:crypto';
import { inject, injectable } from 'inversify';
import { type Collection, type Db, ObjectId } from 'mongodb';
import {
  applyChartChange,
  type Chart,
  type ChartChange,
  type ChartData,
  ConflictError,
  type HistoryChart,
  type HistoryChartRepository,
} from '@hortus/core';
import {
  type CollectionSpec,
  copiedObjectId,
  fromStoredJson,
  headOf,
  isDuplicateKeyError,
  isLiteralObject,
  MONGO_DATABASE,
  MongoRepository,
  type RevisionFields,
  toDate,
  toStoredJson,
  writeRevision,
} from './support.js';
import { type MongoDatabase } from './database.js';

/** The per-user record: its id and the user. Older records also hold a `charts` array, moved out at start. */
interface HistoryChartDocument {
  _id: ObjectId;
  userId: string;
  charts?: unknown;
}

/**
 * One revision of one chart. Each chart is a chain of revisions (see writeRevision): adding a chart inserts
 * its first revision, a change inserts the next one, a removal a tombstone. No write ever updates a shared
 * document in place, so concurrent adds and changes all land on any MongoDB-wire server.
 */
interface ChartRevisionDocument extends RevisionFields {
  _id: ObjectId;
  userId: string;
  /** The chart's key: the hex `_id` of its first revision. */
  chart: string;
  /** Order in the user's record: one more than the highest when it was added; concurrent adds tie. */
  position: number;
  v: number;
  parent?: ObjectId;
  chartId: string;
  chartName: string;
  chartData: Record<string, unknown>;
  createdAt: Date;
  updatedAt: Date;
  /** A tombstone: the chart was removed. Set with `removedAt`. */
  removed?: true;
  removedAt?: Date;
}

export const historyChartCollection: CollectionSpec = {
  name: 'historycharts',
  indexes: [{ key: { userId: 1 }, name: 'userId_unique', unique: true }],
};

export const historyChartRevisionCollection: CollectionSpec = {
  name: 'historychartrevisions',
  indexes: [
    // Arbitrates each revision of a chart: exactly one writer stores each `v`.
    { key: { chart: 1, v: 1 }, name: 'chart_v_unique', unique: true },
    // A user's record, in order, each chart's revisions oldest first.
    { key: { userId: 1, position: 1, chart: 1, v: 1 }, name: 'userId_position_chart_v' },
  ],
};

/** How often a change is rebuilt when concurrent changes of the same chart came first. */
const WRITE_ATTEMPTS = 50;
/** A tombstone is kept this long, so a change read before the removal cannot bring the chart back. */
const TOMBSTONE_KEEP_MS = 24 * 60 * 60 * 1000;

const chartMapper = {
  toDocument(
    chart: Chart,
  ): Pick<ChartRevisionDocument, 'chartId' | 'chartName' | 'chartData' | 'createdAt' | 'updatedAt'> {
    return {
      chartId: chart.chartId,
      chartName: chart.chartName,
      chartData: toStoredJson(chart.chartData) as Record<string, unknown>,
      createdAt: new Date(chart.createdAt.getTime()),
      updatedAt: new Date(chart.updatedAt.getTime()),
    };
  },
  toEntity(document: Partial<ChartRevisionDocument>): Chart {
    return {
      chartId: String(document.chartId),
      chartName: String(document.chartName),
      chartData: isLiteralObject(document.chartData) ? (fromStoredJson(document.chartData) as ChartData) : {},
      createdAt: toDate(document.createdAt),
      updatedAt: toDate(document.updatedAt),
    };
  },
};

/** A user's charts as stored: every revision, grouped per chart in record order. */
interface StoredCharts {
  readonly record: HistoryChartDocument;
  /** Per chart, in record order: all its stored revisions. */
  readonly chains: readonly (readonly ChartRevisionDocument[])[];
}

/** The charts of the record: each chart's newest revision, tombstones left out. */
function liveHeads(stored: StoredCharts): ChartRevisionDocument[] {
  return stored.chains
    .map((chain) => headOf(chain))
    .filter((head) => head !== undefined && head.removed !== true) as ChartRevisionDocument[];
}

function toHistoryChart(stored: StoredCharts): HistoryChart {
  return {
    id: stored.record._id.toHexString(),
    userId: stored.record.userId,
    charts: liveHeads(stored).map(chartMapper.toEntity),
  };
}

/** A fixed `_id` for the chart at `index` of an older record, so moving it out twice stores it once. */
function movedChartId(record: ObjectId, index: number): ObjectId {
  const digest = createHash('sha256').update(`${record.toHexString()}:${index}`).digest();
  return new ObjectId(digest.subarray(0, 12));
}

/**
 * Moves the charts of records in the older shape (one `charts` array per user) into one revision document
 * per chart, keeping their order, then drops the array. Runs at start; running it again, or on two servers
 * at once, stores each chart once.
 */
export async function moveEmbeddedCharts(db: Db): Promise<number> {
  const records = db.collection<HistoryChartDocument>(historyChartCollection.name);
  const revisions = db.collection<ChartRevisionDocument>(historyChartRevisionCollection.name);
  let moved = 0;
  for await (const record of records.find({ charts: { $exists: true } })) {
    const charts = Array.isArray(record.charts) ? record.charts.filter(isLiteralObject) : [];
    const documents = charts.map((chart, position): ChartRevisionDocument => {
      const _id = movedChartId(record._id, position);
      return {
        _id,
        userId: record.userId,
        chart: _id.toHexString(),
        position,
        v: 1,
        ...chartMapper.toDocument(chartMapper.toEntity(chart)),
        chartData: isLiteralObject(chart['chartData']) ? chart['chartData'] : {},
      };
    });
    if (documents.length > 0) {
      try {
        await revisions.insertMany(documents, { ordered: false });
      } catch (error) {
        // Moved before (an interrupted start, or another server): those charts are stored already.
        if (!isDuplicateKeyError(error) && !allDuplicates(error)) throw error;
      }
    }
    await records.updateOne({ _id: record._id }, { $unset: { charts: '' } });
    moved += documents.length;
  }
  return moved;
}

function allDuplicates(error: unknown): boolean {
  const writeErrors = (error as { writeErrors?: unknown }).writeErrors;
  const list = Array.isArray(writeErrors) ? writeErrors : writeErrors === undefined ? [] : [writeErrors];
  return (
    list.length > 0 &&
    list.every((item) => [11000, 11001].includes(Number((item as { code?: unknown }).code)))
  );
}

@injectable()
export class MongoHistoryChartRepository
  extends MongoRepository<HistoryChartDocument>
  implements HistoryChartRepository
{
  private readonly revisions: Collection<ChartRevisionDocument>;

  constructor(@inject(MONGO_DATABASE) db: MongoDatabase) {
    super(db, historyChartCollection, 'history-chart', 'The user already has a history chart record');
    this.revisions = db.collection<ChartRevisionDocument>(historyChartRevisionCollection.name);
  }

  async findByUser(userId: string): Promise<HistoryChart | undefined> {
    const stored = await this.load(userId);
    return stored === undefined ? undefined : toHistoryChart(stored);
  }

  async appendChart(userId: string, chart: Chart): Promise<HistoryChart> {
    await this.run(() => this.ensureRecord(userId));
    await this.run(async () => {
      const last = await this.revisions.findOne(
        { userId },
        { sort: { position: -1 }, projection: { position: 1 } },
      );
      const _id = new ObjectId();
      // A new chart is a new chain: its first revision cannot collide with another writer's.
      await this.revisions.insertOne({
        _id,
        userId,
        chart: _id.toHexString(),
        position: (last?.position ?? -1) + 1,
        v: 1,
        ...chartMapper.toDocument(chart),
      });
    });
    const stored = await this.load(userId);
    if (stored === undefined) throw new Error('A history chart record vanished after it was written');
    return toHistoryChart(stored);
  }

  /**
   * Replaces the user's record and every revision of its charts: each chart becomes a first revision
   * with a fixed id (see movedChartId), so copying it again stores it once.
   */
  async restore(record: HistoryChart): Promise<void> {
    const _id = copiedObjectId(record.id);
    const { userId } = record;
    await this.run(() => this.collection.deleteMany({ userId, _id: { $ne: _id } }));
    await this.run(() => this.collection.replaceOne({ _id }, { userId }, { upsert: true }));
    await this.run(() => this.revisions.deleteMany({ userId }));
    const documents = record.charts.map((chart, position): ChartRevisionDocument => {
      const chartId = movedChartId(_id, position);
      return {
        _id: chartId,
        userId,
        chart: chartId.toHexString(),
        position,
        v: 1,
        ...chartMapper.toDocument(chart),
      };
    });
    if (documents.length > 0) await this.run(() => this.revisions.insertMany(documents));
  }

  async userIds(): Promise<string[]> {
    const records = await this.run(() => this.collection.find({}, { projection: { userId: 1 } }).toArray());
    // Sorted here: the server's string order need not be code-unit order.
    return records.map((record) => String(record.userId)).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  }

  async updateChart(
    userId: string,
    chartName: string,
    change: ChartChange,
    now: Date,
  ): Promise<HistoryChart | undefined> {
    for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt += 1) {
      const stored = await this.load(userId);
      if (stored === undefined) return undefined;
      const index = liveHeads(stored).findIndex((head) => head.chartName === chartName);
      const head = liveHeads(stored)[index];
      if (head === undefined) return undefined;
      const changed = applyChartChange(chartMapper.toEntity(head), change, now);
      const written = await this.writeNext(stored, head, { ...head, ...chartMapper.toDocument(changed) });
      if (written) {
        const after = await this.load(userId);
        if (after !== undefined) return toHistoryChart(after);
      }
      await pause(attempt);
    }
    throw new ConflictError('history-chart', 'The chart kept changing while being updated; try again');
  }

  async removeCharts(userId: string, chartName: string): Promise<HistoryChart | undefined> {
    for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt += 1) {
      const stored = await this.load(userId);
      if (stored === undefined) return undefined;
      const named = liveHeads(stored).filter((head) => head.chartName === chartName);
      if (named.length === 0) {
        await this.dropOldTombstones(stored);
        return toHistoryChart(stored);
      }
      const removedAt = new Date();
      const written = await Promise.all(
        named.map((head) => this.writeNext(stored, head, { ...head, removed: true, removedAt })),
      );
      // Whatever was not written is read again: a concurrent change came first, or a new chart appeared.
      if (written.some((ok) => !ok)) await pause(attempt);
    }
    throw new ConflictError('history-chart', 'The charts kept changing while being removed; try again');
  }

  /** The user's record and every stored revision of its charts; undefined when there is no record. */
  private async load(userId: string): Promise<StoredCharts | undefined> {
    return this.run(async () => {
      const record = await this.collection.findOne({ userId }, { projection: { charts: 0 } });
      if (record === null) return undefined;
      // Oldest revision first: a reader that misses a parent deleted meanwhile then sees its child.
      const revisions = await this.revisions
        .find({ userId })
        .sort({ userId: 1, position: 1, chart: 1, v: 1 })
        .toArray();
      const chains = new Map<string, ChartRevisionDocument[]>();
      for (const revision of revisions) {
        const chain = chains.get(revision.chart);
        if (chain === undefined) chains.set(revision.chart, [revision]);
        else chain.push(revision);
      }
      return { record, chains: [...chains.values()] };
    });
  }

  /** Creates the user's record unless it exists; a concurrent creation is as good. */
  private async ensureRecord(userId: string): Promise<void> {
    if ((await this.collection.findOne({ userId }, { projection: { _id: 1 } })) !== null) return;
    try {
      await this.collection.insertOne({ _id: new ObjectId(), userId });
    } catch (error) {
      if (!isDuplicateKeyError(error)) throw error;
    }
  }

  /** Stores the revision after `head` with the given content; false when another writer came first. */
  private async writeNext(
    stored: StoredCharts,
    head: ChartRevisionDocument,
    content: ChartRevisionDocument,
  ): Promise<boolean> {
    const chain = stored.chains.find((revisions) => revisions.includes(head)) ?? [head];
    const next: ChartRevisionDocument = { ...content, _id: new ObjectId(), v: head.v + 1, parent: head._id };
    return this.run(() =>
      writeRevision(this.revisions, chain, next, () =>
        this.revisions.find({ chart: head.chart }, { projection: { v: 1, parent: 1 } }).toArray(),
      ),
    );
  }

  /** Removes the charts whose tombstone is old enough that no change read before it is still under way. */
  private async dropOldTombstones(stored: StoredCharts): Promise<void> {
    const before = Date.now() - TOMBSTONE_KEEP_MS;
    const old = stored.chains
      .map((chain) => headOf(chain))
      .filter((head) => head?.removed === true && toDate(head.removedAt).getTime() < before)
      .map((head) => (head as ChartRevisionDocument).chart);
    if (old.length > 0) await this.run(() => this.revisions.deleteMany({ chart: { $in: old } }));
  }
}

/** A short random wait before a retry, growing with the attempts, so racing writers spread out. */
function pause(attempt: number): Promise<void> {
  const ms = Math.random() * Math.min(50, 2 + attempt * 2);
  return new Promise((resolve) => setTimeout(resolve, ms));
}
