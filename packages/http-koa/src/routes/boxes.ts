import { createHash } from 'node:crypto';
import { type Action, boxGroupName, BoxStamp, InvalidInputError, MAX_BOX_DOCUMENTS } from '@hortus/core';
import { object, text } from './schemas.js';
import {
  type HttpUseCases,
  json,
  type Reply,
  type ResponseDoc,
  type RouteInput,
  type RouterSpec,
} from './routing.js';

/**
 * The routes of the HTTP generation of boxes (firmware 1.0.4, COMPAT "Boxes"): onboarding, and the part of
 * the hosted database API the firmware posts readings to and reads its actions from, now answered by
 * Hortus itself. They take no access key (`open`): onboarding is open (a box knows only its MAC), and the
 * box endpoint checks the device's own `api-key`.
 */

/** Where the box endpoint lives; onboarding hands it to the box as `url`. */
export const BOX_ENDPOINT_PATH = '/api/box/v1';
/** A box sends one reading of about 250 bytes per request; insertMany of MAX_BOX_DOCUMENTS fits well. */
export const BOX_BODY_LIMIT_BYTES = 64 * 1024;
/** What the firmware compares the body of a refused onboarding with, byte for byte. */
export const UNKNOWN_DEVICE_MESSAGE = 'Invalid device ID or device not found';

export interface BoxRouteSettings {
  /** BOX_PUBLIC_HOST: the host (and port) boxes reach the HTTPS listener at; else the request's host name. */
  readonly publicHost?: string;
  /** HTTPS_PORT: put after the request's host name when BOX_PUBLIC_HOST is not set. */
  readonly httpsPort: number;
}

function header(input: RouteInput, name: string): string | undefined {
  const value = input.headers?.[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * The host a box is sent to: BOX_PUBLIC_HOST; else, for a box that onboarded over HTTPS, the host and port
 * it reached; else the name it reached us by with the HTTPS port.
 */
function boxHost(input: RouteInput, settings: BoxRouteSettings): string {
  if (settings.publicHost !== undefined) return settings.publicHost;
  if (input.secure === true && input.host !== undefined && input.host !== '') return input.host;
  const name = input.hostname ?? '';
  const bracketed = name.includes(':') && !name.startsWith('[') ? `[${name}]` : name;
  return settings.httpsPort === 443 ? bracketed : `${bracketed}:${settings.httpsPort}`;
}

const operators: Readonly<Record<string, (value: unknown, path: string) => unknown>> = {
  // What a box's stamp means (wall clock or instant) is core's rule; the decoder only hands it over.
  $date: (value, path) => BoxStamp.of(value, path),
  $numberDouble: (value, path) => numberOf(value, path),
  $numberInt: (value, path) => numberOf(value, path),
  $numberLong: (value, path) => numberOf(value, path),
  $numberDecimal: (value, path) => numberOf(value, path),
  $oid: (value, path) => {
    if (typeof value !== 'string') throw InvalidInputError.forField(path, 'is not a valid {"$oid": ...}');
    return value;
  },
};

function numberOf(value: unknown, path: string): number {
  const parsed = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  if (typeof parsed !== 'number' || !Number.isFinite(parsed))
    throw InvalidInputError.forField(path, 'must be a finite number');
  return parsed;
}

/** Reads MongoDB extended JSON (canonical and relaxed) into plain values: dates become Date, numbers numbers. */
export function decodeExtendedJson(value: unknown, path = 'body'): unknown {
  if (Array.isArray(value)) return value.map((item, index) => decodeExtendedJson(item, `${path}[${index}]`));
  if (typeof value !== 'object' || value === null) return value;
  const entries = Object.entries(value);
  const [only] = entries;
  if (entries.length === 1 && only !== undefined && only[0].startsWith('$')) {
    const decode = operators[only[0]];
    if (decode === undefined)
      throw InvalidInputError.forField(path, `uses ${only[0].slice(0, 30)}, which is not supported`);
    return decode(only[1], path);
  }
  return Object.fromEntries(
    entries.map(([key, item]) => {
      if (key.startsWith('$'))
        throw InvalidInputError.forField(path, `uses ${key.slice(0, 30)}, which is not supported`);
      return [key, decodeExtendedJson(item, `${path}.${key}`)];
    }),
  );
}

/** The query operators a find filter may use on a field (core's FindBoxActions applies them). */
const queryOperators = new Set(['$eq', '$ne', '$in', '$nin']);

/**
 * A find filter: each field's condition is a value in extended JSON, or an object of query operators whose
 * operands are. Any other `$` name is refused by the decoder (or by core, beside a query operator).
 */
export function decodeFilter(filter: unknown, path = 'filter'): unknown {
  if (typeof filter !== 'object' || filter === null || Array.isArray(filter))
    return decodeExtendedJson(filter, path);
  return Object.fromEntries(
    Object.entries(filter).map(([field, condition]) => {
      const at = `${path}.${field}`;
      const operands =
        typeof condition === 'object' && condition !== null && !Array.isArray(condition)
          ? Object.entries(condition)
          : [];
      if (operands.length === 0 || !operands.some(([name]) => queryOperators.has(name)))
        return [field, decodeExtendedJson(condition, at)];
      return [
        field,
        Object.fromEntries(
          operands.map(([name, operand]) => [name, decodeExtendedJson(operand, `${at}.${name}`)]),
        ),
      ];
    }),
  );
}

function requireCollection(body: Readonly<Record<string, unknown>>, expected: string, action: string): void {
  const collection = body['collection'];
  if (collection !== expected) {
    const named = typeof collection === 'string' ? `"${collection.slice(0, 40)}"` : 'no collection';
    throw InvalidInputError.forField('collection', `must be "${expected}" for ${action}, not ${named}`);
  }
}

function actionDocument(action: Action): Record<string, unknown> {
  return {
    _id: action.id,
    group: action.group,
    object: action.object,
    value: action.value,
    automations: action.automations,
  };
}

const boxBody = object(
  {
    collection: text('`datas` for inserts, `actions` for find'),
    database: text('Ignored (the firmware sends `Website`)'),
    dataSource: text('Ignored (the firmware sends `Cluster0`)'),
    document: {
      type: 'object',
      description: 'insertOne: `{topic, value, time: {$date}}`; `group` is ignored',
    },
    documents: { type: 'array', maxItems: MAX_BOX_DOCUMENTS, items: { type: 'object' } },
    filter: { type: 'object', description: 'find: conditions on `object` and `value` only' },
  },
  ['collection'],
);

const unauthorized: ResponseDoc = { description: '`{message}`: the api-key header is missing or not valid' };
const refused: ResponseDoc = {
  description:
    '`{message}` naming the reason: another collection, a malformed document, a value that is not a number, a body over the limit',
};

/** GET /api/hardware: where a box sends its data, and its key. */
export function onboardingRoutes(settings: BoxRouteSettings): RouterSpec {
  return {
    prefix: '/api/hardware',
    tag: 'Boxes',
    style: { body: 'message', serverError: 'Internal Server Error' },
    routes: [
      {
        method: 'get',
        path: '/',
        // A box knows only its MAC: no key. It writes (the tracking, the pending list).
        access: 'open',
        writes: true,
        summary: 'Onboarding of a box (firmware 1.0.4), by its deviceId header',
        description:
          'Headers `deviceId` (the MAC as the box sends it, bytes reversed), `updateVersion`, `lastactive` ' +
          '(ms since boot). A registered, unlocked device gets `{group, host, url, apiKey}`: its group (each `"`, `\\` ' +
          'or control character as `_`: the firmware pastes the name into its JSON unescaped), the ' +
          `HTTPS host and path of the box endpoint (\`${BOX_ENDPOINT_PATH}\`), and its own key. Any other box ` +
          `gets 400 \`{"message":"${UNKNOWN_DEVICE_MESSAGE}"}\` (so it keeps trying) and is listed by ` +
          '`hortus device pending`; refusals beyond UNKNOWN_DEVICE_PER_MINUTE per address are a 429.',
        responses: {
          200: {
            description: '`{group, host, url, apiKey}`',
            schema: object({
              group: text('Group'),
              host: text('HTTPS host[:port]'),
              url: text('Path'),
              apiKey: text('Key'),
            }),
          },
          400: { description: `\`{message: '${UNKNOWN_DEVICE_MESSAGE}'}\`: unknown, locked or malformed id` },
          429: {
            description: '`{message}`: too many refused onboardings from this address; see Retry-After',
          },
        },
        handle: async (input, { onboardBox }) => {
          const firmwareVersion = header(input, 'updateVersion');
          const lastActive = header(input, 'lastactive');
          const outcome = await onboardBox.execute({
            deviceId: header(input, 'deviceId') ?? '',
            address: input.clientAddress,
            ...(firmwareVersion === undefined ? {} : { firmwareVersion }),
            ...(lastActive === undefined ? {} : { lastActive }),
          });
          if (!outcome.registered) return json({ message: UNKNOWN_DEVICE_MESSAGE }, 400);
          return json({
            // The box pastes this into every reading's JSON unescaped and we never read it back.
            group: boxGroupName(outcome.device.group),
            host: boxHost(input, settings),
            url: BOX_ENDPOINT_PATH,
            apiKey: outcome.apiKey,
          });
        },
      },
    ],
  };
}

type BoxAction = (input: RouteInput, useCases: HttpUseCases) => Promise<Reply>;

/** What each action of the database API the firmware uses does here; any other action is refused. */
const boxActions: Readonly<Record<string, BoxAction>> = {
  insertOne: async (input, { authenticateBox, recordBoxReadings }) => {
    const device = await authenticateBox.execute(header(input, 'api-key'), input.clientAddress);
    requireCollection(input.body, 'datas', 'insertOne');
    const document = decodeExtendedJson(input.body['document'], 'document');
    if (document === undefined) throw InvalidInputError.forField('document', 'is required');
    await recordBoxReadings.execute(device, [document]);
    return json({ insertedId: insertedIdOf(device.group, document) }, 201);
  },
  insertMany: async (input, { authenticateBox, recordBoxReadings }) => {
    const device = await authenticateBox.execute(header(input, 'api-key'), input.clientAddress);
    requireCollection(input.body, 'datas', 'insertMany');
    const documents = decodeExtendedJson(input.body['documents'], 'documents');
    if (!Array.isArray(documents)) throw InvalidInputError.forField('documents', 'must be a list');
    await recordBoxReadings.execute(device, documents);
    return json({ insertedIds: documents.map((document) => insertedIdOf(device.group, document)) }, 201);
  },
  find: async (input, { authenticateBox, findBoxActions }) => {
    const device = await authenticateBox.execute(header(input, 'api-key'), input.clientAddress);
    requireCollection(input.body, 'actions', 'find');
    const actions = await findBoxActions.execute(device, decodeFilter(input.body['filter']));
    return json({ documents: actions.map(actionDocument) });
  },
};

/** The box endpoint: insertOne and insertMany into `datas`, find on `actions`, with the device's key. */
export const boxEndpointRoutes: RouterSpec = {
  prefix: BOX_ENDPOINT_PATH,
  tag: 'Boxes',
  style: { body: 'message', serverError: 'Internal Server Error' },
  routes: [
    {
      method: 'post',
      path: '/action/:action',
      // No access key: the route checks the device's own api-key, which reaches only the device's group.
      access: 'open',
      writes: true,
      summary: 'What a box sends: insertOne or insertMany into `datas`, find on `actions`',
      description:
        'Header `api-key` (the key onboarding gave the device); body as application/ejson or application/json, ' +
        'in extended JSON (`$date`, `$numberDouble`, `$numberInt`). **insertOne** `{collection: "datas", ' +
        'document: {topic, value, time: {$date}}}` and **insertMany** (`documents`, all stored or none) answer ' +
        "201 `{insertedId}` / `{insertedIds}`: `time` with a `Z` or no offset is read as the wall clock of the group's " +
        '`boxTimeZone` setting (else BOX_TIME_ZONE, Europe/Berlin), as the firmware stamps it; with a numeric offset, ' +
        'or as `{$numberLong}` milliseconds, it is that instant; the reading is stored ' +
        "under the device's current group whatever `group` says, through the same checks as every reading. " +
        '**find** `{collection: "actions", filter?}` answers 200 `{documents}`: the device\'s group\'s actions ' +
        'only, whatever the filter says; `filter` may narrow them by `object` and `value` (equality, $eq, $ne, ' +
        '$in, $nin).',
      params: object(
        {
          action: {
            type: 'string',
            enum: Object.keys(boxActions),
            description: 'The action of the database API',
          },
        },
        ['action'],
      ),
      body: boxBody,
      bodyKind: 'box',
      responses: {
        200: { description: 'find: `{documents: [Action]}`' },
        201: { description: 'insertOne: `{insertedId}`; insertMany: `{insertedIds}`' },
        400: refused,
        401: unauthorized,
      },
      handle: async (input, useCases) => {
        const action = boxActions[String(input.params['action'])];
        if (action === undefined)
          throw InvalidInputError.forField('action', 'must be insertOne, insertMany or find');
        return action(input, useCases);
      },
    },
  ],
};

/**
 * The id an insert answers: readings are keyed by (group, topic, time), so the same text names a reading on
 * every store and for a retried insert. The box does not read it.
 */
function insertedIdOf(group: string, document: unknown): string {
  const record = document as { topic?: unknown; time?: unknown };
  const time = record.time instanceof BoxStamp ? record.time.ms : '';
  return createHash('sha256')
    .update(`${group}\u0000${String(record.topic)}\u0000${time}`)
    .digest('hex')
    .slice(0, 24);
}

/** Onboarding and the box endpoint, in the order they are matched. */
export function boxRouters(settings: BoxRouteSettings): RouterSpec[] {
  return [onboardingRoutes(settings), boxEndpointRoutes];
}
