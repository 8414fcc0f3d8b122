import {
  type Action,
  type ActionRepository,
  type AutomationSet,
  ConflictError,
  type Lockout,
  type NewAction,
} from '@hortus/core';
import { expect, expectPlainEntity, freshStorePerTest, type StoreFactory } from './store.js';

const GROUP = 'greenhouse-a';

function rules(): AutomationSet[] {
  return [
    {
      timeAutomations: [{ action: 'on', time: '06:30', frequency: 'weekdays' }],
      sensorAutomations: [{ action: 'off', sensor: 'temperature', condition: 'above', value: '28' }],
    },
  ];
}

function action(object: string, group = GROUP): NewAction {
  return { group, object, value: 'off', automations: rules() };
}

/** The fields a client sees, without the store-assigned id. */
function withoutId({ id: _id, ...fields }: Action): Omit<Action, 'id'> {
  return fields;
}

export function actionRepositoryContract(name: string, createStore: StoreFactory<'actions'>): void {
  describe(`${name}: ActionRepository contract`, () => {
    const store = freshStorePerTest(createStore);
    const repository = (): ActionRepository => store().actions;

    describe('create and find', () => {
      it('when an action is created, then it answers plain data with an id and find answers the same', async () => {
        const created = await repository().create(action('pump_1'));

        expectPlainEntity(created);
        expect(withoutId(created)).to.deep.equal(action('pump_1'));
        expect(await repository().find(GROUP, 'pump_1')).to.deep.equal(created);
      });

      it('when the group already has an action of that object name, then creating it again is a conflict', async () => {
        await repository().create(action('pump_1'));

        await expect(repository().create({ ...action('pump_1'), value: 'on' })).to.be.rejectedWith(
          ConflictError,
        );
        expect((await repository().find(GROUP, 'pump_1'))?.value).to.equal('off');
      });

      it('when two concurrent calls create the same action, then exactly one succeeds and the other conflicts', async () => {
        const outcomes = await Promise.allSettled([
          repository().create(action('pump_1')),
          repository().create(action('pump_1')),
        ]);

        expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).to.have.lengthOf(1);
        const failure = outcomes.find((outcome) => outcome.status === 'rejected');
        expect(failure?.reason).to.be.an.instanceOf(ConflictError);
        expect(await repository().listByGroup(GROUP)).to.have.lengthOf(1);
      });

      it('when another group has an action of the same object name, then both exist with distinct ids', async () => {
        const first = await repository().create(action('pump_1'));
        const second = await repository().create(action('pump_1', 'greenhouse-b'));

        expect(first.id).to.not.equal(second.id);
        expect((await repository().find('greenhouse-b', 'pump_1'))?.id).to.equal(second.id);
      });

      it('when no action matches group and object, then find answers undefined', async () => {
        await repository().create(action('pump_1'));

        expect(await repository().find(GROUP, 'led_1')).to.equal(undefined);
        expect(await repository().find('greenhouse-b', 'pump_1')).to.equal(undefined);
      });

      it('when the caller changes its input or an answer, then the stored action is unchanged', async () => {
        const input = action('pump_1');
        const created = await repository().create(input);

        (input.automations as AutomationSet[]).push({ timeAutomations: [], sensorAutomations: [] });
        (created.automations[0]?.timeAutomations as unknown[]).length = 0;
        const found = (await repository().find(GROUP, 'pump_1')) as Action;
        (found.automations[0]?.sensorAutomations[0] as { value: string }).value = '99';

        expect((await repository().find(GROUP, 'pump_1'))?.automations).to.deep.equal(rules());
      });
    });

    describe('listByGroup', () => {
      it('when the group has actions, then it answers all of them ordered by object name and no others', async () => {
        for (const object of ['ventilator_2', 'led_1', 'pump_1', 'ventilator_1'])
          await repository().create(action(object));
        await repository().create(action('aaa_1', 'greenhouse-b'));

        const found = await repository().listByGroup(GROUP);

        expect(found.map((a) => a.object)).to.deep.equal(['led_1', 'pump_1', 'ventilator_1', 'ventilator_2']);
        expect(found.every((a) => a.group === GROUP)).to.equal(true);
      });

      it('when the group has no actions, then it answers an empty list', async () => {
        await repository().create(action('pump_1', 'greenhouse-b'));

        expect(await repository().listByGroup(GROUP)).to.deep.equal([]);
      });
    });

    describe('setValue', () => {
      it('when the action exists, then it answers the updated action and the value is stored', async () => {
        const created = await repository().create(action('pump_1'));

        const updated = await repository().setValue(GROUP, 'pump_1', 'on');

        expect(updated).to.deep.equal({ ...created, value: 'on' });
        expect(await repository().find(GROUP, 'pump_1')).to.deep.equal(updated);
      });

      it('when no action matches, then it answers undefined and creates nothing', async () => {
        await repository().create(action('pump_1'));

        expect(await repository().setValue(GROUP, 'led_1', 'on')).to.equal(undefined);
        expect(await repository().setValue('greenhouse-b', 'pump_1', 'on')).to.equal(undefined);
        expect(await repository().listByGroup(GROUP)).to.have.lengthOf(1);
        expect(await repository().listByGroup('greenhouse-b')).to.deep.equal([]);
      });

      it('when different actions are set concurrently, then every value lands', async () => {
        const objects = ['pump_1', 'led_1', 'ventilator_1', 'ventilator_2'];
        for (const object of objects) await repository().create(action(object));

        await Promise.all(objects.map((object) => repository().setValue(GROUP, object, `on-${object}`)));

        const found = await repository().listByGroup(GROUP);
        expect(found.map((a) => [a.object, a.value])).to.deep.equal(
          [...objects].sort().map((object) => [object, `on-${object}`]),
        );
      });

      it('when the value is set, then the automations are kept', async () => {
        await repository().create(action('pump_1'));

        await repository().setValue(GROUP, 'pump_1', 'on');

        expect((await repository().find(GROUP, 'pump_1'))?.automations).to.deep.equal(rules());
      });
    });

    describe('setAutomations', () => {
      it('when the action exists, then the automations are replaced as a whole and the value kept', async () => {
        await repository().create({ ...action('pump_1'), value: 'on' });
        const replacement: AutomationSet[] = [
          {
            timeAutomations: [],
            sensorAutomations: [{ action: 'on', sensor: 'water', condition: 'less than', value: '10' }],
          },
        ];

        const updated = await repository().setAutomations(GROUP, 'pump_1', replacement);

        expect(updated?.automations).to.deep.equal(replacement);
        expect(updated?.value).to.equal('on');
        expect((await repository().find(GROUP, 'pump_1'))?.automations).to.deep.equal(replacement);
      });

      it('when the automations are replaced by an empty list, then the action keeps none', async () => {
        await repository().create(action('pump_1'));

        await repository().setAutomations(GROUP, 'pump_1', []);

        expect((await repository().find(GROUP, 'pump_1'))?.automations).to.deep.equal([]);
      });

      it('when no action matches, then it answers undefined and creates nothing', async () => {
        expect(await repository().setAutomations(GROUP, 'pump_1', rules())).to.equal(undefined);
        expect(await repository().find(GROUP, 'pump_1')).to.equal(undefined);
      });
    });

    describe('setLockouts', () => {
      const lockouts: Lockout[] = [
        { id: 1, topic: 'esp/air/temperature', condition: 'below', value: -2.5 },
        { id: 2, while: 'ventilator_1', is: 'on' },
      ];

      it('when an action is created, then it has no lockouts (the field is absent)', async () => {
        const created = await repository().create(action('pump_1'));

        expect(created).not.to.have.property('lockouts');
        expect(await repository().find(GROUP, 'pump_1')).not.to.have.property('lockouts');
      });

      it('when lockouts are set, then find and listByGroup answer them as given, value and automations kept, and the revision moves', async () => {
        await repository().create({ ...action('pump_1'), value: 'on' });
        const before = await repository().revision(GROUP);

        const updated = await repository().setLockouts(GROUP, 'pump_1', lockouts);

        expect(updated?.lockouts).to.deep.equal(lockouts);
        expectPlainEntity(updated as Action);
        const found = await repository().find(GROUP, 'pump_1');
        expect(found).to.deep.equal(updated);
        expect(found?.value).to.equal('on');
        expect(found?.automations).to.deep.equal(rules());
        expect((await repository().listByGroup(GROUP))[0]?.lockouts).to.deep.equal(lockouts);
        expect(await repository().revision(GROUP)).not.to.equal(before);
      });

      it('when the value or the automations change, then the lockouts are kept', async () => {
        await repository().create(action('pump_1'));
        await repository().setLockouts(GROUP, 'pump_1', lockouts);

        await repository().setValue(GROUP, 'pump_1', 'on');
        await repository().setAutomations(GROUP, 'pump_1', []);

        expect((await repository().find(GROUP, 'pump_1'))?.lockouts).to.deep.equal(lockouts);
      });

      it('when the lockouts are replaced by an empty list, then the action has none (the field is absent)', async () => {
        await repository().create(action('pump_1'));
        await repository().setLockouts(GROUP, 'pump_1', lockouts);

        const updated = await repository().setLockouts(GROUP, 'pump_1', []);

        expect(updated).not.to.have.property('lockouts');
        expect(await repository().find(GROUP, 'pump_1')).not.to.have.property('lockouts');
      });

      it('when no action matches, then it answers undefined and creates nothing', async () => {
        expect(await repository().setLockouts(GROUP, 'pump_1', lockouts)).to.equal(undefined);
        expect(await repository().find(GROUP, 'pump_1')).to.equal(undefined);
      });

      it('when the action is deleted and created again, then the new one has no lockouts', async () => {
        await repository().create(action('pump_1'));
        await repository().setLockouts(GROUP, 'pump_1', lockouts);
        await repository().delete(GROUP, 'pump_1');

        expect(await repository().create(action('pump_1'))).not.to.have.property('lockouts');
        expect(await repository().find(GROUP, 'pump_1')).not.to.have.property('lockouts');
      });
    });

    describe('groupRevisions', () => {
      it('when actions of two groups are created and one changes, then both are listed and only that revision moves', async () => {
        expect([...(await repository().groupRevisions()).keys()]).to.deep.equal([]);
        await repository().create(action('pump_1'));
        await repository().create(action('fan_1', 'greenhouse-b'));
        const before = await repository().groupRevisions();
        expect([...before.keys()].sort()).to.deep.equal([GROUP, 'greenhouse-b']);
        expect(before.get(GROUP)).to.equal(await repository().revision(GROUP));

        await repository().setValue(GROUP, 'pump_1', 'on');

        const after = await repository().groupRevisions();
        expect(after.get(GROUP)).to.not.equal(before.get(GROUP));
        expect(after.get('greenhouse-b')).to.equal(before.get('greenhouse-b'));
        expect(after.get(GROUP)).to.equal(await repository().revision(GROUP));
      });
    });

    describe('delete', () => {
      it('when an action is deleted, then it is gone, the revision moves, and a second delete answers false', async () => {
        await repository().create(action('pump_1'));
        await repository().create(action('fan_1'));
        const before = await repository().revision(GROUP);

        expect(await repository().delete(GROUP, 'pump_1')).to.equal(true);
        expect(await repository().delete(GROUP, 'pump_1')).to.equal(false);

        expect((await repository().listByGroup(GROUP)).map((a) => a.object)).to.deep.equal(['fan_1']);
        expect(await repository().revision(GROUP)).to.not.equal(before);
        await repository().create(action('pump_1'));
      });

      it('when every action of a group is deleted, then it answers how many and the group stays in groupRevisions', async () => {
        await repository().create(action('pump_1'));
        await repository().create(action('fan_1'));
        await repository().create(action('pump_1', 'greenhouse-b'));
        const before = await repository().groupRevisions();

        expect(await repository().deleteByGroup(GROUP)).to.equal(2);
        expect(await repository().deleteByGroup(GROUP)).to.equal(0);

        expect(await repository().listByGroup(GROUP)).to.deep.equal([]);
        expect(await repository().listByGroup('greenhouse-b')).to.have.length(1);
        const after = await repository().groupRevisions();
        expect(after.has(GROUP)).to.equal(true);
        expect(after.get(GROUP)).to.not.equal(before.get(GROUP));
      });
    });
  });
}
