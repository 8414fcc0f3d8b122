/** The API on this origin: the session cookie goes along by itself (Path=/api, HttpOnly). */

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** Called when the server says the session has ended (401), so the page goes back to sign-in. */
let onUnauthorized: (() => void) | undefined;
export function whenUnauthorized(handler: () => void): void {
  onUnauthorized = handler;
}

async function messageOf(response: Response): Promise<string> {
  const text = await response.text();
  try {
    const body = JSON.parse(text) as { message?: unknown; error?: unknown };
    const message = body.message ?? body.error;
    if (typeof message === 'string') return message;
  } catch {
    // not JSON: the text itself
  }
  return text === '' ? `HTTP ${response.status}` : text.slice(0, 200);
}

/** `quiet`: a 401 is only this request's answer (finding out who is here), not the end of a session. */
export async function request<T>(path: string, init: RequestInit = {}, quiet = false): Promise<T> {
  const response = await fetch(path, {
    credentials: 'same-origin',
    ...init,
    headers: {
      Accept: 'application/json',
      ...(init.body === undefined ? {} : { 'Content-Type': 'application/json' }),
      ...init.headers,
    },
  });
  if (!response.ok) {
    if (response.status === 401 && !quiet) onUnauthorized?.();
    throw new ApiError(response.status, await messageOf(response));
  }
  const text = await response.text();
  return (text === '' ? undefined : JSON.parse(text)) as T;
}

export const get = <T>(path: string, quiet = false): Promise<T> => request<T>(path, {}, quiet);
export const post = <T>(path: string, body: unknown): Promise<T> =>
  request<T>(path, { method: 'POST', body: JSON.stringify(body) });

/** Like get, but a route that is not there (yet) answers undefined instead of failing. */
export async function optionalGet<T>(path: string, quiet = false): Promise<T | undefined> {
  try {
    return await get<T>(path, quiet);
  } catch (error) {
    if (error instanceof ApiError && (error.status === 404 || error.status === 405)) return undefined;
    throw error;
  }
}

export const q = (params: Record<string, string | number | undefined>): string =>
  new URLSearchParams(
    Object.entries(params).flatMap(([key, value]) => (value === undefined ? [] : [[key, String(value)]])),
  ).toString();

/** The `message` wrapper most routes answer with. */
export interface Wrapped<T> {
  readonly message: T;
}

export interface Reading {
  readonly topic: string;
  readonly value: number | string;
  readonly time: string;
}

export interface Bucket {
  readonly time: string;
  readonly min: number;
  readonly max: number;
  readonly avg: number;
  readonly count: number;
}

export interface Device {
  readonly deviceId: string;
  readonly group: string;
  readonly type?: string;
  readonly macAddress?: string;
  readonly boxId?: string;
  readonly locked?: boolean;
  readonly silent?: boolean;
  readonly lastSeen?: string;
  readonly firmwareVersion?: string;
  readonly address?: string;
}

export interface ActionState {
  readonly group: string;
  readonly object: string;
  readonly value: string;
  readonly automations?: readonly Automation[];
}

export interface Automation {
  readonly timeAutomations?: readonly { action: string; time: string; frequency: string }[];
  readonly sensorAutomations?: readonly {
    action: string;
    sensor: string;
    condition: string;
    value: string;
  }[];
}

export interface Safety {
  readonly object: string;
  readonly safe: string;
  readonly staleAfterMs?: number;
  readonly topics: readonly string[];
  readonly inSafeMode: boolean;
  readonly since?: string;
}

export interface ActionDetail extends ActionState {
  readonly maxOnMs?: number;
  readonly minOnMs?: number;
  readonly minOffMs?: number;
}

export interface Notification {
  readonly _id: string;
  readonly group: string;
  readonly time: string;
  readonly message: string;
  readonly ignore?: string;
  readonly topic?: string;
  readonly value?: number;
  readonly severity?: string;
  /** Who acknowledged it and when (the alarms' acknowledgement); it stays listed until ignored. */
  readonly acknowledged?: { at: string; by: { kind: string; id?: string; name?: string } };
}

export interface HistoryEntry {
  readonly object: string;
  readonly value: string;
  readonly at: string;
  readonly actor?: { kind: string; id?: string };
  readonly trigger?: string;
  readonly rule?: unknown;
}

export const groupQuery = (group: string): string => q({ group });
export const groupIdQuery = (group: string): string => q({ groupId: group });

export const latestOf = (group: string): Promise<Reading[]> =>
  get<Reading[]>(`/api/data/latestdata/All?${groupIdQuery(group)}`);

export async function devicesOf(group: string): Promise<Device[]> {
  try {
    return (await get<Wrapped<Device[]>>(`/api/devices?${groupQuery(group)}`)).message;
  } catch (error) {
    // The original's answer for a group without devices.
    if (error instanceof ApiError && error.status === 400) return [];
    throw error;
  }
}

export const actionsOf = async (group: string): Promise<ActionState[]> =>
  (await get<Wrapped<ActionState[]>>(`/api/actions/current_state?${groupQuery(group)}`)).message;

export const safetyOf = async (group: string): Promise<Safety[]> =>
  (await get<Wrapped<Safety[]>>(`/api/actions/safety?${groupQuery(group)}`)).message;

export const alertsOf = (group: string): Promise<Notification[]> =>
  get<Notification[]>(`/api/notification/latestdata/notifications?${groupIdQuery(group)}`);

export const actionDetail = (group: string, object: string): Promise<ActionDetail> =>
  get<ActionDetail>(`/api/actions/get_automations?${q({ groupId: group, deviceName: object })}`);

export const switchAction = (group: string, object: string, value: 'on' | 'off'): Promise<unknown> =>
  get(`/api/actions/?${q({ group, object, value })}`);

export const historyOf = async (group: string, object: string, limit = 200): Promise<HistoryEntry[]> =>
  (await get<Wrapped<HistoryEntry[]>>(`/api/actions/history?${q({ group, object, limit })}`)).message;

/** "Seen, on it": recorded with who and when; a critical alert is no longer sent again. */
export async function acknowledge(alert: Notification): Promise<void> {
  await post(
    `/api/notification/notifications/${encodeURIComponent(alert._id)}/ack?${groupIdQuery(alert.group)}`,
    {},
  );
}
export const seriesPath = (topic: string): string =>
  `/api/data/series/${topic
    .split('/')
    .map((part) => encodeURIComponent(part))
    .join('/')}`;
