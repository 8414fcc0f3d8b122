import { expect } from 'chai';
import { type Clock, DEVICE_REPOSITORY, type DeviceRepository, EvaluateAlerts } from '@hortus/core';
import { type Container } from 'inversify';
import { hortus, type StoreContainer, storeContainer, testStore } from './harness.js';

class MovableClock implements Clock {
  constructor(private current: Date) {}
  now(): Date {
    return new Date(this.current);
  }
  advance(ms: number): void {
    this.current = new Date(this.current.getTime() + ms);
  }
}

describe(`hortus notifications: the power-cut alert (${testStore} store)`, () => {
  let container: Container;
  let store: StoreContainer;
  let clock: MovableClock;
  beforeEach(async () => {
    // The container is the server that has just started: its start is this clock's now.
    clock = new MovableClock(new Date('2025-06-15T12:30:00Z'));
    store = await storeContainer(clock);
    container = store.container;
  });
  afterEach(async () => {
    await store.close();
  });

  it('when boxes seen before the start stay silent past the grace, then notifications list shows one warning naming them, and it can be acknowledged', async () => {
    for (const box of ['a0b1c2d3e4f5', '24:6F:28:AA:00:02'])
      expect(
        (await hortus(container, ['device', 'create', box, '-g', 'gh', '--type', 'esp32', '--create-group']))
          .code,
      ).to.equal(0);
    const devices = container.get<DeviceRepository>(DEVICE_REPOSITORY);
    for (const box of ['a0b1c2d3e4f5', '24:6F:28:AA:00:02'])
      await devices.update(box, { lastSeenAt: new Date('2025-06-15T12:29:40Z') });
    clock.advance(10 * 60_000 + 1);
    expect(await container.get(EvaluateAlerts).execute()).to.have.lengthOf(1);

    const listed = await hortus(container, ['notifications', 'list', '-g', 'gh']);
    expect(listed.code).to.equal(0);
    const rows = listed.stdout.trimEnd().split('\n');
    expect(rows).to.have.lengthOf(2);
    expect(rows[1]).to.match(/ warning +2 boxes of group gh have sent nothing since the server started/u);
    expect(rows[1]).to.contain('24:6F:28:AA:00:02, a0b1c2d3e4f5 (MAC A0:B1:C2:D3:E4:F5). Power-cycle them');

    const [alert] = JSON.parse(
      (await hortus(container, ['notifications', 'list', '-g', 'gh', '--json'])).stdout,
    ) as {
      id: string;
    }[];
    expect((await hortus(container, ['notifications', 'ack', alert?.id ?? '', '-g', 'gh'])).code).to.equal(0);
    clock.advance(60_000);
    expect(await container.get(EvaluateAlerts).execute(), 'acknowledged, not raised again').to.deep.equal([]);
  });
});
