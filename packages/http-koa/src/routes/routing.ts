import { Router } from '@koa/router';
import {
  ANONYMOUS,
  type Caller,
  GetProfile,
  LogIn,
  LogOut,
  RequestPasswordReset,
  ResetPassword,
  OfferFirmware,
  ReadFirmwareImage,
  SignUp,
  AddChart,
  AggregateReadings,
  ChangeChart,
  ChangeUserEmail,
  CheckGroup,
  CreateDevice,
  AuthenticateBox,
  FindBoxActions,
  ListDeviceViews,
  OnboardBox,
  RecordBoxReadings,
  DeleteChart,
  type ErrorCode,
  ExportReadings,
  GetAction,
  GetActionsOfGroup,
  GetChartSettings,
  GetGroup,
  GetHistoryCharts,
  GetLatestReading,
  GetLatestReadingsOfGroup,
  GetRecentCommits,
  GetRevision,
  GetTodayHourlyReadings,
  IgnoreNotifications,
  ListAutomationEvents,
  ListDevices,
  ListOpenNotifications,
  QueryReadings,
  RecordReadings,
  ReplaceAutomations,
  SetActionValue,
  UpdateGroupSettings,
} from '@hortus/core';
import { type IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { type Context, type Middleware } from 'koa';
import { AnswerCache, type EntityTagOf, namesWildcard, noneMatchFails } from './conditional.js';
import { type DeclaredRoute, policyProblem, type RoutePolicy } from './policy.js';
import { type JsonSchema, validate, validatorFor } from './schemas.js';
import { clearSessionCookie, setSessionCookie } from '../access/session-cookie.js';

/** The use cases the HTTP transport calls; the composition root resolves each from the container. */
export const httpUseCaseClasses = {
  getLatestReading: GetLatestReading,
  getLatestReadingsOfGroup: GetLatestReadingsOfGroup,
  queryReadings: QueryReadings,
  exportReadings: ExportReadings,
  aggregateReadings: AggregateReadings,
  getRevision: GetRevision,
  getTodayHourlyReadings: GetTodayHourlyReadings,
  recordReadings: RecordReadings,
  setActionValue: SetActionValue,
  getActionsOfGroup: GetActionsOfGroup,
  replaceAutomations: ReplaceAutomations,
  getAction: GetAction,
  listAutomationEvents: ListAutomationEvents,
  listDevices: ListDevices,
  createDevice: CreateDevice,
  listDeviceViews: ListDeviceViews,
  onboardBox: OnboardBox,
  authenticateBox: AuthenticateBox,
  recordBoxReadings: RecordBoxReadings,
  findBoxActions: FindBoxActions,
  listOpenNotifications: ListOpenNotifications,
  ignoreNotifications: IgnoreNotifications,
  getRecentCommits: GetRecentCommits,
  getHistoryCharts: GetHistoryCharts,
  getChartSettings: GetChartSettings,
  addChart: AddChart,
  changeChart: ChangeChart,
  deleteChart: DeleteChart,
  checkGroup: CheckGroup,
  getGroup: GetGroup,
  updateGroupSettings: UpdateGroupSettings,
  changeUserEmail: ChangeUserEmail,
  signUp: SignUp,
  logIn: LogIn,
  logOut: LogOut,
  getProfile: GetProfile,
  requestPasswordReset: RequestPasswordReset,
  resetPassword: ResetPassword,
  offerFirmware: OfferFirmware,
  readFirmwareImage: ReadFirmwareImage,
} as const;

export type HttpUseCases = {
  readonly [K in keyof typeof httpUseCaseClasses]: InstanceType<(typeof httpUseCaseClasses)[K]>;
};

/**
 * How a router writes its errors (SPEC section 7): the body key `message` or `error`, or plain text, and
 * the text of its 500 answer.
 */
export interface ErrorStyle {
  readonly body: 'message' | 'error' | 'text';
  readonly serverError: string;
}

/** Where SPEC gives a domain error another status than the usual one, e.g. "no data found" is a 400. */
export type StatusOverrides = Readonly<Partial<Record<ErrorCode, number>>>;

export interface RouteErrorPolicy {
  readonly style: ErrorStyle;
  readonly statusFor: StatusOverrides;
  /** The body limit of the route, named in its 413 answer. */
  readonly bodyLimitBytes?: number;
}

export interface RouteInput {
  readonly query: Readonly<Record<string, unknown>>;
  readonly params: Readonly<Record<string, string>>;
  /** The parsed JSON body as its schema allows: an object, or an array where the schema says so. */
  readonly body: Readonly<Record<string, unknown>>;
  /** Who sends the request (a key, a log-in token, or no one), as the access middleware found. */
  readonly caller: Caller;
  /** Whether keys are required right now; false where no access control runs. */
  readonly accessRequired: boolean;
  /** The client's address (from X-Forwarded-For behind a trusted proxy). */
  readonly clientAddress: string;
  /** The request's headers, lower-case names (boxes send their id and key in headers). */
  readonly headers?: Readonly<Record<string, string | string[] | undefined>>;
  /** The host name the client reached the server by, without the port. */
  readonly hostname?: string;
  /** The Host the client named, with its port, and whether it came over TLS. */
  readonly host?: string;
  readonly secure?: boolean;
}

/**
 * Request bodies are read under one of three limits: the usual one, the larger one of reading batches, or
 * the small one of a box's requests (which may also be application/ejson).
 */
export const bodyKinds = ['default', 'ingest', 'box'] as const;
export type BodyKind = (typeof bodyKinds)[number];

export interface BodyParser {
  readonly parse: Middleware;
  readonly limitBytes: number;
}

export type BodyParsers = Readonly<Record<BodyKind, BodyParser>>;

/** What an answer does to the browser's session cookie: start one carrying the token, or end it. */
export type SessionCookieChange = { readonly start: string } | { readonly end: true };

export type Reply = (
  | { readonly status: number; readonly json: unknown }
  | { readonly status: number; readonly text: string }
  /** `csp` widens the page's Content-Security-Policy; by default it may load nothing but inline styles. */
  | { readonly status: number; readonly html: string; readonly csp?: string }
  | { readonly status: number; readonly empty: true }
  /** A body written while it is produced (a download), as `type`, saved as `filename` by browsers. */
  | {
      readonly status: number;
      readonly stream: AsyncIterable<string>;
      readonly type: string;
      readonly filename?: string;
    }
  /** Bytes known in full (a firmware image): sent with their Content-Length and the given headers. */
  | {
      readonly status: number;
      readonly bytes: Uint8Array;
      readonly type: string;
      readonly headers?: Readonly<Record<string, string>>;
    }
) & { readonly sessionCookie?: SessionCookieChange };

export const json = (body: unknown, status = 200): Reply => ({ status, json: body });
export const plainText = (body: string, status = 200): Reply => ({ status, text: body });
export const emptyReply = (status = 200): Reply => ({ status, empty: true });

export interface ResponseDoc {
  readonly description: string;
  readonly schema?: JsonSchema;
  /** The body is plain text rather than JSON. */
  readonly text?: true;
}

/**
 * One route: its policy (who may call it and whether it writes: RoutePolicy, required), its caching
 * (`entityTag`, `cacheByTag`), its limits (`bodyKind`), its inputs, answers and handler.
 */
export interface RouteSpec extends RoutePolicy {
  readonly method: 'get' | 'post' | 'put' | 'delete';
  /** Relative to the router's prefix, in @koa/router syntax (`/all/:userId`). */
  readonly path: string;
  readonly summary: string;
  readonly description?: string;
  readonly query?: JsonSchema;
  /** Documents query parameters that the route deliberately does not validate. */
  readonly unvalidatedQuery?: JsonSchema;
  readonly params?: JsonSchema;
  readonly body?: JsonSchema;
  /** Which body parser (and limit) reads the body; `default` unless said otherwise. */
  readonly bodyKind?: BodyKind;
  readonly style?: Partial<ErrorStyle>;
  readonly statusFor?: StatusOverrides;
  readonly responses: Readonly<Record<number, ResponseDoc>>;
  /**
   * Conditional GET: the answer's entity tag, found before the answer is built. A request whose
   * If-None-Match names it is answered 304 without running `handle`.
   */
  readonly entityTag?: EntityTagOf;
  /** The answer is a function of the entity tag alone (no other parameter changes it), so it is cached. */
  readonly cacheByTag?: true;
  readonly handle: (input: RouteInput, useCases: HttpUseCases) => Promise<Reply>;
}

export interface RouterSpec {
  readonly prefix: string;
  readonly tag: string;
  readonly style: ErrorStyle;
  readonly routes: readonly RouteSpec[];
}

/** The error middleware reads the policy of the route that is running; outside a route it uses its own. */
export function errorPolicyOf(ctx: Context): RouteErrorPolicy | undefined {
  return (ctx.state as { errorPolicy?: RouteErrorPolicy }).errorPolicy;
}

/** Renames the entity `id` to `_id`, the name deployed clients read. */
export function withUnderscoreId<T extends { readonly id: string }>(
  entity: T,
): Omit<T, 'id'> & { _id: string } {
  const { id, ...rest } = entity;
  return { _id: id, ...rest };
}

/** Middleware a route runs after its body is parsed and before it is validated (access checks). */
export type RouteGuard = (route: RouteSpec, fullPath: string) => Middleware;

/**
 * What a route answers, with conditional GET: 304 when If-None-Match names the current tag; for a route
 * cached by its tag, the serialised answer kept for that tag, else the route's own reply (cached when it is
 * a 200 of JSON). If-None-Match `*` holds once the route has found what it names (a missing group is its 404).
 */
export type Answer =
  | { readonly tag: string; readonly notModified: true }
  | { readonly tag: string; readonly body: string }
  | { readonly tag: string | undefined; readonly reply: Reply };

export async function answerOf(
  route: RouteSpec,
  input: RouteInput,
  useCases: HttpUseCases,
  answers: AnswerCache,
  ifNoneMatch: string,
): Promise<Answer> {
  const tag = route.entityTag === undefined ? undefined : await route.entityTag(input, useCases);
  if (tag === undefined) return { tag, reply: await route.handle(input, useCases) };
  if (noneMatchFails(ifNoneMatch, tag)) return { tag, notModified: true };
  const build = async (): Promise<string | Reply> => {
    const reply = await route.handle(input, useCases);
    if (reply.status !== 200 || !('json' in reply)) return reply;
    // Serialised here so that a bare string or null (group settings may be any JSON) stays JSON.
    return JSON.stringify(reply.json) ?? 'null';
  };
  const body = route.cacheByTag === true ? await answers.answer(tag, build) : await build();
  if (typeof body !== 'string') return { tag, reply: body };
  return namesWildcard(ifNoneMatch) ? { tag, notModified: true } : { tag, body };
}

/**
 * Per application, never shared: each router's cache of serialised answers (see AnswerCache), and the
 * answers the poll lane began but handed on to Koa to be written (an error, a 404): Koa's route writes that
 * outcome instead of asking the store again, so a failing store costs one deadline, not two.
 */
export interface Answering {
  readonly cacheOf: (spec: RouterSpec) => AnswerCache;
  readonly handedOn: WeakMap<
    IncomingMessage,
    { readonly route: RouteSpec; readonly answer: Promise<Answer> }
  >;
}

export function answering(): Answering {
  const caches = new Map<RouterSpec, AnswerCache>();
  return {
    cacheOf: (spec) => {
      let cache = caches.get(spec);
      if (cache === undefined) {
        cache = new AnswerCache();
        caches.set(spec, cache);
      }
      return cache;
    },
    handedOn: new WeakMap(),
  };
}

/** Every route of the routers with its full path, after checking that each declares its policy. */
export function declaredRoutes(specs: readonly RouterSpec[]): DeclaredRoute[] {
  return specs.flatMap((spec) =>
    spec.routes.map((route) => {
      const problem = policyProblem(route);
      if (problem !== undefined) throw new Error(`Route ${spec.prefix}: ${problem}`);
      return {
        method: route.method,
        path: `${spec.prefix}${route.path}`,
        access: route.access,
        writes: route.writes,
      };
    }),
  );
}

export function buildRouter(
  spec: RouterSpec,
  useCases: HttpUseCases,
  bodyParsers: BodyParsers,
  answering: Answering,
  guard?: RouteGuard,
): Router {
  const answers = answering.cacheOf(spec);
  const router = new Router({ prefix: spec.prefix });
  for (const route of spec.routes) {
    const parser = route.body === undefined ? undefined : bodyParsers[route.bodyKind ?? 'default'];
    const policy: RouteErrorPolicy = {
      style: { ...spec.style, ...route.style },
      statusFor: route.statusFor ?? {},
      ...(parser === undefined ? {} : { bodyLimitBytes: parser.limitBytes }),
    };
    for (const schema of [route.query, route.params, route.body])
      if (schema !== undefined) validatorFor(schema);

    const declarePolicy: Middleware = async (ctx, next) => {
      (ctx.state as { errorPolicy?: RouteErrorPolicy }).errorPolicy = policy;
      await next();
    };
    const handle: Middleware = async (ctx) => {
      const query: Record<string, unknown> = { ...ctx.query };
      const params = (ctx as unknown as { params?: Record<string, string> }).params ?? {};
      const body: unknown = route.body === undefined ? {} : ctx.request.body;
      if (route.params !== undefined) validate(route.params, 'params', params);
      if (route.query !== undefined) validate(route.query, 'query', query);
      if (route.body !== undefined) validate(route.body, 'body', body);
      const state = ctx.state as { caller?: Caller; access?: { readonly required: boolean } };
      const input: RouteInput = {
        query,
        params,
        body: body as Record<string, unknown>,
        caller: state.caller ?? ANONYMOUS,
        accessRequired: state.access?.required === true,
        clientAddress: ctx.ip,
        headers: ctx.headers,
        hostname: ctx.hostname,
        host: ctx.host,
        secure: ctx.secure,
      };
      const handed = answering.handedOn.get(ctx.req);
      const answer = await (handed?.route === route
        ? handed.answer
        : answerOf(route, input, useCases, answers, ctx.get('If-None-Match')));
      if ('notModified' in answer) {
        ctx.set('ETag', answer.tag);
        ctx.status = 304;
        return;
      }
      if ('body' in answer) {
        ctx.status = 200;
        ctx.type = 'application/json';
        ctx.body = answer.body;
      } else {
        send(ctx, answer.reply);
      }
      const { tag } = answer;
      if (tag !== undefined && ctx.status === 200) {
        ctx.set('ETag', tag);
        // Browsers then revalidate every poll, sending If-None-Match by themselves.
        ctx.set('Cache-Control', 'no-cache');
      }
    };
    const middleware = [
      declarePolicy,
      ...(parser === undefined ? [] : [parser.parse]),
      ...(guard === undefined ? [] : [guard(route, `${spec.prefix}${route.path}`)]),
      handle,
    ];
    router.register(route.path, [route.method.toUpperCase()], middleware);
  }
  return router;
}

/**
 * The routers of several specs as one middleware, answering exactly as `app.use` of each router in turn, but
 * a request only visits the routers that can match it: the unprefixed ones and the one whose prefix starts
 * its path (prefixes never nest). Matching a path against every route of every router before it would cost
 * a route near the end of the list several times what its handler does.
 */
export function buildRoutes(
  specs: readonly RouterSpec[],
  useCases: HttpUseCases,
  bodyParsers: BodyParsers,
  answering: Answering,
  guard?: RouteGuard,
): Middleware {
  const routers = specs.map((spec) => ({
    prefix: spec.prefix.toLowerCase(),
    middleware: buildRouter(spec, useCases, bodyParsers, answering, guard).routes() as unknown as Middleware,
  }));
  return (ctx, next) => {
    // Paths match case-insensitively, with or without a trailing slash.
    const path = ctx.path.toLowerCase();
    const chain = routers.filter(
      ({ prefix }) => prefix === '' || path === prefix || path.startsWith(`${prefix}/`),
    );
    const run = (index: number): Promise<unknown> => {
      const router = chain[index];
      return router === undefined ? next() : router.middleware(ctx, () => run(index + 1));
    };
    return run(0);
  };
}

export function send(ctx: Context, reply: Reply): void {
  if ('bytes' in reply) {
    ctx.status = reply.status;
    ctx.type = reply.type;
    for (const [name, value] of Object.entries(reply.headers ?? {})) ctx.set(name, value);
    // A Buffer body: Koa sends its Content-Length.
    ctx.body = Buffer.from(reply.bytes.buffer, reply.bytes.byteOffset, reply.bytes.byteLength);
  } else if ('json' in reply) {
    ctx.status = reply.status;
    ctx.type = 'application/json';
    // Serialised here so that a bare string or null (group settings may be any JSON) stays JSON.
    ctx.body = JSON.stringify(reply.json) ?? 'null';
  } else if ('text' in reply) {
    ctx.status = reply.status;
    ctx.type = 'text/plain';
    ctx.body = reply.text;
  } else if ('stream' in reply) {
    ctx.status = reply.status;
    ctx.type = reply.type;
    if (reply.filename !== undefined) ctx.attachment(reply.filename);
    // A failure after the first bytes cannot change the status any more: the stream ends with an error,
    // and the client sees a truncated body instead of a complete-looking one.
    ctx.body = Readable.from(reply.stream);
  } else if ('html' in reply) {
    ctx.status = reply.status;
    ctx.type = 'text/html';
    ctx.set('Content-Security-Policy', reply.csp ?? "default-src 'none'; style-src 'unsafe-inline'");
    ctx.body = reply.html;
  } else {
    ctx.body = null;
    ctx.status = reply.status;
  }
  const change = reply.sessionCookie;
  if (change !== undefined) {
    if ('start' in change) setSessionCookie(ctx, change.start);
    else clearSessionCookie(ctx);
  }
}
