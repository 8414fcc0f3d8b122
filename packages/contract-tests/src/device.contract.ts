import {
  ConflictError,
  type DeviceRepository,
  MAX_ONBOARDINGS_KEPT,
  type NewDevice,
  type PendingSighting,
} from '@hortus/core';
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

    describe('box registry', () => {
      const at = (second: number): Date => new Date(Date.UTC(2025, 5, 15, 12, 0, second));
      const sighting = (
        boxId: string,
        second: number,
        extra: Partial<PendingSighting> = {},
      ): PendingSighting => ({
        boxId,
        address: '192.0.2.7',
        at: at(second),
        ...extra,
      });

      it('when a device is found by its id or by any spelling of its MAC, then the exact id wins, and an unknown one is undefined', async () => {
        const label = await repository().create(device('24:6F:28:AA:00:01'));
        const legacy = await repository().create(device('100aa286f25', 'greenhouse-b'));

        expect((await repository().find('100aa286f24', '246f28aa0001'))?.id).to.equal(label.id);
        expect((await repository().find('whatever', '246f28aa0001'))?.id).to.equal(label.id);
        expect((await repository().find('100aa286f25', undefined))?.id).to.equal(legacy.id);
        expect(await repository().find('100aa286f26', 'ffffffffff02')).to.equal(undefined);
        expect((await repository().list()).map((d) => d.deviceId)).to.deep.equal([
          '24:6F:28:AA:00:01',
          '100aa286f25',
        ]);
      });

      it('when keys are set, then the current and the previous digest find the device, and replacing them forgets the old ones', async () => {
        await repository().create(device('AA:01'));
        expect(
          await repository().setKeys('AA:01', {
            generation: 2,
            currentHash: 'h2',
            previous: { generation: 1, hash: 'h1' },
          }),
        ).to.equal(true);

        expect(await repository().findByKeyHash('h2')).to.deep.include({ current: true });
        expect(await repository().findByKeyHash('h1')).to.deep.include({ current: false });
        expect((await repository().findByKeyHash('h1'))?.device).to.include({
          deviceId: 'AA:01',
          keyGeneration: 2,
          previousKeyGeneration: 1,
        });

        await repository().setKeys('AA:01', { generation: 3, currentHash: 'h3' });

        expect(await repository().findByKeyHash('h1')).to.equal(undefined);
        expect(await repository().findByKeyHash('h2')).to.equal(undefined);
        const found = await repository().findByKeyHash('h3');
        expect(found?.device.keyGeneration).to.equal(3);
        expect(found?.device).not.to.have.property('previousKeyGeneration');
        expect(await repository().setKeys('nobody', { generation: 1, currentHash: 'hx' })).to.equal(false);
      });

      it('when a device is updated and onboards, then the changes are kept, and only the newest onboardings, newest first', async () => {
        await repository().create(device('AA:01'));

        const moved = await repository().update('AA:01', { group: 'greenhouse-b', locked: true });
        for (let second = 0; second < MAX_ONBOARDINGS_KEPT + 2; second += 1) {
          await repository().recordOnboarding(
            'AA:01',
            { at: at(second), address: `192.0.2.${second}` },
            { firmwareVersion: '1.0.4', bootedAt: at(0) },
          );
        }

        expect(moved).to.include({ group: 'greenhouse-b', locked: true });
        const [stored] = await repository().listByGroup('greenhouse-b');
        expect(stored).to.deep.include({
          firmwareVersion: '1.0.4',
          bootedAt: at(0),
          lastSeenAt: at(MAX_ONBOARDINGS_KEPT + 1),
          locked: true,
        });
        expect(stored?.onboardings).to.have.length(MAX_ONBOARDINGS_KEPT);
        expect(stored?.onboardings?.[0]).to.deep.equal({
          at: at(MAX_ONBOARDINGS_KEPT + 1),
          address: `192.0.2.${MAX_ONBOARDINGS_KEPT + 1}`,
        });
        expect(await repository().update('nobody', { locked: false })).to.equal(undefined);
        expect((await repository().update('AA:01', { locked: false }))?.locked ?? false).to.equal(false);
      });

      it('when a locked device is refused from another address, then the move is kept, approved and removed as written, and copied as it is', async () => {
        await repository().create(device('AA:02'));
        const move = { at: at(5), address: '192.0.2.50', from: '192.0.2.1' };

        const refused = await repository().update('AA:02', { locked: true, moveRequest: move });
        const [listed] = await repository().listByGroup(GROUP);
        const found = await repository().find('AA:02', undefined);

        expect(refused?.moveRequest).to.deep.equal(move);
        expect(listed?.moveRequest).to.deep.equal(move);
        expect(found?.moveRequest).to.deep.equal(move);
        const approved = await repository().update('AA:02', { moveRequest: { ...move, approved: true } });
        expect(approved?.moveRequest).to.deep.equal({ ...move, approved: true });
        const [copy] = await repository().listCopies();
        expect(copy?.moveRequest).to.deep.equal({ ...move, approved: true });
        if (copy !== undefined) await repository().restore({ ...copy, moveRequest: move });
        expect((await repository().find('AA:02', undefined))?.moveRequest).to.deep.equal(move);

        await repository().recordOnboarding(
          'AA:02',
          { at: at(6), address: '192.0.2.50' },
          { moveRequest: null },
        );
        const onboarded = await repository().find('AA:02', undefined);
        expect(onboarded).not.to.have.property('moveRequest');
        expect(onboarded).to.include({ locked: true });
        const unlocked = await repository().update('AA:02', { locked: false, moveRequest: null });
        expect(unlocked).not.to.have.property('moveRequest');
      });

      it('when unknown boxes are sighted beyond the cap, then the least recently seen give way, so the newest always shows', async () => {
        await repository().recordPending(sighting('100aa286f24', 1), 2);
        await repository().recordPending(sighting('200aa286f24', 2), 2);
        // Seen again: now the most recent, so 200... is the oldest.
        await repository().recordPending(sighting('100aa286f24', 3), 2);

        expect(await repository().recordPending(sighting('300aa286f24', 4), 2)).to.equal(true);
        expect((await repository().listPending()).map((p) => p.boxId)).to.deep.equal([
          '300aa286f24',
          '100aa286f24',
        ]);
        expect(await repository().recordPending(sighting('400aa286f24', 5), 0)).to.equal(false);
        expect(await repository().listPending()).to.have.length(2);
      });

      it('when pending boxes were last seen before a time, then removing by age takes exactly those', async () => {
        await repository().recordPending(sighting('100aa286f24', 1), 10);
        await repository().recordPending(sighting('200aa286f24', 2), 10);
        await repository().recordPending(sighting('300aa286f24', 3), 10);

        expect(await repository().removePendingSeenBefore(at(3))).to.equal(2);
        expect((await repository().listPending()).map((p) => p.boxId)).to.deep.equal(['300aa286f24']);
        expect(await repository().removePendingSeenBefore(at(3))).to.equal(0);
        expect(await repository().removePendingSeenBefore(new Date(8.64e15))).to.equal(1);
        expect(await repository().listPending()).to.deep.equal([]);
      });

      it('when unknown boxes are sighted, then each is kept once with its first and last sighting, up to the cap, newest first', async () => {
        expect(
          await repository().recordPending(
            sighting('100aa286f24', 1, { firmwareVersion: '1.0.4', mac: '246f28aa0001' }),
            2,
          ),
        ).to.equal(true);
        expect(await repository().recordPending(sighting('200aa286f24', 2), 2)).to.equal(true);
        expect(
          await repository().recordPending(sighting('100aa286f24', 4, { address: '192.0.2.8' }), 2),
        ).to.equal(true);

        const pending = await repository().listPending();

        expect(pending.map((p) => p.boxId)).to.deep.equal(['100aa286f24', '200aa286f24']);
        expect(pending[0]).to.deep.equal({
          boxId: '100aa286f24',
          mac: '246f28aa0001',
          firstSeenAt: at(1),
          lastSeenAt: at(4),
          firmwareVersion: '1.0.4',
          address: '192.0.2.8',
          attempts: 2,
        });
        expect(await repository().removePending('100aa286f24')).to.equal(true);
        expect(await repository().removePending('100aa286f24')).to.equal(false);
        expect((await repository().listPending()).map((p) => p.boxId)).to.deep.equal(['200aa286f24']);
      });
    });
  });
}
