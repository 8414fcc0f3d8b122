import { type UserRepository, USER_REPOSITORY } from '@hortus/core';
import { expect, startTestServer } from './harness.js';
import { json, PASSWORD, signUpAndLogIn } from './accounts-support.js';

describe('accounts over HTTP with AUTH=on and SIGNUP=open', () => {
  it('when anyone signs up, then it is allowed, as the operator chose', async () => {
    const api = await startTestServer({ AUTH: 'on', SIGNUP: 'open' });
    try {
      const group = api.unique('greenhouse');
      await api.seed.group(group);
      const account = await signUpAndLogIn(api, group, `${api.unique('ana')}@example.org`);
      expect(account.token).to.be.a('string');
    } finally {
      await api.close();
    }
  });
});

describe('accounts over HTTP: the sign-up throttle', () => {
  it('when one address signs up past SIGNUPS_PER_ADDRESS, then 429 with Retry-After and no account, while log-in still works', async () => {
    const api = await startTestServer({ AUTH: 'off', SIGNUPS_PER_ADDRESS: '2' });
    try {
      const group = api.unique('greenhouse');
      await api.seed.group(group);
      const ana = await signUpAndLogIn(api, group, `${api.unique('ana')}@example.org`);
      await signUpAndLogIn(api, group, `${api.unique('ben')}@example.org`);
      const email = `${api.unique('cy')}@example.org`;

      const refused = await api.call('POST', '/api/users', {
        json: { firstName: 'Cy', lastName: 'Grower', email, password: PASSWORD, group },
      });

      expect(refused.status, refused.text).to.equal(429);
      expect(Number(refused.headers.get('retry-after'))).to.be.within(1, 15 * 60);
      expect(json(refused)['message']).to.be.a('string');
      const users = api.container.get<UserRepository>(USER_REPOSITORY);
      expect(await users.findByEmail(email)).to.equal(undefined);
      const logIn = await api.call('POST', '/api/auth', { json: { email: ana.email, password: PASSWORD } });
      expect(logIn.status).to.equal(200);
    } finally {
      await api.close();
    }
  });
});
