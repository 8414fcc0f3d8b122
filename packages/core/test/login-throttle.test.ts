import {
  CreateGroup,
  CreateUser,
  defaultAccountSettings,
  LogIn,
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
});
