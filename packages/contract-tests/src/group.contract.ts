import { ConflictError, type Group, type GroupRepository, type NewGroup } from '@hortus/core';
import { expect, expectPlainEntity, freshStorePerTest, type StoreFactory } from './store.js';

function clientSettings(): unknown {
  return [
    { tempMin: 15 },
    { tempMax: 30 },
    { emailNotification: true },
    { email: 'a@b.example' },
    { isValid: null },
  ];
}

function group(name: string): NewGroup {
  return { name, package: 'small', employee: ['ana', 'ben'], settings: clientSettings() };
}

function withoutId({ id: _id, ...fields }: Group): Omit<Group, 'id'> {
  return fields;
}

export function groupRepositoryContract(name: string, createStore: StoreFactory<'groups'>): void {
  describe(`${name}: GroupRepository contract`, () => {
    const store = freshStorePerTest(createStore);
    const repository = (): GroupRepository => store().groups;

    it('when a group is created, then it answers plain data with an id and findByName answers the same', async () => {
      const created = await repository().create(group('greenhouse-a'));

      expectPlainEntity(created);
      expect(withoutId(created)).to.deep.equal(group('greenhouse-a'));
      expect(await repository().findByName('greenhouse-a')).to.deep.equal(created);
    });

    it('when a group of the same name exists, then creating it is a conflict and the first is kept', async () => {
      await repository().create(group('greenhouse-a'));

      await expect(repository().create({ ...group('greenhouse-a'), package: 'big' })).to.be.rejectedWith(
        ConflictError,
      );
      expect((await repository().findByName('greenhouse-a'))?.package).to.equal('small');
      expect(await repository().list()).to.have.lengthOf(1);
    });

    it('when two concurrent calls create the same name, then exactly one succeeds and the other conflicts', async () => {
      const outcomes = await Promise.allSettled([
        repository().create(group('g')),
        repository().create(group('g')),
      ]);

      expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).to.have.lengthOf(1);
      expect(outcomes.find((outcome) => outcome.status === 'rejected')?.reason).to.be.an.instanceOf(
        ConflictError,
      );
    });

    it('when no group has the name, then findByName answers undefined', async () => {
      await repository().create(group('greenhouse-a'));

      expect(await repository().findByName('greenhouse-b')).to.equal(undefined);
      expect(await repository().findByName('')).to.equal(undefined);
    });

    it('when groups are listed, then every group is answered ordered by name', async () => {
      for (const name of ['tomatoes', 'basil', 'peppers']) await repository().create(group(name));

      expect((await repository().list()).map((g) => g.name)).to.deep.equal(['basil', 'peppers', 'tomatoes']);
    });

    it('when the store is empty, then the list is empty', async () => {
      expect(await repository().list()).to.deep.equal([]);
    });

    it('when settings are replaced, then the new value replaces the old as a whole and the rest is kept', async () => {
      const created = await repository().create(group('greenhouse-a'));
      const replacement = { nested: { list: [1, 'two', false, null] }, ratio: 0.5 };

      const updated = await repository().replaceSettings('greenhouse-a', replacement);

      expect(updated).to.deep.equal({ ...created, settings: replacement });
      expect(await repository().findByName('greenhouse-a')).to.deep.equal(updated);
    });

    it('when settings are a plain string, a number or an empty list, then each is handed back unchanged', async () => {
      await repository().create(group('greenhouse-a'));

      for (const settings of ['text', 42, [], {}]) {
        await repository().replaceSettings('greenhouse-a', settings);
        expect((await repository().findByName('greenhouse-a'))?.settings).to.deep.equal(settings);
      }
    });

    it('when settings nest arrays in arrays and use keys with dots, dollars and percents, then they come back unchanged', async () => {
      await repository().create(group('greenhouse-a'));
      const settings = [[1, [2, []]], { 'a.b': { $gt: [['x']] }, '%A': [3], '%25': null }];

      await repository().replaceSettings('greenhouse-a', settings);

      expect((await repository().findByName('greenhouse-a'))?.settings).to.deep.equal(settings);
    });

    it('when no group has the name, then replaceSettings answers undefined and creates nothing', async () => {
      expect(await repository().replaceSettings('greenhouse-a', [])).to.equal(undefined);
      expect(await repository().list()).to.deep.equal([]);
    });

    it('when the caller changes its input or an answer, then the stored group is unchanged', async () => {
      const input = group('greenhouse-a');
      const created = await repository().create(input);

      (input.settings as unknown[]).push({ extra: 1 });
      (input.employee as string[]).push('eve');
      (created.settings as unknown[]).length = 0;
      const found = (await repository().findByName('greenhouse-a')) as Group;
      ((found.settings as unknown[])[0] as { tempMin: number }).tempMin = -100;
      (found.employee as string[]).length = 0;

      expect(withoutId((await repository().findByName('greenhouse-a')) as Group)).to.deep.equal(
        group('greenhouse-a'),
      );
    });

    it('when an employee is added, then it is appended to the list and the revision changes', async () => {
      await repository().create(group('greenhouse-a'));
      const before = await repository().revision('greenhouse-a');

      const updated = await repository().addEmployee('greenhouse-a', 'EveGrower');

      expect(updated?.employee).to.deep.equal(['ana', 'ben', 'EveGrower']);
      expect((await repository().findByName('greenhouse-a'))?.employee).to.deep.equal([
        'ana',
        'ben',
        'EveGrower',
      ]);
      expect(await repository().revision('greenhouse-a')).to.not.equal(before);
    });

    it('when employees are added concurrently, then every one is kept', async () => {
      await repository().create({ ...group('greenhouse-a'), employee: [] });

      await Promise.all(['a', 'b', 'c', 'd'].map((name) => repository().addEmployee('greenhouse-a', name)));

      expect([...((await repository().findByName('greenhouse-a'))?.employee ?? [])].sort()).to.deep.equal([
        'a',
        'b',
        'c',
        'd',
      ]);
    });

    it('when no group has the name, then addEmployee answers undefined and creates nothing', async () => {
      expect(await repository().addEmployee('nowhere', 'EveGrower')).to.equal(undefined);
      expect(await repository().findByName('nowhere')).to.equal(undefined);
    });

    it('when a group is deleted, then it is not found, its revision moves, and its name can be used again', async () => {
      await repository().create(group('old'));
      await repository().addEmployee('old', 'LateJoiner');
      await repository().create(group('kept'));
      const before = await repository().revision('old');

      expect(await repository().delete('old')).to.equal(true);
      expect(await repository().delete('old')).to.equal(false);

      expect(await repository().findByName('old')).to.equal(undefined);
      expect((await repository().list()).map((g) => g.name)).to.deep.equal(['kept']);
      expect(await repository().revision('old')).to.not.equal(before);
      const again = await repository().create(group('old'));
      expect((await repository().findByName('old'))?.employee).to.deep.equal(again.employee);
    });

    it('when a retention override is set, then the group carries it; cleared, it is gone; an unknown group answers undefined', async () => {
      await repository().create(group('kept'));
      const before = await repository().revision('kept');
      expect(await repository().findByName('kept')).to.not.have.property('retentionDays');

      expect(await repository().setRetention('kept', 30)).to.include({ retentionDays: 30 });
      expect(await repository().findByName('kept')).to.include({ retentionDays: 30, name: 'kept' });
      expect(await repository().revision('kept')).to.not.equal(before);
      expect((await repository().setRetention('kept', 0))?.retentionDays).to.equal(0);
      const cleared = await repository().setRetention('kept', undefined);
      expect(cleared).to.not.have.property('retentionDays');
      expect(await repository().findByName('kept')).to.not.have.property('retentionDays');
      expect(await repository().setRetention('nowhere', 5)).to.equal(undefined);
    });
  });
}
