import { ConflictError, type NewUser, type UserRepository } from '@hortus/core';

const HASH_A = '$2b$12$abcdefghijklmnopqrstuu1234567890123456789012345678901';
const HASH_B = '$2b$12$bbcdefghijklmnopqrstuu1234567890123456789012345678902';
const HOUR = 3_600_000;
const now = new Date('2025-06-15T12:00:00.000Z');
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
      expect(Object.keys(created).sort()).to.deep.equal([
        'email',
        'firstName',
        'group',
        'id',
        'lastName',
        'role',
      ]);
      expect(created).to.include(user('ana@example.com'));
      expect(await repository().findById(created.id)).to.deep.equal(created);
    });

    describe('roles', () => {
      it('when a user is created without a role, then it is an operator wherever it is read', async () => {
        const created = await repository().create(user('ana@example.com'));

        expect(created.role).to.equal('operator');
        expect((await repository().findById(created.id))?.role).to.equal('operator');
        expect((await repository().findByEmail('ana@example.com'))?.role).to.equal('operator');
        expect((await repository().list()).map((listed) => listed.role)).to.deep.equal(['operator']);
      });

      it('when a user is created as an admin, then it is read back as an admin', async () => {
        const created = await repository().create({ ...user('ana@example.com'), role: 'admin' });

        expect(created.role).to.equal('admin');
        expect((await repository().findById(created.id))?.role).to.equal('admin');
      });

      it('when a role is set, then it answers the user with it and every read shows it, other users unchanged', async () => {
        const ana = await repository().create(user('ana@example.com'));
        const ben = await repository().create(user('ben@example.com'));

        const changed = await repository().setRole(ana.id, 'viewer');

        expect(changed).to.deep.equal({ ...ana, role: 'viewer' });
        expect((await repository().findByEmail('ana@example.com'))?.role).to.equal('viewer');
        expect((await repository().findById(ben.id))?.role).to.equal('operator');
        expect(await repository().setRole(ana.id, 'admin')).to.deep.include({ role: 'admin' });
        expect((await repository().list()).map((listed) => listed.role)).to.deep.equal(['admin', 'operator']);
      });

      it('when the role of an unknown id is set, then nothing is found and nothing changes', async () => {
        const ana = await repository().create(user('ana@example.com'));

        for (const id of unknownIds) expect(await repository().setRole(id, 'admin'), id).to.equal(undefined);
        expect((await repository().findById(ana.id))?.role).to.equal('operator');
      });

      it('when a user is imported from the original service, then it is an operator', async () => {
        const imported = await repository().createImported({
          ...user('ana@example.com'),
          passwordHash: HASH_A,
        });

        expect(imported.role).to.equal('operator');
        expect((await repository().findById(imported.id))?.role).to.equal('operator');
      });

      it('when a role is set, then the password, sessions and e-mail are kept', async () => {
        const ana = await repository().create(user('ana@example.com'), { passwordHash: HASH_A });
        const before = await repository().findCredentials(ana.id);

        await repository().setRole(ana.id, 'viewer');

        expect(await repository().findCredentials(ana.id)).to.deep.equal(before);
        expect((await repository().findById(ana.id))?.email).to.equal('ana@example.com');
      });
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

    it('when e-mails differ only in case, then they are one address: a conflict, and findByEmail finds it', async () => {
      const ana = await repository().create(user('Ana@Example.com'));

      await expect(repository().create(user('ana@example.COM'))).to.be.rejectedWith(ConflictError);
      expect(await repository().findByEmail('ANA@example.com')).to.deep.equal(ana);
      expect(ana.email).to.equal('Ana@Example.com');
      expect(await repository().findByEmail('nobody@example.com')).to.equal(undefined);
    });

    it('when another user has the e-mail in another case, then changing to it is a conflict', async () => {
      const ana = await repository().create(user('ana@example.com'));
      await repository().create(user('ben@example.com'));

      await expect(repository().changeEmail(ana.id, 'BEN@example.com')).to.be.rejectedWith(ConflictError);
      const changed = await repository().changeEmail(ana.id, 'Ana.New@Example.com');
      expect(await repository().findByEmail('ana.new@example.com')).to.deep.equal(changed);
      expect(await repository().findByEmail('ana@example.com')).to.equal(undefined);
    });

    it('when a user is created with a password hash, then only findCredentials answers it, at session version 0', async () => {
      const ana = await repository().create(user('ana@example.com'), { passwordHash: HASH_A });
      const plain = await repository().create(user('ben@example.com'));

      expect(await repository().findCredentials(ana.id)).to.deep.equal({
        passwordHash: HASH_A,
        sessionVersion: 0,
      });
      expect(await repository().findCredentials(plain.id)).to.deep.equal({ sessionVersion: 0 });
      for (const answer of [
        ana,
        await repository().findById(ana.id),
        await repository().findByEmail(ana.email),
      ]) {
        expect(JSON.stringify(answer)).to.not.include('$2b$');
      }
      for (const id of unknownIds) expect(await repository().findCredentials(id)).to.equal(undefined);
    });

    it('when a password is set, then the hash changes, and the session version rises only when sessions end', async () => {
      const ana = await repository().create(user('ana@example.com'), { passwordHash: HASH_A });

      expect(await repository().setPassword(ana.id, HASH_B, { endSessions: false })).to.equal(0);
      expect(await repository().findCredentials(ana.id)).to.deep.equal({
        passwordHash: HASH_B,
        sessionVersion: 0,
      });
      expect(await repository().setPassword(ana.id, HASH_A, { endSessions: true })).to.equal(1);
      expect(await repository().findCredentials(ana.id)).to.deep.equal({
        passwordHash: HASH_A,
        sessionVersion: 1,
      });
      expect(
        await repository().setPassword('0123456789abcdef01234567', HASH_A, { endSessions: true }),
      ).to.equal(undefined);
    });

    it('when a rehash finds another hash than expected, then nothing changes', async () => {
      const ana = await repository().create(user('ana@example.com'), { passwordHash: HASH_A });

      expect(
        await repository().setPassword(ana.id, HASH_B, { endSessions: false, ifHashIs: HASH_B }),
      ).to.equal(undefined);
      expect((await repository().findCredentials(ana.id))?.passwordHash).to.equal(HASH_A);
      expect(
        await repository().setPassword(ana.id, HASH_B, { endSessions: false, ifHashIs: HASH_A }),
      ).to.equal(0);
      expect((await repository().findCredentials(ana.id))?.passwordHash).to.equal(HASH_B);
    });

    it('when sessions end, then the version rises by one each time', async () => {
      const ana = await repository().create(user('ana@example.com'));

      expect(await repository().endSessions(ana.id)).to.equal(1);
      expect(await repository().endSessions(ana.id)).to.equal(2);
      expect((await repository().findCredentials(ana.id))?.sessionVersion).to.equal(2);
      expect(await repository().endSessions('0123456789abcdef01234567')).to.equal(undefined);
    });

    it('when a reset token is set, then a newer one replaces it and only the newest resets, once', async () => {
      const ana = await repository().create(user('ana@example.com'), { passwordHash: HASH_A });
      const expiresAt = new Date(now.getTime() + HOUR);
      expect(await repository().setResetToken(ana.id, 'digest-1', expiresAt)).to.equal(true);
      expect(await repository().setResetToken(ana.id, 'digest-2', expiresAt)).to.equal(true);
      expect((await repository().findCredentials(ana.id))?.reset).to.deep.equal({
        tokenDigest: 'digest-2',
        expiresAt,
      });

      expect(
        await repository().resetPassword(ana.id, { tokenDigest: 'digest-1', now, passwordHash: HASH_B }),
      ).to.equal(undefined);
      expect(
        await repository().resetPassword(ana.id, { tokenDigest: 'digest-2', now, passwordHash: HASH_B }),
      ).to.equal(1);
      expect(await repository().findCredentials(ana.id)).to.deep.equal({
        passwordHash: HASH_B,
        sessionVersion: 1,
      });
      expect(
        await repository().resetPassword(ana.id, { tokenDigest: 'digest-2', now, passwordHash: HASH_A }),
      ).to.equal(undefined);
      expect(await repository().setResetToken('0123456789abcdef01234567', 'digest-3', expiresAt)).to.equal(
        false,
      );
    });

    it('when a password is set or the e-mail changes, then a pending reset token is voided', async () => {
      const ana = await repository().create(user('ana@example.com'), { passwordHash: HASH_A });
      const ben = await repository().create(user('ben@example.com'), { passwordHash: HASH_A });
      const expiresAt = new Date(now.getTime() + HOUR);
      await repository().setResetToken(ana.id, 'digest-ana', expiresAt);
      await repository().setResetToken(ben.id, 'digest-ben', expiresAt);

      await repository().setPassword(ana.id, HASH_B, { endSessions: true });
      await repository().changeEmail(ben.id, 'ben@new.example');

      expect((await repository().findCredentials(ana.id))?.reset).to.equal(undefined);
      expect((await repository().findCredentials(ben.id))?.reset).to.equal(undefined);
      for (const [id, tokenDigest] of [
        [ana.id, 'digest-ana'],
        [ben.id, 'digest-ben'],
      ] as const) {
        expect(await repository().resetPassword(id, { tokenDigest, now, passwordHash: HASH_B })).to.equal(
          undefined,
        );
      }
      expect((await repository().findCredentials(ben.id))?.passwordHash).to.equal(HASH_A);
    });

    it('when users are made by sign-up, the CLI, a migration and without a provenance, then list answers each in the order stored, with how and when', async () => {
      const at = (minutes: number): Date => new Date(now.getTime() + minutes * 60_000);
      const ana = await repository().create(user('ana@example.com'), {
        passwordHash: HASH_A,
        provenance: { origin: 'signup', createdAt: at(1) },
      });
      const ben = await repository().create(user('ben@example.com'), {
        provenance: { origin: 'cli', createdAt: at(2) },
      });
      const cy = await repository().createImported({
        ...user('cy@example.com'),
        passwordHash: HASH_B,
        createdAt: at(3),
      });
      const old = await repository().create(user('dee@example.com'));

      const listed = await repository().list();

      expect(listed.map((record) => record.id)).to.deep.equal([ana.id, ben.id, cy.id, old.id]);
      expect(listed.slice(0, 3)).to.deep.equal([
        { ...ana, origin: 'signup', createdAt: at(1) },
        { ...ben, origin: 'cli', createdAt: at(2) },
        { ...cy, origin: 'migration', createdAt: at(3) },
      ]);
      // A record from before origins were kept; Mongo may still know its time (from its ObjectId).
      expect(listed[3]).to.deep.include({ ...old, origin: 'unknown' });
      expect(JSON.stringify(listed)).to.not.include('$2b$');
    });

    it('when an invitation is used, then only the first use counts, of concurrent ones too, until it expires', async () => {
      const expiresAt = new Date(now.getTime() + HOUR);

      expect(await repository().useInvitation('invitation-1', expiresAt, now)).to.equal(true);
      expect(await repository().useInvitation('invitation-1', expiresAt, now)).to.equal(false);
      const together = await Promise.all([
        repository().useInvitation('invitation-2', expiresAt, now),
        repository().useInvitation('invitation-2', expiresAt, now),
        repository().useInvitation('invitation-2', expiresAt, now),
      ]);
      expect(together.filter(Boolean)).to.deep.equal([true]);
      // Past its expiry the code no longer verifies anyway: its mark may go.
      const later = new Date(expiresAt.getTime() + 1);
      expect(
        await repository().useInvitation('invitation-1', new Date(later.getTime() + HOUR), later),
      ).to.equal(true);
    });

    it('when a reset token has expired, then it resets nothing', async () => {
      const ana = await repository().create(user('ana@example.com'), { passwordHash: HASH_A });
      await repository().setResetToken(ana.id, 'digest-1', new Date(now.getTime() + HOUR));

      const late = new Date(now.getTime() + HOUR);
      expect(
        await repository().resetPassword(ana.id, {
          tokenDigest: 'digest-1',
          now: late,
          passwordHash: HASH_B,
        }),
      ).to.equal(undefined);
      expect(await repository().findCredentials(ana.id)).to.deep.include({
        passwordHash: HASH_A,
        sessionVersion: 0,
      });
    });

    it('when two resets use one token concurrently, then exactly one succeeds', async () => {
      const ana = await repository().create(user('ana@example.com'), { passwordHash: HASH_A });
      await repository().setResetToken(ana.id, 'digest-1', new Date(now.getTime() + HOUR));

      const outcomes = await Promise.all([
        repository().resetPassword(ana.id, { tokenDigest: 'digest-1', now, passwordHash: HASH_B }),
        repository().resetPassword(ana.id, { tokenDigest: 'digest-1', now, passwordHash: HASH_B }),
      ]);

      expect(outcomes.filter((outcome) => outcome !== undefined)).to.deep.equal([1]);
    });

    it('when a user is deleted, then they and their e-mail are gone and the e-mail is free again', async () => {
      const ana = await repository().create(user('ana@example.com'), { passwordHash: HASH_A });

      expect(await repository().delete(ana.id)).to.equal(true);
      expect(await repository().findById(ana.id)).to.equal(undefined);
      expect(await repository().findCredentials(ana.id)).to.equal(undefined);
      expect(await repository().findByEmail('ana@example.com')).to.equal(undefined);
      expect(await repository().delete(ana.id)).to.equal(false);
      await repository().create(user('ana@example.com'));
    });

    describe('createImported', () => {
      const keptId = '65a1f0c2e4b0a1b2c3d4e5f6';

      it('when an imported user has an id of the store form, then it keeps that id, answers only the public fields, and its hash is the credential at session version 0', async () => {
        const imported = await repository().createImported({
          ...user('ana@example.com'),
          id: keptId,
          passwordHash: HASH_A,
        });

        expectPlainEntity(imported);
        expect(imported).to.deep.equal({ id: keptId, ...user('ana@example.com'), role: 'operator' });
        expect(await repository().findById(keptId)).to.deep.equal(imported);
        expect(await repository().findByEmail('ANA@example.com')).to.deep.equal(imported);
        expect(await repository().findCredentials(keptId)).to.deep.equal({
          passwordHash: HASH_A,
          sessionVersion: 0,
        });
        expect(JSON.stringify(await repository().findByEmail('ana@example.com'))).to.not.include('$2b$');
      });

      it('when the id is taken or not of the store form, then a new id is issued', async () => {
        await repository().createImported({ ...user('ana@example.com'), id: keptId });

        const again = await repository().createImported({ ...user('ben@example.com'), id: keptId });
        const foreign = await repository().createImported({ ...user('cy@example.com'), id: 'user-7' });

        expect(again.id).to.not.equal(keptId);
        expect(foreign.id).to.not.equal('user-7');
        expect(await repository().findById(again.id)).to.deep.equal(again);
        expect(await repository().findById(foreign.id)).to.deep.equal(foreign);
        expect(await repository().findCredentials(foreign.id)).to.deep.equal({ sessionVersion: 0 });
      });

      it('when another user has the e-mail in any case, then importing is a conflict and the id stays free', async () => {
        await repository().create(user('ana@example.com'));

        await expect(
          repository().createImported({ ...user('ANA@Example.com'), id: keptId, passwordHash: HASH_A }),
        ).to.be.rejectedWith(ConflictError);
        expect(await repository().findById(keptId)).to.equal(undefined);
        expect(await repository().findCredentials(keptId)).to.equal(undefined);
      });

      it('when an imported e-mail is case-sensitive, then both accounts are kept and each is found by its e-mail as written', async () => {
        const first = await repository().createImported({
          ...user('anna.schmidt@example.com'),
          passwordHash: HASH_A,
        });

        const second = await repository().createImported({
          ...user('Anna.Schmidt@Example.com'),
          id: keptId,
          passwordHash: HASH_B,
          caseSensitiveEmail: true,
        });

        expect(second).to.deep.equal({ id: keptId, ...user('Anna.Schmidt@Example.com'), role: 'operator' });
        expect((await repository().findByEmail('Anna.Schmidt@Example.com'))?.id).to.equal(keptId);
        expect((await repository().findByEmail('anna.schmidt@example.com'))?.id).to.equal(first.id);
        // Any other spelling finds the account that holds the e-mail ignoring case.
        expect((await repository().findByEmail('ANNA.SCHMIDT@example.com'))?.id).to.equal(first.id);
        expect((await repository().findCredentials(keptId))?.passwordHash).to.equal(HASH_B);
        // The exact e-mail stays unique, and sign-up still meets the e-mail ignoring case.
        await expect(
          repository().createImported({ ...user('Anna.Schmidt@Example.com'), caseSensitiveEmail: true }),
        ).to.be.rejectedWith(ConflictError);
        await expect(repository().create(user('ANNA.schmidt@EXAMPLE.com'))).to.be.rejectedWith(ConflictError);
        // Deleting the one that holds the e-mail leaves the other found by its own spelling only.
        expect(await repository().delete(first.id)).to.equal(true);
        expect(await repository().findByEmail('anna.schmidt@example.com')).to.equal(undefined);
        expect((await repository().findByEmail('Anna.Schmidt@Example.com'))?.id).to.equal(keptId);
      });
    });
  });
}
