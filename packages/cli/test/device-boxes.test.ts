import { expect } from 'chai';
import { type Clock, OnboardBox } from '@hortus/core';
import { exitCodes } from '@hortus/cli';
import { type Container } from 'inversify';
import { hortus, type StoreContainer, storeContainer, testStore } from './harness.js';

class FixedClock implements Clock {
  constructor(private current: Date) {}
  now(): Date {
    return new Date(this.current);
  }
  advance(ms: number): void {
    this.current = new Date(this.current.getTime() + ms);
  }
}

describe(`hortus device: the registry of boxes (${testStore} store)`, () => {
  let container: Container;
  let store: StoreContainer;
  let clock: FixedClock;
  beforeEach(async () => {
    clock = new FixedClock(new Date('2025-06-15T12:30:00Z'));
    store = await storeContainer(clock);
    container = store.container;
  });
  afterEach(async () => {
    await store.close();
  });

  const onboard = (deviceId: string): ReturnType<OnboardBox['execute']> =>
    container
      .get(OnboardBox)
      .execute({ deviceId, firmwareVersion: '1.0.4', lastActive: '65000', address: '192.0.2.7' });

  it('when an unknown box tried to onboard, then pending lists it in both forms with the power-cycle advice, and claim registers it', async () => {
    expect((await onboard('100aa286f24')).registered).to.equal(false);

    const pending = await hortus(container, ['device', 'pending']);

    expect(pending.code).to.equal(0);
    expect(pending.stdout).to.match(
      /100aa286f24 +24:6F:28:AA:00:01 +2025-06-15 12:30:00 UTC +2025-06-15 12:30:00 UTC +1 +1\.0\.4 +192\.0\.2\.7/u,
    );
    expect(pending.stdout).to.contain('gives up until it is power-cycled');

    const claimed = await hortus(container, ['device', 'claim', '100aa286f24', '-g', 'gh-1']);

    expect(claimed.code, claimed.stderr).to.equal(0);
    expect(claimed.stdout).to.match(/Device ID: +24:6F:28:AA:00:01/u);
    expect((await onboard('100aa286f24')).registered).to.equal(true);
    expect((await hortus(container, ['device', 'pending'])).stdout).to.equal(
      'No box is waiting to be registered.\n',
    );
  });

  it('when devices onboarded, then list shows every group with both id forms, last seen, firmware, uptime, the last onboarding and silence', async () => {
    await hortus(container, [
      'device',
      'create',
      '24:6F:28:AA:00:01',
      '-g',
      'gh-1',
      '-t',
      'box',
      '--create-group',
    ]);
    await hortus(container, [
      'device',
      'create',
      '24-6f-28-aa-00-02',
      '-g',
      'gh-2',
      '-t',
      'box',
      '--create-group',
    ]);
    await onboard('100aa286f24');
    await onboard('200aa286f24');
    clock.advance(120_000);
    await onboard('200aa286f24');

    const listed = await hortus(container, ['device', 'list', '--json']);
    const table = await hortus(container, ['device', 'list']);

    const devices = JSON.parse(listed.stdout) as {
      deviceId: string;
      boxId: string;
      silent: boolean;
      firmwareVersion: string;
    }[];
    expect(
      devices.map(({ deviceId, boxId, silent, firmwareVersion }) => ({
        deviceId,
        boxId,
        silent,
        firmwareVersion,
      })),
    ).to.deep.equal([
      { deviceId: '24:6F:28:AA:00:01', boxId: '100aa286f24', silent: true, firmwareVersion: '1.0.4' },
      { deviceId: '24-6f-28-aa-00-02', boxId: '200aa286f24', silent: false, firmwareVersion: '1.0.4' },
    ]);
    expect(table.stdout).to.match(
      /24:6F:28:AA:00:01 +100aa286f24 +gh-1 +box +2025-06-15 12:30:00 UTC +1\.0\.4 +1m +2025-06-15 12:30:00 UTC from 192\.0\.2\.7 +silent/u,
    );
    expect(table.stdout).to.match(
      /24:6F:28:AA:00:02 +200aa286f24 +gh-2 +box +2025-06-15 12:32:00 UTC +1\.0\.4 +1m +.+ +ok/u,
    );
  });

  it('when a device is locked, then it may not onboard until unlocked; an unknown id exits 3', async () => {
    await hortus(container, [
      'device',
      'create',
      '246f28aa0001',
      '-g',
      'gh-1',
      '-t',
      'box',
      '--create-group',
    ]);

    expect((await hortus(container, ['device', 'lock', '100aa286f24'])).stdout).to.match(/Locked: +yes/u);
    expect(await onboard('100aa286f24')).to.deep.include({ registered: false, reason: 'locked' });
    expect((await hortus(container, ['device', 'unlock', '24:6F:28:AA:00:01'])).code).to.equal(0);
    expect((await onboard('100aa286f24')).registered).to.equal(true);
    expect((await hortus(container, ['device', 'lock', 'ffffffffffff'])).code).to.equal(exitCodes.notFound);
  });

  it('when a locked device is asked for from another address, then list shows the refused move, approve-move lets it in once, and it stays locked', async () => {
    await hortus(container, [
      'device',
      'create',
      '246f28aa0001',
      '-g',
      'gh-1',
      '-t',
      'box',
      '--create-group',
    ]);
    await onboard('100aa286f24');
    await hortus(container, ['device', 'lock', '100aa286f24']);
    const from = (address: string): ReturnType<OnboardBox['execute']> =>
      container.get(OnboardBox).execute({ deviceId: '100aa286f24', firmwareVersion: '1.0.4', address });

    expect((await onboard('100aa286f24')).registered).to.equal(true);
    expect(await from('198.51.100.4')).to.deep.include({ registered: false, reason: 'locked' });
    const listed = await hortus(container, ['device', 'list']);
    const approved = await hortus(container, ['device', 'approve-move', '24:6F:28:AA:00:01']);

    expect(listed.stdout).to.match(/locked, refused from 198\.51\.100\.4 at 2025-06-15 12:30:00 UTC/u);
    expect(approved.code, approved.stderr).to.equal(0);
    expect(approved.stdout).to.match(/Refused onboarding: +.* from 198\.51\.100\.4 \(approved/u);
    expect((await from('198.51.100.4')).registered).to.equal(true);
    expect((await hortus(container, ['device', 'list'])).stdout).to.match(/ locked\n/u);
    expect((await onboard('100aa286f24')).registered).to.equal(false);
    expect((await hortus(container, ['device', 'approve-move', '24:6F:28:AA:00:09'])).code).to.equal(
      exitCodes.notFound,
    );
  });

  it('when pending boxes are cleared, one by id or all, then the list says how many went', async () => {
    await onboard('100aa286f24');
    await onboard('200aa286f24');
    await onboard('300aa286f24');

    const one = await hortus(container, ['device', 'pending', '--clear', '24:6F:28:AA:00:01']);
    const rest = await hortus(container, ['device', 'pending', '--clear']);

    expect(one.stdout).to.equal('Forgot 1 pending box.\n');
    expect(rest.stdout).to.equal('Forgot 2 pending boxes.\n');
    expect((await hortus(container, ['device', 'pending'])).stdout).to.equal(
      'No box is waiting to be registered.\n',
    );
    expect((await hortus(container, ['device', 'pending', '--clear', 'a0aa286f24'])).code).to.equal(
      exitCodes.notFound,
    );
  });

  it('when a key is rotated, then the list says the old key still works until the next boot; with --revoke it does not', async () => {
    await hortus(container, [
      'device',
      'create',
      '24:6F:28:AA:00:01',
      '-g',
      'gh-1',
      '-t',
      'box',
      '--create-group',
    ]);
    await onboard('100aa286f24');

    const rotated = await hortus(container, ['device', 'rotate-key', '24:6F:28:AA:00:01']);
    const listed = await hortus(container, ['device', 'list', '-g', 'gh-1']);
    const revoked = await hortus(container, ['device', 'rotate-key', '24:6F:28:AA:00:01', '--revoke']);

    expect(rotated.stdout).to.match(/Key generation: +2\nOld key works until: +the box onboards again/u);
    expect(listed.stdout).to.contain('key rotating');
    expect(revoked.stdout).to.match(/Key generation: +3$/mu);
    expect(revoked.stdout).not.to.contain('Old key');
  });

  it('when a box held by another group is claimed, then it is refused without --move and moved with it', async () => {
    await hortus(container, [
      'device',
      'create',
      '24:6F:28:AA:00:01',
      '-g',
      'squatter',
      '-t',
      'box',
      '--create-group',
    ]);

    const refused = await hortus(container, ['device', 'claim', '24:6F:28:AA:00:01', '-g', 'owner']);
    const moved = await hortus(container, ['device', 'claim', '24:6F:28:AA:00:01', '-g', 'owner', '--move']);

    expect(refused.code).to.equal(exitCodes.conflict);
    expect(refused.stderr).to.contain('--move');
    expect(moved.code).to.equal(0);
    expect(moved.stdout).to.match(/Group: +owner/u);
  });
});
