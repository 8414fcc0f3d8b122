import { json, plainText, type RouterSpec } from '../routing.js';

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
        summary: 'Liveness',
        responses: { 200: { description: '`Running...`', text: true } },
        handle: async () => plainText('Running...'),
      },
      {
        method: 'get',
        path: '/api',
        summary: 'Liveness of the API',
        responses: { 200: { description: '`Running API...`', text: true } },
        handle: async () => plainText('Running API...'),
      },
      {
        method: 'get',
        path: '/api/openapi.json',
        summary: 'This description, OpenAPI 3.1',
        responses: { 200: { description: 'The OpenAPI document', schema: { type: 'object' } } },
        handle: async () => json(openApi()),
      },
      {
        method: 'get',
        path: '/api/docs',
        summary: 'A browsable page listing every route',
        responses: { 200: { description: 'HTML page' } },
        handle: async () => ({ status: 200, html: docsPage() }),
      },
    ],
  };
}
