import {
  CreateGroup,
  defaultAccountSettings,
  OPERATOR,
  PASSWORD_HASHER,
  type PasswordHasher,
  SignUp,
  ThrottledError,
} from '@hortus/core';
import { createTestApp, expect, type TestApp } from './support.js';

/** Counts the hashes asked for, and how: the test is about which sign-ups reach the hash, not its time. */
class CountingHasher implements PasswordHasher {
  readonly hashed: { deferrable: boolean }[] = [];
  readonly dummyHash = '';
  async hash(_password: string, options: { readonly deferrable?: boolean } = {}): Promise<string> {
    this.hashed.push({ deferrable: options.deferrable === true });
    return `$2b$12$${'a'.repeat(53)}`;
  }
  async verify(): Promise<boolean> {
    return false;
  }
  needsRehash(): boolean {
    return false;
  }
}

describe('the sign-up throttle (counted before the password is hashed)', () => {
  let app: TestApp;
  let hasher: CountingHasher;
  let made = 0;

  beforeEach(async () => {
    app = createTestApp();
    hasher = new CountingHasher();
    app.container.rebind<PasswordHasher>(PASSWORD_HASHER).toConstantValue(hasher);
    await app.get(CreateGroup).execute({ name: 'g' });
  });

  function signUp(
    clientAddress: string,
    caller: Parameters<SignUp['execute']>[1]['caller'] = { kind: 'anonymous' },
  ) {
    made += 1;
    return app.get(SignUp).execute(
      {
        firstName: 'Ada',
        lastName: 'Grower',
        email: `ada-${made}@example.org`,
        password: 'a rather good passphrase',
        group: 'g',
      },
      { caller, accessRequired: false, clientAddress },
    );
  }

  it('when one address signs up more than its allowance in the window, then the rest are 429 before any hash, other addresses go on, and after the window it may again', async () => {
    const allowance = defaultAccountSettings.maxSignupsPerAddress;
    for (let index = 0; index < allowance; index += 1) await signUp('10.0.0.1');

    const refused = await signUp('10.0.0.1').then(
      () => undefined,
      (reason: unknown) => reason,
    );

    expect(refused).to.be.an.instanceOf(ThrottledError);
    expect((refused as ThrottledError).retryAfterSeconds).to.be.within(1, 15 * 60);
    expect(hasher.hashed).to.have.lengthOf(allowance);
    await signUp('10.0.0.2');
    app.clock.advance(defaultAccountSettings.signupWindowMs + 1000);
    await signUp('10.0.0.1');
    expect(hasher.hashed).to.have.lengthOf(allowance + 2);
  });

  it('when sign-ups from many addresses pass the total allowance, then the next is 429 from any address', async () => {
    const total = defaultAccountSettings.maxSignups;
    for (let index = 0; index < total; index += 1)
      await signUp(`10.1.${Math.floor(index / 200)}.${index % 200}`);

    await expect(signUp('192.0.2.7')).to.be.rejectedWith(ThrottledError);
    expect(hasher.hashed).to.have.lengthOf(total);
  });

  it('when an admin signs people up, then none of it is counted or limited', async () => {
    for (let index = 0; index < defaultAccountSettings.maxSignupsPerAddress + 2; index += 1) {
      await signUp('10.0.0.1', OPERATOR);
    }

    await signUp('10.0.0.1');
    expect(hasher.hashed).to.have.lengthOf(defaultAccountSettings.maxSignupsPerAddress + 3);
  });

  it("when a sign-up's password is hashed, then it is deferrable work: it waits behind log-ins", async () => {
    await signUp('10.0.0.1');

    expect(hasher.hashed).to.deep.equal([{ deferrable: true }]);
  });
});
