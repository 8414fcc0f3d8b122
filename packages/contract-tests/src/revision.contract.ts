import { type NewAction, type NewGroup, type NewReading, type Repositories } from '@hortus/core';
import { at, expect, freshStorePerTest, MINUTE, type StoreFactory } from './store.js';

const GROUP = 'greenhouse-a';
const OTHER = 'greenhouse-b';

function reading(group: string, offsetMs: number, value = 20): NewReading {
  return { group, topic: 'esp/air/temperature', value, time: at(offsetMs) };
}

function action(group: string, object = 'pump_1'): NewAction {
  return { group, object, value: 'off', automations: [] };
}

function group(name: string): NewGroup {
  return { name, package: 'small', employee: [], settings: [] };
}

type Subject = 'readings' | 'actions' | 'groups';
type RevisionStore = Pick<Repositories, Subject>;

/** Transports quote a revision into an ETag: visible ASCII without the double quote. */
const quotable = /^[\x21\x23-\x7e]+$/u;

export function revisionContract(name: string, createStore: StoreFactory<Subject>): void {
  describe(`${name}: revision contract (readings, actions, groups)`, () => {
    const store = freshStorePerTest(createStore);
    const revisions = (of: RevisionStore = store(), name = GROUP): Promise<string[]> =>
      Promise.all([of.readings.revision(name), of.actions.revision(name), of.groups.revision(name)]);

    it('when nothing was written, then each repository answers a revision that can be quoted, and the same one again', async () => {
      const first = await revisions();

      expect(first.every((revision) => quotable.test(revision))).to.equal(true);
      expect(await revisions()).to.deep.equal(first);
    });

    it('when a new reading of the group is stored, then its readings revision changes and the others do not', async () => {
      const [readings, actions, groups] = await revisions();

      await store().readings.add([reading(GROUP, 0)]);

      const after = await revisions();
      expect(after[0]).to.not.equal(readings);
      expect(after[0]).to.match(quotable);
      expect(after.slice(1)).to.deep.equal([actions, groups]);
    });

    it('when an action is created, its value set or its automations replaced, then the actions revision changes each time', async () => {
      const seen = [await store().actions.revision(GROUP)];

      await store().actions.create(action(GROUP));
      seen.push(await store().actions.revision(GROUP));
      await store().actions.setValue(GROUP, 'pump_1', 'on');
      seen.push(await store().actions.revision(GROUP));
      await store().actions.setAutomations(GROUP, 'pump_1', [{ timeAutomations: [], sensorAutomations: [] }]);
      seen.push(await store().actions.revision(GROUP));

      expect(new Set(seen).size).to.equal(4);
      expect(seen.every((revision) => quotable.test(revision))).to.equal(true);
    });

    it('when a group is created or its settings replaced, then its revision changes each time', async () => {
      const seen = [await store().groups.revision(GROUP)];

      await store().groups.create(group(GROUP));
      seen.push(await store().groups.revision(GROUP));
      await store().groups.replaceSettings(GROUP, [{ tempMin: 12 }]);
      seen.push(await store().groups.revision(GROUP));

      expect(new Set(seen).size).to.equal(3);
    });

    it('when only reads happen, then no revision changes', async () => {
      await store().readings.add([reading(GROUP, 0)]);
      await store().actions.create(action(GROUP));
      await store().groups.create(group(GROUP));
      const before = await revisions();

      await store().readings.latestOfEveryTopic(GROUP);
      await store().readings.newestFirst({ group: GROUP, topic: 'esp/air/temperature' }, 10);
      await store().readings.aggregate({ group: GROUP, topic: 'esp/air/temperature' }, MINUTE);
      await store().actions.listByGroup(GROUP);
      await store().actions.find(GROUP, 'pump_1');
      await store().groups.findByName(GROUP);
      await store().groups.list();

      expect(await revisions()).to.deep.equal(before);
    });

    it('when another group is written, then the revisions of this group do not change', async () => {
      await store().groups.create(group(GROUP));
      const before = await revisions();

      await store().readings.add([reading(OTHER, 0)]);
      await store().actions.create(action(OTHER));
      await store().actions.setValue(OTHER, 'pump_1', 'on');
      await store().groups.create(group(OTHER));
      await store().groups.replaceSettings(OTHER, []);

      expect(await revisions()).to.deep.equal(before);
    });

    it('when concurrent writes change the group, then the revision after them differs from every revision seen before', async () => {
      const seen = new Set(await revisions());

      await Promise.all([
        ...Array.from({ length: 5 }, (_, i) => store().readings.add([reading(GROUP, i * MINUTE)])),
        ...['pump_1', 'led_1', 'ventilator_1'].map((object) => store().actions.create(action(GROUP, object))),
      ]);

      const [readings, actions] = await revisions();
      expect(seen.has(readings as string)).to.equal(false);
      expect(seen.has(actions as string)).to.equal(false);
    });

    it('when a store starts afresh and sees the same writes, then it never answers a revision the first one answered', async () => {
      const write = async (target: RevisionStore): Promise<string[]> => {
        await target.readings.add([reading(GROUP, 0)]);
        await target.actions.create(action(GROUP));
        await target.groups.create(group(GROUP));
        return revisions(target);
      };
      const first = await write(store());
      const second = await createStore();
      try {
        const again = await write(second);
        expect(again.filter((revision) => first.includes(revision))).to.deep.equal([]);
      } finally {
        await second.dispose?.();
      }
    });
  });
}
