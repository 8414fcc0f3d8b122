import {
  ACCESS_KEY_SECRETS,
  type AccessKey,
  type AccessKeySecrets,
  type AccessOperation,
  type AccessTarget,
  Authenticate,
  CreateAccessKey,
  decideAccess,
  InvalidInputError,
  ListAccessKeys,
  NotFoundError,
  RevokeAccessKey,
} from '@hortus/core';
import { createTestApp, expect, type TestApp } from './support.js';

/** Randomness is the seam: secrets are numbered, and the "hash" is recognisably not the secret. */
class CountingSecrets implements AccessKeySecrets {
  private issued = 0;
  generate(): string {
    return `hk_secret${(this.issued += 1)}`;
  }
  hash(secret: string): string {
    return `digest(${secret})`;
  }
}

describe('access keys', () => {
  let app: TestApp;

  beforeEach(() => {
    app = createTestApp();
    app.container.bind<AccessKeySecrets>(ACCESS_KEY_SECRETS).toConstantValue(new CountingSecrets());
  });

  const create = (input: { name: unknown; kind: unknown; groups?: unknown }) =>
    app.get(CreateAccessKey).execute(input);

  describe('creating', () => {
    it('when a key is created, then the secret is answered once and only its hash can find the key', async () => {
      const { key, secret } = await create({ name: ' web client ', kind: 'client', groups: ['tomatoes'] });

      expect(secret).to.match(/^hk_/u);
      expect(key).to.deep.include({ name: 'web client', kind: 'client', groups: ['tomatoes'] });
      expect(key.createdAt).to.deep.equal(app.clock.now());
      expect(await app.get(Authenticate).execute(secret)).to.deep.equal(key);
      expect(JSON.stringify(await app.get(ListAccessKeys).execute())).not.to.contain(secret);
    });

    it('when groups repeat, then each is kept once, in the order given', async () => {
      const { key } = await create({ name: 'k', kind: 'client', groups: ['b', 'a', 'b', ' a '] });

      expect(key.groups).to.deep.equal(['b', 'a']);
    });

    it('when the kind, name or groups are unusable, then it is invalid input and nothing is stored', async () => {
      const invalid = [
        { name: 'k', kind: 'root' },
        { name: '', kind: 'client' },
        { name: 'k', kind: 'client', groups: 'tomatoes' },
        { name: 'k', kind: 'client', groups: [''] },
        { name: 'k', kind: 'admin', groups: ['tomatoes'] },
        { name: 'k', kind: 'device' },
        { name: 'k', kind: 'device', groups: ['tomatoes', 'basil'] },
      ];
      for (const input of invalid) {
        await expect(create(input), JSON.stringify(input)).to.be.rejectedWith(InvalidInputError);
      }
      expect(await app.get(ListAccessKeys).execute()).to.deep.equal([]);
    });
  });

  describe('authenticating', () => {
    it('when the secret is unknown, malformed or not text, then no key is found', async () => {
      const { secret } = await create({ name: 'k', kind: 'admin' });

      for (const presented of [`${secret}x`, secret.slice(3), '', `hk_${'a'.repeat(500)}`, undefined, 42]) {
        expect(await app.get(Authenticate).execute(presented), String(presented)).to.equal(undefined);
      }
    });

    it('when the key is revoked, then its secret no longer finds it', async () => {
      const { key, secret } = await create({ name: 'k', kind: 'client' });

      await app.get(RevokeAccessKey).execute({ id: key.id });

      expect(await app.get(Authenticate).execute(secret)).to.equal(undefined);
    });

    it('when no key was ever created, then keys are not in use; once one was, they stay in use even revoked', async () => {
      expect(await app.get(Authenticate).keysInUse()).to.equal(false);

      const { key } = await create({ name: 'k', kind: 'admin' });
      expect(await app.get(Authenticate).keysInUse()).to.equal(true);

      await app.get(RevokeAccessKey).execute({ id: key.id });
      expect(await app.get(Authenticate).keysInUse()).to.equal(true);
    });
  });

  describe('revoking and listing', () => {
    it('when a key is revoked twice, then it keeps the time of the first revoke', async () => {
      const { key } = await create({ name: 'k', kind: 'client' });
      app.clock.advance(60_000);
      const first = await app.get(RevokeAccessKey).execute({ id: key.id });
      app.clock.advance(60_000);

      const second = await app.get(RevokeAccessKey).execute({ id: ` ${key.id} ` });

      expect(first.revokedAt).to.deep.equal(new Date(key.createdAt.getTime() + 60_000));
      expect(second).to.deep.equal(first);
    });

    it('when the id is unknown or not text, then revoking is not found', async () => {
      await create({ name: 'k', kind: 'client' });

      for (const id of ['ffffffffffffffffffffffff', 'nonsense', '', undefined, 7]) {
        await expect(app.get(RevokeAccessKey).execute({ id }), String(id)).to.be.rejectedWith(
          NotFoundError,
          /^Access key not found$/u,
        );
      }
    });

    it('when keys are created over time, then they list oldest first with revoked ones marked', async () => {
      const first = await create({ name: 'first', kind: 'admin' });
      app.clock.advance(1000);
      await create({ name: 'second', kind: 'device', groups: ['tomatoes'] });
      await app.get(RevokeAccessKey).execute({ id: first.key.id });

      const listed = await app.get(ListAccessKeys).execute();

      expect(listed.map((k) => [k.name, k.revokedAt !== undefined])).to.deep.equal([
        ['first', true],
        ['second', false],
      ]);
    });
  });

  describe('the access policy', () => {
    const keyOf = (kind: AccessKey['kind'], groups: string[] = [], revoked = false): AccessKey => ({
      id: 'k',
      name: 'k',
      kind,
      groups,
      createdAt: new Date(0),
      ...(revoked ? { revokedAt: new Date(1) } : {}),
    });
    const groups = (...names: unknown[]): AccessTarget => ({ groups: names });
    const cases: [string, AccessKey, AccessOperation, AccessTarget, boolean][] = [
      ['admin: any group, any operation', keyOf('admin'), 'write', groups('a', 'b'), true],
      ['admin: metrics', keyOf('admin'), 'read', { scope: 'metrics' }, true],
      ['admin: administration', keyOf('admin'), 'write', { scope: 'administration' }, true],
      ['admin: data outside groups', keyOf('admin'), 'write', { scope: 'all-groups' }, true],
      ['revoked admin: nothing', keyOf('admin', [], true), 'read', groups('a'), false],
      ['client for all groups: any group', keyOf('client'), 'write', groups('a', 'b'), true],
      ['client for all groups: data outside groups', keyOf('client'), 'write', { scope: 'all-groups' }, true],
      ['client: service information', keyOf('client', ['a']), 'read', { scope: 'service' }, true],
      ['client: no metrics', keyOf('client'), 'read', { scope: 'metrics' }, false],
      ['client: no administration', keyOf('client'), 'read', { scope: 'administration' }, false],
      ['viewer for all groups: reads any group', keyOf('viewer'), 'read', groups('a', 'b'), true],
      ['viewer: no write', keyOf('viewer'), 'write', groups('a'), false],
      ['viewer: no readings sent', keyOf('viewer'), 'ingest', groups('a'), false],
      ['viewer limited to a: not b', keyOf('viewer', ['a']), 'read', groups('b'), false],
      ['viewer: reads data outside groups', keyOf('viewer'), 'read', { scope: 'all-groups' }, true],
      [
        'viewer: writes no data outside groups',
        keyOf('viewer'),
        'write',
        { scope: 'user', userId: 'u' },
        false,
      ],
      ['metrics: reads metrics', keyOf('metrics'), 'read', { scope: 'metrics' }, true],
      ['metrics: no group', keyOf('metrics'), 'read', groups('a'), false],
      ['metrics: no service information', keyOf('metrics'), 'read', { scope: 'service' }, false],
      ['metrics: no data outside groups', keyOf('metrics'), 'read', { scope: 'all-groups' }, false],
      ['client limited to a: reads a', keyOf('client', ['a']), 'read', groups('a'), true],
      ['client limited to a: ingests for a', keyOf('client', ['a']), 'ingest', groups('a', 'a'), true],
      ['client limited to a: not b', keyOf('client', ['a']), 'read', groups('b'), false],
      ['client limited to a: not a and b', keyOf('client', ['a']), 'write', groups('a', 'b'), false],
      ['client limited to a: not a malformed group', keyOf('client', ['a']), 'read', groups(['a']), false],
      [
        'client limited to a: not data outside groups',
        keyOf('client', ['a']),
        'read',
        { scope: 'all-groups' },
        false,
      ],
      ['device of a: ingests for a', keyOf('device', ['a']), 'ingest', groups('a', 'a'), true],
      ['device of a: not ingest for b', keyOf('device', ['a']), 'ingest', groups('a', 'b'), false],
      ['device of a: not read a', keyOf('device', ['a']), 'read', groups('a'), false],
      ['device of a: not write a', keyOf('device', ['a']), 'write', groups('a'), false],
      ['device: not service information', keyOf('device', ['a']), 'read', { scope: 'service' }, false],
    ];
    for (const [title, key, operation, target, expected] of cases) {
      it(`when ${title}, then access is ${expected ? 'allowed' : 'denied with a reason'}`, () => {
        const decision = decideAccess(key, operation, target);

        expect(decision.allowed).to.equal(expected);
        if (!decision.allowed) expect(decision.reason).to.be.a('string').with.length.greaterThan(10);
      });
    }

    it('when a limited key is denied a group, then the reason names the group it asked for', () => {
      const decision = decideAccess(keyOf('client', ['a']), 'read', groups('a', 'basil'));

      expect(decision).to.deep.equal({ allowed: false, reason: 'This key may not reach group "basil"' });
    });
  });
});
