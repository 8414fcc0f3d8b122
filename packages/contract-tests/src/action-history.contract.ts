import { type ActionHistoryRepository, type NewActionHistoryEntry } from '@hortus/core';
import { at, expect, expectPlainEntity, freshStorePerTest, MINUTE, type StoreFactory } from './store.js';

function entry(offsetMs: number, overrides: Partial<NewActionHistoryEntry> = {}): NewActionHistoryEntry {
  return {
    group: 'gh',
    object: 'pump_1',
    value: 'on',
    at: at(offsetMs),
    actor: { kind: 'user', id: '64b7f0c2a1b2c3d4e5f60718' },
    ...overrides,
  };
}

const KEEP = 1000;

export function actionHistoryRepositoryContract(
  name: string,
  createStore: StoreFactory<'actionHistory'>,
): void {
  describe(`${name}: ActionHistoryRepository contract`, () => {
    const store = freshStorePerTest(createStore);
    const repository = (): ActionHistoryRepository => store().actionHistory;

    it('when an entry is recorded, then it is plain data with an id and its actor, listed for its group and action', async () => {
      const recorded = await repository().record(entry(0), KEEP);
      expectPlainEntity(recorded);
      expect(recorded).to.deep.include({ group: 'gh', object: 'pump_1', value: 'on' });
      expect(recorded.actor).to.deep.equal({ kind: 'user', id: '64b7f0c2a1b2c3d4e5f60718' });
      expect(recorded.at.getTime()).to.equal(at(0).getTime());
      expect(await repository().list('gh', undefined, 10)).to.deep.equal([recorded]);
      expect(await repository().list('gh', 'pump_1', 10)).to.deep.equal([recorded]);
    });

    it('when an actor has no id, then it comes back without an id field', async () => {
      await repository().record(entry(0, { actor: { kind: 'mqtt' } }), KEEP);
      const [listed] = await repository().list('gh', 'pump_1', 1);
      expect(listed?.actor).to.deep.equal({ kind: 'mqtt' });
      expect(listed?.actor).not.to.have.property('id');
    });

    it('when entries of several actions and groups are recorded, then a list is newest first, limited, and only of what it names', async () => {
      await repository().record(entry(0), KEEP);
      await repository().record(
        entry(2 * MINUTE, { object: 'fan_1', actor: { kind: 'engine', id: 'time' } }),
        KEEP,
      );
      await repository().record(entry(1 * MINUTE, { value: 'off', actor: { kind: 'cli' } }), KEEP);
      await repository().record(entry(3 * MINUTE, { group: 'other' }), KEEP);

      const group = await repository().list('gh', undefined, 10);
      expect(group.map((e) => [e.object, e.at.getTime()])).to.deep.equal([
        ['fan_1', at(2 * MINUTE).getTime()],
        ['pump_1', at(MINUTE).getTime()],
        ['pump_1', at(0).getTime()],
      ]);
      expect((await repository().list('gh', 'pump_1', 10)).map((e) => e.value)).to.deep.equal(['off', 'on']);
      expect(await repository().list('gh', undefined, 2)).to.have.length(2);
      expect(await repository().list('gh', 'nothing', 10)).to.deep.equal([]);
      expect(await repository().list('nobody', undefined, 10)).to.deep.equal([]);
      expect(await repository().list('gh', undefined, 0)).to.deep.equal([]);
    });

    it('when entries share an instant, then the later recorded lists first', async () => {
      await repository().record(entry(0, { value: 'on' }), KEEP);
      await repository().record(entry(0, { value: 'off' }), KEEP);
      await repository().record(entry(0, { value: 'on-again' }), KEEP);
      expect((await repository().list('gh', 'pump_1', 10)).map((e) => e.value)).to.deep.equal([
        'on-again',
        'off',
        'on',
      ]);
    });

    it('when more than `keep` entries of an action are recorded, then only its newest `keep` remain, and other actions keep theirs', async () => {
      await repository().record(entry(0, { object: 'fan_1' }), 3);
      for (let i = 0; i < 6; i += 1) await repository().record(entry(i * MINUTE, { value: `v${i}` }), 3);
      expect((await repository().list('gh', 'pump_1', 10)).map((e) => e.value)).to.deep.equal([
        'v5',
        'v4',
        'v3',
      ]);
      expect(await repository().list('gh', 'fan_1', 10)).to.have.length(1);
    });

    it('when an action or a group is deleted, then its entries go and the counts are answered', async () => {
      await repository().record(entry(0), KEEP);
      await repository().record(entry(MINUTE), KEEP);
      await repository().record(entry(0, { object: 'fan_1' }), KEEP);
      await repository().record(entry(0, { group: 'other' }), KEEP);

      expect(await repository().deleteByAction('gh', 'pump_1')).to.equal(2);
      expect((await repository().list('gh', undefined, 10)).map((e) => e.object)).to.deep.equal(['fan_1']);
      expect(await repository().deleteByGroup('gh')).to.equal(1);
      expect(await repository().list('gh', undefined, 10)).to.deep.equal([]);
      expect(await repository().groups()).to.deep.equal(['other']);
      expect(await repository().deleteByGroup('nobody')).to.equal(0);
    });

    it('when entries are restored from another store, then they keep their id and fields, and restoring again adds nothing', async () => {
      const source = [
        await repository().record(entry(0, { group: 'zeta' }), KEEP),
        await repository().record(entry(MINUTE, { group: 'alpha', actor: { kind: 'anonymous' } }), KEEP),
      ];
      await repository().deleteByGroup('zeta');
      await repository().deleteByGroup('alpha');

      for (const copied of [...source, ...source]) await repository().restore(copied);

      expect(await repository().groups()).to.deep.equal(['alpha', 'zeta']);
      expect(await repository().list('zeta', undefined, 10)).to.deep.equal([source[0]]);
      expect(await repository().list('alpha', undefined, 10)).to.deep.equal([source[1]]);
    });
  });
}
