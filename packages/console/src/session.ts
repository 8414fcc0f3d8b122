import { ApiError, get, optionalGet, post } from './api.js';

export type Role = 'viewer' | 'operator' | 'admin';

export interface Session {
  /** Whether the server requires a credential (AUTH, keys in use). */
  readonly accessControl: boolean;
  readonly signedIn: boolean;
  readonly email?: string;
  readonly role: Role;
  /** The groups the principal may see; `all` for an admin, who may see every group. */
  readonly groups: readonly string[];
}

interface Me {
  readonly role?: string;
  readonly groups?: readonly string[] | '*';
  readonly group?: string;
  readonly email?: string;
  readonly kind?: string;
}

interface Remembered {
  readonly userId: string;
  readonly group: string;
  readonly email: string;
}

const REMEMBERED = 'hortus.console.user';
const OPEN_GROUPS = 'hortus.console.groups';

const roles: readonly Role[] = ['viewer', 'operator', 'admin'];
const roleOf = (text: string | undefined, fallback: Role): Role =>
  roles.includes(text as Role) ? (text as Role) : fallback;

function remembered(): Remembered | undefined {
  try {
    const value = JSON.parse(sessionStorage.getItem(REMEMBERED) ?? 'null') as Remembered | null;
    return value ?? undefined;
  } catch {
    return undefined;
  }
}

/** The groups a visitor of an open server chose to watch (there is no list of groups for anyone). */
export function openGroups(): string[] {
  const text = localStorage.getItem(OPEN_GROUPS) ?? 'demo';
  return text
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
}
export function setOpenGroups(names: readonly string[]): void {
  localStorage.setItem(OPEN_GROUPS, names.join(','));
}

function fromMe(me: Me, accessControl: boolean, fallbackGroups: readonly string[]): Session {
  const role = roleOf(me.role, 'operator');
  const groups =
    me.groups === '*' || me.groups === undefined
      ? me.group === undefined
        ? [...fallbackGroups]
        : [me.group]
      : [...me.groups];
  return {
    accessControl,
    signedIn: true,
    role,
    groups,
    ...(me.email === undefined ? {} : { email: me.email }),
  };
}

/** Who is here: GET /api/me when the server has it, else what the log-in answered (kept for this tab). */
export async function currentSession(): Promise<Session> {
  const status = await get<{ accessControl: boolean }>('/console/status.json', true);
  const { accessControl } = status;
  const open: Session = { accessControl, signedIn: false, role: 'admin', groups: openGroups() };
  const known = remembered();
  try {
    const me = await optionalGet<Me>('/api/me', true);
    if (me !== undefined) {
      if (
        me.kind === 'anonymous' ||
        (me.role === undefined && me.group === undefined && me.email === undefined)
      ) {
        return accessControl ? { ...open, role: 'viewer', groups: [] } : open;
      }
      return fromMe(me, accessControl, known === undefined ? openGroups() : [known.group]);
    }
  } catch (error) {
    if (!(error instanceof ApiError && error.status === 401)) throw error;
    // /api/me wants a credential even with access control off: then the open page it is.
    if (!accessControl) return open;
    if (known === undefined) return { ...open, role: 'viewer', groups: [] };
  }
  if (known !== undefined) {
    try {
      await get(`/api/apiuserdata/${encodeURIComponent(known.userId)}`, true);
      return { accessControl, signedIn: true, role: 'operator', groups: [known.group], email: known.email };
    } catch {
      sessionStorage.removeItem(REMEMBERED);
    }
  }
  return accessControl ? { ...open, role: 'viewer', groups: [] } : open;
}

export async function signIn(email: string, password: string): Promise<void> {
  const answer = await post<{ data: { userId: string; group: string } }>('/api/auth', { email, password });
  sessionStorage.setItem(
    REMEMBERED,
    JSON.stringify({ userId: answer.data.userId, group: answer.data.group, email } satisfies Remembered),
  );
}

export async function signOut(): Promise<void> {
  sessionStorage.removeItem(REMEMBERED);
  await post('/api/auth/logout', {}).catch(() => undefined);
}

export const mayOperate = (session: Session): boolean => session.role !== 'viewer';
export const mayAdminister = (session: Session): boolean => session.role === 'admin';
