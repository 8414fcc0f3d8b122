import 'reflect-metadata';
import * as chai from 'chai';
import chaiAsPromised from 'chai-as-promised';
import { InvalidInputError, NotFoundError, readBoxAlerts, readTopicRanges } from '@hortus/core';
import { FakeClock, greenhouse, instance, sharedStore } from './automation-support.js';

chai.use(chaiAsPromised);
const { expect } = chai;

const HUMIDITY = 'esp/air/humidity';
const CO2 = 'esp/air/co2';
const MAC = 'a0b1c2d3e4f5';
const OTHER_MAC = 'a0b1c2d3e4f6';
const email = [{ emailNotification: true }, { email: 'grower@example.org' }];

describe('no-data deadlines per topic and per box', () => {
  it('when a topic with a deadline goes quiet, then the tick at its deadline raises one alert, sent out, and a notice when it reports again', async () => {
    const store = sharedStore();
    const clock = new FakeClock(new Date('2026-06-10T12:00:00Z'));
    const server = instance(store, clock);
    await greenhouse(server, [], email);
    await server.setTopicAlert.execute({ group: 'gh', topic: HUMIDITY, noDataMs: 15 * 60_000 });
    await server.record.execute([
      { group: 'gh', topic: HUMIDITY, value: 55 },
      { group: 'gh', topic: CO2, value: 600 },
    ]);
    expect((await server.engine.tick()).alerts).to.have.length(0);

    clock.set('2026-06-10T12:10:00Z');
    await server.record.execute([{ group: 'gh', topic: CO2, value: 610 }]); // the group itself keeps reporting
    expect((await server.engine.tick()).alerts).to.have.length(0);
    clock.set('2026-06-10T12:14:00Z');
    expect((await server.engine.tick()).evaluated, 'nothing due yet').to.deep.equal([]);

    clock.set('2026-06-10T12:15:01Z');
    const silent = await server.engine.tick();
    expect(silent.evaluated).to.deep.equal(['gh']);
    expect(silent.alerts.map((n) => [n.topic, n.message])).to.deep.equal([
      [
        HUMIDITY,
        'No data from esp/air/humidity in group gh for 15 minutes (last 55 % at 2026-06-10 14:00:00 CEST)',
      ],
    ]);
    expect(silent.queued.map((message) => message.event)).to.deep.equal(['no-data']);

    clock.set('2026-06-10T12:20:00Z');
    await server.record.execute([{ group: 'gh', topic: CO2, value: 620 }]);
    expect((await server.engine.tick()).alerts, 'once per outage').to.have.length(0);

    await server.record.execute([{ group: 'gh', topic: HUMIDITY, value: 57 }]);
    const back = await server.engine.tick();
    expect(back.alerts.map((n) => n.message)).to.deep.equal([
      'Data from esp/air/humidity in group gh is arriving again: 57 % at 2026-06-10 14:20:00 CEST',
    ]);
    expect(back.queued.map((message) => message.event)).to.deep.equal(['resolved']);
  });

  it('when a reading is first looked at once it is older than its no-data delay, then it raises only "no data", never a range alert', async () => {
    const store = sharedStore();
    const clock = new FakeClock(new Date('2026-06-10T12:00:00Z'));
    const server = instance(store, clock);
    await greenhouse(server, [], email);
    await server.setTopicAlert.execute({ group: 'gh', topic: HUMIDITY, max: 85, noDataMs: 3 * 60_000 });
    await server.record.execute([{ group: 'gh', topic: HUMIDITY, value: 91 }]);

    // The engine was away (a restore, a restart): the first tick comes 3.5 minutes after the reading.
    clock.set('2026-06-10T12:03:30Z');
    const tick = await server.engine.tick();

    expect(tick.alerts.map((n) => n.message)).to.deep.equal([
      'No data from esp/air/humidity in group gh for 3 minutes (last 91 % at 2026-06-10 14:00:00 CEST)',
    ]);
    expect(tick.queued.map((message) => message.event)).to.deep.equal(['no-data']);
  });

  it('when a topic has only a deadline, then it is kept beside the ranges, and its bounds are left alone', async () => {
    const store = sharedStore();
    const server = instance(store, new FakeClock(new Date('2026-06-10T12:00:00Z')));
    await greenhouse(server, [], [{ tempMax: 30 }]);
    await server.setTopicAlert.execute({ group: 'gh', topic: CO2, max: 1500 });
    const view = await server.setTopicAlert.execute({ group: 'gh', topic: HUMIDITY, noDataMs: 3_600_000 });
    expect(view.range).to.deep.equal({ noDataMs: 3_600_000 });
    const both = await server.setTopicAlert.execute({ group: 'gh', topic: CO2, noDataMs: 600_000 });
    expect(both.range).to.deep.equal({ max: 1500, noDataMs: 600_000 });
    const group = await store.groups.findByName('gh');
    expect([...readTopicRanges(group?.settings)]).to.have.length(2);
    for (const noDataMs of [10_000, 8 * 24 * 3_600_000, 'soon'])
      await expect(
        server.setTopicAlert.execute({ group: 'gh', topic: HUMIDITY, noDataMs }),
      ).to.be.rejectedWith(InvalidInputError);
  });

  it('when a box with a deadline goes quiet, then one alert names it, and a notice follows when it is seen again, though it sends no readings', async () => {
    const store = sharedStore();
    const clock = new FakeClock(new Date('2026-06-10T12:00:00Z'));
    const server = instance(store, clock);
    await greenhouse(server, [], email);
    await store.devices.create({ deviceId: MAC, group: 'gh', type: 'esp32' });
    await store.devices.create({ deviceId: OTHER_MAC, group: 'gh', type: 'esp32' }); // never seen: not judged
    await store.devices.update(MAC, { lastSeenAt: new Date('2026-06-10T12:00:00Z') });
    await server.setBoxAlert.execute({ group: 'gh', deviceId: '*', noDataMs: 5 * 60_000 });
    expect((await server.engine.tick()).alerts).to.have.length(0);

    clock.set('2026-06-10T12:05:01Z');
    const silent = await server.engine.tick();
    expect(silent.evaluated).to.deep.equal(['gh']);
    expect(silent.alerts.map((n) => n.message)).to.deep.equal([
      `No data from box ${MAC} in group gh for 5 minutes (last seen 2026-06-10 14:00:00 CEST)`,
    ]);
    expect(silent.queued.map((message) => message.event)).to.deep.equal(['no-data']);
    clock.set('2026-06-10T12:06:01Z');
    expect((await server.engine.tick()).alerts, 'once per outage').to.have.length(0);

    // It polls its actions again: that writes when it was seen, which the change feed does not carry.
    await store.devices.update(MAC, { lastSeenAt: new Date('2026-06-10T12:06:30Z') });
    clock.set('2026-06-10T12:07:02Z');
    const back = await server.engine.tick();
    expect(back.alerts.map((n) => n.message)).to.deep.equal([`Box ${MAC} in group gh is reporting again`]);
  });

  it("when a box has its own deadline, then it wins over the group's, and removing it leaves the group's", async () => {
    const store = sharedStore();
    const clock = new FakeClock(new Date('2026-06-10T12:00:00Z'));
    const server = instance(store, clock);
    await greenhouse(server, []);
    await store.devices.create({ deviceId: MAC, group: 'gh', type: 'esp32' });
    await store.devices.update(MAC, { lastSeenAt: new Date('2026-06-10T12:00:00Z') });
    await server.setBoxAlert.execute({ group: 'gh', deviceId: '*', noDataMs: 3_600_000 });
    const own = await server.setBoxAlert.execute({ group: 'gh', deviceId: MAC, noDataMs: 120_000 });
    expect(own).to.deep.equal({ group: 'gh', deviceId: MAC, alert: { noDataMs: 120_000 } });
    clock.set('2026-06-10T12:02:01Z');
    expect((await server.engine.tick()).alerts).to.have.length(1);

    const removed = await server.setBoxAlert.execute({ group: 'gh', deviceId: MAC, remove: true });
    expect(removed).to.deep.equal({ group: 'gh', deviceId: MAC });
    const group = await store.groups.findByName('gh');
    expect([...readBoxAlerts(group?.settings).keys()]).to.deep.equal(['*']);
  });

  it('when a box alert names the box by another spelling of its MAC, then the deadline is kept under its registered id and the engine uses it', async () => {
    const store = sharedStore();
    const clock = new FakeClock(new Date('2026-06-10T12:00:00Z'));
    const server = instance(store, clock);
    await greenhouse(server, []);
    await store.devices.create({ deviceId: 'F5:E4:D3:C2:B1:A0', group: 'gh', type: 'esp32' });
    await store.devices.update('F5:E4:D3:C2:B1:A0', { lastSeenAt: new Date('2026-06-10T12:00:00Z') });
    // f5e4d3c2b1a0 is what this box sends itself: its MAC's bytes reversed.
    const set = await server.setBoxAlert.execute({
      group: 'gh',
      deviceId: 'f5e4d3c2b1a0',
      noDataMs: 120_000,
    });
    expect(set).to.deep.equal({ group: 'gh', deviceId: 'F5:E4:D3:C2:B1:A0', alert: { noDataMs: 120_000 } });
    clock.set('2026-06-10T12:02:01Z');
    expect((await server.engine.tick()).alerts).to.have.length(1);
    await server.setBoxAlert.execute({ group: 'gh', deviceId: 'f5-e4-d3-c2-b1-a0', remove: true });
    expect([...readBoxAlerts((await store.groups.findByName('gh'))?.settings).keys()]).to.deep.equal([]);
  });

  it('when a box alert names a box of another group or a bad deadline, then it is refused', async () => {
    const store = sharedStore();
    const server = instance(store, new FakeClock(new Date('2026-06-10T12:00:00Z')));
    await greenhouse(server, []);
    await server.createGroup.execute({ name: 'other' });
    await store.devices.create({ deviceId: MAC, group: 'other', type: 'esp32' });
    await expect(
      server.setBoxAlert.execute({ group: 'gh', deviceId: MAC, noDataMs: 600_000 }),
    ).to.be.rejectedWith(NotFoundError, `No device ${MAC} in group gh`);
    await expect(
      server.setBoxAlert.execute({ group: 'gh', deviceId: '*', noDataMs: 1000 }),
    ).to.be.rejectedWith(InvalidInputError);
    expect((await store.groups.findByName('gh'))?.settings).to.deep.equal([]);
  });
});
