import { actorOf, type Group } from '@hortus/core';
import { groupIdQuery, groupQuery, object } from './schemas.js';
import { revisionTag } from './conditional.js';
import { json, type ResponseDoc, type RouterSpec, withUnderscoreId } from './routing.js';

const failed: ResponseDoc = { description: "`{message: 'Internal server error'}`" };
const invalid: ResponseDoc = {
  description:
    '`{message}` when the group name is missing, repeated or too long (the original service had no 400 here)',
};
const notFound: ResponseDoc = { description: "`{message: 'Group not found'}`" };
const group: ResponseDoc = { description: 'The group', schema: { $ref: '#/components/schemas/Group' } };

/** The retention override is the operator's (CLI), not part of the group record clients know. */
const present = ({ retentionDays: _operatorOnly, ...entity }: Group): unknown => withUnderscoreId(entity);

export const groupRoutes: RouterSpec = {
  prefix: '/api/group',
  tag: 'Groups',
  style: { body: 'message', serverError: 'Internal server error' },
  routes: [
    {
      method: 'get',
      path: '/checkgroup',
      // Checked by the use case: the web client's sign-up form asks before anyone has logged in.
      access: 'account',
      writes: false,
      summary: 'Whether a group with that name exists',
      description:
        'While access keys are required: answered to a caller who may read the group, and to anyone while ' +
        'SIGNUP=open (the web client asks before signing up; sign-up tells the same).',
      query: groupQuery,
      responses: {
        200: {
          description: '`{exists: boolean}`',
          schema: object({ exists: { type: 'boolean' } }, ['exists']),
        },
        400: invalid,
        500: failed,
      },
      handle: async ({ query, caller, accessRequired }, { checkGroup }) =>
        json({ exists: await checkGroup.execute({ name: query['group'] }, { caller, accessRequired }) }),
    },
    {
      method: 'get',
      path: '/abo',
      access: 'group',
      writes: false,
      summary: 'The group record',
      description:
        'Carries an ETag: a poll naming it in If-None-Match gets 304 while the group is unchanged.',
      query: groupQuery,
      entityTag: revisionTag('/abo', 'group', 'group'),
      cacheByTag: true,
      responses: {
        200: group,
        304: { description: 'No body: the group is unchanged since the ETag in If-None-Match' },
        400: invalid,
        404: notFound,
        500: failed,
      },
      handle: async ({ query }, { getGroup }) =>
        json(present(await getGroup.execute({ name: query['group'] }))),
    },
    {
      method: 'put',
      path: '/update',
      access: 'group',
      writes: true,
      summary: "Replace the group's settings as a whole",
      query: groupIdQuery,
      body: object({ settings: { description: 'Any JSON value, stored and handed back unchanged' } }, [
        'settings',
      ]),
      responses: { 200: group, 400: invalid, 404: notFound, 500: failed },
      handle: async ({ query, body, caller }, { updateGroupSettings }) =>
        json(
          present(
            await updateGroupSettings.execute({
              name: query['groupId'],
              settings: body['settings'],
              actor: actorOf(caller),
            }),
          ),
        ),
    },
    {
      method: 'get',
      path: '/settings',
      access: 'group',
      writes: false,
      summary: "The group's settings value",
      query: groupIdQuery,
      responses: {
        200: { description: 'The settings, as stored' },
        400: invalid,
        404: notFound,
        500: failed,
      },
      handle: async ({ query }, { getGroup }) =>
        json((await getGroup.execute({ name: query['groupId'] })).settings),
    },
  ],
};
