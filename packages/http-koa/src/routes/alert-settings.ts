import { actorOf } from '@hortus/core';
import {
  alertEvents,
  BOX_ALERTS_KEY,
  type NotifyView,
  readBoxAlerts,
  severities,
  watchedRanges,
  webhookFormats,
} from '@hortus/core';
import { groupName, groupQuery, object, text } from './schemas.js';
import { json, type RouteSpec, type RouterSpec } from './routing.js';

/**
 * Where a group's alerts come from and go to, over HTTP (`hortus group alert` and `hortus group notify`):
 * ranges and no-data deadlines per topic and per box are the group's (operators of the group and admins
 * change them, viewers read them); webhooks hold secrets and send the group's data elsewhere, so they are
 * the admins'.
 */
const message = { body: 'message', serverError: 'Internal Server Error' } as const;

const writeAnswers = {
  400: { description: '`{message}` naming the bad field' },
  403: { description: '`{message}`: the credential may not change this group (a viewer, another group)' },
  404: { description: '`{message}`: no such group' },
} as const;

const severity = {
  type: ['string', 'null'],
  enum: [...severities, null],
  description: '`warning` or `critical`; `null` drops it (a warning)',
};

const number = (description: string): Record<string, unknown> => ({
  type: ['number', 'null'],
  description: `${description}; \`null\` drops it`,
});

/** What the webhooks of a group look like outside the store: URLs masked as the CLI lists them, the secret's end only. */
function shownNotify(view: NotifyView): Record<string, unknown> {
  return {
    ...view,
    webhooks: view.webhooks.map((hook) => ({
      url: hook.masked,
      format: hook.format ?? 'json',
      secret: `…${hook.secret.slice(-4)}`,
    })),
  };
}

const alertRoutes: readonly RouteSpec[] = [
  {
    method: 'get',
    path: '/',
    access: 'group',
    writes: false,
    summary: "A group's alert ranges and no-data deadlines",
    description:
      '`{group, topics: [{topic, min?, max?, hysteresis?, delayMs?, noDataMs?, source}], boxes: [{deviceId, noDataMs}]}` ' +
      '(`hortus group alert <group>`); `source` names the settings key a range comes from.',
    query: groupQuery,
    responses: {
      200: { description: 'The ranges and deadlines' },
      404: { description: '`{message}`: no such group' },
    },
    handle: async ({ query }, { getGroup }) => {
      const group = await getGroup.execute({ name: query['group'] });
      return json({
        group: group.name,
        topics: [...watchedRanges(group.settings)].map(([topic, { range, source }]) => ({
          topic,
          ...range,
          source,
        })),
        boxes: [...readBoxAlerts(group.settings)].map(([deviceId, alert]) => ({
          deviceId,
          ...alert,
          source: BOX_ALERTS_KEY,
        })),
      });
    },
  },
  {
    method: 'put',
    path: '/topic',
    access: 'group',
    writes: true,
    summary: "Set or remove a topic's alert range and no-data deadline",
    description:
      "Changes only the fields given (`null` drops one); `remove: true` drops the topic's range (`hortus group alert <group> <topic>`). " +
      'Answers `{group, topic, range?}`.',
    body: object(
      {
        group: groupName(),
        topic: text('Reading topic, e.g. `esp/air/temperature`', 200),
        min: number('Lower bound'),
        max: number('Upper bound'),
        hysteresis: number('How far back inside a bound the value must come for the alert to end'),
        delayMs: number('How long the value must stay outside before the alert opens (ms)'),
        noDataMs: number('Silence after which a "no data" alert opens (ms)'),
        severity,
        remove: { type: 'boolean', description: "Drop the topic's range" },
      },
      ['group', 'topic'],
    ),
    responses: { 200: { description: '`{group, topic, range?}`' }, ...writeAnswers },
    handle: async ({ body, caller }, { setTopicAlert }) =>
      json(
        await setTopicAlert.execute({
          actor: actorOf(caller),
          group: body['group'],
          topic: body['topic'],
          ...Object.fromEntries(
            ['min', 'max', 'hysteresis', 'delayMs', 'noDataMs', 'severity']
              .filter((field) => field in body)
              .map((field) => [field, body[field]]),
          ),
          remove: body['remove'] === true,
        }),
      ),
  },
  {
    method: 'put',
    path: '/box',
    access: 'group',
    writes: true,
    summary: "Set or remove a box's no-data deadline",
    description:
      '`deviceId` names a box of the group (any spelling of its MAC), or `*` for every box of it without its own ' +
      '(`hortus group alert <group> --box`). Answers `{group, deviceId, alert?}`.',
    body: object(
      {
        group: groupName(),
        deviceId: text('The box, or `*`'),
        noDataMs: number('Silence after which a "no data" alert opens (ms)'),
        severity,
        remove: { type: 'boolean', description: "Drop the box's deadline" },
      },
      ['group', 'deviceId'],
    ),
    responses: { 200: { description: '`{group, deviceId, alert?}`' }, ...writeAnswers },
    handle: async ({ body, caller }, { setBoxAlert }) =>
      json(
        await setBoxAlert.execute({
          actor: actorOf(caller),
          group: body['group'],
          deviceId: body['deviceId'],
          ...('noDataMs' in body ? { noDataMs: body['noDataMs'] } : {}),
          ...('severity' in body ? { severity: body['severity'] } : {}),
          remove: body['remove'] === true,
        }),
      ),
  },
  {
    method: 'get',
    path: '/notify',
    access: 'admin',
    writes: false,
    summary: "Where a group's alerts are sent",
    description:
      '`{group, email?, events, webhooks: [{url, format, secret}]}` (`hortus group notify <group>`): each URL masked ' +
      '(`https://host/… #a1b2c3`: its origin and a digest of the whole URL, as `removeWebhook` takes it), ' +
      "each secret's last 4 characters only.",
    query: groupQuery,
    responses: { 200: { description: 'The settings' }, 404: { description: '`{message}`: no such group' } },
    handle: async ({ query, caller }, { configureGroupNotify }) =>
      json(
        shownNotify(
          await configureGroupNotify.execute({ actor: actorOf(caller), group: String(query['group']) }),
        ),
      ),
  },
  {
    method: 'put',
    path: '/notify',
    access: 'admin',
    writes: true,
    summary: "Add or remove a group's webhook, or choose its events",
    description:
      '`addWebhook: {url, secret, format?}` (secret: `whsec_` + base64 of 24 to 64 bytes, or 16+ characters; formats ' +
      `${webhookFormats.join(', ')}), \`removeWebhook\` (the URL, whole or as listed), \`events\` ` +
      `(${alertEvents.join(', ')}). Answers as \`GET\`, and \`cancelled\`: queued messages of a removed hook.`,
    body: object(
      {
        group: groupName(),
        addWebhook: object(
          {
            url: text('http:// or https:// URL', 2000),
            secret: text('Signing secret', 500),
            format: { type: 'string', enum: [...webhookFormats] },
          },
          ['url', 'secret'],
        ),
        removeWebhook: text('The URL to stop sending to', 2000),
        events: { type: 'array', items: { type: 'string', enum: [...alertEvents] }, maxItems: 10 },
      },
      ['group'],
    ),
    responses: { 200: { description: 'The settings after the change' }, ...writeAnswers },
    handle: async ({ body, caller }, { configureGroupNotify }) => {
      const add = body['addWebhook'] as { url: string; secret: string; format?: string } | undefined;
      return json(
        shownNotify(
          await configureGroupNotify.execute({
            actor: actorOf(caller),
            group: String(body['group']),
            ...(add === undefined ? {} : { addWebhook: add }),
            ...(body['removeWebhook'] === undefined ? {} : { removeWebhook: String(body['removeWebhook']) }),
            ...(body['events'] === undefined ? {} : { events: body['events'] as string[] }),
          }),
        ),
      );
    },
  },
];

export const alertSettingsRoutes: RouterSpec = {
  prefix: '/api/alerts',
  tag: 'Alerts',
  style: message,
  routes: alertRoutes,
};
