import { Ajv, type ErrorObject, type SchemaObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import {
  ACTION_VALUE_MAX_LENGTH,
  conditions,
  EMAIL_MAX_LENGTH,
  frequencies,
  DEFAULT_AUTOMATION_EVENTS_LIMIT,
  InvalidInputError,
  MAX_AUTOMATION_EVENTS_LIMIT,
  MAX_BUCKETS,
  MAX_IGNORE_TIMES,
  MAX_READINGS_LIMIT,
  MAX_READINGS_PER_BATCH,
  MAX_RULES_PER_KIND,
  NAME_MAX_LENGTH,
  PASSWORD_MAX_LENGTH,
  switchStates,
  TOKEN_MAX_LENGTH,
} from '@hortus/core';

/** A JSON Schema (draft 2020-12 subset) used both to validate requests and to describe them in OpenAPI. */
export type JsonSchema = SchemaObject;

// ajv-formats is CommonJS; under NodeNext its default export arrives as the module object.
const addFormats = addFormatsModule as unknown as { default: (ajv: Ajv, formats: string[]) => Ajv };

/**
 * One validator instance without type coercion: query values are strings (numbers are matched by pattern
 * and parsed by the core), and a JSON body of the wrong type must be refused, not converted.
 */
const ajv = new Ajv({ allErrors: false, strict: true, allowUnionTypes: true });
addFormats.default(ajv, ['email', 'date-time']);

const compiled = new WeakMap<JsonSchema, ValidateFunction>();

/** Compiles each schema once per process; routes are module constants, so this happens at start-up. */
export function validatorFor(schema: JsonSchema): ValidateFunction {
  let validate = compiled.get(schema);
  if (validate === undefined) {
    validate = ajv.compile(schema);
    compiled.set(schema, validate);
  }
  return validate;
}

export type RequestPart = 'query' | 'body' | 'params';

/** Validates one part of a request; a failure is an InvalidInputError naming the first bad field. */
export function validate(schema: JsonSchema, part: RequestPart, data: unknown): void {
  if (part === 'query' && isRecord(data)) {
    // Repeated parameters (?group=a&group=b) arrive as arrays; say so instead of "must be string".
    for (const name of Object.keys(properties(schema))) {
      if (Array.isArray(data[name])) throw InvalidInputError.forField(name, 'must be given only once');
    }
  }
  const check = validatorFor(schema);
  if (check(data)) return;
  const [first] = check.errors ?? [];
  throw new InvalidInputError(first === undefined ? `${part} is invalid` : describe(first, part));
}

const formatNames: Record<string, string> = { email: 'e-mail address', 'date-time': 'ISO-8601 date-time' };
/** What each pattern of the schemas below means, so a failure reads as a sentence and not a regex. */
const patternMeanings = new Map<string, string>();

/** Phrases ajv's errors like the core's own messages ("group must be at most 100 characters"). */
function describe(error: ErrorObject, part: RequestPart): string {
  const path = error.instancePath
    .split('/')
    .slice(1)
    .map((segment) => segment.replaceAll('~1', '/').replaceAll('~0', '~'))
    .reduce(
      (joined, segment) =>
        /^\d+$/u.test(segment) ? `${joined}[${segment}]` : joined === '' ? segment : `${joined}.${segment}`,
      '',
    );
  const subject = path === '' ? part : path;
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required': {
      const field = String(params['missingProperty']);
      return `${path === '' ? field : `${path}.${field}`} is required`;
    }
    case 'enum':
      return `${subject} must be one of: ${(params['allowedValues'] as unknown[]).join(', ')}`;
    case 'minLength':
      return params['limit'] === 1
        ? `${subject} must not be empty`
        : `${subject} must be at least ${String(params['limit'])} characters`;
    case 'maxLength':
      return `${subject} must be at most ${String(params['limit'])} characters`;
    case 'maxItems':
      return `${subject} must hold at most ${String(params['limit'])} items`;
    case 'format':
      return `${subject} must be a valid ${formatNames[String(params['format'])] ?? String(params['format'])}`;
    case 'pattern':
      return `${subject} ${patternMeanings.get(String(params['pattern'])) ?? 'has an invalid form'}`;
    default:
      return `${subject} ${error.message ?? 'is invalid'}`;
  }
}

/** A string schema with a pattern and the sentence that explains it. */
function patterned(pattern: string, meaning: string, extra: JsonSchema): JsonSchema {
  patternMeanings.set(pattern, meaning);
  return { type: 'string', pattern, ...extra };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function properties(schema: JsonSchema): Record<string, unknown> {
  return isRecord(schema['properties']) ? schema['properties'] : {};
}

// ---- building blocks -------------------------------------------------------------------------------

export function object(props: Record<string, JsonSchema>, required: readonly string[] = []): JsonSchema {
  // Unknown fields are ignored, not refused: browsers add cache busters, clients echo `_id`s back.
  return { type: 'object', properties: props, required: [...required], additionalProperties: true };
}

export const text = (description: string, maxLength = NAME_MAX_LENGTH): JsonSchema => ({
  type: 'string',
  minLength: 1,
  maxLength,
  description,
});

export const groupName = (description = 'Group name'): JsonSchema => text(description);

/** Query numbers stay strings: ajv's coercion would turn " " into 0 and "Infinity" into null. */
export const numberText = (description: string): JsonSchema =>
  patterned('^\\s*-?(\\d+(\\.\\d*)?|\\.\\d+)([eE][-+]?\\d+)?\\s*$', 'must be a number', {
    maxLength: 32,
    description,
  });

const wholeNumberPattern = '^\\s*\\d{1,6}\\s*$';

export const wholeNumberText = (description: string): JsonSchema =>
  patterned(wholeNumberPattern, 'must be a whole number', { description });

export const countText: JsonSchema = patterned(wholeNumberPattern, 'must be a whole number', {
  description: `How many readings, newest first (1 to ${MAX_READINGS_LIMIT}); 1000 when omitted`,
});

/** RFC 3339 date-time with Z or an offset, or a date alone (the whole day, UTC); the core checks the calendar. */
export const dateText = (description: string): JsonSchema =>
  patterned(
    '^\\s*\\d{4}-\\d{2}-\\d{2}([Tt]\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,9})?)?([Zz]|[+-]\\d{2}:\\d{2}))?\\s*$',
    'must be an RFC 3339 date-time with Z or an offset (2025-06-15T10:00:00Z) or a date (2025-06-15)',
    { description },
  );

export const dateTime = (description: string): JsonSchema => ({
  type: 'string',
  format: 'date-time',
  maxLength: 64,
  description,
});

/** A number, or a number written as a string (what HTML selects send); the core checks the range. */
export const looseNumber = (description: string): JsonSchema => ({
  type: ['number', 'string'],
  maxLength: 32,
  description,
});

// ---- request schemas shared by several routes ---------------------------------------------------------

export const groupIdQuery = object({ groupId: groupName() }, ['groupId']);
export const groupQuery = object({ group: groupName() }, ['group']);

export const readingFilters = {
  minValue: numberText('Smallest value to include'),
  maxValue: numberText('Largest value to include'),
};

export const readingRangeQuery = object(
  {
    groupId: groupName(),
    startDate: dateText('Earliest time to include (inclusive)'),
    endDate: dateText('Latest time to include (inclusive)'),
    ...readingFilters,
    count: countText,
    interval: patterned('^\\s*\\d{1,7}\\s*[smhd]\\s*$', 'must be a duration such as 20s, 5m, 1h or 1d', {
      description:
        'Answer buckets `{time, min, max, avg, count}` of this size (1s to 30d) instead of readings, newest ' +
        `first; at most ${MAX_BUCKETS} buckets`,
    }),
    points: patterned(wholeNumberPattern, 'must be a whole number', {
      description: `Answer at most this many buckets (1 to ${MAX_BUCKETS}), of the smallest round size that fits`,
    }),
  },
  ['groupId'],
);

const switchState: JsonSchema = { type: 'string', enum: [...switchStates] };

/** One of the words in any case (`Monday`); the core checks it and stores it as listed. */
const anyCase = (words: readonly string[]): JsonSchema => ({
  type: 'string',
  maxLength: 32,
  description: `One of ${words.join(', ')}, in any case`,
});

export const automationsSchema: JsonSchema = {
  type: 'array',
  maxItems: MAX_RULES_PER_KIND,
  description: 'Replaces the automations as a whole; `_id`s echoed from get_automations are dropped',
  items: object({
    timeAutomations: {
      type: 'array',
      maxItems: MAX_RULES_PER_KIND,
      items: object(
        {
          action: switchState,
          // `7:5` is read as 07:05: the web client lets people type it; the core stores HH:MM.
          time: patterned('^\\s*([01]?\\d|2[0-3]):[0-5]?\\d\\s*$', 'must be a time HH:MM', {
            description: 'HH:MM (H:M is read as 0H:0M)',
          }),
          frequency: anyCase(frequencies),
        },
        ['action', 'time', 'frequency'],
      ),
    },
    sensorAutomations: {
      type: 'array',
      maxItems: MAX_RULES_PER_KIND,
      items: object(
        {
          action: switchState,
          sensor: text('Sensor name, e.g. temperature'),
          condition: anyCase(conditions),
          value: looseNumber('Threshold; a decimal comma (28,5) is stored as 28.5'),
        },
        ['action', 'sensor', 'condition', 'value'],
      ),
    },
  }),
};

export const automationLogQuery = object(
  {
    group: groupName(),
    count: patterned(wholeNumberPattern, 'must be a whole number', {
      description: `How many events, newest first (1 to ${MAX_AUTOMATION_EVENTS_LIMIT}); ${DEFAULT_AUTOMATION_EVENTS_LIMIT} when omitted`,
    }),
  },
  ['group'],
);

/**
 * Deliberately loose: each reading is validated by the core on its own, so one bad item is reported by its
 * index instead of failing the batch. The schema only refuses what cannot be readings at all.
 */
export const readingsBody: JsonSchema = {
  type: ['object', 'array'],
  maxItems: MAX_READINGS_PER_BATCH,
  description:
    `One reading \`{group, topic, value, time?}\`, the compact form \`{group, time?, values: {<topic>: <number>}}\`, ` +
    `or an array of either holding at most ${MAX_READINGS_PER_BATCH} readings. \`value\` is a number or a ` +
    'numeric string; `time` an RFC 3339 date-time with Z or an offset (the time of arrival when omitted).',
};

export const actionValue = text('New value, `on` or `off` for switches', ACTION_VALUE_MAX_LENGTH);

export const ignoreBody = object({
  time: dateTime('Time of the one notification to ignore'),
  times: {
    type: 'array',
    maxItems: MAX_IGNORE_TIMES,
    items: dateTime('Time of a notification to ignore'),
    description: 'Times of the notifications to ignore; takes precedence over `time`',
  },
});

export const emailBody = object(
  { newEmail: { type: 'string', format: 'email', maxLength: EMAIL_MAX_LENGTH, description: 'New e-mail' } },
  ['newEmail'],
);

// ---- accounts ----------------------------------------------------------------------------------------

const personName = (description: string): JsonSchema => ({
  type: 'string',
  minLength: 1,
  maxLength: NAME_MAX_LENGTH,
  description,
});
const accountEmail: JsonSchema = {
  type: 'string',
  minLength: 1,
  maxLength: EMAIL_MAX_LENGTH,
  description: 'E-mail',
};
// The core checks the rules and names the one that failed; the edge only bounds what it reads.
const password: JsonSchema = {
  type: 'string',
  minLength: 1,
  maxLength: PASSWORD_MAX_LENGTH,
  description: 'Password',
};

export const signUpBody = object(
  {
    firstName: personName('First name'),
    lastName: personName('Last name'),
    email: accountEmail,
    password,
    group: {
      type: 'string',
      minLength: 1,
      maxLength: NAME_MAX_LENGTH,
      description: 'Name of an existing group',
    },
    invitation: {
      type: 'string',
      minLength: 1,
      maxLength: TOKEN_MAX_LENGTH,
      description: 'Invitation code from `hortus user invite` (needed while access keys are required)',
    },
  },
  ['firstName', 'lastName', 'email', 'password', 'group'],
);

export const logInBody = object({ email: accountEmail, password }, ['email', 'password']);

export const resetRequestBody = object({ email: accountEmail }, ['email']);

export const resetValidateBody = object(
  {
    _id: { type: 'string', minLength: 1, maxLength: 128, description: 'User id from the reset link' },
    token: { type: 'string', minLength: 1, maxLength: 128, description: 'Token from the reset link' },
    password,
  },
  ['_id', 'token', 'password'],
);
