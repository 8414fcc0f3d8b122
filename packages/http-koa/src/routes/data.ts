import {
  CSV_EXPORT_HEADER,
  type ExportFormat,
  exportFormats,
  expandReadingItemsWithOrigin,
  formatReadings,
  InvalidInputError,
  MAX_READINGS_PER_BATCH,
  type Reading,
  type ReadingBucket,
  type RecordReadingsResult,
  sensorTopics,
  derivedTopics,
  TOPIC_MAX_LENGTH,
  wantsAggregation,
} from '@hortus/core';
import { type EntityTagOf, revisionTag } from './conditional.js';
import {
  groupIdQuery,
  groupName,
  object,
  dateText,
  readingFilters,
  readingRangeQuery,
  readingsBody,
  text,
} from './schemas.js';
import {
  type HttpUseCases,
  json,
  plainText,
  type ResponseDoc,
  type RouteInput,
  type RouteSpec,
  type RouterSpec,
  type Reply,
  withUnderscoreId,
} from './routing.js';

const readings: ResponseDoc = {
  description: 'Readings `{_id, group, topic, value, time}`',
  schema: { type: 'array', items: { $ref: '#/components/schemas/Reading' } },
};
const readingsOrBuckets: ResponseDoc = {
  description:
    'Readings `{_id, group, topic, value, time}`, newest first; with `interval` or `points`, buckets ' +
    '`{time, min, max, avg, count}` instead, newest first, empty buckets left out',
  schema: {
    type: 'array',
    items: {
      oneOf: [{ $ref: '#/components/schemas/Reading' }, { $ref: '#/components/schemas/ReadingBucket' }],
    },
  },
};

const presentBucket = ({ time, min, max, avg, count }: ReadingBucket): unknown => ({
  time,
  min,
  max,
  avg,
  count,
});

/** Newest readings only change when readings of the group are stored. */
const readingsTag = (route: string): EntityTagOf => revisionTag(route, 'readings', 'groupId');
const invalid: ResponseDoc = { description: '`{message}` naming the invalid parameter' };
const failed: ResponseDoc = { description: "`{message: 'Internal Server Error'}`" };
const notModified: ResponseDoc = {
  description: 'No body: nothing changed since the answer whose ETag the request names in If-None-Match',
};

const present = (list: readonly Reading[]): unknown[] => list.map(withUnderscoreId);

function latestRoute(path: string, topic: string, sensor: string): RouteSpec {
  return {
    method: 'get',
    path,
    access: 'group',
    writes: false,
    summary: `Newest ${sensor} reading of a group (an array of zero or one)`,
    query: groupIdQuery,
    responses: { 200: readings, 304: notModified, 400: invalid, 500: failed },
    entityTag: readingsTag(path),
    cacheByTag: true,
    handle: async ({ query }, { getLatestReading }) =>
      json(present(await getLatestReading.execute({ group: query['groupId'], topic }))),
  };
}

/** Where a range route finds its topic: fixed by its path (the six of docs/api.md, Sensor data), or named in the path. */
type TopicOf = (input: RouteInput) => unknown;

const rangeDescription =
  'With `interval` (e.g. `5m`, `1h`) or `points` (at most that many buckets, of the smallest round ' +
  'size from 1s to 30d that fits) the answer is buckets aligned to the Unix epoch (UTC) instead of ' +
  'readings. Without `startDate` the buckets cover the 30 days before `endDate`, and without `endDate` ' +
  'they end with the bucket holding now. Value filters apply before summarising; `count` keeps the ' +
  'newest buckets. An answer of readings carries an ETag; buckets do not (their window moves with time).';

/** Readings or buckets of one series: the one code path of the history routes (docs/api.md, Sensor data) and of any stored topic. */
async function readRange(
  query: RouteInput['query'],
  topic: unknown,
  { queryReadings, aggregateReadings }: HttpUseCases,
): Promise<Reply> {
  const filters = {
    group: query['groupId'],
    topic,
    startDate: query['startDate'],
    endDate: query['endDate'],
    minValue: query['minValue'],
    maxValue: query['maxValue'],
    count: query['count'],
  };
  if (!wantsAggregation(query)) return json(present(await queryReadings.execute(filters)));
  const buckets = await aggregateReadings.execute({
    ...filters,
    interval: query['interval'],
    points: query['points'],
  });
  return json(buckets.map(presentBucket));
}

function rangeRoute(path: string, topic: string, sensor: string): RouteSpec {
  return seriesRoute(path, () => topic, {
    summary: `${sensor} readings of a group, newest first, filtered by time and value, or summarised`,
  });
}

function seriesRoute(
  path: string,
  topicOf: TopicOf,
  doc: { summary: string; description?: string; params?: RouteSpec['params'] },
): RouteSpec {
  const tagOfReadings = readingsTag(path);
  return {
    method: 'get',
    path,
    access: 'group',
    writes: false,
    summary: doc.summary,
    description: doc.description ?? rangeDescription,
    query: readingRangeQuery,
    ...(doc.params === undefined ? {} : { params: doc.params }),
    responses: { 200: readingsOrBuckets, 304: notModified, 400: invalid, 500: failed },
    // The buckets' default window moves with the clock, so only the answer of readings has a tag. A topic
    // named in the path is part of the tag: one group revision covers all of its topics.
    entityTag: async (input, useCases) => {
      if (wantsAggregation(input.query)) return undefined;
      const tag = await tagOfReadings(input, useCases);
      return doc.params === undefined || tag === undefined
        ? tag
        : tag.replace(/"$/u, `.${encodeURIComponent(String(topicOf(input)))}"`);
    },
    handle: async (input, useCases) => readRange(input.query, topicOf(input), useCases),
  };
}

export interface RejectedItem {
  /** Position of the item in the body (0 for a single object). */
  readonly index: number;
  readonly reason: string;
  /** The topic, when the item is in the compact form (one item, several readings). */
  readonly topic?: string;
}

/**
 * Expands the body into readings (core's formats), records them, and maps each rejection back to the item
 * of the body it came from: the core counts readings, a box thinks in the items it sent.
 */
async function ingest(body: unknown, { recordReadings }: HttpUseCases): Promise<Reply> {
  const expanded = expandReadingItemsWithOrigin(body);
  if (expanded.length === 0) throw new InvalidInputError('the body holds no readings');
  const result: RecordReadingsResult = await recordReadings.execute(expanded.map(({ reading }) => reading));
  const rejected = result.rejected.map(({ index, reason }): RejectedItem => {
    const origin = expanded[index];
    return {
      index: origin?.item ?? index,
      reason,
      ...(origin?.compactTopic === undefined ? {} : { topic: origin.compactTopic }),
    };
  });
  if (result.accepted === 0) {
    const [only] = rejected;
    const message =
      rejected.length === 1 && only !== undefined
        ? only.reason
        : `none of the ${rejected.length} readings was accepted`;
    return json({ message, rejected }, 400);
  }
  return json({ accepted: result.accepted, stored: result.stored, rejected }, 202);
}

const ingestAnswer = object(
  {
    accepted: { type: 'integer', description: 'Valid readings; a retry of a stored one counts too' },
    stored: { type: 'integer', description: 'Accepted readings that were not stored before' },
    rejected: {
      type: 'array',
      items: object(
        {
          index: { type: 'integer', description: 'Position of the item in the body (0 for one object)' },
          reason: { type: 'string' },
          topic: { type: 'string', description: 'For a compact item: the topic whose value was refused' },
        },
        ['index', 'reason'],
      ),
    },
  },
  ['accepted', 'stored', 'rejected'],
);

export const dataRoutes: RouterSpec = {
  prefix: '/api/data',
  tag: 'Sensor data',
  style: { body: 'message', serverError: 'Internal Server Error' },
  routes: [
    {
      method: 'get',
      path: '/latestdata',
      access: 'open',
      writes: false,
      summary: 'Liveness of the data routes',
      responses: { 200: { description: '`Running...`', text: true } },
      handle: async () => plainText('Running...'),
    },
    {
      method: 'post',
      path: '/readings',
      access: 'ingest',
      writes: true,
      summary: 'Record readings sent by a box: one, a batch, or the compact form',
      description:
        `Each reading is validated on its own; the invalid ones are listed by the index of their item in the ` +
        `body and the rest are stored. At least one accepted: 202. None accepted: 400 \`{message, rejected}\`. ` +
        `A reading whose (group, topic, time) is already stored is accepted but not stored again, so a retry ` +
        `is safe when the box sends \`time\`. At most ${MAX_READINGS_PER_BATCH} readings per request ` +
        `(INGEST_BODY_LIMIT_BYTES, 4 MiB by default); the body must be sent as application/json.`,
      body: readingsBody,
      bodyKind: 'ingest',
      responses: {
        202: {
          description: '`{accepted, stored, rejected: [{index, reason, topic?}]}`',
          schema: ingestAnswer,
        },
        400: {
          description:
            '`{message, rejected}` when no reading was accepted; `{message}` when the body is not JSON, ' +
            `holds no readings or more than ${MAX_READINGS_PER_BATCH}`,
        },
        413: { description: '`{message}`: the body is larger than the ingest limit' },
        415: { description: '`{message}`: the Content-Type is not application/json' },
        500: failed,
      },
      handle: async ({ body }, useCases) => ingest(body, useCases),
    },
    {
      method: 'get',
      path: '/export',
      access: 'group',
      writes: false,
      summary: 'Download readings of a group as CSV or NDJSON, streamed',
      description:
        'Every reading of the group (of one `topic`, or of all) with times in [`from`, `to`] when given, by ' +
        'topic then time, written page by page while the store is read, so any size takes constant memory. ' +
        'CSV has the header `group,topic,value,time`; NDJSON one `{group, topic, value, time}` per line; both ' +
        'are what `hortus readings import` reads. A CSV text cell that starts like a spreadsheet formula ' +
        '(`=`, `+`, `-`, `@`, tab, CR) is quoted behind a single quote. Saved as `<group>.<format>` by browsers.',
      query: object(
        {
          groupId: groupName(),
          topic: text('One topic (e.g. esp/air/temperature); every topic when omitted', 1000),
          from: dateText('Earliest time to include (inclusive)'),
          to: dateText('Latest time to include (inclusive; a date alone means the end of that day)'),
          format: { type: 'string', enum: [...exportFormats], description: 'csv (the default) or ndjson' },
        },
        ['groupId'],
      ),
      responses: {
        200: { description: 'CSV (text/csv) or NDJSON (application/x-ndjson), streamed', text: true },
        400: invalid,
        500: failed,
      },
      handle: async ({ query }, { exportReadings }) => {
        const format = (query['format'] ?? 'csv') as ExportFormat;
        // Checked before the first byte, so a bad parameter is a 400 rather than a broken download.
        const selection = exportReadings.select({
          group: query['groupId'],
          topic: query['topic'],
          from: query['from'],
          to: query['to'],
        });
        async function* lines(): AsyncGenerator<string> {
          if (format === 'csv') yield CSV_EXPORT_HEADER;
          for await (const page of exportReadings.pages(selection)) yield formatReadings(page, format);
        }
        return {
          status: 200,
          stream: lines(),
          type: format === 'csv' ? 'text/csv' : 'application/x-ndjson',
          filename: `${selection.group.replace(/[^\w.-]+/gu, '_')}.${format}`,
        };
      },
    },
    latestRoute('/latestdata/Temperature', sensorTopics.temperature, 'temperature'),
    latestRoute('/latestdata/Humidity', sensorTopics.humidity, 'humidity'),
    latestRoute('/latestdata/Moisture/1', sensorTopics.moisture1, 'moisture sensor 1'),
    latestRoute('/latestdata/Lux', sensorTopics.lux, 'lux'),
    // The derived series (docs/metrics.md): empty until the group has them on.
    latestRoute('/latestdata/VPD', derivedTopics.vpd, 'leaf VPD (derived, kPa)'),
    latestRoute('/latestdata/DewPoint', derivedTopics.dewPoint, 'dew point (derived, °C)'),
    latestRoute('/latestdata/PPFD', derivedTopics.ppfd, 'PPFD (derived, µmol m⁻² s⁻¹)'),
    latestRoute('/latestdata/DLI', derivedTopics.dli, 'daily light integral so far (derived, mol m⁻² d⁻¹)'),
    {
      method: 'get',
      path: '/latestdata/All',
      access: 'group',
      writes: false,
      summary: 'Newest reading of every topic of a group, one per topic',
      description: 'Carries an ETag: a poll naming it in If-None-Match gets 304 while nothing changed.',
      query: groupIdQuery,
      responses: { 200: readings, 304: notModified, 400: invalid, 500: failed },
      entityTag: readingsTag('/latestdata/All'),
      cacheByTag: true,
      handle: async ({ query }, { getLatestReadingsOfGroup }) =>
        json(present(await getLatestReadingsOfGroup.execute({ group: query['groupId'] }))),
    },
    rangeRoute('/All/temperature', sensorTopics.temperature, 'Temperature'),
    rangeRoute('/All/humidity', sensorTopics.humidity, 'Humidity'),
    rangeRoute('/All/Lux', sensorTopics.lux, 'Lux'),
    rangeRoute('/All/moisture/1', sensorTopics.moisture1, 'Moisture sensor 1'),
    rangeRoute('/All/moisture/2', sensorTopics.moisture2, 'Moisture sensor 2'),
    rangeRoute('/All/moisture/3', sensorTopics.moisture3, 'Moisture sensor 3'),
    seriesRoute('/series/*topic', ({ params }) => params['topic'], {
      summary: 'Readings of any stored topic of a group (e.g. esp/air/pressure), filtered or summarised',
      description:
        'The same filters, `count`, `interval` and `points` as the six history routes, for any topic; the ' +
        'topic is the rest of the path, slashes included (encode other reserved characters). ' +
        rangeDescription,
      params: object({ topic: text('The topic, e.g. esp/air/pressure', TOPIC_MAX_LENGTH) }, ['topic']),
    }),
    {
      method: 'get',
      path: '/tem',
      access: 'group',
      writes: false,
      summary: "Today's temperature (in the configured time zone), the earliest reading of each hour",
      query: object({ groupId: groupName(), ...readingFilters }, ['groupId']),
      responses: {
        200: {
          description: '`[{_id: hour 0-23, data: Reading}]`, hours ascending',
          schema: { type: 'array', items: { $ref: '#/components/schemas/HourlyReading' } },
        },
        400: invalid,
        500: failed,
      },
      handle: async ({ query }, { getTodayHourlyReadings }) => {
        const hours = await getTodayHourlyReadings.execute({
          group: query['groupId'],
          minValue: query['minValue'],
          maxValue: query['maxValue'],
        });
        return json(hours.map((hour) => ({ _id: hour._id, data: withUnderscoreId(hour.data) })));
      },
    },
  ],
};
