import { type NewStageAssignment, type Recipe, type StageRepository } from '@hortus/core';
import { at, expect, freshStorePerTest, MINUTE, type StoreFactory } from './store.js';

const recipe: Recipe = {
  name: 'Lettuce, hydroponic',
  source: 'a university guide',
  stages: [
    {
      name: 'seedling',
      days: 14,
      temperature: { min: 18, max: 24 },
      humidity: { min: 60, max: 80 },
      vpd: { min: 0.4, max: 0.8 },
      dli: { max: 12 },
      photoperiod: 16,
      rules: [{ object: 'fan', sensor: 'vpd', condition: 'above', action: 'on', value: 0.9 }],
    },
    { name: 'growth', rules: [] },
  ],
};

function assignment(group: string, changes: Partial<NewStageAssignment> = {}): NewStageAssignment {
  return { group, recipe, stage: 'seedling', startedAt: at(0), applied: false, ...changes };
}

export function stageRepositoryContract(name: string, createStore: StoreFactory<'stages'>): void {
  describe(`${name}: StageRepository contract`, () => {
    const store = freshStorePerTest(createStore);
    const repository = (): StageRepository => store().stages;

    it('when a group has no recipe, then get answers undefined and delete false', async () => {
      expect(await repository().get('gh')).to.equal(undefined);
      expect(await repository().delete('gh')).to.equal(false);
    });

    it('when an assignment is stored at version 0, then it reads back whole as version 1', async () => {
      expect(await repository().compareAndSet(assignment('gh'), 0)).to.equal(true);
      expect(await repository().get('gh')).to.deep.equal({ ...assignment('gh'), version: 1 });
    });

    it('when the expected version is stale, then nothing changes and it answers false', async () => {
      await repository().compareAndSet(assignment('gh'), 0);
      const moved = assignment('gh', { stage: 'growth', startedAt: at(MINUTE) });
      expect(await repository().compareAndSet(moved, 0)).to.equal(false);
      expect(await repository().compareAndSet(moved, 2)).to.equal(false);
      expect((await repository().get('gh'))?.stage).to.equal('seedling');
      const applied = { ...moved, applied: true, appliedAt: at(2 * MINUTE) };
      expect(await repository().compareAndSet(applied, 1)).to.equal(true);
      expect(await repository().get('gh')).to.deep.equal({ ...applied, version: 2 });
    });

    it('when ten engines race to move one stage on, then exactly one wins', async () => {
      await repository().compareAndSet(assignment('gh'), 0);
      const outcomes = await Promise.all(
        Array.from({ length: 10 }, () =>
          repository().compareAndSet(assignment('gh', { stage: 'growth' }), 1),
        ),
      );
      expect(outcomes.filter(Boolean)).to.have.lengthOf(1);
      expect(await repository().get('gh')).to.deep.include({ version: 2, stage: 'growth' });
    });

    it('when several groups have recipes, then list answers the newest of each by group name', async () => {
      await repository().compareAndSet(assignment('zeta'), 0);
      await repository().compareAndSet(assignment('alpha'), 0);
      await repository().compareAndSet(assignment('alpha', { stage: 'growth' }), 1);
      const listed = await repository().list();
      expect(listed.map((a) => [a.group, a.stage, a.version])).to.deep.equal([
        ['alpha', 'growth', 2],
        ['zeta', 'seedling', 1],
      ]);
    });

    it('when an assignment is deleted, then it is gone and can be assigned anew from version 0', async () => {
      await repository().compareAndSet(assignment('gh'), 0);
      await repository().compareAndSet(assignment('gh', { applied: true }), 1);
      expect(await repository().delete('gh')).to.equal(true);
      expect(await repository().get('gh')).to.equal(undefined);
      expect(await repository().list()).to.deep.equal([]);
      expect(await repository().compareAndSet(assignment('gh'), 0)).to.equal(true);
    });
  });
}
