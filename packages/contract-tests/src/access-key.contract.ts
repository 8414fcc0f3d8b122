import { type AccessKeyRepository, ConflictError, type NewAccessKey } from '@hortus/core';
import { at, expect, expectPlainEntity, freshStorePerTest, MINUTE, type StoreFactory } from './store.js';

function key(secretHash: string, overrides: Partial<NewAccessKey> = {}): NewAccessKey {
  return {
    name: 'web client',
    kind: 'client',
    groups: ['greenhouse-a'],
    secretHash,
    createdAt: at(0),
    ...overrides,
  };
}

const publicFields = ['createdAt', 'groups', 'id', 'kind', 'name'];

export function accessKeyRepositoryContract(name: string, createStore: StoreFactory<'accessKeys'>): void {
  describe(`${name}: AccessKeyRepository contract`, () => {
    const store = freshStorePerTest(createStore);
    const repository = (): AccessKeyRepository => store().accessKeys;

    it('when a key is created, then it answers plain data without the hash, and findByHash answers the same', async () => {
      const created = await repository().create(key('hash-1', { kind: 'device', name: 'box 1' }));

      expectPlainEntity(created);
      expect(Object.keys(created).sort()).to.deep.equal(publicFields);
      expect(created).to.deep.include({ name: 'box 1', kind: 'device', groups: ['greenhouse-a'] });
      expect(created.createdAt.getTime()).to.equal(at(0).getTime());
      expect(await repository().findByHash('hash-1')).to.deep.equal(created);
    });

    it('when a key with that hash exists, then creating another is a conflict', async () => {
      await repository().create(key('hash-1'));

      await expect(repository().create(key('hash-1', { name: 'other' }))).to.be.rejectedWith(ConflictError);
      expect(await repository().list()).to.have.lengthOf(1);
    });

    it('when three concurrent calls create keys with one hash, then exactly one succeeds', async () => {
      const outcomes = await Promise.allSettled(
        ['a', 'b', 'c'].map((suffix) => repository().create(key('hash-1', { name: suffix }))),
      );

      expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).to.have.lengthOf(1);
      for (const outcome of outcomes) {
        if (outcome.status === 'rejected') expect(outcome.reason).to.be.an.instanceOf(ConflictError);
      }
    });

    it('when a hash is unknown, then findByHash answers undefined', async () => {
      await repository().create(key('hash-1'));

      for (const hash of ['hash-2', '', 'HASH-1', '{"$ne":null}', ' '])
        expect(await repository().findByHash(hash), JSON.stringify(hash)).to.equal(undefined);
    });

    it('when keys were created at different times, then they list oldest first, revoked ones included', async () => {
      await repository().create(key('hash-late', { name: 'late', createdAt: at(2 * MINUTE) }));
      const early = await repository().create(key('hash-early', { name: 'early', createdAt: at(0) }));
      await repository().create(
        key('hash-mid', { name: 'mid', kind: 'admin', groups: [], createdAt: at(MINUTE) }),
      );
      await repository().revoke(early.id, at(3 * MINUTE));

      const listed = await repository().list();

      expect(listed.map((k) => k.name)).to.deep.equal(['early', 'mid', 'late']);
      expect(listed[0]?.revokedAt?.getTime()).to.equal(at(3 * MINUTE).getTime());
      expect(listed[1]).to.deep.include({ kind: 'admin', groups: [] });
      for (const listedKey of listed) expect(listedKey).not.to.have.property('secretHash');
    });

    it('when a key is revoked, then it carries revokedAt, and a second revoke keeps the first time', async () => {
      const created = await repository().create(key('hash-1'));

      const revoked = await repository().revoke(created.id, at(MINUTE));
      const again = await repository().revoke(created.id, at(2 * MINUTE));

      expect(revoked).to.deep.equal({ ...created, revokedAt: at(MINUTE) });
      expect(again).to.deep.equal(revoked);
      expect(await repository().findByHash('hash-1')).to.deep.equal(revoked);
    });

    it('when the id is unknown or malformed, then revoke answers undefined and changes nothing', async () => {
      const created = await repository().create(key('hash-1'));

      for (const id of ['', 'not-an-id', '0123456789abcdef01234567', '{"$ne":null}'])
        expect(await repository().revoke(id, at(MINUTE)), JSON.stringify(id)).to.equal(undefined);
      expect(await repository().findByHash('hash-1')).to.deep.equal(created);
    });

    it('when the store is empty, then no key exists; after one is created, and also after it is revoked, one does', async () => {
      expect(await repository().hasAny()).to.equal(false);

      const created = await repository().create(key('hash-1'));
      expect(await repository().hasAny()).to.equal(true);

      await repository().revoke(created.id, at(MINUTE));
      expect(await repository().hasAny()).to.equal(true);
    });

    it('when the caller mutates an answer, then the stored key is unchanged', async () => {
      const created = await repository().create(key('hash-1'));

      (created.groups as string[]).push('greenhouse-b');
      const [listed] = await repository().list();
      (listed?.groups as string[]).push('greenhouse-c');

      expect((await repository().findByHash('hash-1'))?.groups).to.deep.equal(['greenhouse-a']);
    });
  });
}
