import {
  type Action,
  actorOf,
  automationTriggers,
  DEFAULT_ACTION_HISTORY_LIMIT,
  type GetGroup,
  MAX_ACTION_HISTORY_LIMIT,
  InvalidInputError,
  limitPart,
  MAX_PREVIEW_HOURS,
  NotFoundError,
  readActionControls,
} from '@hortus/core';
import {
  countText,
  actionValue,
  automationLogQuery,
  automationsSchema,
  groupName,
  groupQuery,
  object,
  text,
  wholeNumberText,
} from './schemas.js';
import { revisionTag } from './conditional.js';
import { json, type ResponseDoc, type RouterSpec, withUnderscoreId } from './routing.js';

const actionHistoryQuery = object(
  {
    group: groupName(),
    object: text('Only this action, e.g. pump_1; every action of the group when omitted'),
    limit: {
      ...countText,
      description: `How many entries, newest first (1 to ${MAX_ACTION_HISTORY_LIMIT}); ${DEFAULT_ACTION_HISTORY_LIMIT} when omitted`,
    },
  },
  ['group'],
);

/** One action's safety as `GET /api/actions/safety` lists it. */
const safetyEntry = object(
  {
    group: { type: 'string' },
    object: { type: 'string' },
    safe: { type: 'string', enum: ['off', 'on', 'hold'], description: 'Its safe state' },
    staleAfterMs: {
      type: 'integer',
      description: 'Readings older than this are stale; absent: no sensor rules',
    },
    staleAfterChosen: { type: 'boolean', description: 'false: the default (10 min or 3 usual intervals)' },
    topics: { type: 'array', items: { type: 'string' }, description: 'The topics its sensor rules read' },
    inSafeMode: { type: 'boolean' },
    since: { type: 'string', format: 'date-time', description: 'In safe mode since' },
    silentTopics: { type: 'array', items: { type: 'string' }, description: 'Why: the stale topics' },
  },
  ['group', 'object', 'safe', 'staleAfterChosen', 'topics', 'inSafeMode'],
);

/** One action's lockouts as `GET /api/actions/lockouts` lists them. */
const lockoutsEntry = object(
  {
    group: { type: 'string' },
    object: { type: 'string' },
    value: { type: 'string', description: 'Its value now' },
    lockouts: {
      type: 'array',
      items: object(
        {
          id: { type: 'integer', description: 'Its number, for `hortus action lockout --remove`' },
          topic: { type: 'string', description: 'A sensor lockout: the topic it reads' },
          condition: { type: 'string', enum: ['below', 'above'] },
          value: { type: 'number' },
          while: { type: 'string', description: 'An interlock: the other action of the group' },
          is: { type: 'string', enum: ['on', 'off'] },
          text: {
            type: 'string',
            description: 'In words: `esp/air/temperature below 2`, `ventilator_1 is on`',
          },
          active: { type: 'boolean', description: 'Whether it blocks the action now' },
          reason: { type: 'string', description: 'Why, while active (a stale input counts as blocked)' },
        },
        ['id', 'text', 'active'],
      ),
    },
  },
  ['group', 'object', 'value', 'lockouts'],
);

const previewQuery = object(
  {
    group: groupName(),
    hours: wholeNumberText(`How far ahead (1 to ${MAX_PREVIEW_HOURS}); 24 when omitted`),
  },
  ['group'],
);

/** One planned switch as `GET /api/actions/preview` lists it. */
const plannedSwitch = object(
  {
    at: { type: 'string', format: 'date-time', description: 'When, in UTC' },
    local: {
      type: 'string',
      description:
        "When, on the group's wall clock with its offset then (DST included): 2026-03-29T03:30:00+02:00",
    },
    object: { type: 'string' },
    value: { type: 'string' },
    previousValue: { type: 'string' },
    trigger: { type: 'string', enum: [...automationTriggers] },
    rule: { type: 'string', description: 'The rule in words, as in the automation log' },
  },
  ['at', 'local', 'object', 'value', 'previousValue', 'trigger', 'rule'],
);

const invalid: ResponseDoc = { description: '`{message}` naming the invalid field' };
const failed: ResponseDoc = { description: "`{message: 'Internal Server Error'}`" };
const action: ResponseDoc = { description: 'The action', schema: { $ref: '#/components/schemas/Action' } };

/** Without `lockouts`: the web client's routes answer exactly as before (lockouts: GET /lockouts). */
const present = ({ lockouts: _lockouts, ...entity }: Action): unknown => withUnderscoreId(entity);

/**
 * The action as get_automations shows it: with `maxOnMs`, `minOnMs` and `minOffMs` when its group gives it
 * those limits (an action whose group has no record shows none).
 */
async function withLimit(found: Action, getGroup: GetGroup): Promise<unknown> {
  const group = await getGroup.execute({ name: found.group }).catch((error: unknown) => {
    if (error instanceof NotFoundError) return undefined;
    throw error;
  });
  return {
    ...(present(found) as object),
    ...limitPart(readActionControls(group?.settings).get(found.object)),
  };
}

export const actionRoutes: RouterSpec = {
  prefix: '/api/actions',
  tag: 'Actions',
  style: { body: 'message', serverError: 'Internal Server Error' },
  routes: [
    {
      method: 'get',
      path: '/',
      access: 'group',
      writes: true,
      summary: 'Set the value of one action (switch a device on or off)',
      query: object({ group: groupName(), object: text('Device name, e.g. pump_1'), value: actionValue }, [
        'group',
        'object',
        'value',
      ]),
      // docs/api.md, Actions: no action for group and object is a 400 "no data found", not a 404.
      statusFor: { NOT_FOUND: 400 },
      responses: {
        200: { description: "`{message: 'Actions success'}`" },
        400: { description: "`{message}` naming the invalid field, or `{message: 'no data found'}`" },
        500: failed,
      },
      handle: async ({ query, caller }, { setActionValue }) => {
        await setActionValue.execute({
          group: query['group'],
          object: query['object'],
          value: query['value'],
          actor: actorOf(caller),
        });
        return json({ message: 'Actions success' });
      },
    },
    {
      method: 'get',
      path: '/current_state',
      access: 'group',
      writes: false,
      summary: 'Every action of a group, for polling boxes and clients',
      description:
        'A group without actions answers `{message: []}`. Carries an ETag: a poll naming it in ' +
        'If-None-Match gets 304 while no action of the group changed.',
      query: groupQuery,
      entityTag: revisionTag('/current_state', 'actions', 'group'),
      cacheByTag: true,
      responses: {
        200: {
          description: '`{message: [Action]}`',
          schema: object({ message: { type: 'array', items: { $ref: '#/components/schemas/Action' } } }),
        },
        304: { description: 'No body: no action of the group changed since the ETag in If-None-Match' },
        400: invalid,
        500: failed,
      },
      handle: async ({ query }, { getActionsOfGroup }) =>
        json({ message: (await getActionsOfGroup.execute({ group: query['group'] })).map(present) }),
    },
    {
      method: 'post',
      path: '/update',
      access: 'group',
      writes: true,
      summary: 'Replace the automations of one action',
      body: object({ object: text('Device name'), group: groupName(), automations: automationsSchema }, [
        'object',
        'group',
        'automations',
      ]),
      responses: {
        200: { description: "`{message: 'Data updated successfully'}`" },
        400: invalid,
        404: { description: "`{message: 'Action not found'}`" },
        500: failed,
      },
      handle: async ({ body, caller }, { replaceAutomations }) => {
        await replaceAutomations.execute({
          actor: actorOf(caller),
          group: body['group'],
          object: body['object'],
          automations: body['automations'],
        });
        return json({ message: 'Data updated successfully' });
      },
    },
    {
      method: 'get',
      path: '/get_automations',
      access: 'group',
      writes: false,
      summary: 'One action with its automations',
      description:
        'No validation (as the original service): anything that is not one plain string matches nothing.',
      unvalidatedQuery: object({
        groupId: { type: 'string', description: 'Group name' },
        deviceName: { type: 'string', description: 'Device name, e.g. pump_1' },
      }),
      responses: { 200: action, 404: { description: "`{message: 'Action not found'}`" }, 500: failed },
      handle: async ({ query }, { getAction, getGroup }) =>
        json(
          await withLimit(
            await getAction.execute({ group: query['groupId'], object: query['deviceName'] }),
            getGroup,
          ),
        ),
    },
    {
      method: 'post',
      path: '/limit',
      access: 'group',
      writes: true,
      summary: 'Set or remove the maximum on-time and the minimum on-time and off-time of one action',
      description:
        'The automation engine switches the action off once it has been on longer than `maxOnMs` (see ' +
        'automations.md, Maximum on-time), and never switches it off sooner than `minOnMs` after it went on ' +
        'nor on sooner than `minOffMs` after it went off (Safety). `maxOnMs`: whole milliseconds from 60000 ' +
        '(1 minute) to 604800000 (7 days); `minOnMs`, `minOffMs`: 10000 (10 s) to 86400000 (1 day); each ' +
        'null to remove it, or left out to keep it. At least one is required.',
      body: object(
        {
          group: groupName(),
          object: text('Device name, e.g. pump_1'),
          maxOnMs: { description: 'Milliseconds, 60000 to 604800000, or null to remove the limit' },
          minOnMs: { description: 'Milliseconds, 10000 to 86400000, or null to remove it' },
          minOffMs: { description: 'Milliseconds, 10000 to 86400000, or null to remove it' },
        },
        ['group', 'object'],
      ),
      responses: {
        200: {
          description:
            '`{message: {group, object, maxOnMs?, minOnMs?, minOffMs?}}`: the limits now (none once removed)',
        },
        400: invalid,
        404: { description: '`{message}`: no such group or action' },
        500: failed,
      },
      handle: async ({ body, caller }, { setActionLimit }) => {
        const [maxOnMs, minOnMs, minOffMs] = [body['maxOnMs'], body['minOnMs'], body['minOffMs']];
        if (maxOnMs === undefined && minOnMs === undefined && minOffMs === undefined)
          throw InvalidInputError.forField('maxOnMs', 'is required');
        const view = await setActionLimit.execute({
          actor: actorOf(caller),
          group: body['group'],
          object: body['object'],
          maxOnMs,
          minOnMs,
          minOffMs,
        });
        return json({ message: { group: view.group, object: view.object, ...view.limit } });
      },
    },
    {
      method: 'get',
      path: '/safety',
      access: 'group',
      writes: false,
      summary: "Each action's safe state, freshness limit and safe mode",
      description:
        "When every sensor an action's rules read has gone stale (no reading newer than `staleAfterMs`), " +
        'the automation engine switches it to its safe state once (`off`, `on`, or `hold`: left as it is) ' +
        'and its rules rest until fresh data returns (see automations.md, Safety). `staleAfterMs` is absent ' +
        'for an action without sensor rules (it never enters safe mode); `since` and `silentTopics` are ' +
        'present while it is in safe mode. Set them with `hortus action safety`.',
      query: groupQuery,
      responses: {
        200: {
          description: '`{message: [ActionSafety]}`, in the order of the actions',
          schema: object({ message: { type: 'array', items: safetyEntry } }),
        },
        400: invalid,
        404: { description: '`{message}`: no such group' },
        500: failed,
      },
      handle: async ({ query }, { listActionSafety }) =>
        json({ message: await listActionSafety.execute({ group: query['group'] }) }),
    },
    {
      method: 'get',
      path: '/lockouts',
      access: 'group',
      writes: false,
      summary: "The lockouts of a group's actions, and whether each blocks now",
      description:
        'A lockout keeps the automation engine from switching its action on: while a sensor is below or ' +
        'above a value, or while another action of the group is on or off; a stale or missing input counts ' +
        'as blocked (see automations.md, Safety). Only actions with lockouts are listed. Set them with ' +
        '`hortus action lockout`.',
      query: groupQuery,
      responses: {
        200: {
          description: '`{message: [ActionLockouts]}`, in the order of the actions',
          schema: object({ message: { type: 'array', items: lockoutsEntry } }),
        },
        400: invalid,
        404: { description: '`{message}`: no such group' },
        500: failed,
      },
      handle: async ({ query }, { listActionLockouts }) =>
        json({ message: await listActionLockouts.execute({ group: query['group'] }) }),
    },
    {
      method: 'get',
      path: '/preview',
      access: 'group',
      writes: false,
      summary: 'Every switch the time rules and the limits will make in the next hours',
      description:
        "The live engine's rule code run ahead on a simulated clock from the actions, engine state and " +
        'history as they are now (see automations.md, Preview): time rules, the maximum on-time and the ' +
        'minimum on/off-times. Sensor rules need readings that have not come yet, so they switch nothing ' +
        'here. Nothing is written.',
      query: previewQuery,
      responses: {
        200: {
          description: '`{message: {group, timeZone, from, to, switches: [PlannedSwitch]}}`, in time order',
          schema: object({
            message: object({
              group: { type: 'string' },
              timeZone: { type: 'string' },
              from: { type: 'string', format: 'date-time' },
              to: { type: 'string', format: 'date-time' },
              switches: { type: 'array', items: plannedSwitch },
            }),
          }),
        },
        400: invalid,
        404: { description: '`{message}`: no such group' },
        500: failed,
      },
      handle: async ({ query }, { previewAutomations }) =>
        json({
          message: await previewAutomations.execute({ group: query['group'], hours: query['hours'] }),
        }),
    },
    {
      method: 'get',
      path: '/automation_log',
      access: 'group',
      writes: false,
      summary: 'What the automation engine switched in a group, newest first',
      description:
        'Each event names the rule in words and, for a sensor rule, the reading that triggered it.',
      query: automationLogQuery,
      responses: {
        200: {
          description: '`{message: [AutomationEvent]}`',
          schema: object({
            message: { type: 'array', items: { $ref: '#/components/schemas/AutomationEvent' } },
          }),
        },
        400: invalid,
        500: failed,
      },
      handle: async ({ query }, { listAutomationEvents }) =>
        json({
          message: (await listAutomationEvents.execute({ group: query['group'], count: query['count'] })).map(
            withUnderscoreId,
          ),
        }),
    },
    {
      method: 'get',
      path: '/history',
      access: 'group',
      writes: false,
      summary: 'Who switched the actions of a group (or one action) and when, newest first',
      description:
        'Every accepted value change, by whom: a log-in (`user`), an access key (`key`), a request without ' +
        'a credential while access control is off (`anonymous`), the automation engine (`engine`), the ' +
        'console (`cli`) or an MQTT command (`mqtt`). The newest 1000 entries of each action are kept.',
      query: actionHistoryQuery,
      // An unknown action in `object` is a 404, as for get_automations.
      responses: {
        200: {
          description: '`{message: [ActionHistoryEntry]}`',
          schema: object({
            message: { type: 'array', items: { $ref: '#/components/schemas/ActionHistoryEntry' } },
          }),
        },
        400: invalid,
        404: { description: '`{message}`: the group has no such action' },
        500: failed,
      },
      handle: async ({ query }, { listActionHistory }) =>
        json({
          message: (
            await listActionHistory.execute({
              group: query['group'],
              object: query['object'],
              limit: query['limit'],
            })
          ).map(withUnderscoreId),
        }),
    },
  ],
};
