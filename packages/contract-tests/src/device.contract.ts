import { ConflictError, type DeviceRepository, type NewDevice } from '@hortus/core';
import { expect, expectPlainEntity, freshStorePerTest, type StoreFactory } from './store.js';

const GROUP = 'greenhouse-a';

function device(deviceId: string, group = GROUP, type = 'sensor-box'): NewDevice {
  return { deviceId, group, type };
}

export function deviceRepositoryContract(name: string, createStore: StoreFactory<'devices'>): void {
  describe(`${name}: DeviceRepository contract`, () => {
    const store = freshStorePerTest(createStore);
    const repository = (): DeviceRepository => store().devices;

    it('when a device is created, then it answers plain data with an id and the group lists it', async () => {
      const created = await repository().create(device('24:6F:28:AA:00:01'));

      expectPlainEntity(created);
      expect(created).to.include(device('24:6F:28:AA:00:01'));
      expect(await repository().listByGroup(GROUP)).to.deep.equal([created]);
    });

    it('when a device with that deviceId exists, even in another group, then creating it is a conflict', async () => {
      await repository().create(device('24:6F:28:AA:00:01'));

      await expect(
        repository().create(device('24:6F:28:AA:00:01', 'greenhouse-b', 'relay-box')),
      ).to.be.rejectedWith(ConflictError);
      expect(await repository().listByGroup('greenhouse-b')).to.deep.equal([]);
    });

    it('when three concurrent calls create the same deviceId, then exactly one succeeds and the others conflict', async () => {
      const outcomes = await Promise.allSettled(
        ['greenhouse-a', 'greenhouse-b', 'greenhouse-c'].map((group) =>
          repository().create(device('AB:CD', group)),
        ),
      );

      expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).to.have.lengthOf(1);
      for (const outcome of outcomes) {
        if (outcome.status === 'rejected') expect(outcome.reason).to.be.an.instanceOf(ConflictError);
      }
    });

    it('when the group has devices, then it lists them ordered by deviceId and no others', async () => {
      for (const id of ['C0:00', 'A0:00', 'B0:00']) await repository().create(device(id));
      await repository().create(device('00:00', 'greenhouse-b'));

      const found = await repository().listByGroup(GROUP);

      expect(found.map((d) => d.deviceId)).to.deep.equal(['A0:00', 'B0:00', 'C0:00']);
      expect(new Set(found.map((d) => d.id)).size).to.equal(3);
    });

    it('when the group has no devices, then it lists nothing', async () => {
      await repository().create(device('A0:00', 'greenhouse-b'));

      expect(await repository().listByGroup(GROUP)).to.deep.equal([]);
    });

    it('when the caller mutates an answer, then the stored device is unchanged', async () => {
      const created = await repository().create(device('A0:00'));

      (created as { type: string }).type = 'changed';
      const [listed] = await repository().listByGroup(GROUP);
      (listed as { group: string }).group = 'elsewhere';

      expect((await repository().listByGroup(GROUP))[0]).to.include({ type: 'sensor-box', group: GROUP });
    });

    it('when a device is deleted, then only that one goes, only from its own group, and a second delete answers false', async () => {
      await repository().create(device('AA:01'));
      await repository().create(device('AA:02'));
      await repository().create(device('BB:01', 'greenhouse-b'));

      expect(await repository().delete('greenhouse-b', 'AA:01')).to.equal(false);
      expect(await repository().delete(GROUP, 'AA:01')).to.equal(true);
      expect(await repository().delete(GROUP, 'AA:01')).to.equal(false);

      expect((await repository().listByGroup(GROUP)).map((d) => d.deviceId)).to.deep.equal(['AA:02']);
      // The id is free again.
      await repository().create(device('AA:01', 'greenhouse-b'));
    });

    it('when the devices of a group are deleted, then it answers how many and other groups keep theirs', async () => {
      await repository().create(device('AA:01'));
      await repository().create(device('AA:02'));
      await repository().create(device('BB:01', 'greenhouse-b'));

      expect(await repository().deleteByGroup(GROUP)).to.equal(2);
      expect(await repository().deleteByGroup(GROUP)).to.equal(0);

      expect(await repository().listByGroup(GROUP)).to.deep.equal([]);
      expect(await repository().listByGroup('greenhouse-b')).to.have.length(1);
    });
  });
}
