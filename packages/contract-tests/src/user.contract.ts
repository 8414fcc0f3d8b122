import { ConflictError, type NewUser, type UserRepository } from '@hortus/core';
import { expect, expectPlainEntity, freshStorePerTest, type StoreFactory } from './store.js';

function user(email: string): NewUser {
  return { firstName: 'Ana', lastName: 'Gardener', email, group: 'greenhouse-a' };
}

/** Ids no store can have issued, and one of the 24-hex form that it simply did not issue. */
const unknownIds = [
  '',
  'not-an-id',
  'zzzzzzzzzzzzzzzzzzzzzzzz',
  '0123456789abcdef01234567',
  '{"$ne":null}',
  ' ',
];

export function userRepositoryContract(name: string, createStore: StoreFactory<'users'>): void {
  describe(`${name}: UserRepository contract`, () => {
    const store = freshStorePerTest(createStore);
    const repository = (): UserRepository => store().users;

    it('when a user is created, then it answers exactly the public fields and findById answers the same', async () => {
      const created = await repository().create(user('ana@example.com'));

      expectPlainEntity(created);
      expect(Object.keys(created).sort()).to.deep.equal(['email', 'firstName', 'group', 'id', 'lastName']);
      expect(created).to.include(user('ana@example.com'));
      expect(await repository().findById(created.id)).to.deep.equal(created);
    });

    it('when another user has the e-mail, then creating is a conflict', async () => {
      await repository().create(user('ana@example.com'));

      await expect(
        repository().create({ ...user('ana@example.com'), firstName: 'Other' }),
      ).to.be.rejectedWith(ConflictError);
    });

    it('when two concurrent calls create users with one e-mail, then exactly one succeeds', async () => {
      const outcomes = await Promise.allSettled([
        repository().create(user('ana@example.com')),
        repository().create(user('ana@example.com')),
      ]);

      expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).to.have.lengthOf(1);
      expect(outcomes.find((outcome) => outcome.status === 'rejected')?.reason).to.be.an.instanceOf(
        ConflictError,
      );
    });

    it('when an id is unknown or malformed, then findById answers undefined', async () => {
      await repository().create(user('ana@example.com'));

      for (const id of unknownIds)
        expect(await repository().findById(id), `id ${JSON.stringify(id)}`).to.equal(undefined);
    });

    it('when the e-mail is changed, then the user keeps every other field and the old e-mail is free again', async () => {
      const created = await repository().create(user('ana@example.com'));

      const updated = await repository().changeEmail(created.id, 'ana@new.example');

      expect(updated).to.deep.equal({ ...created, email: 'ana@new.example' });
      expect(await repository().findById(created.id)).to.deep.equal(updated);
      const reuse = await repository().create(user('ana@example.com'));
      expect(reuse.id).to.not.equal(created.id);
    });

    it('when the new e-mail belongs to another user, then changing is a conflict and nothing changes', async () => {
      const ana = await repository().create(user('ana@example.com'));
      await repository().create(user('ben@example.com'));

      await expect(repository().changeEmail(ana.id, 'ben@example.com')).to.be.rejectedWith(ConflictError);
      expect((await repository().findById(ana.id))?.email).to.equal('ana@example.com');
    });

    it('when the new e-mail is the user own current one, then it is no conflict', async () => {
      const ana = await repository().create(user('ana@example.com'));

      expect(await repository().changeEmail(ana.id, 'ana@example.com')).to.deep.equal(ana);
    });

    it('when two users change to the same e-mail concurrently, then exactly one gets it', async () => {
      const ana = await repository().create(user('ana@example.com'));
      const ben = await repository().create(user('ben@example.com'));

      const outcomes = await Promise.allSettled([
        repository().changeEmail(ana.id, 'shared@example.com'),
        repository().changeEmail(ben.id, 'shared@example.com'),
      ]);

      expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).to.have.lengthOf(1);
      const emails = [
        (await repository().findById(ana.id))?.email,
        (await repository().findById(ben.id))?.email,
      ];
      expect(emails.filter((email) => email === 'shared@example.com')).to.have.lengthOf(1);
    });

    it('when the id is unknown or malformed, then changeEmail answers undefined and creates nothing', async () => {
      for (const id of unknownIds) {
        expect(
          await repository().changeEmail(id, `${id.length}@example.com`),
          `id ${JSON.stringify(id)}`,
        ).to.equal(undefined);
      }
      // Nothing was reserved on the way: the e-mail tried for the empty id is still free.
      await repository().create(user('0@example.com'));
    });

    it('when the caller mutates an answer, then the stored user is unchanged', async () => {
      const created = await repository().create(user('ana@example.com'));

      (created as { email: string }).email = 'hacked@example.com';

      expect((await repository().findById(created.id))?.email).to.equal('ana@example.com');
    });
  });
}
