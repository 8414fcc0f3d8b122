import { Readable } from 'node:stream';
import {
  ChangeUserEmail,
  CreateGroup,
  InviteUser,
  LogIn,
  OPERATOR,
  ResetPassword,
  SignUp,
  VerifySession,
} from '@hortus/core';
import { expect } from 'chai';
import { type Container } from 'inversify';
import { hortus, type StoreContainer, storeContainer } from './harness.js';

const stdin = (text: string): Readable => Readable.from([text]);
const PASSWORD = 'Tomato#Bed42';

describe('hortus user: passwords, reset links, sessions and invitations', () => {
  let container: Container;

  let store: StoreContainer;
  beforeEach(async () => {
    store = await storeContainer();
    container = store.container;
    await container.get(CreateGroup).execute({ name: 'greenhouse-1' });
  });
  afterEach(async () => {
    await store.close();
  });

  async function createWithPassword(email = 'ada@example.org'): Promise<string> {
    const created = await hortus(
      container,
      [
        '--json',
        'user',
        'create',
        '--first-name',
        'Ada',
        '--last-name',
        'Grower',
        '--email',
        email,
        '--group',
        'greenhouse-1',
        '--password-stdin',
      ],
      { stdin: stdin(`${PASSWORD}\n`) },
    );
    expect(created.code, created.stderr).to.equal(0);
    return (JSON.parse(created.stdout) as { id: string }).id;
  }

  const logIn = (email: string, password: string) =>
    container.get(LogIn).execute({ email, password }, '127.0.0.1');

  it('when a user is created with --password-stdin, then they log in with it (the line break is not part of it) and no hash is printed', async () => {
    const id = await createWithPassword();

    expect((await logIn('ADA@example.org', PASSWORD)).userId).to.equal(id);
    const shown = await hortus(
      container,
      [
        'user',
        'create',
        '--first-name',
        'B',
        '--last-name',
        'C',
        '--email',
        'b@example.org',
        '--group',
        'greenhouse-1',
        '--password-stdin',
      ],
      {
        stdin: stdin(PASSWORD),
      },
    );
    expect(shown.stdout).to.not.include('$2');
  });

  it('when a password would go in argv, then the command refuses (exit 2) and creates no one', async () => {
    const outcome = await hortus(container, [
      'user',
      'create',
      '--first-name',
      'A',
      '--last-name',
      'G',
      '--email',
      'a@example.org',
      '--group',
      'greenhouse-1',
      '--password',
      PASSWORD,
    ]);

    expect(outcome.code).to.equal(2);
    await expect(logIn('a@example.org', PASSWORD)).to.be.rejected;
  });

  it('when a weak password is given, then it is invalid input (exit 2)', async () => {
    const outcome = await hortus(
      container,
      [
        'user',
        'create',
        '--first-name',
        'A',
        '--last-name',
        'G',
        '--email',
        'a@example.org',
        '--group',
        'greenhouse-1',
        '--password-stdin',
      ],
      {
        stdin: stdin('short'),
      },
    );

    expect(outcome.code).to.equal(2);
    expect(outcome.stderr).to.include('password');
  });

  it('when set-password runs, then the new password works, the old does not, and older tokens end', async () => {
    await createWithPassword();
    const { token } = await logIn('ada@example.org', PASSWORD);

    const outcome = await hortus(container, ['user', 'set-password', 'ada@example.org', '--password-stdin'], {
      stdin: stdin('Basil#Row77\n'),
    });

    expect(outcome.code, outcome.stderr).to.equal(0);
    await expect(logIn('ada@example.org', PASSWORD)).to.be.rejected;
    expect((await logIn('ada@example.org', 'Basil#Row77')).token).to.be.a('string');
    expect(await container.get(VerifySession).execute(token)).to.equal(undefined);
  });

  it('when reset-link runs, then it prints APP_URL/reset_password/<id>/<token>, which sets a password once', async () => {
    const id = await createWithPassword();

    const outcome = await hortus(container, ['user', 'reset-link', 'ada@example.org']);

    expect(outcome.code, outcome.stderr).to.equal(0);
    const match = /^http:\/\/localhost:3000\/reset_password\/([0-9a-f]+)\/([0-9a-f]{64})$/mu.exec(
      outcome.stdout,
    );
    expect(match?.[1]).to.equal(id);
    const reset = { _id: id, token: match?.[2], password: 'Basil#Row77' };
    await container.get(ResetPassword).execute(reset);
    await expect(container.get(ResetPassword).execute(reset)).to.be.rejectedWith('Invalid link or expired');
    expect((await logIn('ada@example.org', 'Basil#Row77')).userId).to.equal(id);
    expect((await hortus(container, ['user', 'reset-link', 'nobody@example.org'])).code).to.equal(3);
  });

  it('when sessions are revoked, then every older token ends and a new log-in works', async () => {
    await createWithPassword();
    const { token } = await logIn('ada@example.org', PASSWORD);

    expect((await hortus(container, ['user', 'sessions', 'revoke', 'ada@example.org'])).code).to.equal(0);

    expect(await container.get(VerifySession).execute(token)).to.equal(undefined);
    const fresh = await logIn('ada@example.org', PASSWORD);
    expect(await container.get(VerifySession).execute(fresh.token)).to.include({ group: 'greenhouse-1' });
  });

  it('when an invitation is printed, then it lets that e-mail (only) sign up into that group (only) while keys are required', async () => {
    const outcome = await hortus(container, [
      '--json',
      'user',
      'invite',
      'Eve@Example.org',
      '--group',
      'greenhouse-1',
    ]);
    expect(outcome.code, outcome.stderr).to.equal(0);
    const { code } = JSON.parse(outcome.stdout) as { code: string };
    const signUp = (email: string, group: string) =>
      container
        .get(SignUp)
        .execute(
          { firstName: 'Eve', lastName: 'Green', email, password: PASSWORD, group, invitation: code },
          { caller: { kind: 'anonymous' }, accessRequired: true },
        );
    await container.get(CreateGroup).execute({ name: 'greenhouse-2' });

    await expect(signUp('mallory@example.org', 'greenhouse-1')).to.be.rejectedWith('not valid');
    await expect(signUp('eve@example.org', 'greenhouse-2')).to.be.rejectedWith('not valid');
    await signUp('eve@example.org', 'greenhouse-1');
    await expect(signUp('eve@example.org', 'greenhouse-1')).to.be.rejectedWith('already exists');
    // Single use: deleting the account it made, or moving that account to another e-mail, frees nothing.
    expect((await hortus(container, ['user', 'delete', 'eve@example.org'])).code).to.equal(0);
    await expect(signUp('eve@example.org', 'greenhouse-1')).to.be.rejectedWith('used already');
    expect((await hortus(container, ['user', 'list'])).stdout).to.not.include('eve@example.org');
    const fay = await container.get(InviteUser).execute({ email: 'fay@example.org', group: 'greenhouse-1' });
    const signUpFay = () =>
      container.get(SignUp).execute(
        {
          firstName: 'Fay',
          lastName: 'Green',
          email: 'fay@example.org',
          password: PASSWORD,
          group: 'greenhouse-1',
          invitation: fay.code,
        },
        { caller: { kind: 'anonymous' }, accessRequired: true },
      );
    const made = await signUpFay();
    await container
      .get(ChangeUserEmail)
      .execute({ userId: made.id, newEmail: 'fay@elsewhere.example' }, OPERATOR);
    await expect(signUpFay()).to.be.rejectedWith('used already');
    expect(
      (await hortus(container, ['user', 'invite', 'x@example.org', '--group', 'nowhere'])).code,
    ).to.equal(3);
  });

  it('when users came by the CLI, open sign-up, an invitation and an admin, then user list shows each with its creation time and how', async () => {
    await createWithPassword('cli@example.org');
    const person = { firstName: 'Eve', lastName: 'Green', password: PASSWORD, group: 'greenhouse-1' };
    const signUp = container.get(SignUp);
    await signUp.execute(
      { ...person, email: 'open@example.org' },
      { caller: { kind: 'anonymous' }, accessRequired: false },
    );
    const { code } = await container
      .get(InviteUser)
      .execute({ email: 'invited@example.org', group: 'greenhouse-1' });
    await signUp.execute(
      { ...person, email: 'invited@example.org', invitation: code },
      { caller: { kind: 'anonymous' }, accessRequired: true },
    );
    await signUp.execute(
      { ...person, email: 'admin@example.org' },
      { caller: OPERATOR, accessRequired: true },
    );

    const listed = await hortus(container, ['--json', 'user', 'list']);
    const text = await hortus(container, ['user', 'list']);

    expect(listed.code, listed.stderr).to.equal(0);
    const users = JSON.parse(listed.stdout) as { email: string; origin: string; createdAt: string }[];
    expect(users.map(({ email, origin }) => [email, origin])).to.deep.equal([
      ['cli@example.org', 'cli'],
      ['open@example.org', 'signup'],
      ['invited@example.org', 'invitation'],
      ['admin@example.org', 'admin'],
    ]);
    for (const user of users) expect(Number.isNaN(Date.parse(user.createdAt)), user.email).to.equal(false);
    expect(listed.stdout).to.not.match(/\$2[aby]\$|password/u);
    expect(text.code, text.stderr).to.equal(0);
    expect(text.stdout).to.match(/^ID +EMAIL +GROUP +ROLE +CREATED +HOW/mu);
    expect(text.stdout).to.match(
      /open@example\.org +greenhouse-1 +operator +\d{4}-\d\d-\d\d [\d:]+ UTC +sign-up$/mu,
    );
    expect(text.stdout).to.match(/admin@example\.org .* sign-up with an admin key$/mu);
  });

  it('when change-email is given the current e-mail (like the other user commands), then it changes that user; an id still works', async () => {
    const id = await createWithPassword('ada@example.org');

    const byEmail = await hortus(container, ['user', 'change-email', 'Ada@Example.org', 'ada@grower.org']);
    const byId = await hortus(container, ['user', 'change-email', id, 'ada@third.example']);
    const unknown = await hortus(container, ['user', 'change-email', 'nobody@example.org', 'x@example.org']);

    expect(byEmail.code, byEmail.stderr).to.equal(0);
    expect(byEmail.stdout).to.match(/^Email: +ada@grower\.org$/mu);
    expect(byId.code, byId.stderr).to.equal(0);
    expect((await logIn('ada@third.example', PASSWORD)).userId).to.equal(id);
    expect(unknown.code).to.equal(3);
  });

  it('when a user is created into a group that does not exist, then it is refused and no one is made, unless --create-group', async () => {
    const args = [
      'user',
      'create',
      '--first-name',
      'Ada',
      '--last-name',
      'Grower',
      '--email',
      'ada@example.org',
    ];

    const refused = await hortus(container, [...args, '--group', 'gh-typo']);
    const listedAfter = await hortus(container, ['--json', 'user', 'list']);
    const created = await hortus(container, [...args, '--group', 'gh-new', '--create-group']);

    expect(refused.code).to.equal(3);
    expect(refused.stderr).to.contain('group gh-typo does not exist');
    expect(JSON.parse(listedAfter.stdout)).to.deep.equal([]);
    expect(created.code, created.stderr).to.equal(0);
    expect(created.stdout).to.match(/^Group: +gh-new$/mu);
  });

  it('when sessions are revoked or a user deleted, then the command says what it did', async () => {
    const id = await createWithPassword();

    const revoked = await hortus(container, ['user', 'sessions', 'revoke', 'ada@example.org']);
    const deleted = await hortus(container, ['user', 'delete', 'ada@example.org']);

    expect(revoked.stdout).to.contain(`Ended every log-in session of ada@example.org (user ${id})`);
    expect(deleted.stdout).to.contain(`Deleted user ada@example.org (${id}, group greenhouse-1)`);
    expect(deleted.stdout).to.contain('e-mail is free again');
  });

  it('when a user is deleted, then their token ends and their e-mail is free', async () => {
    await createWithPassword();
    const { token } = await logIn('ada@example.org', PASSWORD);

    expect((await hortus(container, ['user', 'delete', 'ada@example.org'])).code).to.equal(0);

    expect(await container.get(VerifySession).execute(token)).to.equal(undefined);
    await createWithPassword();
  });
});
