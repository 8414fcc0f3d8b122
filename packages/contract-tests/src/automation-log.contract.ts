import { type AutomationLogRepository, type NewAutomationEvent } from '@hortus/core';
import { at, expect, expectPlainEntity, freshStorePerTest, MINUTE, type StoreFactory } from './store.js';

function event(offsetMs: number, value = 'on', group = 'gh'): NewAutomationEvent {
  return {
    group,
    object: 'pump_1',
    value,
    previousValue: value === 'on' ? 'off' : 'on',
    at: at(offsetMs),
    trigger: 'time',
    rule: '06:30 every day -> on',
  };
}

export function automationLogRepositoryContract(
  name: string,
  createStore: StoreFactory<'automationLog'>,
): void {
  describe(`${name}: AutomationLogRepository contract`, () => {
    const store = freshStorePerTest(createStore);
    const repository = (): AutomationLogRepository => store().automationLog;

    it('when an event is recorded, then it is plain data with an id and listed for its group', async () => {
      const recorded = await repository().record({
        ...event(0),
        trigger: 'sensor',
        reading: { topic: 'esp/air/temperature', value: 28.5, time: at(-MINUTE) },
      });
      expectPlainEntity(recorded);
      const listed = await repository().listByGroup('gh', 10);
      expect(listed).to.deep.equal([recorded]);
      expect(listed[0]?.reading?.time.getTime()).to.equal(at(-MINUTE).getTime());
      expect(listed[0]?.at).to.be.an.instanceOf(Date);
    });

    it('when several events are recorded, then they list newest first, limited, and only for their group', async () => {
      for (let i = 0; i < 5; i += 1) await repository().record(event(i * MINUTE, i % 2 === 0 ? 'on' : 'off'));
      await repository().record(event(0, 'on', 'other'));
      const listed = await repository().listByGroup('gh', 3);
      expect(listed.map((e) => e.at.getTime())).to.deep.equal([4, 3, 2].map((i) => at(i * MINUTE).getTime()));
      expect(await repository().listByGroup('nobody', 10)).to.deep.equal([]);
      expect(await repository().listByGroup('gh', 0)).to.deep.equal([]);
    });

    it('when an event without a reading is recorded, then it has no reading, slot or late field', async () => {
      await repository().record(event(0));
      const [listed] = await repository().listByGroup('gh', 1);
      expect(listed).not.to.have.property('reading');
      expect(listed).not.to.have.property('slot');
      expect(listed).not.to.have.property('late');
    });

    it('when a late time-rule switch is recorded, then its slot and the late mark come back', async () => {
      const recorded = await repository().record({ ...event(0), slot: at(-70 * MINUTE), late: true });
      expectPlainEntity(recorded);
      const [listed] = await repository().listByGroup('gh', 1);
      expect(listed).to.deep.equal(recorded);
      expect(listed?.slot?.getTime()).to.equal(at(-70 * MINUTE).getTime());
      expect(listed?.late).to.equal(true);
    });

    it('when the events of a group are deleted, then it answers how many and other groups keep theirs', async () => {
      await repository().record(event(0));
      await repository().record(event(1000, 'off'));
      await repository().record(event(0, 'on', 'other'));

      expect(await repository().deleteByGroup('gh')).to.equal(2);

      expect(await repository().listByGroup('gh', 10)).to.deep.equal([]);
      expect(await repository().listByGroup('other', 10)).to.have.length(1);
    });
  });
}
