import { RequestPasswordReset } from '@hortus/core';
import { expect, type Reply, type TestServer } from './harness.js';

/** What the account suites share: sign-up and log-in through the routes, and the checks on every answer. */
export const PASSWORD = 'Tomato#Bed42';
export const json = (reply: Reply): Record<string, unknown> => reply.json() as Record<string, unknown>;

export interface Account {
  readonly email: string;
  readonly userId: string;
  readonly token: string;
  readonly group: string;
  readonly auth: { authorization: string };
}

/** Signs up and logs in through the routes, as the web client does. */
export async function signUpAndLogIn(
  api: TestServer,
  group: string,
  email: string,
  headers = {},
): Promise<Account> {
  const created = await api.call('POST', '/api/users', {
    json: { firstName: 'Ada', lastName: 'Grower', email, password: PASSWORD, group },
    headers,
  });
  expect(created.status, created.text).to.equal(201);
  const loggedIn = await api.call('POST', '/api/auth', { json: { email, password: PASSWORD } });
  expect(loggedIn.status, loggedIn.text).to.equal(200);
  const { token, userId } = (json(loggedIn)['data'] ?? {}) as { token: string; userId: string };
  return { email, userId, token, group, auth: { authorization: `Bearer ${token}` } };
}

/** The link is made and mailed after the answer (so its timing tells nothing): wait for that. */
export async function resetsHandled(api: TestServer): Promise<void> {
  await api.container.get(RequestPasswordReset).settled();
}

/** Every answer must be free of password hashes. */
export function expectNoHash(reply: Reply): void {
  expect(reply.text).to.not.match(/\$2[aby]\$/u);
}
