import { type Reading, sensorTopics } from '@hortus/core';
import { groupIdQuery, groupName, object, readingFilters, readingRangeQuery } from '../schemas.js';
import {
  json,
  plainText,
  type ResponseDoc,
  type RouteInput,
  type RouteSpec,
  type RouterSpec,
  withUnderscoreId,
} from '../routing.js';

const readings: ResponseDoc = {
  description: 'Readings `{_id, group, topic, value, time}`',
  schema: { type: 'array', items: { $ref: '#/components/schemas/Reading' } },
};
const invalid: ResponseDoc = { description: '`{message}` naming the invalid parameter' };
const failed: ResponseDoc = { description: "`{message: 'Internal Server Error'}`" };

const present = (list: readonly Reading[]): unknown[] => list.map(withUnderscoreId);

/** A date-time without an offset is read as UTC; a date alone as an end bound means the end of that day. */
function instant(value: unknown, endOfDay: boolean): unknown {
  if (typeof value !== 'string') return value;
  const trimmed = value.trim();
  if (/^\d{4}-\d{2}-\d{2}$/u.test(trimmed))
    return endOfDay ? `${trimmed}T23:59:59.999Z` : `${trimmed}T00:00:00Z`;
  const hasOffset = /(Z|z|[+-]\d{2}(:?\d{2})?)$/u.test(trimmed.slice(10));
  return hasOffset ? trimmed : `${trimmed.replace(' ', 'T')}Z`;
}

function latestRoute(path: string, topic: string, sensor: string): RouteSpec {
  return {
    method: 'get',
    path,
    summary: `Newest ${sensor} reading of a group (an array of zero or one)`,
    query: groupIdQuery,
    responses: { 200: readings, 400: invalid, 500: failed },
    handle: async ({ query }, { getLatestReading }) =>
      json(present(await getLatestReading.execute({ group: query['groupId'], topic }))),
  };
}

function rangeRoute(path: string, topic: string, sensor: string): RouteSpec {
  return {
    method: 'get',
    path,
    summary: `${sensor} readings of a group, newest first, filtered by time and value`,
    query: readingRangeQuery,
    responses: { 200: readings, 400: invalid, 500: failed },
    handle: async ({ query }: RouteInput, { queryReadings }) =>
      json(
        present(
          await queryReadings.execute({
            group: query['groupId'],
            topic,
            startDate: instant(query['startDate'], false),
            endDate: instant(query['endDate'], true),
            minValue: query['minValue'],
            maxValue: query['maxValue'],
            count: query['count'],
          }),
        ),
      ),
  };
}

export const dataRoutes: RouterSpec = {
  prefix: '/api/data',
  tag: 'Sensor data',
  style: { body: 'message', serverError: 'Internal Server Error' },
  routes: [
    {
      method: 'get',
      path: '/latestdata',
      summary: 'Liveness of the data routes',
      responses: { 200: { description: '`Running...`', text: true } },
      handle: async () => plainText('Running...'),
    },
    latestRoute('/latestdata/Temperature', sensorTopics.temperature, 'temperature'),
    latestRoute('/latestdata/Humidity', sensorTopics.humidity, 'humidity'),
    latestRoute('/latestdata/Moisture/1', sensorTopics.moisture1, 'moisture sensor 1'),
    latestRoute('/latestdata/Lux', sensorTopics.lux, 'lux'),
    {
      method: 'get',
      path: '/latestdata/All',
      summary: 'Newest reading of every topic of a group, one per topic',
      query: groupIdQuery,
      responses: { 200: readings, 400: invalid, 500: failed },
      handle: async ({ query }, { getLatestReadingsOfGroup }) =>
        json(present(await getLatestReadingsOfGroup.execute({ group: query['groupId'] }))),
    },
    rangeRoute('/All/temperature', sensorTopics.temperature, 'Temperature'),
    rangeRoute('/All/humidity', sensorTopics.humidity, 'Humidity'),
    rangeRoute('/All/Lux', sensorTopics.lux, 'Lux'),
    rangeRoute('/All/moisture/1', sensorTopics.moisture1, 'Moisture sensor 1'),
    rangeRoute('/All/moisture/2', sensorTopics.moisture2, 'Moisture sensor 2'),
    rangeRoute('/All/moisture/3', sensorTopics.moisture3, 'Moisture sensor 3'),
    {
      method: 'get',
      path: '/tem',
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
