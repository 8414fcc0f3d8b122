import { InvalidInputError, leafVpd, sensorTopics } from '@hortus/core';
import { FakeClock, instance, sharedStore } from './automation-support.js';
import { expect } from './support.js';

const metricsOn = [{ timeZone: 'UTC' }, { metrics: { vpd: true, dewPoint: true, dli: true, light: 'hps' } }];

describe('derived series in the automation engine', () => {
  it('when a box round arrives, then the tick after its window closes (woken, no new reading) stores VPD, dew point, PPFD and DLI', async () => {
    const store = sharedStore();
    const clock = new FakeClock(new Date('2026-06-10T12:00:00Z'));
    const app = instance(store, clock);
    await app.createGroup.execute({ name: 'gh', settings: metricsOn });
    await app.engine.tick();
    await app.record.execute([
      { group: 'gh', topic: sensorTopics.temperature, value: 25, time: '2026-06-10T12:00:05Z' },
      { group: 'gh', topic: sensorTopics.humidity, value: 50, time: '2026-06-10T12:00:06Z' },
      { group: 'gh', topic: sensorTopics.lux, value: 10_000, time: '2026-06-10T12:00:06Z' },
    ]);
    clock.set('2026-06-10T12:00:10Z');
    await app.engine.tick();
    expect(await store.readings.latest('gh', 'esp/derived/vpd')).to.equal(undefined);

    clock.set('2026-06-10T12:03:00Z');
    const woken = await app.engine.tick();
    expect(woken.evaluated).to.deep.equal(['gh']);
    const vpd = await store.readings.latest('gh', 'esp/derived/vpd');
    expect(vpd?.time.toISOString()).to.equal('2026-06-10T12:00:06.000Z');
    expect(vpd?.value).to.be.closeTo(leafVpd(25, 50), 0.001);
    expect((await store.readings.latest('gh', 'esp/derived/dew_point'))?.value).to.be.closeTo(13.85, 0.1);
    expect((await store.readings.latest('gh', 'esp/derived/ppfd'))?.value).to.equal(122);
    expect((await store.readings.latest('gh', 'esp/derived/dli'))?.value).to.equal(0);
  });

  it('when two servers tick over one store, then each derived value is stored once', async () => {
    const store = sharedStore();
    const clock = new FakeClock(new Date('2026-06-10T12:00:00Z'));
    const [one, two] = [instance(store, clock), instance(store, clock)];
    await one.createGroup.execute({ name: 'gh', settings: metricsOn });
    await Promise.all([one.engine.tick(), two.engine.tick()]);
    await one.record.execute([
      { group: 'gh', topic: sensorTopics.temperature, value: 25, time: '2026-06-10T12:00:05Z' },
      { group: 'gh', topic: sensorTopics.humidity, value: 50, time: '2026-06-10T12:00:06Z' },
    ]);
    clock.set('2026-06-10T12:03:00Z');
    await Promise.all([one.engine.tick(), two.engine.tick()]);
    const vpd = await store.readings.newestFirst({ group: 'gh', topic: 'esp/derived/vpd' }, 10);
    expect(vpd).to.have.lengthOf(1);
  });

  it('when a client sends a reading under esp/derived/, then it is refused and nothing is stored', async () => {
    const store = sharedStore();
    const app = instance(store, new FakeClock(new Date('2026-06-10T12:00:00Z')));
    const result = await app.record.execute([{ group: 'gh', topic: 'esp/derived/vpd', value: 1 }]);
    expect(result.accepted).to.equal(0);
    expect(result.rejected[0]?.reason).to.match(/esp\/derived\//u);
    expect(await store.readings.latest('gh', 'esp/derived/vpd')).to.equal(undefined);
  });

  it('when group settings carry a metrics key that is not valid, then the write is refused and the settings are unchanged', async () => {
    const store = sharedStore();
    const app = instance(store, new FakeClock(new Date('2026-06-10T12:00:00Z')));
    await app.createGroup.execute({ name: 'gh', settings: metricsOn });
    for (const metrics of [
      { vpd: 'yes' },
      { light: 'candle' },
      { dayStart: '25:00' },
      { leafOffset: 40 },
      { fan: true },
    ])
      await expect(app.updateSettings.execute({ name: 'gh', settings: [{ metrics }] })).to.be.rejectedWith(
        InvalidInputError,
      );
    await expect(app.createGroup.execute({ name: 'gh2', settings: { metrics: 7 } })).to.be.rejectedWith(
      InvalidInputError,
    );
    // A client that rewrites the settings without the key keeps it.
    await app.updateSettings.execute({ name: 'gh', settings: [{ tempMin: 15 }] });
    expect((await app.getGroup.execute({ name: 'gh' })).settings).to.deep.include(metricsOn[1]);
  });
});
