import { apiRouters, type RouteSpec } from '@hortus/http-koa';

// Fuzzing support (fuzz.test.ts): the request model: a valid example request for every route.

// ---- the request model ---------------------------------------------------------------------------------

export type QueryValue = string | readonly string[];

export interface Example {
  readonly method: string;
  /** Route path under its prefix in @koa/router syntax. */
  readonly template: string;
  readonly params: Readonly<Record<string, string>>;
  readonly query: Readonly<Record<string, QueryValue>>;
  /** undefined: no body is sent. */
  readonly body: unknown;
}

export interface WireRequest {
  readonly method: string;
  /** Already percent-encoded path and query. */
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string | Buffer;
  /** Strings the request names: the snapshot looks them up before and after. */
  readonly names: readonly string[];
}

export interface Pool {
  readonly group: string;
  readonly userId: string;
  readonly chartName: string;
  readonly deviceId: string;
  readonly time: string;
}

export const temperature = 'esp/air/temperature';
export const PASSWORD = 'Tomato#Bed42';
export const seededTime = '2025-06-15T10:00:00.000Z';

/** A valid value for each query or path parameter name the routes use. */
export function validParameter(name: string, pool: Pool): string {
  const values: Record<string, string> = {
    group: pool.group,
    groupId: pool.group,
    object: 'pump_1',
    deviceName: 'pump_1',
    value: 'on',
    deviceId: pool.deviceId,
    type: 'sensor-box',
    startDate: '2025-06-14',
    endDate: '2025-06-15T23:00:00Z',
    minValue: '10',
    maxValue: '30.5',
    count: '5',
    limit: '5',
    userId: pool.userId,
    id: pool.userId,
    chartName: pool.chartName,
    dataTyp: 'lux',
  };
  return values[name] ?? 'x';
}

/** A valid body per route (keyed by method and full path); routes without an entry send `{}`. */
export function validBody(key: string, pool: Pool): unknown {
  const bodies: Record<string, unknown> = {
    'POST /api/data/readings': [
      { group: pool.group, topic: temperature, value: 21.5, time: '2025-06-15T11:00:00Z' },
      { group: pool.group, time: '2025-06-15T11:05:00Z', values: { 'esp/air/humidity': 55 } },
    ],
    'POST /api/actions/update': {
      object: 'pump_1',
      group: pool.group,
      automations: [
        {
          timeAutomations: [{ action: 'on', time: '08:00', frequency: 'every day' }],
          sensorAutomations: [{ action: 'off', sensor: 'temperature', condition: 'above', value: '30' }],
        },
      ],
    },
    'POST /api/notification/notifications/ignore': { time: pool.time, times: [pool.time] },
    'POST /api/historyChart/update/:userId': {
      chartId: 'c2',
      chartName: 'Beds',
      chartData: { type: 'line', max_count: 100, datasets: [{ checked_lux: true }] },
    },
    'PUT /api/historyChart/change_datasets/:userId/:chartName/:dataTyp': { checked: true },
    'PUT /api/historyChart/change_type/:userId/:chartName': { type: 'scatter' },
    'PUT /api/historyChart/change_data_interval/:userId/:chartName': { data_interval: 60_000 },
    'PUT /api/historyChart/change_update_interval/:userId/:chartName': { update_interval: 5000 },
    'PUT /api/historyChart/change_max_count/:userId/:chartName': { max_count: 200 },
    'PUT /api/group/update': { settings: [{ tempMin: 15 }, { tempMax: 30 }] },
    'POST /api/changeEmail/:userId': { newEmail: 'ada@example.org' },
    'POST /api/users/': {
      firstName: 'Fuzz',
      lastName: 'Er',
      email: `${pool.group}-new@example.org`,
      password: PASSWORD,
      group: pool.group,
    },
    'POST /api/auth/': { email: `${pool.group}@example.org`, password: PASSWORD },
    'POST /api/password-reset/': { email: `${pool.group}@example.org` },
    'POST /api/password-reset/resetvalidate': {
      _id: pool.userId,
      token: 'ab'.repeat(32),
      password: PASSWORD,
    },
  };
  return bodies[key] ?? {};
}

export function propertyNames(schema: RouteSpec['query']): string[] {
  const properties = schema?.['properties'] as Record<string, unknown> | undefined;
  return properties === undefined ? [] : Object.keys(properties);
}

export interface FuzzRoute {
  readonly key: string;
  readonly prefix: string;
  readonly spec: RouteSpec;
}

export const routes: FuzzRoute[] = apiRouters.flatMap((router) =>
  router.routes.map((spec) => ({
    key: `${spec.method.toUpperCase()} ${router.prefix}${spec.path}`,
    prefix: router.prefix,
    spec,
  })),
);

export function exampleOf({ key, prefix, spec }: FuzzRoute, pool: Pool): Example {
  const params = Object.fromEntries(
    [...spec.path.matchAll(/:(\w+)/gu)].map(([, name = '']) => [name, validParameter(name, pool)]),
  );
  const query = Object.fromEntries(
    propertyNames(spec.query ?? spec.unvalidatedQuery).map((name) => [name, validParameter(name, pool)]),
  );
  return {
    method: spec.method.toUpperCase(),
    template: `${prefix}${spec.path}`,
    params,
    query,
    body: spec.body === undefined ? undefined : validBody(key, pool),
  };
}
