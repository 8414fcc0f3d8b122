import { actorOf } from '@hortus/core';
import { accessKeyKinds, EMAIL_MAX_LENGTH, userRoles } from '@hortus/core';
import { groupName, object, text } from './schemas.js';
import { json, type RouteSpec, type RouterSpec } from './routing.js';

/**
 * Running the installation over HTTP, for the web console and scripts: what `hortus device`, `hortus keys`
 * and `hortus user` do, through the same core use cases. Every route is `admin`: admin keys and admins'
 * log-ins only (docs/security.md, Roles).
 */
const message = { body: 'message', serverError: 'Internal Server Error' } as const;

const deviceId = object(
  { id: text('The box: the id it sends (`100aa286f24`) or its label MAC (`24:6F:28:AA:00:01`)') },
  ['id'],
);
const adminOnly = {
  401: { description: '`{message}`: no valid credential while keys are required' },
  403: { description: '`{message}`: the credential is not an admin' },
} as const;
const deviceAnswers = {
  200: { description: 'The device record (no key or digest)' },
  400: { description: '`{message}` naming the bad field' },
  404: { description: '`{message}`: no such device' },
  ...adminOnly,
} as const;

/** POST /:id/lock and /:id/unlock. */
function lockRoute(locked: boolean): RouteSpec {
  return {
    method: 'post',
    path: `/boxes/:id/${locked ? 'lock' : 'unlock'}`,
    access: 'admin',
    writes: true,
    summary: locked ? 'Lock a box to its address' : 'Unlock a box',
    description: locked
      ? 'Accept onboardings of the device only from the address it last onboarded from; its key keeps working (`hortus device lock`).'
      : 'Accept onboardings of the device from any address again (`hortus device unlock`).',
    params: deviceId,
    responses: deviceAnswers,
    handle: async ({ params, caller }, { setDeviceLock }) =>
      json(await setDeviceLock.execute({ actor: actorOf(caller), id: params['id'], locked })),
  };
}

export const adminBoxRoutes: readonly RouteSpec[] = [
  {
    method: 'get',
    path: '/boxes/pending',
    access: 'admin',
    writes: false,
    summary: 'Boxes waiting to be registered',
    description:
      'Boxes that asked to onboard in the last 7 days but are not registered (`hortus device pending`): ' +
      '`[{boxId, mac?, label?, firstSeenAt, lastSeenAt, attempts, firmwareVersion?, address, wantedBy?}]`.',
    responses: { 200: { description: 'The pending boxes' }, ...adminOnly },
    handle: async (_input, { listPendingDevices }) => json(await listPendingDevices.execute()),
  },
  {
    method: 'post',
    path: '/boxes/:id/claim',
    access: 'admin',
    writes: true,
    summary: 'Register a box into a group',
    description:
      'Registers a box, pending or not, by the id it sends or its label MAC (`hortus device claim`). ' +
      '`move: true` takes it from the group that holds it.',
    params: deviceId,
    body: object(
      {
        group: groupName('The group the box joins'),
        type: text('Device type (default `box`)'),
        move: { type: 'boolean', description: 'Take it from the group that holds it' },
      },
      ['group'],
    ),
    responses: {
      ...deviceAnswers,
      404: { description: '`{message}`: the group does not exist' },
      409: { description: '`{message}`: another group holds the box (send `move: true`)' },
    },
    handle: async ({ params, body, caller }, { claimDevice }) =>
      json(
        await claimDevice.execute({
          actor: actorOf(caller),
          id: params['id'],
          group: body['group'],
          ...(body['type'] === undefined ? {} : { type: body['type'] }),
          move: body['move'] === true,
        }),
      ),
  },
  lockRoute(true),
  lockRoute(false),
  {
    method: 'post',
    path: '/boxes/:id/approve-move',
    access: 'admin',
    writes: true,
    summary: "Approve a locked box's onboarding from a new address",
    description:
      'Lets a locked device onboard once from the address of its refused onboarding; it stays locked (`hortus device approve-move`).',
    params: deviceId,
    responses: { ...deviceAnswers, 409: { description: '`{message}`: no refused onboarding to approve' } },
    handle: async ({ params, caller }, { approveDeviceMove }) =>
      json(await approveDeviceMove.execute({ actor: actorOf(caller), id: params['id'] })),
  },
  {
    method: 'post',
    path: '/boxes/:id/rotate-key',
    access: 'admin',
    writes: true,
    summary: 'Give a box a new key',
    description:
      'The box learns the new key at its next boot and the old one works until then; `revoke: true` stops ' +
      'the old key at once, so the box is refused until it is power-cycled (`hortus device rotate-key`).',
    params: deviceId,
    body: object({ revoke: { type: 'boolean', description: 'Stop the old key now' } }),
    responses: deviceAnswers,
    handle: async ({ params, body, caller }, { rotateDeviceKey }) =>
      json(
        await rotateDeviceKey.execute({
          actor: actorOf(caller),
          id: params['id'],
          revoke: body['revoke'] === true,
        }),
      ),
  },
];

export const adminKeyRoutes: readonly RouteSpec[] = [
  {
    method: 'get',
    path: '/keys',
    access: 'admin',
    writes: false,
    summary: 'Access keys',
    description:
      'Every key with `{id, name, kind, groups, createdAt, revokedAt?}`, never a secret (`hortus keys list`).',
    responses: { 200: { description: 'The keys' }, ...adminOnly },
    handle: async (_input, { listAccessKeys }) => json(await listAccessKeys.execute()),
  },
  {
    method: 'post',
    path: '/keys',
    access: 'admin',
    writes: true,
    summary: 'Create an access key',
    description:
      'Answers `{key, secret}`: the secret is shown this once and only its digest is kept (`hortus keys create`). ' +
      'Kinds: `admin`, `client`, `viewer`, `device` (exactly one group), `metrics` (no group).',
    body: object(
      {
        name: text('What the key is for'),
        kind: {
          type: 'string',
          enum: [...accessKeyKinds],
          description: 'The kind, a role (docs/security.md)',
        },
        groups: {
          type: 'array',
          items: groupName(),
          maxItems: 100,
          description: 'Groups it is limited to; none: every group',
        },
      },
      ['name', 'kind'],
    ),
    responses: {
      201: { description: '`{key, secret}`; the secret is never shown again' },
      400: { description: '`{message}` naming the bad field' },
      ...adminOnly,
    },
    handle: async ({ body, caller }, { createAccessKey }) =>
      json(
        await createAccessKey.execute({
          actor: actorOf(caller),
          name: body['name'],
          kind: body['kind'],
          ...(body['groups'] === undefined ? {} : { groups: body['groups'] }),
        }),
        201,
      ),
  },
  {
    method: 'post',
    path: '/keys/:id/revoke',
    access: 'admin',
    writes: true,
    summary: 'Revoke an access key',
    description: 'Running servers refuse it within AUTH_CACHE_MS (`hortus keys revoke`).',
    params: object({ id: text('Key id') }, ['id']),
    responses: {
      200: { description: 'The revoked key' },
      404: { description: "`{message: 'Access key not found'}`" },
      ...adminOnly,
    },
    handle: async ({ params, caller }, { revokeAccessKey }) =>
      json(await revokeAccessKey.execute({ actor: actorOf(caller), id: params['id'] })),
  },
];

const email = { type: 'string', minLength: 1, maxLength: EMAIL_MAX_LENGTH, description: 'E-mail address' };

export const adminUserRoutes: readonly RouteSpec[] = [
  {
    method: 'get',
    path: '/users',
    access: 'admin',
    writes: false,
    summary: 'Users',
    description:
      'Every user with `{id, firstName, lastName, email, group, role, createdAt?, origin}` (`hortus user list`); never a password or hash.',
    responses: { 200: { description: 'The users' }, ...adminOnly },
    handle: async (_input, { listUsers }) => json(await listUsers.execute()),
  },
  {
    method: 'put',
    path: '/users/:id/role',
    access: 'admin',
    writes: true,
    summary: "Set a user's role",
    description:
      "`viewer`, `operator` or `admin` (`hortus user role`); the user's log-in tokens carry it within AUTH_CACHE_MS.",
    params: object({ id: text('User id') }, ['id']),
    body: object({ role: { type: 'string', enum: [...userRoles], description: 'The new role' } }, ['role']),
    responses: {
      200: { description: 'The user with its new role' },
      400: { description: '`{message}` naming the bad field' },
      404: { description: "`{message: 'User not found.'}`" },
      ...adminOnly,
    },
    handle: async ({ params, body, caller }, { setUserRole }) =>
      json(await setUserRole.execute({ actor: actorOf(caller), userId: params['id'], role: body['role'] })),
  },
  {
    method: 'post',
    path: '/users/invitations',
    access: 'admin',
    writes: true,
    summary: 'Invite an e-mail to sign up into a group',
    description:
      'Answers `{email, group, expiresAt, code}`: the code lets this e-mail sign up into the group once within 7 days, ' +
      'as the field `invitation` of `POST /api/users` (`hortus user invite`).',
    body: object({ email, group: groupName('The group it joins') }, ['email', 'group']),
    responses: {
      201: { description: 'The invitation and its code' },
      400: { description: '`{message}` naming the bad field' },
      404: { description: '`{message}`: no such group' },
      ...adminOnly,
    },
    handle: async ({ body, caller }, { inviteUser }) => {
      const { invitation, code } = await inviteUser.execute({
        actor: actorOf(caller),
        email: body['email'],
        group: body['group'],
      });
      return json({ ...invitation, code }, 201);
    },
  },
  {
    method: 'post',
    path: '/users/reset-link',
    access: 'admin',
    writes: true,
    summary: 'A password reset link for a user',
    description:
      'Answers `{userId, email, link}`: a fresh link (valid 1 hour, once) to give the user without mail (`hortus user reset-link`).',
    body: object({ email }, ['email']),
    responses: {
      200: { description: '`{userId, email, link}`' },
      400: { description: '`{message}` naming the bad field' },
      404: { description: '`{message}`: no such user' },
      ...adminOnly,
    },
    handle: async ({ body, caller }, { requestPasswordReset }) => {
      const { user, link } = await requestPasswordReset.linkFor({
        actor: actorOf(caller),
        email: body['email'],
      });
      return json({ userId: user.id, email: user.email, link });
    },
  },
];

export const adminRoutes: RouterSpec = {
  prefix: '/api/admin',
  tag: 'Administration',
  style: message,
  routes: [...adminBoxRoutes, ...adminKeyRoutes, ...adminUserRoutes],
};
