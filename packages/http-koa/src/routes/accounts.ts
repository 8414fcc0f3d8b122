import { logInBody, object, resetRequestBody, resetValidateBody, signUpBody } from './schemas.js';
import { json, type RouterSpec, withUnderscoreId } from './routing.js';

/**
 * The account routes the web client calls (COMPAT "Accounts"). They check credentials themselves, so the
 * access middleware lets them through: log-in and reset need none, sign-up needs an admin key or an
 * invitation while keys are required, and the profile always needs its owner's log-in token.
 */
const message = { body: 'message', serverError: 'Internal Server Error' } as const;

export const signUpRoutes: RouterSpec = {
  prefix: '/api/users',
  tag: 'Accounts',
  style: message,
  routes: [
    {
      method: 'post',
      path: '/',
      access: 'account',
      writes: true,
      summary: 'Sign up',
      description:
        "Creates a user with a bcrypt hash of the password and appends `firstName + lastName` to the group's " +
        '`employee` list. While access keys are required it needs an admin key or an `invitation` from ' +
        '`hortus user invite` (unless SIGNUP=open).',
      body: signUpBody,
      responses: {
        201: { description: "`{message: 'User created successfully'}`" },
        400: { description: "`{message}` naming the bad field, or `{message: 'Invalid group name'}`" },
        403: { description: '`{message}`: an invitation or an admin key is needed' },
        409: { description: "`{message: 'User with given email already exists!'}`" },
        429: { description: '`{message}`: too many sign-ups from this address or in all; Retry-After' },
      },
      handle: async ({ body, caller, accessRequired, clientAddress }, { signUp }) => {
        await signUp.execute(
          {
            firstName: body['firstName'],
            lastName: body['lastName'],
            email: body['email'],
            password: body['password'],
            group: body['group'],
            invitation: body['invitation'],
          },
          { caller, accessRequired, clientAddress },
        );
        return json({ message: 'User created successfully' }, 201);
      },
    },
  ],
};

export const logInRoutes: RouterSpec = {
  prefix: '/api/auth',
  tag: 'Accounts',
  style: message,
  routes: [
    {
      method: 'post',
      path: '/',
      access: 'account',
      writes: true,
      summary: 'Log in',
      description:
        'Answers a log-in token (a JWT valid for 7 days) for `Authorization: Bearer`, and sets the same token ' +
        'as the session cookie `hortus_session` (HttpOnly, SameSite=Strict, Path=/api, Secure over HTTPS, ' +
        'ending with the browser), which every data route accepts like the header. Failed log-ins are ' +
        'limited per e-mail and per client address: 429 with Retry-After after 10 in 15 minutes.',
      body: logInBody,
      responses: {
        200: { description: "`{data: {token, userId, group}, message: 'Logged in successfully'}`" },
        400: { description: '`{message}` naming the bad field' },
        401: { description: "`{message: 'Invalid Email or Password'}`, for unknown e-mails too" },
        429: { description: '`{message}`; Retry-After says when to try again' },
      },
      handle: async ({ body, clientAddress }, { logIn }) => {
        const { token, userId, group } = await logIn.execute(
          { email: body['email'], password: body['password'] },
          clientAddress,
        );
        return {
          ...json({ data: { token, userId, group }, message: 'Logged in successfully' }),
          sessionCookie: { start: token },
        };
      },
    },
    {
      method: 'post',
      path: '/logout',
      access: 'account',
      writes: true,
      summary: 'Log out',
      description:
        "Ends the caller's log-in sessions (the session cookie's or the `Bearer` token's user: every token " +
        'of that user issued so far) and clears the session cookie. Without a valid session it only clears ' +
        'the cookie.',
      responses: {
        200: { description: "`{message: 'Logged out'}`" },
      },
      handle: async ({ caller }, { logOut }) => {
        await logOut.execute(caller);
        return { ...json({ message: 'Logged out' }), sessionCookie: { end: true } };
      },
    },
  ],
};

export const profileRoutes: RouterSpec = {
  prefix: '/api/apiuserdata',
  tag: 'Accounts',
  style: message,
  routes: [
    {
      method: 'get',
      path: '/:id',
      access: 'account',
      writes: false,
      summary: "A user's own profile",
      description: "Always needs the user's own log-in token, whether or not access keys are in use.",
      params: object({ id: { type: 'string', description: 'User id' } }, ['id']),
      responses: {
        200: { description: '`{_id, firstName, lastName, email, group}` (never a password or hash)' },
        401: { description: '`{message}`: no valid log-in token' },
        403: { description: "`{message}`: another user's token" },
      },
      handle: async ({ params, caller }, { getProfile }) => {
        // The original's shape (COMPAT "Accounts"); the role is `GET /api/me`'s.
        const user = await getProfile.execute({ id: params['id'] }, caller);
        const { id, firstName, lastName, email, group } = user;
        return json(withUnderscoreId({ id, firstName, lastName, email, group }));
      },
    },
  ],
};

export const passwordResetRoutes: RouterSpec = {
  prefix: '/api/password-reset',
  tag: 'Accounts',
  style: message,
  routes: [
    {
      method: 'post',
      path: '/',
      access: 'account',
      writes: true,
      summary: 'Ask for a password reset link',
      description:
        'Mails `APP_URL/reset_password/<userId>/<token>` (valid 1 hour, once) when the e-mail has an account, ' +
        'and answers the same 200 either way, so the route does not tell who has an account.',
      body: resetRequestBody,
      responses: {
        200: { description: '`{message}`, the same whether or not the e-mail has an account' },
        400: { description: '`{message}` naming the bad field' },
      },
      handle: async ({ body }, { requestPasswordReset }) =>
        json({ message: await requestPasswordReset.execute({ email: body['email'] }) }),
    },
    {
      method: 'post',
      path: '/resetvalidate',
      access: 'account',
      writes: true,
      summary: 'Set a new password from a reset link',
      description: "Sets the password and ends every older session of the user; the link's token is used up.",
      body: resetValidateBody,
      responses: {
        200: { description: "`{message: 'Password reset successfully'}`" },
        400: { description: "`{message: 'Invalid link or expired'}`, or `{message}` naming the bad field" },
      },
      handle: async ({ body }, { resetPassword }) => {
        await resetPassword.execute({ _id: body['_id'], token: body['token'], password: body['password'] });
        return json({ message: 'Password reset successfully' });
      },
    },
  ],
};

export const meRoutes: RouterSpec = {
  prefix: '/api/me',
  tag: 'Accounts',
  style: message,
  routes: [
    {
      method: 'get',
      path: '/',
      access: 'account',
      writes: false,
      summary: 'Who the credential belongs to, and what it may do',
      description:
        'For a log-in token (header or session cookie): `{kind: "user", userId, email, firstName, lastName, ' +
        "group, role, groups}`: `group` is the home group (the log-in answer's), `role` is `viewer`, " +
        '`operator` or `admin`, `groups` the groups it may see (its home group, or every group for an ' +
        'admin, sorted). For an access key: `{kind: "key", keyId, name, keyKind, role, groups}`. A web page ' +
        'asks it after log-in to show only what the user may do; the server still decides every request.',
      responses: {
        200: { description: '`{kind, ..., role, groups}` (see above)' },
        401: { description: '`{message}`: no valid log-in token or key' },
      },
      handle: async ({ caller }, { describeCaller }) => json(await describeCaller.execute(caller)),
    },
  ],
};

export const accountRouters: readonly RouterSpec[] = [
  signUpRoutes,
  logInRoutes,
  profileRoutes,
  passwordResetRoutes,
  meRoutes,
];
