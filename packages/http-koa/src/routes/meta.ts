import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { DOCS_CONTENT_SECURITY_POLICY, REDOC_SCRIPT_PATH } from '../openapi/openapi.js';
import { json, plainText, type RouterSpec } from './routing.js';

/** Redoc's browser bundle, from the installed `redoc` package: the docs page loads it from this server. */
const redocScriptFile = createRequire(import.meta.url).resolve('redoc/bundles/redoc.standalone.js');

// The one outside address in Redoc's bundle: its footer logo, from Redocly's CDN. An empty image instead,
// so the reference page asks nothing of any other host (the page's CSP would block it, with a console error).
const REDOC_CDN_LOGO = 'https://cdn.redoc.ly/redoc/logo-mini.svg';
const EMPTY_SVG = "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg'/%3E";

let redocScript: string | undefined;

/** Read once, at the first visit of the docs page: about 1 MB that most servers never need. */
function redocBundle(): string {
  redocScript ??= readFileSync(redocScriptFile, 'utf8').replaceAll(REDOC_CDN_LOGO, EMPTY_SVG);
  return redocScript;
}

/** The liveness texts of the old service and the API description. */
export function metaRoutes(openApi: () => unknown, docsPage: () => string): RouterSpec {
  return {
    prefix: '',
    tag: 'Service',
    style: { body: 'message', serverError: 'Internal Server Error' },
    routes: [
      {
        method: 'get',
        path: '/',
        access: 'open',
        writes: false,
        summary: 'Liveness',
        responses: { 200: { description: '`Running...`', text: true } },
        handle: async () => plainText('Running...'),
      },
      {
        method: 'get',
        path: '/api',
        access: 'open',
        writes: false,
        summary: 'Liveness of the API',
        responses: { 200: { description: '`Running API...`', text: true } },
        handle: async () => plainText('Running API...'),
      },
      {
        method: 'get',
        path: '/api/openapi.json',
        // The reference describes the routes and holds no data: readable with keys in use, too.
        access: 'open',
        writes: false,
        summary: 'This description, OpenAPI 3.1',
        responses: { 200: { description: 'The OpenAPI document', schema: { type: 'object' } } },
        handle: async () => json(openApi()),
      },
      {
        method: 'get',
        path: '/api/docs',
        access: 'open',
        writes: false,
        summary: 'The API reference: Redoc rendering this description',
        responses: { 200: { description: 'HTML page', schema: { type: 'string' } } },
        handle: async () => ({ status: 200, html: docsPage(), csp: DOCS_CONTENT_SECURITY_POLICY }),
      },
      {
        method: 'get',
        path: REDOC_SCRIPT_PATH,
        access: 'open',
        writes: false,
        summary: 'The Redoc script the reference page loads',
        responses: { 200: { description: 'JavaScript (Redoc standalone bundle)', text: true } },
        handle: async () => ({
          status: 200,
          stream: (async function* () {
            yield redocBundle();
          })(),
          type: 'application/javascript',
        }),
      },
    ],
  };
}
