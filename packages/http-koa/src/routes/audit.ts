import { MAX_AUDIT_LIMIT } from '@hortus/core';
import { object } from './schemas.js';
import { json, type RouterSpec } from './routing.js';

const auditQuery = object({
  group: { type: 'string', description: "Only this group's entries" },
  since: { type: 'string', format: 'date-time', description: 'Only entries at or after this time' },
  limit: {
    type: 'string',
    pattern: '^[0-9]+$',
    description: `How many, newest first: 1 to ${MAX_AUDIT_LIMIT} (default 100)`,
  },
});

const entry = object(
  {
    id: { type: 'string' },
    at: { type: 'string', format: 'date-time' },
    actor: object(
      {
        kind: { type: 'string', description: 'user, key, cli, anonymous, ...' },
        id: { type: 'string', description: 'The user id, key id, or OS user of the console' },
        name: { type: 'string', description: "The user's e-mail at that time, when known" },
      },
      ['kind'],
    ),
    action: {
      type: 'string',
      description: '`group.settings`, `alert.range`, `key.create`, `device.lock`, ...',
    },
    target: { type: 'string' },
    group: { type: 'string' },
    before: { description: 'The value before (JSON); absent for something created' },
    after: { description: 'The value after (JSON); absent for something removed' },
  },
  ['id', 'at', 'actor', 'action', 'target'],
);

/** The audit trail of configuration changes (docs/security.md, "Audit trail"): admins only. */
export const auditRoutes: RouterSpec = {
  prefix: '/api/audit',
  tag: 'Administration',
  style: { body: 'message', serverError: 'Internal Server Error' },
  routes: [
    {
      method: 'get',
      path: '/',
      access: 'admin',
      writes: false,
      summary: 'Who changed which configuration, before and after, newest first',
      description:
        'Every change of settings, ranges, rules, limits, boxes, keys and users, through any door (HTTP, CLI).',
      query: auditQuery,
      responses: {
        200: { description: 'A bare array of entries', schema: { type: 'array', items: entry } },
        400: { description: '`{message}` naming the invalid parameter' },
        500: { description: "`{message: 'Internal Server Error'}`" },
      },
      handle: async ({ query }, { listAuditTrail }) =>
        json(
          await listAuditTrail.execute({
            group: query['group'],
            since: query['since'],
            limit: query['limit'],
          }),
        ),
    },
  ],
};
