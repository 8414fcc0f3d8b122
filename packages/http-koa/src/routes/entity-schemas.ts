import { actorKinds, automationTriggers } from '@hortus/core';
import { automationsSchema, type JsonSchema, object } from './schemas.js';

// The response schemas: OpenAPI text only, never used to validate (the request schemas are in schemas.ts).

const id: JsonSchema = { type: 'string', description: 'Record identifier' };
const date: JsonSchema = { type: 'string', format: 'date-time' };

export const entitySchemas: Record<string, JsonSchema> = {
  Reading: object(
    { _id: id, group: { type: 'string' }, topic: { type: 'string' }, value: { type: 'number' }, time: date },
    ['_id', 'group', 'topic', 'value', 'time'],
  ),
  ReadingBucket: object(
    {
      time: { ...date, description: 'Start of the bucket (buckets are aligned to the Unix epoch, UTC)' },
      min: { type: 'number' },
      max: { type: 'number' },
      avg: { type: 'number' },
      count: { type: 'integer' },
    },
    ['time', 'min', 'max', 'avg', 'count'],
  ),
  HourlyReading: object(
    { _id: { type: 'integer', minimum: 0, maximum: 23 }, data: { $ref: '#/components/schemas/Reading' } },
    ['_id', 'data'],
  ),
  Action: object(
    {
      _id: id,
      group: { type: 'string' },
      object: { type: 'string' },
      value: { type: 'string' },
      automations: automationsSchema,
      maxOnMs: {
        type: 'integer',
        description: 'get_automations only: its maximum on-time, when its group gives it one (actionLimits)',
      },
      minOnMs: { type: 'integer', description: 'get_automations only: its minimum on-time, when set' },
      minOffMs: { type: 'integer', description: 'get_automations only: its minimum off-time, when set' },
    },
    ['_id', 'group', 'object', 'value', 'automations'],
  ),
  Device: object(
    {
      _id: id,
      deviceId: { type: 'string' },
      group: { type: 'string' },
      type: { type: 'string' },
      macAddress: { type: 'string', description: 'The MAC as a label prints it, when the id is a MAC' },
      boxId: { type: 'string', description: 'What a box of firmware 1.0.4 sends as its deviceId' },
      locked: { type: 'boolean', description: 'Onboardings are refused (`hortus device lock`)' },
      silent: { type: 'boolean', description: 'Onboarded, then nothing for DEVICE_SILENT_AFTER_MS' },
      lastSeen: { ...date, description: 'Last request of the box (onboarding, readings, actions)' },
      firmwareVersion: { type: 'string', description: 'updateVersion of the last onboarding' },
      bootedAt: { ...date, description: 'When the box started (lastactive of the last onboarding)' },
      onboardings: {
        type: 'array',
        description: 'The last 10 onboardings, newest first',
        items: object({ at: date, address: { type: 'string' } }, ['at', 'address']),
      },
    },
    ['_id', 'deviceId', 'group', 'type'],
  ),
  Notification: object(
    {
      _id: id,
      group: { type: 'string' },
      time: date,
      message: { type: 'string' },
      ignore: { type: 'string', enum: ['false', 'true'] },
      topic: { type: 'string' },
      value: { type: 'number' },
      severity: {
        type: 'string',
        enum: ['warning', 'critical'],
        description:
          "An alert's: a critical one is sent again until acknowledged; absent on other notifications",
      },
      acknowledged: object(
        {
          at: date,
          by: object(
            {
              kind: { type: 'string', description: 'user, key, cli, ...' },
              id: { type: 'string', description: 'The user id, key id, or OS user of the console' },
              name: { type: 'string', description: "The user's e-mail at that time, when known" },
            },
            ['kind'],
          ),
        },
        ['at', 'by'],
      ),
    },
    ['_id', 'group', 'time', 'message', 'ignore'],
  ),
  AutomationEvent: object(
    {
      _id: id,
      group: { type: 'string' },
      object: { type: 'string' },
      value: { type: 'string', description: 'The value the engine set' },
      previousValue: { type: 'string' },
      at: date,
      trigger: { type: 'string', enum: [...automationTriggers] },
      rule: { type: 'string', description: 'The rule in words, e.g. `temperature above 28 -> on`' },
      reading: object({ topic: { type: 'string' }, value: { type: 'number' }, time: date }, [
        'topic',
        'value',
        'time',
      ]),
      slot: { ...date, description: "A time rule's slot: when it was due" },
      late: {
        type: 'boolean',
        enum: [true],
        description: 'The slot was missed while no engine ran and fired late',
      },
    },
    ['_id', 'group', 'object', 'value', 'previousValue', 'at', 'trigger', 'rule'],
  ),
  ActionHistoryEntry: object(
    {
      _id: id,
      group: { type: 'string' },
      object: { type: 'string' },
      value: { type: 'string', description: 'The value set' },
      at: date,
      actor: object(
        {
          kind: { type: 'string', enum: [...actorKinds] },
          id: {
            type: 'string',
            description: 'The user id (user), the key id (key), the trigger: time, sensor or limit (engine)',
          },
        },
        ['kind'],
      ),
    },
    ['_id', 'group', 'object', 'value', 'at', 'actor'],
  ),
  HistoryChart: object(
    {
      _id: id,
      userId: { type: 'string' },
      charts: {
        type: 'array',
        items: object(
          {
            chartId: { type: 'string' },
            chartName: { type: 'string' },
            chartData: { type: 'object' },
            createdAt: date,
            updatedAt: date,
          },
          ['chartId', 'chartName', 'chartData', 'createdAt', 'updatedAt'],
        ),
      },
    },
    ['_id', 'userId', 'charts'],
  ),
  Group: object(
    {
      _id: id,
      name: { type: 'string' },
      package: { type: 'string', enum: ['small', 'medium', 'big'] },
      employee: { type: 'array', items: { type: 'string' } },
      settings: { description: 'Whatever JSON the clients wrote' },
    },
    ['_id', 'name', 'package', 'employee', 'settings'],
  ),
};
