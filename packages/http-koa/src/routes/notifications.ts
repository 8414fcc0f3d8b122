import { actorOf } from '@hortus/core';
import { revisionTag } from './conditional.js';
import { groupIdQuery, ignoreBody, object } from './schemas.js';
import { emptyReply, json, type ResponseDoc, type RouterSpec, withUnderscoreId } from './routing.js';

const failed: ResponseDoc = { description: "`{message: 'Internal Server Error'}`" };

export const notificationRoutes: RouterSpec = {
  prefix: '/api/notification',
  tag: 'Notifications',
  style: { body: 'message', serverError: 'Internal Server Error' },
  routes: [
    {
      method: 'get',
      path: '/latestdata/notifications',
      access: 'group',
      writes: false,
      summary: 'Notifications of a group that are not ignored, newest first',
      description:
        'The original service applied this validator to the body; Hortus validates the `groupId` query parameter. Carries an ' +
        'ETag: a poll naming it in If-None-Match gets 304 while no notification of the group changed.',
      query: groupIdQuery,
      responses: {
        200: {
          description: 'A bare array of notifications',
          schema: { type: 'array', items: { $ref: '#/components/schemas/Notification' } },
        },
        304: { description: 'No body: no notification of the group changed since the ETag in If-None-Match' },
        400: { description: '`{message}` naming the invalid parameter' },
        500: failed,
      },
      entityTag: revisionTag('/notifications', 'notifications', 'groupId'),
      cacheByTag: true,
      handle: async ({ query }, { listOpenNotifications }) =>
        json((await listOpenNotifications.execute({ group: query['groupId'] })).map(withUnderscoreId)),
    },
    {
      method: 'post',
      path: '/notifications/ignore',
      access: 'group',
      writes: true,
      summary: 'Mark notifications of a group ignored by their time',
      description:
        'With `times`, every match is ignored and no match is no error; with only `time`, no match is a 404.',
      query: groupIdQuery,
      body: ignoreBody,
      responses: {
        200: { description: 'Empty body' },
        400: {
          description: "`{message}` naming the invalid field, or `{message: 'No time or times provided'}`",
        },
        404: { description: "`{message: 'Notification not found'}`" },
        500: failed,
      },
      handle: async ({ query, body }, { ignoreNotifications }) => {
        await ignoreNotifications.execute({
          group: query['groupId'],
          time: body['time'],
          times: body['times'],
        });
        return emptyReply();
      },
    },
    {
      method: 'post',
      path: '/notifications/:id/ack',
      access: 'group',
      writes: true,
      summary: 'Acknowledge a notification of a group: "seen, on it"',
      description:
        'Records who acknowledged it and when (`acknowledged: {at, by}` in the lists); it stays listed until ' +
        'ignored. A critical alert is no longer sent again once acknowledged. Acknowledging again keeps the first.',
      query: groupIdQuery,
      params: object({ id: { type: 'string', description: 'The notification `_id`' } }, ['id']),
      responses: {
        200: {
          description: 'The notification, acknowledged',
          schema: { $ref: '#/components/schemas/Notification' },
        },
        400: { description: '`{message}` naming the invalid parameter' },
        404: { description: "`{message: 'Notification not found'}`" },
        500: failed,
      },
      handle: async ({ query, params, caller }, { acknowledgeNotification }) =>
        json(
          withUnderscoreId(
            await acknowledgeNotification.execute({
              group: query['groupId'],
              id: params['id'],
              actor: actorOf(caller),
            }),
          ),
        ),
    },
    {
      method: 'get',
      path: '/latestdata/github',
      access: 'service',
      writes: false,
      summary:
        'The ten newest commits of the main branch of the configured repository, as the code host gives them',
      description: 'Cached; when the code host fails, the last good copy is served.',
      style: { body: 'text', serverError: 'An error occurred while fetching data from the code host' },
      responses: {
        200: { description: "The code host's JSON, unchanged", schema: { type: 'array' } },
        500: { description: 'Plain text saying the code host could not be reached', text: true },
      },
      handle: async (_input, { getRecentCommits }) => json(await getRecentCommits.execute()),
    },
  ],
};
