import { isOpenPath } from './access.js';
import { type JsonSchema, entitySchemas } from './schemas.js';
import { type RouteSpec, type RouterSpec } from './routing.js';

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

/** `/all/:userId` (or the wildcard `/series/*topic`) in @koa/router syntax is `/all/{userId}` in OpenAPI. */
export function openApiPath(prefix: string, path: string): string {
  return `${prefix}${path}`.replace(/[:*](\w+)/gu, '{$1}') || '/';
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
    };
  });
}

function operation(route: RouteSpec, tag: string, path: string): Document {
  const responses: Record<string, unknown> = {};
  for (const [status, doc] of Object.entries(route.responses)) {
    const mediaType = doc.text === true ? 'text/plain' : 'application/json';
    responses[status] = {
      description: doc.description,
      ...(doc.schema === undefined && doc.text !== true
        ? {}
        : { content: { [mediaType]: { schema: doc.schema ?? { type: 'string' } } } }),
    };
  }
  return {
    tags: [tag],
    summary: route.summary,
    ...(route.description === undefined ? {} : { description: route.description }),
    // The liveness texts of the old service answer without a key, whatever AUTH says.
    ...(route.method === 'get' && isOpenPath(path) ? { security: [] } : {}),
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
    tags: routers.map((router) => ({ name: router.tag })),
    // The empty alternative: while keys are not required (AUTH=off, or auto with no key yet) no header is needed.
    security: [{ [BEARER_SCHEME]: [] }, {}],
    paths,
    components: { schemas: entitySchemas, securitySchemes: { [BEARER_SCHEME]: bearerScheme } },
  };
}

const escapeHtml = (value: string): string =>
  value.replace(/[&<>"']/gu, (char) => `&#${char.charCodeAt(0)};`);

/** A self-contained page (no scripts, no CDN) listing every operation of the document. */
export function renderDocsPage(document: Document): string {
  const paths = document['paths'] as Record<string, Record<string, Document>>;
  const sections = new Map<string, string[]>();
  for (const [path, operations] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(operations)) {
      const tag = (op['tags'] as string[])[0] ?? 'Other';
      const params = (op['parameters'] as Document[])
        .map(
          (p) =>
            `<li><code>${escapeHtml(String(p['name']))}</code> (${escapeHtml(String(p['in']))}${p['required'] === true ? ', required' : ''})${p['description'] === undefined ? '' : ` ${escapeHtml(String(p['description']))}`}</li>`,
        )
        .join('');
      const body =
        op['requestBody'] === undefined
          ? ''
          : `<details><summary>Body schema</summary><pre>${escapeHtml(JSON.stringify((op['requestBody'] as { content: Record<string, Document> }).content['application/json']?.['schema'], null, 2))}</pre></details>`;
      const responses = Object.entries(op['responses'] as Record<string, { description: string }>)
        .map(
          ([status, response]) => `<li><b>${escapeHtml(status)}</b> ${escapeHtml(response.description)}</li>`,
        )
        .join('');
      const entry = `<section><h3><span class="m ${escapeHtml(method)}">${escapeHtml(method.toUpperCase())}</span> <code>${escapeHtml(path)}</code></h3><p>${escapeHtml(String(op['summary']))}</p>${op['description'] === undefined ? '' : `<p>${escapeHtml(String(op['description']))}</p>`}${params === '' ? '' : `<ul>${params}</ul>`}${body}<ul class="r">${responses}</ul></section>`;
      sections.set(tag, [...(sections.get(tag) ?? []), entry]);
    }
  }
  const info = document['info'] as { title: string; version: string; description: string };
  const content = [...sections]
    .map(([tag, entries]) => `<h2>${escapeHtml(tag)}</h2>${entries.join('')}`)
    .join('');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(info.title)}</title><style>body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#1d2a1f}section{border-top:1px solid #d5dfd6;padding:.5rem 0}h3{font-size:1rem;margin:.3rem 0}.m{display:inline-block;min-width:4rem;color:#fff;border-radius:3px;padding:0 .4rem;text-align:center;font-size:.8rem}.get{background:#2f6f3e}.post{background:#1f5a8a}.put{background:#8a5a1f}.delete{background:#8a1f2f}pre{background:#f3f6f3;padding:.5rem;overflow:auto}ul{margin:.2rem 0}.r{color:#444}</style></head><body><h1>${escapeHtml(info.title)} ${escapeHtml(info.version)}</h1><p>${escapeHtml(info.description)}</p><p>Machine-readable: <a href="/api/openapi.json">/api/openapi.json</a> (OpenAPI 3.1).</p>${content}</body></html>`;
}
