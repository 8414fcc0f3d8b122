import 'reflect-metadata';
import * as chai from 'chai';
import chaiAsPromised from 'chai-as-promised';
import { createMemoryStore } from '@hortus/adapter-memory';
import { type Clock, ConfigError, type ServerSecretRepository, ThrottledError } from '@hortus/core';
import { SignJWT } from 'jose';
import {
  BcryptPasswordHasher,
  dummyHashAt,
  identitySettingsFromEnv,
  JwtTokenService,
  NodeOneTimeTokens,
  SESSION_TTL_SECONDS,
  verificationCosts,
} from '@hortus/identity';

chai.use(chaiAsPromised);
const { expect } = chai;

class FakeClock implements Clock {
  constructor(private current: number) {}
  now(): Date {
    return new Date(this.current);
  }
  advance(ms: number): void {
    this.current += ms;
  }
}

/** Hashes written by other bcrypt implementations at cost 10, as databases of the original hold them. */
const legacyHashes = [
  // jBCrypt's test vector ($2a$, cost 10).
  { password: 'abc', hash: '$2a$10$WvvTPHKwdBJ3uk0Z37EMR.hLA2W6N9AEBhEgrAOljy2Ae5MtaSIUi' },
  {
    password: 'abcdefghijklmnopqrstuvwxyz',
    hash: '$2a$10$fVH8e28OQRj9tqiDXs1e1uxpsjN0c7II7YPKXua2NAKYvM6iQk7dq',
  },
  // The same computation labelled $2b$ (OpenBSD's label since 2014; it differs only past 255 bytes).
  { password: 'abc', hash: '$2b$10$WvvTPHKwdBJ3uk0Z37EMR.hLA2W6N9AEBhEgrAOljy2Ae5MtaSIUi' },
  // PHP's password_hash example ($2y$, cost 10).
  { password: 'rasmuslerdorf', hash: '$2y$10$.vGA1O9wmRjrwAVXD98HNOgsNpDczlqm3Jq7KnEd1rVAGv3Fykk1a' },
];

describe('BcryptPasswordHasher', function () {
  // Real bcrypt work at costs 10 and 12 (a wrong password pads to cost 12): on a machine running two test
  // runs, a test's few hashes take longer than mocha's default 10 s; the assertions are about results.
  this.timeout(60_000);
  const hasher = new BcryptPasswordHasher();
  after(() => hasher.close());

  it('when hashes of other implementations ($2a$, $2b$, $2y$ at cost 10) are verified, then the right password matches and a wrong one does not', async () => {
    for (const { password, hash } of legacyHashes) {
      expect(await hasher.verify(password, hash), hash).to.equal(true);
      expect(await hasher.verify(`${password}x`, hash), hash).to.equal(false);
    }
  });

  it('when a password is hashed, then the hash is $2b$ at cost 12, verifies, and needs no rehash; cost-10 hashes do', async () => {
    const hash = await hasher.hash('Secret#Garden1');

    expect(hash).to.match(/^\$2b\$12\$[./A-Za-z0-9]{53}$/u);
    expect(await hasher.verify('Secret#Garden1', hash)).to.equal(true);
    expect(hasher.needsRehash(hash)).to.equal(false);
    for (const { hash: legacy } of legacyHashes) expect(hasher.needsRehash(legacy)).to.equal(true);
  });

  it('when the stored text is not a bcrypt hash, then nothing matches and nothing throws', async () => {
    for (const text of ['', 'plain-password', '$2x$10$abc', '$2b$10$short', '$argon2id$v=19$m=65536']) {
      expect(await hasher.verify('plain-password', text), text).to.equal(false);
    }
  });

  it('when the dummy hash is verified, then it matches nothing, at the cost of a real hash', async () => {
    expect(hasher.dummyHash).to.match(/^\$2b\$12\$/u);
    expect(await hasher.verify('', hasher.dummyHash)).to.equal(false);
    expect(await hasher.verify('Secret#Garden1', hasher.dummyHash)).to.equal(false);
  });

  it('when a wrong password is checked against a migrated cost-10 hash, then the work is that of the cost-12 dummy hash an unknown e-mail gets', async () => {
    const rounds = (costs: number[]): number => costs.reduce((sum, cost) => sum + 2 ** cost, 0);

    expect(verificationCosts(hasher.dummyHash, 12)).to.deep.equal([12]);
    expect(verificationCosts(legacyHashes[0]?.hash ?? '', 12)).to.deep.equal([10, 10, 11]);
    for (let stored = 4; stored <= 12; stored += 1) {
      const costs = verificationCosts(dummyHashAt(stored), 12);
      expect(rounds(costs), `stored cost ${stored}`).to.equal(2 ** 12);
    }
    // A costlier hash (BCRYPT_COST lowered since) is only verified, at its own cost.
    expect(verificationCosts(dummyHashAt(13), 12)).to.deep.equal([13]);
  });

  it('when a cheaper hash is verified with the padding work, then the answer is unchanged', async () => {
    const padded = new BcryptPasswordHasher({ cost: 7, threads: 1 });
    const cheaper = new BcryptPasswordHasher({ cost: 4, threads: 1 });
    try {
      const cheap = await cheaper.hash('Secret#Garden1');
      expect(await padded.verify('Secret#Garden1', cheap)).to.equal(true);
      expect(await padded.verify('Secret#Garden2', cheap)).to.equal(false);
    } finally {
      await Promise.all([padded.close(), cheaper.close()]);
    }
  });

  it('when the threads are busy and the sign-up line is full, then a sign-up hash is refused at once (429) while a log-in check still waits its turn', async () => {
    const busy = new BcryptPasswordHasher({ cost: 4, threads: 1, maxWaiting: { urgent: 4, deferrable: 0 } });
    try {
      const hash = await busy.hash('Secret#Garden1');
      const running = busy.verify('Secret#Garden1', hash);

      await expect(busy.hash('Another#Garden2', { deferrable: true })).to.be.rejectedWith(ThrottledError);
      expect(await busy.verify('Secret#Garden1', hash)).to.equal(true);
      expect(await running).to.equal(true);
    } finally {
      await busy.close();
    }
  });

  it('when four passwords are hashed at once, then the event loop stays idle meanwhile (hashing runs on worker threads)', async () => {
    // Cost 10 is work enough to measure; the default's cost 12 only makes the test slow on a busy machine.
    const quicker = new BcryptPasswordHasher({ cost: 10 });
    const before = performance.eventLoopUtilization();
    try {
      await Promise.all(['a', 'b', 'c', 'd'].map((password) => quicker.hash(`${password}Secret#1`)));
    } finally {
      await quicker.close();
    }
    const { utilization } = performance.eventLoopUtilization(before);

    // Hashing on the main thread keeps the loop busy the whole time (near 1). On worker threads it waits,
    // idle, for their answers (near 0). Other load on the machine delays both but makes neither busier.
    expect(utilization).to.be.below(0.5);
  });

  it('when the cost is out of range, then the hasher is not made', () => {
    expect(() => new BcryptPasswordHasher({ cost: 3 })).to.throw(RangeError);
    expect(() => new BcryptPasswordHasher({ cost: 12.5 })).to.throw(RangeError);
  });
});

describe('JwtTokenService', () => {
  const start = Date.UTC(2025, 5, 15, 12);
  const session = { userId: '0123456789abcdef01234567', group: 'greenhouse-a', sessionVersion: 3 };

  function service(
    clock = new FakeClock(start),
    secrets: ServerSecretRepository = createMemoryStore().serverSecrets,
    secret?: string,
  ): JwtTokenService {
    return new JwtTokenService(secret === undefined ? {} : { secret }, secrets, clock);
  }

  it('when a session token is issued, then it verifies to the same claims and carries sub, group and a 7-day expiry', async () => {
    const tokens = service();
    const token = await tokens.issueSession(session);

    expect(await tokens.verifySession(token)).to.deep.equal(session);
    const payload = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()) as Record<
      string,
      unknown
    >;
    expect(payload).to.include({ sub: session.userId, group: 'greenhouse-a', sv: 3 });
    expect(Number(payload['exp']) - Number(payload['iat'])).to.equal(SESSION_TTL_SECONDS);
    expect(JSON.parse(Buffer.from(token.split('.')[0] ?? '', 'base64url').toString())).to.include({
      alg: 'HS256',
    });
  });

  it('when seven days have passed, then the token is no longer valid', async () => {
    const clock = new FakeClock(start);
    const tokens = service(clock);
    const token = await tokens.issueSession(session);

    clock.advance(SESSION_TTL_SECONDS * 1000 - 1000);
    expect(await tokens.verifySession(token)).to.deep.equal(session);
    clock.advance(2000);
    expect(await tokens.verifySession(token)).to.equal(undefined);
  });

  it('when a token is forged, tampered with, unsigned or malformed, then it does not verify', async () => {
    const tokens = service();
    const token = await tokens.issueSession(session);
    const [header, payload, signature] = token.split('.') as [string, string, string];
    const otherPayload = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), group: 'other' }),
    ).toString('base64url');
    const forged = await new SignJWT({ group: 'greenhouse-a', sv: 3 })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(session.userId)
      .setIssuer('hortus')
      .setAudience('hortus-session')
      .setIssuedAt()
      .setExpirationTime('7d')
      .sign(new TextEncoder().encode('a-secret-that-is-not-the-servers-one-at-all'));
    const unsigned = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${payload}.`;

    for (const bad of [
      forged,
      `${header}.${otherPayload}.${signature}`,
      unsigned,
      'not.a.token',
      '',
      'hk_123',
    ]) {
      expect(await tokens.verifySession(bad), bad).to.equal(undefined);
    }
  });

  it('when an invitation is used as a session or a session as an invitation, then neither verifies', async () => {
    const tokens = service();
    const invitation = await tokens.issueInvitation({ email: 'eve@example.org', group: 'greenhouse-a' });
    const token = await tokens.issueSession(session);

    expect(await tokens.verifyInvitation(invitation)).to.deep.include({
      email: 'eve@example.org',
      group: 'greenhouse-a',
    });
    expect(await tokens.verifySession(invitation)).to.equal(undefined);
    expect(await tokens.verifyInvitation(token)).to.equal(undefined);
  });

  it('when an invitation verifies, then it names its id (the same for the same code, another for another invitation) and its expiry in 7 days', async () => {
    const tokens = service();
    const code = await tokens.issueInvitation({ email: 'eve@example.org', group: 'greenhouse-a' });
    const other = await tokens.issueInvitation({ email: 'eve@example.org', group: 'greenhouse-b' });

    const first = await tokens.verifyInvitation(code);
    const again = await tokens.verifyInvitation(code);
    const second = await tokens.verifyInvitation(other);

    expect(first?.id).to.match(/^[0-9a-f]{64}$/u);
    expect(again?.id).to.equal(first?.id);
    expect(second?.id).to.not.equal(first?.id);
    expect(first?.expiresAt).to.deep.equal(new Date(start + 7 * 24 * 3600_000));
  });

  it('without AUTH_SECRET, when the server restarts on the same store, then its tokens stay valid; on another store they do not', async () => {
    const store = createMemoryStore().serverSecrets;
    const token = await service(undefined, store).issueSession(session);

    expect(await service(undefined, store).verifySession(token)).to.deep.equal(session);
    expect(await service(undefined, createMemoryStore().serverSecrets).verifySession(token)).to.equal(
      undefined,
    );
  });

  it('with AUTH_SECRET, when another server has the same secret, then it accepts the token whatever its store', async () => {
    const secret = 'x'.repeat(40);
    const token = await service(undefined, undefined, secret).issueSession(session);

    expect(await service(undefined, undefined, secret).verifySession(token)).to.deep.equal(session);
    expect(await service().verifySession(token)).to.equal(undefined);
  });
});

describe('NodeOneTimeTokens', () => {
  it('when a token is made, then it is 32 random bytes in hex and its digest is stable but not the token', () => {
    const tokens = new NodeOneTimeTokens();
    const token = tokens.generate();

    expect(token).to.match(/^[0-9a-f]{64}$/u);
    expect(tokens.generate()).to.not.equal(token);
    expect(tokens.digest(token)).to.equal(tokens.digest(token)).and.not.equal(token);
  });
});

describe('identitySettingsFromEnv', () => {
  it('when nothing is set, then the web client is on localhost:3000, sign-up needs invitations under AUTH and cost is 12', () => {
    const settings = identitySettingsFromEnv({});

    expect(settings.accounts).to.include({ appUrl: 'http://localhost:3000', signup: 'invite' });
    expect(settings.tokens).to.deep.equal({});
    expect(settings.bcryptCost).to.equal(12);
  });

  it('when values are set, then they are taken (a trailing slash of APP_URL dropped)', () => {
    const settings = identitySettingsFromEnv({
      APP_URL: 'https://garden.example.org/',
      SIGNUP: 'OPEN',
      AUTH_SECRET: 's'.repeat(32),
      BCRYPT_COST: '13',
    });

    expect(settings.accounts).to.include({ appUrl: 'https://garden.example.org', signup: 'open' });
    expect(settings.tokens).to.deep.equal({ secret: 's'.repeat(32) });
    expect(settings.bcryptCost).to.equal(13);
  });

  it('when values are bad, then every problem is reported at once', () => {
    const error = (() => {
      try {
        identitySettingsFromEnv({
          APP_URL: 'garden',
          SIGNUP: 'maybe',
          AUTH_SECRET: 'short',
          BCRYPT_COST: '10',
        });
      } catch (caught) {
        return caught;
      }
      return undefined;
    })();

    expect(error).to.be.an.instanceOf(ConfigError);
    expect((error as ConfigError).problems).to.have.lengthOf(4);
  });
});
