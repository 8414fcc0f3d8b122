import {
  type Caller,
  GetProfile,
  DescribeCaller,
  ListPendingDevices,
  ClaimDevice,
  SetDeviceLock,
  ApproveDeviceMove,
  RotateDeviceKey,
  ListAccessKeys,
  CreateAccessKey,
  RevokeAccessKey,
  ListUsers,
  SetUserRole,
  InviteUser,
  SetTopicAlert,
  SetBoxAlert,
  ConfigureGroupNotify,
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
  ListActionLockouts,
  ListActionSafety,
  PreviewAutomations,
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
  AcknowledgeNotification,
  ListAuditTrail,
  ListAutomationEvents,
  ListActionHistory,
  ListDevices,
  ListOpenNotifications,
  QueryReadings,
  RecordReadings,
  ReplaceAutomations,
  SetActionLimit,
  SetActionValue,
  UpdateGroupSettings,
} from '@hortus/core';
import { type RoutePolicy } from './policy.js';
import { type JsonSchema } from './schemas.js';

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
  setActionLimit: SetActionLimit,
  listActionSafety: ListActionSafety,
  listActionLockouts: ListActionLockouts,
  previewAutomations: PreviewAutomations,
  listAutomationEvents: ListAutomationEvents,
  listActionHistory: ListActionHistory,
  listDevices: ListDevices,
  createDevice: CreateDevice,
  listDeviceViews: ListDeviceViews,
  onboardBox: OnboardBox,
  authenticateBox: AuthenticateBox,
  recordBoxReadings: RecordBoxReadings,
  findBoxActions: FindBoxActions,
  listOpenNotifications: ListOpenNotifications,
  ignoreNotifications: IgnoreNotifications,
  acknowledgeNotification: AcknowledgeNotification,
  listAuditTrail: ListAuditTrail,
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
  describeCaller: DescribeCaller,
  listPendingDevices: ListPendingDevices,
  claimDevice: ClaimDevice,
  setDeviceLock: SetDeviceLock,
  approveDeviceMove: ApproveDeviceMove,
  rotateDeviceKey: RotateDeviceKey,
  listAccessKeys: ListAccessKeys,
  createAccessKey: CreateAccessKey,
  revokeAccessKey: RevokeAccessKey,
  listUsers: ListUsers,
  setUserRole: SetUserRole,
  inviteUser: InviteUser,
  setTopicAlert: SetTopicAlert,
  setBoxAlert: SetBoxAlert,
  configureGroupNotify: ConfigureGroupNotify,
  requestPasswordReset: RequestPasswordReset,
  resetPassword: ResetPassword,
  offerFirmware: OfferFirmware,
  readFirmwareImage: ReadFirmwareImage,
} as const;

export type HttpUseCases = {
  readonly [K in keyof typeof httpUseCaseClasses]: InstanceType<(typeof httpUseCaseClasses)[K]>;
};

/**
 * How a router writes its errors (docs/api.md, General rules: error shapes): the body key `message` or `error`, or plain text, and
 * the text of its 500 answer.
 */
export interface ErrorStyle {
  readonly body: 'message' | 'error' | 'text';
  readonly serverError: string;
}

/** Where the API (docs/api.md) gives a domain error another status than the usual one, e.g. "no data found" is a 400. */
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

/** A route's entity tag, found from its input before the answer is built (conditional.ts builds them). */
export type EntityTagOf = (input: RouteInput, useCases: HttpUseCases) => Promise<string | undefined>;

export interface RouterSpec {
  readonly prefix: string;
  readonly tag: string;
  readonly style: ErrorStyle;
  readonly routes: readonly RouteSpec[];
}

/** Renames the entity `id` to `_id`, the name deployed clients read. */
export function withUnderscoreId<T extends { readonly id: string }>(
  entity: T,
): Omit<T, 'id'> & { _id: string } {
  const { id, ...rest } = entity;
  return { _id: id, ...rest };
}
