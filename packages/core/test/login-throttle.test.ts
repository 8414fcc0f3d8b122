import {
  ATTEMPT_COUNTER,
  type AttemptCounter,
  CreateGroup,
  CreateUser,
  defaultAccountSettings,
  LogIn,
  PASSWORD_HASHER,
  type PasswordHasher,
  StoreUnavailableError,
  ThrottledError,
  UnauthenticatedError,
} from '@hortus/core';
import { createTestApp, expect } from './support.js';

describe('the log-in throttle under concurrent guesses', () => {
  it('when 60 wrong passwords for one e-mail arrive at once, then only the allowance is checked and the rest are 429 before hashing', async function () {
    // Eleven real bcrypt hashes at the default cost: seconds on a loaded two-core machine.
    this.timeout(60_000);
    const app = createTestApp();
    await app.get(CreateGroup).execute({ name: 'g' });
    await app.get(CreateUser).execute({
      firstName: 'Ada',
      lastName: 'Grower',
      email: 'ada@example.org',
      group: 'g',
      password: 'a rather good passphrase',
    });
    const logIn = app.get(LogIn);
    const outcomes = await Promise.allSettled(
      Array.from({ length: 60 }, (_, index) =>
        logIn.execute({ email: 'ada@example.org', password: `wrong guess ${index}` }, `10.0.0.${index % 50}`),
      ),
    );
    const reasons = outcomes.map((outcome) => (outcome.status === 'rejected' ? outcome.reason : undefined));
    const checked = reasons.filter((reason) => reason instanceof UnauthenticatedError).length;
    const throttled = reasons.filter((reason) => reason instanceof ThrottledError).length;
    expect(checked).to.equal(defaultAccountSettings.maxFailedLogins);
    expect(throttled).to.equal(60 - defaultAccountSettings.maxFailedLogins);
  });

  it('when the attempt counter cannot be reached, then the log-in fails as the store does, before any password check', async () => {
    const app = createTestApp();
    const down = (): Promise<never> => Promise.reject(new StoreUnavailableError());
    const unreachable: AttemptCounter = { consume: down, reward: down, forget: down };
    app.container.rebind<AttemptCounter>(ATTEMPT_COUNTER).toConstantValue(unreachable);
    const hasher = app.container.get<PasswordHasher>(PASSWORD_HASHER);
    let verified = 0;
    const verify = hasher.verify.bind(hasher);
    hasher.verify = (...args) => {
      verified += 1;
      return verify(...args);
    };

    await expect(
      app.get(LogIn).execute({ email: 'ada@example.org', password: 'a rather good passphrase' }, '10.0.0.1'),
    ).to.be.rejectedWith(StoreUnavailableError);
    expect(verified).to.equal(0);
  });
});
