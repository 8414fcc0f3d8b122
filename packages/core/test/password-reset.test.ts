import sinon from 'sinon';
import {
  CreateGroup,
  CreateUser,
  MAILER,
  type Mailer,
  type MailMessage,
  MAX_PENDING_RESETS,
  RequestPasswordReset,
  RESET_REQUESTED,
  USER_REPOSITORY,
  type UserRepository,
} from '@hortus/core';
import { createTestApp, expect, type TestApp } from './support.js';

/** Outgoing mail is a true seam: the test keeps what would have been sent. */
class KeptMail implements Mailer {
  readonly sent: MailMessage[] = [];
  async send(message: MailMessage): Promise<void> {
    this.sent.push(message);
  }
}

describe('asking for a password reset', () => {
  let app: TestApp;
  let mail: KeptMail;
  let users: UserRepository;

  beforeEach(async () => {
    app = createTestApp();
    mail = new KeptMail();
    app.container.bind<Mailer>(MAILER).toConstantValue(mail);
    users = app.container.get<UserRepository>(USER_REPOSITORY);
    await app.get(CreateGroup).execute({ name: 'g' });
    const person = { lastName: 'Grower', group: 'g' };
    await app.get(CreateUser).execute({
      ...person,
      firstName: 'Ada',
      email: 'ada@example.org',
      password: 'a rather good passphrase',
    });
    await app.get(CreateUser).execute({ ...person, firstName: 'Ben', email: 'ben@example.org' });
  });
  afterEach(() => sinon.restore());

  it('when the e-mail has an account or not, then the answer comes before any look-up or write, and is the same', async () => {
    const reads = sinon.spy(users, 'findByEmail');
    const writes = sinon.spy(users, 'setResetToken');
    const reset = app.get(RequestPasswordReset);

    const answers = [
      await reset.execute({ email: 'ada@example.org' }),
      await reset.execute({ email: 'nobody@example.org' }),
    ];

    expect(answers).to.deep.equal([RESET_REQUESTED, RESET_REQUESTED]);
    expect(reads.callCount).to.equal(0);
    expect(writes.callCount).to.equal(0);
    expect(mail.sent).to.deep.equal([]);
    await reset.settled();
    expect(reads.callCount).to.equal(2);
    expect(writes.callCount).to.equal(1);
    expect(mail.sent.map((message) => message.to)).to.deep.equal(['ada@example.org']);
    expect(mail.sent[0]?.text).to.match(/\/reset_password\/[0-9a-f]{24}\/[0-9a-f]{64}/u);
  });

  it('when the account has no password, then no link is made or mailed (its e-mail is no key to it)', async () => {
    const reset = app.get(RequestPasswordReset);

    expect(await reset.execute({ email: 'ben@example.org' })).to.equal(RESET_REQUESTED);
    await reset.settled();

    expect(mail.sent).to.deep.equal([]);
    const ben = await users.findByEmail('ben@example.org');
    expect((await users.findCredentials(ben?.id ?? ''))?.reset).to.equal(undefined);
  });

  it('when more resets wait than the bound, then the extra ones are dropped, with the same answer', async () => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const reads = sinon.stub(users, 'findByEmail').callsFake(async () => {
      await held;
      return undefined;
    });
    const reset = app.get(RequestPasswordReset);

    const answers = await Promise.all(
      Array.from({ length: MAX_PENDING_RESETS + 5 }, () => reset.execute({ email: 'ada@example.org' })),
    );
    await new Promise((resolve) => setImmediate(resolve));

    expect(new Set(answers)).to.deep.equal(new Set([RESET_REQUESTED]));
    expect(reads.callCount).to.equal(MAX_PENDING_RESETS);
    release();
    await reset.settled();
    expect(reads.callCount).to.equal(MAX_PENDING_RESETS);
  });
});
