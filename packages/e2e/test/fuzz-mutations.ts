import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { type Example, type QueryValue, type WireRequest } from './fuzz-requests.js';

// Fuzzing support (fuzz.test.ts): bad values and the mutations that put them into a valid request.

// ---- bad values ----------------------------------------------------------------------------------------

export const oddPieces = [
  '\u0000',
  '\uD800', // a lone surrogate: not valid UTF-16
  '\uDFFF',
  '\u202E', // right-to-left override
  '\u200B',
  '\uFEFF',
  '\u2028',
  '🌱',
  'e\u0301',
  'İ',
  'ß',
  '\uFFFF',
  '%',
  '%00',
  '../',
  '..\\',
  '$',
  '.',
  '$where',
  '{"$gt":""}',
  "'; DROP TABLE readings; --",
  '<script>alert(1)</script>',
  ' ',
  '\t\n',
];

export const oddString = fc
  .array(fc.constantFrom(...oddPieces), { minLength: 1, maxLength: 6 })
  .map((parts) => parts.join(''));

/** Long enough to break every length limit; the URL forms stay under Node's 16 KiB header limit. */
export const hugeString = fc
  .tuple(fc.constantFrom(101, 201, 257, 2001, 3000), fc.constantFrom('a', 'é', '🌱', '\u0000', '%', '9'))
  .map(([length, character]) => character.repeat(length));

export const badDate = fc.constantFrom(
  '2025-13-45',
  '2025-02-30T25:61:61Z',
  '2025-06-15T12:00:00+99:99',
  'yesterday',
  '0000-00-00',
  '+275760-09-13T00:00:00.001Z',
  '-271821-04-20T00:00:00Z',
  '9999-12-31T23:59:59.999999999Z',
  '２０２５-06-15',
  '2025-06-15T12:00:00.1234567890Z',
  '1718000000000',
  '2025-06-15 12:00',
  'Sun, 15 Jun 2025 12:00:00 GMT',
  '',
  // What a lenient parser used to take: a day rolled into March, a bare number, the server's own zone.
  '2025-02-30',
  '1',
  'March 7 2025',
  '2025-06-15T12:00:00',
);

export const badNumberText = fc.constantFrom(
  'NaN',
  'Infinity',
  '-Infinity',
  '1e309',
  '-1e309',
  '1e-400',
  '-0',
  '0x10',
  '1_000',
  '٣',
  '１',
  '9'.repeat(400),
  '+-1',
  '.',
  '-',
  ' 1 ',
  '1,5',
  '-5',
  '99999999',
  '0',
);

export const badText = fc.oneof(oddString, hugeString, badDate, badNumberText, fc.string({ maxLength: 40 }));

/** Values only JSON can carry: wrong types, operator objects, prototype keys, deep nesting. */
export const operatorObject = fc.constantFrom<unknown>(
  { $gt: '' },
  { $ne: null },
  { $where: 'sleep(1000)' },
  { $regex: '.*', $options: 'i' },
  { $in: ['on', 'off'] },
  { $expr: { $eq: [1, 1] } },
  { 'a.b': 1, $set: { value: 'on' } },
  { constructor: { prototype: { polluted: true } } },
  { toString: 'x', valueOf: 1 },
);

export const deepValue = fc.constantFrom(30, 33, 150, 1000, 2000).map((depth) => {
  let value: unknown = 'bottom';
  for (let level = 0; level < depth; level += 1) value = level % 2 === 0 ? [value] : { nested: value };
  return value;
});

export const badJson: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: badText },
  {
    weight: 2,
    arbitrary: fc.constantFrom<unknown>(
      null,
      true,
      false,
      0,
      -1,
      1.5,
      1e308,
      -1e308,
      2 ** 53 + 1,
      [],
      {},
      [null],
      [[]],
      '',
    ),
  },
  { weight: 2, arbitrary: operatorObject },
  { weight: 1, arbitrary: deepValue },
  { weight: 1, arbitrary: fc.array(badText, { maxLength: 3 }) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
);

export const junkQueryKeys = fc.constantFrom(
  '__proto__',
  'constructor',
  'group[$ne]',
  '$where',
  'a.b',
  '',
  '🌱',
  '_',
);

export const malformedBodies = fc.constantFrom(
  '{"group": "a",',
  '{',
  '[',
  'nul',
  '{"a":1}}',
  '\uFEFF{}',
  '{"a":1,"a":2}',
  '{"__proto__": {"polluted": true}}',
  'group=a&object=b',
  '<xml/>',
  '',
  '   ',
  '"just a string"',
  '1',
  'true',
  'null',
  '[]',
  '{"value": NaN}',
  "{'single': 'quotes'}",
  '{"a": "\\ud800"}',
  '{"a":' + '['.repeat(5000) + ']'.repeat(5000) + '}',
);

export const contentTypes = fc.constantFrom(
  'application/json',
  'application/json; charset=utf-8',
  'application/json; charset=latin1',
  'application/vnd.api+json',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/xml',
  'application/octet-stream',
  '*/*',
  'json',
);

// ---- mutations of a valid example ---------------------------------------------------------------------

export type Mutation =
  | { readonly kind: 'query-set'; readonly key: string | number; readonly value: string }
  | { readonly kind: 'query-repeat'; readonly key: number; readonly values: readonly string[] }
  | { readonly kind: 'query-drop'; readonly key: number }
  | { readonly kind: 'param-set'; readonly key: number; readonly value: string }
  | { readonly kind: 'body-set'; readonly at: number; readonly value: unknown }
  | { readonly kind: 'body-drop'; readonly at: number }
  | { readonly kind: 'body-replace'; readonly value: unknown }
  | { readonly kind: 'body-raw'; readonly text: string }
  | { readonly kind: 'content-type'; readonly value: string | undefined }
  | { readonly kind: 'encoding'; readonly value: BodyEncoding }
  | { readonly kind: 'method'; readonly value: string }
  | { readonly kind: 'path'; readonly trick: number };

/** How the body is sent: compressed right, compressed wrong, or under a coding the server does not know. */
export const bodyEncodings = [
  'gzip',
  'deflate',
  'br',
  'gzip-garbage',
  'gzip-truncated',
  'deflate-garbage',
  'br-garbage',
  'zstd',
  'gzip, br',
] as const;
export type BodyEncoding = (typeof bodyEncodings)[number];

export function encodeBody(text: string, encoding: BodyEncoding): { coding: string; bytes: Buffer } {
  const garbage = Buffer.from('\x1f\x8b\x08 this is not what it claims to be');
  switch (encoding) {
    case 'gzip':
      return { coding: 'gzip', bytes: gzipSync(text) };
    case 'deflate':
      return { coding: 'deflate', bytes: deflateSync(text) };
    case 'br':
      return { coding: 'br', bytes: brotliCompressSync(text) };
    case 'gzip-garbage':
      return { coding: 'gzip', bytes: garbage };
    case 'gzip-truncated': {
      const whole = gzipSync(text);
      return { coding: 'gzip', bytes: whole.subarray(0, Math.max(1, whole.length - 9)) };
    }
    case 'deflate-garbage':
      return { coding: 'deflate', bytes: garbage };
    case 'br-garbage':
      return { coding: 'br', bytes: garbage };
    case 'zstd':
    case 'gzip, br':
      return { coding: encoding, bytes: Buffer.from(text) };
  }
}

export const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({
    kind: fc.constant('query-set' as const),
    key: fc.oneof(fc.nat(), junkQueryKeys),
    value: badText,
  }),
  fc.record({
    kind: fc.constant('query-repeat' as const),
    key: fc.nat(),
    values: fc.array(fc.oneof(badText, fc.constant('fz')), { minLength: 2, maxLength: 3 }),
  }),
  fc.record({ kind: fc.constant('query-drop' as const), key: fc.nat() }),
  fc.record({ kind: fc.constant('param-set' as const), key: fc.nat(), value: badText }),
  fc.record({ kind: fc.constant('body-set' as const), at: fc.nat(), value: badJson }),
  fc.record({ kind: fc.constant('body-drop' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('body-replace' as const), value: badJson }),
  fc.record({ kind: fc.constant('body-raw' as const), text: malformedBodies }),
  fc.record({
    kind: fc.constant('content-type' as const),
    value: fc.option(contentTypes, { nil: undefined }),
  }),
  fc.record({
    kind: fc.constant('method' as const),
    value: fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD'),
  }),
  fc.record({ kind: fc.constant('path' as const), trick: fc.nat() }),
  fc.record({ kind: fc.constant('encoding' as const), value: fc.constantFrom(...bodyEncodings) }),
);

/** Every place inside a JSON value, as key paths; the root is the empty path. */
export function jsonPaths(value: unknown, prefix: readonly (string | number)[] = []): (string | number)[][] {
  const paths: (string | number)[][] = [[...prefix]];
  if (Array.isArray(value))
    value.forEach((item, index) => paths.push(...jsonPaths(item, [...prefix, index])));
  else if (typeof value === 'object' && value !== null)
    for (const [key, item] of Object.entries(value)) paths.push(...jsonPaths(item, [...prefix, key]));
  return paths;
}

/** A copy of `value` with the place at `path` replaced by `replacement`, or removed when `drop`. */
export function withAt(
  value: unknown,
  path: readonly (string | number)[],
  replacement: unknown,
  drop: boolean,
): unknown {
  const [head, ...rest] = path;
  if (head === undefined) return drop ? undefined : replacement;
  if (Array.isArray(value)) {
    const copy = [...(value as unknown[])];
    if (rest.length === 0 && drop) copy.splice(Number(head), 1);
    else copy[Number(head)] = withAt(copy[Number(head)], rest, replacement, drop);
    return copy;
  }
  const copy = { ...(value as Record<string, unknown>) };
  if (rest.length === 0 && drop) delete copy[String(head)];
  else copy[String(head)] = withAt(copy[String(head)], rest, replacement, drop);
  return copy;
}

/** Percent-encodes the UTF-8 bytes of a string (lone surrogates become U+FFFD, as a browser sends them). */
export function encode(text: string): string {
  return [...Buffer.from(text, 'utf8')]
    .map((byte) =>
      /[A-Za-z0-9\-_.~]/u.test(String.fromCharCode(byte))
        ? String.fromCharCode(byte)
        : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`,
    )
    .join('');
}

export const pathTricks: ((path: string) => string)[] = [
  (path) => path.toUpperCase(),
  (path) => `${path}/`,
  (path) => `/${path}`,
  (path) => path.replace(/^\/api\//u, '/api/./'),
  (path) => path.replace(/^\/api\//u, '/api/../api/'),
  (path) => path.replace(/^\/api\//u, '/api/%2e%2e/api/'),
  (path) => path.replace(/\/([^/]*)$/u, '%2F$1'),
  (path) => `${path};jsessionid=1`,
  (path) => `${path}%00`,
  (path) => `${path}/..%2F..%2Fetc%2Fpasswd`,
  (path) => `${path}%E0%A4%A`,
  (path) => `${path}%`,
  (path) => `${path}%zz`,
  (path) => `${path}%C3%28`,
  (path) => `${path}%ED%A0%80`,
  (path) => `${path}\\..\\`,
  (path) => path.replace(/\//gu, '//'),
  (path) => `${path}/${'a'.repeat(8000)}`,
  (path) => `${path}/%F0%9F%8C%B1`,
];

export function toWire(example: Example, mutations: readonly Mutation[]): WireRequest {
  let method = example.method;
  const params = { ...example.params };
  const query: Record<string, QueryValue> = { ...example.query };
  let body: unknown = example.body;
  let raw: string | undefined;
  let contentType: string | undefined = 'application/json';
  let trick: ((path: string) => string) | undefined;
  let encoding: BodyEncoding | undefined;
  const queryKeys = Object.keys(query);
  const paramKeys = Object.keys(params);
  const pick = <T>(list: readonly T[], index: number): T | undefined =>
    list[index % Math.max(1, list.length)];

  for (const change of mutations) {
    switch (change.kind) {
      case 'query-set': {
        const key = typeof change.key === 'number' ? (pick(queryKeys, change.key) ?? 'q') : change.key;
        query[key] = change.value;
        break;
      }
      case 'query-repeat':
        query[pick(queryKeys, change.key) ?? 'q'] = change.values;
        break;
      case 'query-drop':
        delete query[pick(queryKeys, change.key) ?? ''];
        break;
      case 'param-set': {
        const key = pick(paramKeys, change.key);
        if (key !== undefined) params[key] = change.value;
        break;
      }
      case 'body-set':
      case 'body-drop': {
        const paths = jsonPaths(body);
        const path = pick(paths, change.at) ?? [];
        body = withAt(
          body,
          path,
          change.kind === 'body-set' ? change.value : undefined,
          change.kind === 'body-drop',
        );
        raw = undefined;
        break;
      }
      case 'body-replace':
        body = change.value;
        raw = undefined;
        break;
      case 'body-raw':
        raw = change.text;
        break;
      case 'content-type':
        contentType = change.value;
        break;
      case 'method':
        method = change.value;
        break;
      case 'path':
        trick = pick(pathTricks, change.trick);
        break;
      case 'encoding':
        encoding = change.value;
        break;
    }
  }

  let path = example.template.replace(/:(\w+)/gu, (_, name: string) => encode(params[name] ?? ''));
  if (trick !== undefined) path = trick(path);
  const search = Object.entries(query)
    .flatMap(([key, value]) =>
      (typeof value === 'string' ? [value] : value).map((item) => `${encode(key)}=${encode(item)}`),
    )
    .join('&');
  const text = raw ?? (body === undefined ? undefined : JSON.stringify(body));
  const names = [
    ...Object.values(params),
    ...Object.values(query).flatMap((value) => (typeof value === 'string' ? [value] : [...value])),
    ...stringsIn(body),
  ];
  const encoded = text === undefined || encoding === undefined ? undefined : encodeBody(text, encoding);
  const headers: Record<string, string> =
    text === undefined || contentType === undefined ? {} : { 'content-type': contentType };
  if (encoded !== undefined) headers['content-encoding'] = encoded.coding;
  const wireBody = encoded?.bytes ?? text;
  return {
    method,
    path: search === '' ? path : `${path}?${search}`,
    headers,
    ...(wireBody === undefined ? {} : { body: wireBody }),
    names,
  };
}

export function stringsIn(value: unknown, depth = 0): string[] {
  if (depth > 20) return [];
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap((item) => stringsIn(item, depth + 1));
  if (typeof value === 'object' && value !== null)
    return Object.values(value).flatMap((item) => stringsIn(item, depth + 1));
  return [];
}
