import { CreateAccessKey, type UserRepository, USER_REPOSITORY } from '@hortus/core';
import { type SmtpTestServer, startSmtpTestServer } from '@hortus/test-support';
import { attemptWindowsPass, expect, startTestServer, type TestServer } from './harness.js';
import { expectNoHash, json, PASSWORD, resetsHandled, signUpAndLogIn } from './accounts-support.js';

describe('accounts over HTTP (AUTH off: the web client sends no credentials on data routes)', () => {
  let api: TestServer;
  let group: string;
  before(async () => {
    api = await startTestServer({ AUTH: 'off', AUTH_CACHE_MS: '0' });
    group = api.unique('greenhouse');
    await api.seed.group(group);
  });
  after(() => api.close());

  it('when a user signs up, logs in and reads the profile, then each answers as the web client expects', async () => {
    const email = `${api.unique('ada')}@example.org`;
    const created = await api.call('POST', '/api/users', {
      json: { firstName: 'Ada', lastName: 'Grower', email, password: PASSWORD, group },
    });
    expect(created.status).to.equal(201);
    expect(json(created)).to.deep.equal({ message: 'User created successfully' });

    const loggedIn = await api.call('POST', '/api/auth', {
      json: { email: email.toUpperCase(), password: PASSWORD },
    });
    expect(loggedIn.status).to.equal(200);
    expect(json(loggedIn)['message']).to.equal('Logged in successfully');
    const data = json(loggedIn)['data'] as { token: string; userId: string; group: string };
    expect(data).to.have.all.keys('token', 'userId', 'group');
    expect(data.group).to.equal(group);
    expect(data.userId).to.match(/^[0-9a-f]{24}$/u);

    const profile = await api.call('GET', `/api/apiuserdata/${data.userId}`, {
      headers: { authorization: `Bearer ${data.token}` },
    });
    expect(profile.status).to.equal(200);
    expect(json(profile)).to.deep.equal({
      _id: data.userId,
      firstName: 'Ada',
      lastName: 'Grower',
      email,
      group,
    });
    for (const reply of [created, loggedIn, profile]) expectNoHash(reply);

    const groupAnswer = await api.get(`/api/group/abo?group=${group}`);
    expect((json(groupAnswer)['employee'] as string[]) ?? json(groupAnswer)).to.satisfy((value: unknown) =>
      JSON.stringify(value).includes('AdaGrower'),
    );
  });

  it("when the profile is asked without a token, with a bad one, or with another user's, then 401/403 and no data", async () => {
    const ana = await signUpAndLogIn(api, group, `${api.unique('ana')}@example.org`);
    const ben = await signUpAndLogIn(api, group, `${api.unique('ben')}@example.org`);
    const path = `/api/apiuserdata/${ana.userId}`;

    const none = await api.get(path);
    expect(none.status).to.equal(401);
    expect(none.headers.get('www-authenticate')).to.equal('Bearer realm="hortus"');
    const [head, payload] = ana.token.split('.');
    for (const bad of ['not-a-token', `${head}.${payload}.forged-signature`, 'a.b.c', 'hk_not-a-key']) {
      const reply = await api.call('GET', path, { headers: { authorization: `Bearer ${bad}` } });
      expect(reply.status, bad).to.equal(401);
      expect(reply.headers.get('www-authenticate'), bad).to.equal(
        'Bearer realm="hortus", error="invalid_token"',
      );
      expect(reply.text).to.not.include(ana.email);
    }
    const other = await api.call('GET', path, { headers: ben.auth });
    expect(other.status).to.equal(403);
    expect(other.text).to.not.include(ana.email);
  });

  it('when seven days have passed, then the token is expired: 401', async () => {
    const ana = await signUpAndLogIn(api, group, `${api.unique('ana')}@example.org`);
    api.clock.advance(7 * 24 * 3600 * 1000 + 1000);
    try {
      const reply = await api.call('GET', `/api/apiuserdata/${ana.userId}`, { headers: ana.auth });
      expect(reply.status).to.equal(401);
    } finally {
      api.clock.advance(-(7 * 24 * 3600 * 1000 + 1000));
    }
  });

  it('when e-mail and password are wrong, then the unknown e-mail and the wrong password get the same 401', async () => {
    const ana = await signUpAndLogIn(api, group, `${api.unique('ana')}@example.org`);

    const unknown = await api.call('POST', '/api/auth', {
      json: { email: 'nobody@example.org', password: PASSWORD },
    });
    const wrong = await api.call('POST', '/api/auth', {
      json: { email: ana.email, password: 'Wrong#Pass1' },
    });

    for (const reply of [unknown, wrong]) {
      expect(reply.status).to.equal(401);
      expect(json(reply)).to.deep.equal({ message: 'Invalid Email or Password' });
    }
  });

  it('when a user of the original service logs in with a bcrypt cost-10 hash, then it works and the hash becomes cost 12', async function () {
    // The cost itself is under test: a server at the real default, not the suites' low test cost. Three
    // hashes at cost 10 and 12 take well under a second on a quiet core, seconds on a loaded machine.
    this.timeout(60_000);
    const real = await startTestServer({ AUTH: 'off', BCRYPT_COST: '12' });
    try {
      const users = real.container.get<UserRepository>(USER_REPOSITORY);
      const email = `${real.unique('legacy')}@example.org`;
      const legacyGroup = real.unique('greenhouse');
      await real.seed.group(legacyGroup);
      // jBCrypt's test vector: the password "abc" at cost 10, as the original's database holds such hashes.
      const user = await users.create(
        { firstName: 'Old', lastName: 'Timer', email, group: legacyGroup },
        { passwordHash: '$2a$10$WvvTPHKwdBJ3uk0Z37EMR.hLA2W6N9AEBhEgrAOljy2Ae5MtaSIUi' },
      );

      const reply = await real.call('POST', '/api/auth', { json: { email, password: 'abc' } });

      expect(reply.status, reply.text).to.equal(200);
      expect((json(reply)['data'] as { userId: string }).userId).to.equal(user.id);
      expect((await users.findCredentials(user.id))?.passwordHash).to.match(/^\$2b\$12\$/u);
      expect((await real.call('POST', '/api/auth', { json: { email, password: 'abc' } })).status).to.equal(
        200,
      );
    } finally {
      await real.close();
    }
  });

  it('when sign-up input is bad, then 400 names the field and nothing is created', async () => {
    const valid = {
      firstName: 'Ada',
      lastName: 'Grower',
      email: `${api.unique('x')}@example.org`,
      password: PASSWORD,
      group,
    };
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ ...valid, group: 'no-such-group' }, /^Invalid group name$/u],
      [{ ...valid, email: `${'a'.repeat(250)}@example.org` }, /email/u],
      [{ ...valid, email: 'not-an-email' }, /email/u],
      [{ ...valid, password: 'x'.repeat(129) }, /password/u],
      [{ ...valid, password: 'short' }, /^password must be at least 8 characters$/u],
      [
        { ...valid, password: 'Password1' },
        /^password is one of the most common passwords: choose another$/u,
      ],
      [{ ...valid, firstName: 'x'.repeat(101) }, /firstName/u],
      [{ ...valid, firstName: { $ne: null } }, /firstName/u],
      [{ ...valid, email: ['a@b.example'] }, /email/u],
      [{ ...valid, lastName: undefined }, /lastName is required/u],
    ];
    for (const [body, message] of cases) {
      const reply = await api.call('POST', '/api/users', { json: body });
      expect(reply.status, JSON.stringify(body).slice(0, 80)).to.equal(400);
      expect(String(json(reply)['message'])).to.match(message);
    }
    const login = await api.call('POST', '/api/auth', { json: { email: valid.email, password: PASSWORD } });
    expect(login.status).to.equal(401);
  });

  it('when the e-mail is taken in any case, then sign-up is 409 with the original message', async () => {
    const ana = await signUpAndLogIn(api, group, `${api.unique('ana')}@example.org`);

    const reply = await api.call('POST', '/api/users', {
      json: { firstName: 'A', lastName: 'B', email: ana.email.toUpperCase(), password: PASSWORD, group },
    });

    expect(reply.status).to.equal(409);
    expect(json(reply)).to.deep.equal({ message: 'User with given email already exists!' });
  });

  it('when log-ins keep failing, then after 10 in 15 minutes the e-mail is throttled: 429 with Retry-After, even for the right password', async function () {
    this.timeout(120_000);
    const ana = await signUpAndLogIn(api, group, `${api.unique('ana')}@example.org`);
    // Earlier tests failed log-ins from this same address: start from a fresh window.
    await attemptWindowsPass(api, 15 * 60_000 + 1000);
    for (let attempt = 0; attempt < 10; attempt += 1) {
      const reply = await api.call('POST', '/api/auth', {
        json: { email: ana.email, password: `Wrong#${attempt}a` },
      });
      expect(reply.status).to.equal(401);
    }

    const throttled = await api.call('POST', '/api/auth', { json: { email: ana.email, password: PASSWORD } });
    expect(throttled.status).to.equal(429);
    expect(Number(throttled.headers.get('retry-after'))).to.be.within(1, 900);

    await attemptWindowsPass(api, 15 * 60_000 + 1000);
    const later = await api.call('POST', '/api/auth', { json: { email: ana.email, password: PASSWORD } });
    expect(later.status).to.equal(200);
  });

  it('when one address tries many e-mails, then the address is throttled too', async function () {
    this.timeout(120_000);
    // The e-mail throttle above and this one both count this test client's address: start from a fresh window.
    await attemptWindowsPass(api, 15 * 60_000 + 1000);
    for (let attempt = 0; attempt < 10; attempt += 1) {
      const email = `${api.unique('guess')}@example.org`;
      expect((await api.call('POST', '/api/auth', { json: { email, password: PASSWORD } })).status).to.equal(
        401,
      );
    }

    const reply = await api.call('POST', '/api/auth', {
      json: { email: 'another@example.org', password: PASSWORD },
    });
    expect(reply.status).to.equal(429);
    expect(reply.headers.get('retry-after')).to.match(/^\d+$/u);
    await attemptWindowsPass(api, 15 * 60_000 + 1000);
  });

  it("the e-mail takeover: changing a user's e-mail without their token, then asking a reset, is refused at the first step", async () => {
    const victim = await signUpAndLogIn(api, group, `${api.unique('victim')}@example.org`);
    const attacker = `${api.unique('attacker')}@evil.example`;

    // 1. Point the victim's account at the attacker's mailbox.
    const change = await api.call('POST', `/api/changeEmail/${victim.userId}`, {
      json: { newEmail: attacker },
    });
    // 2. Ask for a reset link, which would go to the attacker.
    const reset = await api.call('POST', '/api/password-reset', { json: { email: attacker } });
    await resetsHandled(api);

    expect(change.status).to.equal(401);
    expect(change.headers.get('www-authenticate')).to.equal('Bearer realm="hortus"');
    expect(reset.status).to.equal(200);
    const resetLinks = api.logger.lines.filter((line) =>
      String(line['text'] ?? '').includes('/reset_password/'),
    );
    expect(resetLinks.filter((line) => line['to'] === attacker)).to.deep.equal([]);
    const profile = await api.call('GET', `/api/apiuserdata/${victim.userId}`, { headers: victim.auth });
    expect(json(profile)['email']).to.equal(victim.email);
    // Another user's token is no better; the owner's own token changes it.
    const other = await signUpAndLogIn(api, group, `${api.unique('other')}@example.org`);
    const asOther = await api.call('POST', `/api/changeEmail/${victim.userId}`, {
      json: { newEmail: attacker },
      headers: other.auth,
    });
    expect(asOther.status).to.equal(403);
    const own = await api.call('POST', `/api/changeEmail/${victim.userId}`, {
      json: { newEmail: `${api.unique('new')}@example.org` },
      headers: victim.auth,
    });
    expect(own.status).to.equal(200);
  });

  it('when a user without a password (made by an admin) changes e-mail, then no credential is needed, as SPEC says', async () => {
    const userId = await api.seed.user(`${api.unique('plain')}@example.org`);

    const reply = await api.call('POST', `/api/changeEmail/${userId}`, {
      json: { newEmail: `${api.unique('n')}@example.org` },
    });

    expect(reply.status).to.equal(200);
  });

  it('the takeover of a user without a password: their e-mail changes without a credential (SPEC), but no reset link goes to the new address, so no one can set a password through it', async () => {
    const userId = await api.seed.user(`${api.unique('plain')}@example.org`);
    const attacker = `${api.unique('attacker')}@evil.example`;

    const change = await api.call('POST', `/api/changeEmail/${userId}`, { json: { newEmail: attacker } });
    const reset = await api.call('POST', '/api/password-reset', { json: { email: attacker } });
    const unknown = await api.call('POST', '/api/password-reset', { json: { email: 'nobody@example.org' } });

    expect(change.status).to.equal(200);
    expect(reset.status).to.equal(200);
    expect(json(reset)).to.deep.equal(json(unknown));
    await resetsHandled(api);
    expect(api.logger.lines.filter((line) => line['to'] === attacker)).to.deep.equal([]);
    const credentials = await api.container.get<UserRepository>(USER_REPOSITORY).findCredentials(userId);
    expect(credentials?.reset).to.equal(undefined);
    expect(credentials?.passwordHash).to.equal(undefined);
  });

  it('when a reset link is used, then the password changes once, older sessions end, and the link is spent', async () => {
    const ana = await signUpAndLogIn(api, group, `${api.unique('ana')}@example.org`);

    const asked = await api.call('POST', '/api/password-reset', { json: { email: ana.email.toUpperCase() } });
    const unknown = await api.call('POST', '/api/password-reset', { json: { email: 'nobody@example.org' } });
    expect(asked.status).to.equal(200);
    expect(unknown.status).to.equal(200);
    expect(json(unknown)).to.deep.equal(json(asked));
    await resetsHandled(api);

    // Without SMTP_URL the mail is a warning in the log, link included.
    const mail = api.logger.lines.filter((line) => line.level === 'warn' && line['to'] === ana.email).at(-1);
    const link = /http:\/\/localhost:3000\/reset_password\/([0-9a-f]{24})\/([0-9a-f]{64})/u.exec(
      String(mail?.['text']),
    );
    expect(link?.[1]).to.equal(ana.userId);
    const body = { _id: ana.userId, token: link?.[2], password: 'Basil#Row77' };

    const weak = await api.call('POST', '/api/password-reset/resetvalidate', {
      json: { ...body, password: 'weak' },
    });
    expect(weak.status).to.equal(400);
    const done = await api.call('POST', '/api/password-reset/resetvalidate', { json: body });
    expect(done.status, done.text).to.equal(200);
    expect(json(done)).to.deep.equal({ message: 'Password reset successfully' });

    const again = await api.call('POST', '/api/password-reset/resetvalidate', { json: body });
    expect(again.status).to.equal(400);
    expect(json(again)).to.deep.equal({ message: 'Invalid link or expired' });
    expect((await api.call('GET', `/api/apiuserdata/${ana.userId}`, { headers: ana.auth })).status).to.equal(
      401,
    );
    expect(
      (await api.call('POST', '/api/auth', { json: { email: ana.email, password: PASSWORD } })).status,
    ).to.equal(401);
    expect(
      (await api.call('POST', '/api/auth', { json: { email: ana.email, password: 'Basil#Row77' } })).status,
    ).to.equal(200);
  });

  it('when a reset link is older than an hour or replaced by a newer one, then it is refused', async () => {
    const ana = await signUpAndLogIn(api, group, `${api.unique('ana')}@example.org`);
    const linkOf = async (): Promise<string | undefined> => {
      await api.call('POST', '/api/password-reset', { json: { email: ana.email } });
      await resetsHandled(api);
      const mail = api.logger.lines.filter((line) => line['to'] === ana.email).at(-1);
      return /\/reset_password\/[0-9a-f]{24}\/([0-9a-f]{64})/u.exec(String(mail?.['text']))?.[1];
    };
    const first = await linkOf();
    const second = await linkOf();
    const reset = (token: string | undefined) =>
      api.call('POST', '/api/password-reset/resetvalidate', {
        json: { _id: ana.userId, token, password: 'Basil#Row77' },
      });

    expect((await reset(first)).status).to.equal(400);
    api.clock.advance(3600_000 + 1000);
    try {
      expect((await reset(second)).status).to.equal(400);
    } finally {
      api.clock.advance(-(3600_000 + 1000));
    }
  });

  it('when the user is deleted, then their token is 401', async () => {
    const ana = await signUpAndLogIn(api, group, `${api.unique('ana')}@example.org`);

    await api.container.get<UserRepository>(USER_REPOSITORY).delete(ana.userId);

    expect((await api.call('GET', `/api/apiuserdata/${ana.userId}`, { headers: ana.auth })).status).to.equal(
      401,
    );
  });
});

describe('accounts over HTTP with AUTH=on, a real SMTP server and invitations', () => {
  let api: TestServer;
  let smtp: SmtpTestServer;
  let group: string;
  let other: string;
  let admin: { authorization: string };
  before(async () => {
    smtp = await startSmtpTestServer();
    api = await startTestServer({
      AUTH: 'on',
      AUTH_CACHE_MS: '0',
      SMTP_URL: smtp.url,
      MAIL_FROM: 'Hortus <hortus@example.org>',
      APP_URL: 'https://garden.example.org',
    });
    group = api.unique('greenhouse');
    other = api.unique('greenhouse');
    await api.seed.group(group);
    await api.seed.group(other);
    const { secret } = await api.container.get(CreateAccessKey).execute({ name: 'admin', kind: 'admin' });
    admin = { authorization: `Bearer ${secret}` };
  });
  after(async () => {
    await api.close();
    await smtp.close();
  });

  it('when a stranger signs up without an invitation or admin key, then 403 and no account', async () => {
    const email = `${api.unique('eve')}@example.org`;
    const reply = await api.call('POST', '/api/users', {
      json: { firstName: 'Eve', lastName: 'S', email, password: PASSWORD, group },
    });

    expect(reply.status).to.equal(403);
    expect((await api.call('POST', '/api/auth', { json: { email, password: PASSWORD } })).status).to.equal(
      401,
    );
  });

  it('when the token is used on data routes, then it reaches its own group and own charts, never another group or user', async () => {
    const ana = await signUpAndLogIn(api, group, `${api.unique('ana')}@example.org`, admin);
    await api.seed.action(group, 'pump_1');
    await api.seed.action(other, 'pump_1');
    const as = (path: string, method = 'GET', body?: unknown) =>
      api.call(method, path, { headers: ana.auth, ...(body === undefined ? {} : { json: body }) });

    expect((await as(`/api/actions/current_state?group=${group}`)).status).to.equal(200);
    expect((await as(`/api/actions/?group=${group}&object=pump_1&value=on`)).status).to.equal(200);
    expect((await as(`/api/actions/current_state?group=${other}`)).status).to.equal(403);
    expect(
      (await as(`/api/historyChart/update/${ana.userId}`, 'POST', { chartName: 'Climate' })).status,
    ).to.equal(200);
    expect((await as(`/api/historyChart/all/${ana.userId}`)).status).to.equal(200);
    expect((await as('/api/historyChart/all/0123456789abcdef01234567')).status).to.equal(403);
    expect((await as('/api/group/abo?group=' + other)).status).to.equal(403);
    expect((await api.call('GET', `/api/actions/current_state?group=${group}`)).status).to.equal(401);
    expect(
      (await api.call('GET', `/api/actions/current_state?group=${other}`, { headers: admin })).status,
    ).to.equal(200);
    const forged = await api.call('GET', `/api/actions/current_state?group=${group}`, {
      headers: { authorization: `Bearer ${ana.token.slice(0, -4)}AAAA` },
    });
    expect(forged.status).to.equal(401);
    expect(forged.headers.get('www-authenticate')).to.include('invalid_token');
  });

  it('when an invitation is given, then that e-mail signs up into that group without a key', async () => {
    const email = `${api.unique('eve')}@example.org`;
    const { InviteUser } = await import('@hortus/core');
    const { code } = await api.container.get(InviteUser).execute({ email, group });

    const reply = await api.call('POST', '/api/users', {
      json: { firstName: 'Eve', lastName: 'S', email, password: PASSWORD, group, invitation: code },
    });

    expect(reply.status, reply.text).to.equal(201);
    const wrongGroup = await api.call('POST', '/api/users', {
      json: {
        firstName: 'Eve',
        lastName: 'S',
        email: `x${email}`,
        password: PASSWORD,
        group,
        invitation: code,
      },
    });
    expect(wrongGroup.status).to.equal(403);
  });

  it('when a reset is asked, then the real SMTP server gets the mail with the link, which resets the password and ends sessions', async () => {
    const ana = await signUpAndLogIn(api, group, `${api.unique('ana')}@example.org`, admin);
    const before = smtp.delivered.length;

    const asked = await api.call('POST', '/api/password-reset', { json: { email: ana.email } });
    expect(asked.status).to.equal(200);
    const deadline = Date.now() + 10_000;
    while (smtp.delivered.length === before && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 25));

    const mail = smtp.delivered[before];
    expect(mail?.to).to.deep.equal([ana.email]);
    expect(mail?.from).to.equal('hortus@example.org');
    expect(mail?.data).to.match(/^Subject: Reset your Hortus password\r$/mu);
    const link = new RegExp(
      `https://garden\\.example\\.org/reset_password/${ana.userId}/([0-9a-f]{64})`,
      'u',
    ).exec(mail?.body ?? '');
    expect(link, mail?.body).to.not.equal(null);

    const done = await api.call('POST', '/api/password-reset/resetvalidate', {
      json: { _id: ana.userId, token: link?.[1], password: 'Basil#Row77' },
    });
    expect(done.status, done.text).to.equal(200);
    const old = await api.call('GET', `/api/actions/current_state?group=${group}`, { headers: ana.auth });
    expect(old.status).to.equal(401);
    const fresh = await api.call('POST', '/api/auth', {
      json: { email: ana.email, password: 'Basil#Row77' },
    });
    expect(fresh.status).to.equal(200);
  });
});
