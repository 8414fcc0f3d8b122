import { entitySchemas } from '../routes/entity-schemas.js';
import { type JsonSchema } from '../routes/schemas.js';
import { type RouteSpec, type RouterSpec } from '../routes/routing.js';

export const API_VERSION = '0.1.0';

type Document = Record<string, unknown>;

/** The name under which the document declares the `Authorization: Bearer` scheme. */
export const BEARER_SCHEME = 'bearerAuth';

const bearerScheme = {
  type: 'http',
  scheme: 'bearer',
  description:
    'An access key `hk_...` (created with `hortus keys create`), sent as `Authorization: Bearer hk_...`; ' +
    'log-in tokens will be accepted the same way once they exist. With AUTH=auto a key is required once ' +
    'the store holds one, with AUTH=on always, with AUTH=off never.',
} as const;

/**
 * `/all/:userId` (or the wildcard `/series/*topic`) in @koa/router syntax is `/all/{userId}` in OpenAPI. A
 * trailing slash is left out: every path matches with or without one, and OpenAPI tools treat
 * `/api/actions/` as a mistake.
 */
export function openApiPath(prefix: string, path: string): string {
  return `${prefix}${path}`.replace(/[:*](\w+)/gu, '{$1}').replace(/(.)\/$/u, '$1') || '/';
}

/** Example values by parameter name, so every operation shows a request that would work on the demo. */
const parameterExamples: Readonly<Record<string, string>> = {
  group: 'demo',
  groupId: 'demo',
  topic: 'esp/air/temperature',
  startDate: '2025-06-15T00:00:00Z',
  endDate: '2025-06-15T23:59:59Z',
  from: '2025-06-15',
  to: '2025-06-15T12:00:00Z',
  minValue: '10',
  maxValue: '35',
  count: '100',
  interval: '1h',
  points: '24',
  format: 'csv',
  userId: '000000000000000000000001',
  chartName: 'temperature',
  object: 'pump_1',
  deviceId: '24:6F:28:AA:00:01',
};

/** Answers every operation may give: no key, a key that may not, too many requests. */
const commonResponses = {
  401: 'Unauthorized',
  403: 'Forbidden',
  429: 'TooManyRequests',
} as const;

const errorBody = (description: string, message: string): Document => ({
  description,
  content: {
    'application/json': {
      schema: { $ref: '#/components/schemas/Error' },
      example: { message },
    },
  },
});

const sharedResponses: Document = {
  Unauthorized: errorBody(
    'Access keys are required and the request has none, or an unknown or revoked one',
    'An access key is required: send Authorization: Bearer hk_...',
  ),
  Forbidden: errorBody(
    "The credential's role may not use this route or this group (a viewer writing, a key limited to " +
      "other groups, a route for admins); in the error shape of the route's area",
    'This key may not reach group "demo"',
  ),
  TooManyRequests: {
    ...errorBody(
      'More than RATE_LIMIT_PER_MINUTE requests from this client address in a minute',
      'Too many requests, try again in 12 s',
    ),
    headers: {
      'Retry-After': {
        description: 'Seconds until the next request is allowed',
        schema: { type: 'integer' },
      },
    },
  },
};

/** Examples of the entities, shown with every answer that holds them. */
const entityExamples: Readonly<Record<string, unknown>> = {
  Reading: {
    _id: '6650a1f0c2a4b1e2f3a4b5c6',
    group: 'demo',
    topic: 'esp/air/temperature',
    value: 21.5,
    time: '2025-06-15T12:00:00.000Z',
  },
  ReadingBucket: { time: '2025-06-15T12:00:00.000Z', min: 20.1, max: 23.4, avg: 21.8, count: 12 },
};

/** `GET /api/data/latestdata/All` → `getApiDataLatestdataAll`: stable, unique and URL-safe. */
export function operationIdOf(method: string, path: string): string {
  const words = path
    .split(/[^A-Za-z0-9]+/u)
    .filter((word) => word !== '')
    .map((word) => word[0]?.toUpperCase() + word.slice(1));
  return `${method.toLowerCase()}${words.join('') || 'Root'}`;
}

function parameters(schema: JsonSchema | undefined, location: 'query' | 'path'): unknown[] {
  if (schema === undefined) return [];
  const props = (schema['properties'] ?? {}) as Record<string, JsonSchema>;
  const required = new Set((schema['required'] ?? []) as string[]);
  return Object.entries(props).map(([name, property]) => {
    const { description, ...rest } = property;
    return {
      name,
      in: location,
      required: location === 'path' || required.has(name),
      ...(description === undefined ? {} : { description }),
      schema: rest,
      ...(parameterExamples[name] === undefined ? {} : { example: parameterExamples[name] }),
    };
  });
}

function operation(route: RouteSpec, tag: string, path: string): Document {
  const responses: Record<string, unknown> = {};
  for (const [status, doc] of Object.entries(route.responses)) {
    const mediaType = doc.text === true ? 'text/plain' : 'application/json';
    const schema = doc.schema ?? (doc.text === true ? { type: 'string' } : undefined);
    // An answer described only in words is still a JSON body (`{message}` for errors) or nothing (304).
    const content =
      schema !== undefined
        ? { [mediaType]: { schema } }
        : Number(status) >= 400
          ? { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } }
          : undefined;
    responses[status] = { description: doc.description, ...(content === undefined ? {} : { content }) };
  }
  for (const [status, name] of Object.entries(commonResponses)) {
    responses[status] ??= { $ref: `#/components/responses/${name}` };
  }
  return {
    operationId: operationIdOf(route.method, path),
    tags: [tag],
    summary: route.summary,
    ...(route.description === undefined ? {} : { description: route.description }),
    // The liveness texts of the old service answer without a key, whatever AUTH says.
    ...(route.access === 'open' ? { security: [] } : {}),
    parameters: [
      ...parameters(route.params, 'path'),
      ...parameters(route.query ?? route.unvalidatedQuery, 'query'),
    ],
    ...(route.body === undefined
      ? {}
      : { requestBody: { required: true, content: { 'application/json': { schema: route.body } } } }),
    responses,
  };
}

const operationsTag = 'Operations';
const shared = Object.fromEntries(
  Object.entries(commonResponses).map(([status, name]) => [
    status,
    { $ref: `#/components/responses/${name}` },
  ]),
);

/** The operator routes answer outside the routers (edge/operations.ts), so they are described here. */
const operationsPaths: Record<string, Record<string, unknown>> = {
  '/healthz': {
    get: {
      operationId: 'getHealthz',
      tags: [operationsTag],
      summary: 'Liveness: the process serves',
      description: 'Always open (no key) and answered on any Host; for orchestrators and load balancers.',
      security: [],
      responses: {
        200: {
          description: 'The process serves',
          content: { 'application/json': { schema: { type: 'object' }, example: { status: 'ok' } } },
        },
        ...shared,
      },
    },
  },
  '/readyz': {
    get: {
      operationId: 'getReadyz',
      tags: [operationsTag],
      summary: 'Readiness: the store answers too',
      description: 'Always open (no key). Take the server out of rotation while it answers 503.',
      security: [],
      responses: {
        200: {
          description: 'The store answers',
          content: { 'application/json': { schema: { type: 'object' }, example: { status: 'ready' } } },
        },
        503: {
          description: 'The store does not answer',
          content: {
            'application/json': {
              schema: { type: 'object' },
              example: { status: 'unavailable', message: 'The data store does not answer' },
            },
          },
        },
        ...shared,
      },
    },
  },
  '/metrics': {
    get: {
      operationId: 'getMetrics',
      tags: [operationsTag],
      summary: 'Prometheus metrics: requests, latencies, store and MQTT counters',
      description: 'Open while no key is required; otherwise it takes an admin key.',
      responses: {
        200: {
          description: 'Prometheus text format 0.0.4',
          content: {
            'text/plain': {
              schema: { type: 'string' },
              example:
                'hortus_http_requests_total{method="GET",route="/api/data/latestdata/All",status="200"} 42\n',
            },
          },
        },
        ...shared,
      },
    },
  },
};

/** The OpenAPI 3.1 description of every route, built from the same schemas that validate requests. */
export function buildOpenApiDocument(routers: readonly RouterSpec[]): Document {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const router of routers) {
    for (const route of router.routes) {
      const path = openApiPath(router.prefix, route.path);
      paths[path] = {
        ...paths[path],
        [route.method]: operation(route, router.tag, `${router.prefix}${route.path}`),
      };
    }
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Hortus API',
      version: API_VERSION,
      description:
        'Sensor and device monitoring for greenhouses. Paths match case-insensitively and accept a trailing slash; unknown query parameters are ignored.',
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    servers: [{ url: '/', description: 'This server' }],
    // Several routers share a tag (the Service routes); a tag is declared once.
    tags: [...new Set([...routers.map((router) => router.tag), operationsTag])].map((name) => ({
      name,
      description: tagDescriptions[name] ?? `The ${name} routes`,
    })),
    // The empty alternative: while keys are not required (AUTH=off, or auto with no key yet) no header is needed.
    security: [{ [BEARER_SCHEME]: [] }, {}],
    paths: { ...paths, ...operationsPaths },
    components: {
      schemas: {
        ...Object.fromEntries(
          Object.entries(entitySchemas).map(([name, schema]) => [
            name,
            entityExamples[name] === undefined ? schema : { ...schema, examples: [entityExamples[name]] },
          ]),
        ),
        Error: {
          type: 'object',
          properties: { message: { type: 'string' } },
          required: ['message'],
          examples: [{ message: 'groupId is required' }],
        },
      },
      responses: sharedResponses,
      securitySchemes: { [BEARER_SCHEME]: bearerScheme },
    },
  };
}

const tagDescriptions: Readonly<Record<string, string>> = {
  Service: 'Liveness texts of the original service and this description',
  Accounts: 'Sign-up, log-in tokens, the profile and password reset',
  Actions: 'Switchable objects (pumps, lights, fans), their values and automations',
  'Sensor data': 'Readings: the newest, history with filters or buckets, ingest and export',
  Devices: 'Boxes registered to a group',
  Groups: 'Groups and their settings',
  'History charts': "A user's saved chart settings",
  Notifications: 'Open notifications and the recent commits of the repository',
  Administration: 'What only administrators see: the audit trail of configuration changes',
  Users: 'User e-mail changes',
  [operationsTag]: 'Health, readiness and metrics for operators and orchestrators',
};

const escapeHtml = (value: string): string =>
  value.replace(/[&<>"']/gu, (char) => `&#${char.charCodeAt(0)};`);

/** Where the docs page loads Redoc from: this server, which reads it from the `redoc` package. */
export const REDOC_SCRIPT_PATH = '/api/docs/redoc.standalone.js';

/** What the docs page may load: its script and the document from this server, nothing from elsewhere. */
export const DOCS_CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
  "font-src 'self' data:; connect-src 'self'; worker-src blob:; frame-ancestors 'none'";

/**
 * The reference page: Redoc (navigation, search, schemas, examples) rendering /api/openapi.json, with its
 * script served by this server, so nothing comes from a CDN. Without scripts, a plain list of the operations.
 */
export function renderDocsPage(document: Document): string {
  const paths = document['paths'] as Record<string, Record<string, Document>>;
  const items: string[] = [];
  for (const [path, operations] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(operations)) {
      items.push(
        `<li><code>${escapeHtml(method.toUpperCase())} ${escapeHtml(path)}</code> ${escapeHtml(String(op['summary']))}</li>`,
      );
    }
  }
  const info = document['info'] as { title: string; version: string };
  const title = `${escapeHtml(info.title)} ${escapeHtml(info.version)}`;
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8">` +
    `<meta name="viewport" content="width=device-width, initial-scale=1"><title>${title}</title>` +
    // No icon: else the browser asks for /favicon.ico, a 404.
    `<link rel="icon" href="data:,">` +
    `<style>body{margin:0}</style></head><body>` +
    `<redoc spec-url="/api/openapi.json" hide-hostname="true"></redoc>` +
    `<noscript><h1>${title}</h1><p>This reference needs JavaScript; the document itself is ` +
    `<a href="/api/openapi.json">/api/openapi.json</a> (OpenAPI 3.1).</p><ul>${items.join('')}</ul></noscript>` +
    `<script src="${REDOC_SCRIPT_PATH}"></script></body></html>`
  );
}
