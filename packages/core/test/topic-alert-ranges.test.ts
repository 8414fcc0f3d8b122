import * as chai from 'chai';
import chaiAsPromised from 'chai-as-promised';
import { InvalidInputError, NotFoundError, WakeUps } from '@hortus/core';
import { FakeClock, instance, sharedStore } from './automation-support.js';

chai.use(chaiAsPromised);
const { expect } = chai;

const HUMIDITY = 'esp/air/humidity';
const CO2 = 'esp/air/co2';
const TEMPERATURE = 'esp/air/temperature';

/** One instance over its own memory store, with the calls these cases make on group gh. */
function app(clock: FakeClock) {
  const server = instance(sharedStore(), clock, 'UTC');
  return {
    createGroup: server.createGroup,
    getGroup: server.getGroup,
    setAlert: server.setTopicAlert,
    engine: server.engine,
    /** Records one reading at the clock's time. */
    reading: async (topic: string, value: number) => server.record.execute([{ group: 'gh', topic, value }]),
    /** Evaluates the group at the clock's time: the messages raised, and when it asks to be woken. */
    evaluate: async () => {
      const wake = new WakeUps();
      const group = await server.getGroup.execute({ name: 'gh' });
      const outcome = await server.alerts.evaluateGroup(group, clock.now(), wake);
      return { messages: outcome.raised.map((n) => n.message), wakeAt: wake.earliest };
    },
  };
}

describe('Alert ranges for any topic', () => {
  it('when a topic has its own range, then leaving it opens one alert, and it ends only once back inside by the hysteresis', async () => {
    const clock = new FakeClock(new Date('2026-06-10T12:00:00Z'));
    const hortus = app(clock);
    await hortus.createGroup.execute({ name: 'gh', settings: [{ tempMax: 30 }] });
    await hortus.setAlert.execute({ group: 'gh', topic: HUMIDITY, min: 40, max: 80, hysteresis: 5 });

    await hortus.reading(HUMIDITY, 91);
    expect((await hortus.evaluate()).messages).to.deep.equal([
      `${HUMIDITY} is above its maximum of 80 %: 91 % at 2026-06-10 12:00:00 UTC`,
    ]);
    clock.set('2026-06-10T12:00:10Z');
    await hortus.reading(HUMIDITY, 78);
    expect((await hortus.evaluate()).messages, 'inside, but not by 5: still open').to.deep.equal([]);
    clock.set('2026-06-10T12:00:20Z');
    await hortus.reading(HUMIDITY, 75);
    expect((await hortus.evaluate()).messages).to.deep.equal([
      `${HUMIDITY} is back in range: 75 % at 2026-06-10 12:00:20 UTC`,
    ]);

    clock.set('2026-06-10T12:00:30Z');
    await hortus.reading(HUMIDITY, 39);
    expect((await hortus.evaluate()).messages).to.deep.equal([
      `${HUMIDITY} is below its minimum of 40 %: 39 % at 2026-06-10 12:00:30 UTC`,
    ]);
    clock.set('2026-06-10T12:00:40Z');
    await hortus.reading(HUMIDITY, 44.9);
    expect((await hortus.evaluate()).messages).to.deep.equal([]);
    clock.set('2026-06-10T12:00:50Z');
    await hortus.reading(HUMIDITY, 45);
    expect((await hortus.evaluate()).messages).to.deep.equal([
      `${HUMIDITY} is back in range: 45 % at 2026-06-10 12:00:50 UTC`,
    ]);
  });

  it('when a range has a delay, then the alert opens only once the value has stayed outside that long, and the group asks to be woken then', async () => {
    const clock = new FakeClock(new Date('2026-06-10T12:00:00Z'));
    const hortus = app(clock);
    await hortus.createGroup.execute({ name: 'gh', settings: [] });
    await hortus.setAlert.execute({ group: 'gh', topic: CO2, max: 1500, delayMs: 5 * 60_000 });

    await hortus.reading(CO2, 1800);
    const first = await hortus.evaluate();
    expect(first.messages).to.deep.equal([]);
    expect(first.wakeAt).to.equal(Date.parse('2026-06-10T12:05:00Z'));

    clock.set('2026-06-10T12:04:59Z');
    await hortus.reading(CO2, 1750);
    expect((await hortus.evaluate()).messages, 'a second short of the delay').to.deep.equal([]);

    clock.set('2026-06-10T12:05:00Z');
    expect((await hortus.evaluate()).messages).to.deep.equal([
      `${CO2} is above its maximum of 1500: 1750 at 2026-06-10 12:04:59 UTC`,
    ]);
    clock.set('2026-06-10T12:06:00Z');
    expect((await hortus.evaluate()).messages, 'open once, not again').to.deep.equal([]);
  });

  it('when the engine ticks, then a delayed alert opens at the tick after the delay, with no new reading', async () => {
    const clock = new FakeClock(new Date('2026-06-10T12:00:00Z'));
    const hortus = app(clock);
    await hortus.createGroup.execute({ name: 'gh', settings: [] });
    await hortus.setAlert.execute({ group: 'gh', topic: CO2, max: 1500, delayMs: 2 * 60_000 });
    await hortus.reading(CO2, 1800);
    expect((await hortus.engine.tick()).alerts).to.have.length(0);
    clock.set('2026-06-10T12:01:00Z');
    expect((await hortus.engine.tick()).alerts).to.have.length(0);
    clock.set('2026-06-10T12:02:00Z');
    expect((await hortus.engine.tick()).alerts.map((n) => n.message)).to.deep.equal([
      `${CO2} is above its maximum of 1500: 1800 at 2026-06-10 12:00:00 UTC`,
    ]);
  });

  it('when the value comes back inside before the delay is over, then no alert opens, and a new breach waits the whole delay again', async () => {
    const clock = new FakeClock(new Date('2026-06-10T12:00:00Z'));
    const hortus = app(clock);
    await hortus.createGroup.execute({ name: 'gh', settings: [] });
    await hortus.setAlert.execute({ group: 'gh', topic: CO2, max: 1500, delayMs: 5 * 60_000 });

    await hortus.reading(CO2, 1800);
    expect((await hortus.evaluate()).messages).to.deep.equal([]);
    clock.set('2026-06-10T12:03:00Z');
    await hortus.reading(CO2, 1400);
    expect((await hortus.evaluate()).messages).to.deep.equal([]);
    clock.set('2026-06-10T12:04:00Z');
    await hortus.reading(CO2, 1600);
    const again = await hortus.evaluate();
    expect(again.messages).to.deep.equal([]);
    expect(again.wakeAt, 'the wait starts anew').to.equal(Date.parse('2026-06-10T12:09:00Z'));

    clock.set('2026-06-10T12:08:00Z');
    expect((await hortus.evaluate()).messages, 'past the first breach + delay, not the second').to.deep.equal(
      [],
    );
    clock.set('2026-06-10T12:09:00Z');
    expect((await hortus.evaluate()).messages).to.deep.equal([
      `${CO2} is above its maximum of 1500: 1600 at 2026-06-10 12:04:00 UTC`,
    ]);
  });

  it('when the original keys and topic ranges are both set, then both alert; a topic range on the temperature topic wins over tempMin/tempMax', async () => {
    const clock = new FakeClock(new Date('2026-06-10T12:00:00Z'));
    const hortus = app(clock);
    await hortus.createGroup.execute({
      name: 'gh',
      settings: [{ tempMax: 30 }, { moistureMin: 30 }],
    });
    await hortus.setAlert.execute({ group: 'gh', topic: HUMIDITY, max: 80 });
    await hortus.reading(TEMPERATURE, 31);
    await hortus.reading('esp/ground/moisture/2', 20);
    await hortus.reading(HUMIDITY, 85);
    expect((await hortus.evaluate()).messages).to.have.members([
      `Temperature (${TEMPERATURE}) is above its maximum of 30 °C: 31 °C at 2026-06-10 12:00:00 UTC`,
      'Soil moisture (esp/ground/moisture/2) is below its minimum of 30 %: 20 % at 2026-06-10 12:00:00 UTC',
      `${HUMIDITY} is above its maximum of 80 %: 85 % at 2026-06-10 12:00:00 UTC`,
    ]);

    const clock2 = new FakeClock(new Date('2026-06-10T12:00:00Z'));
    const other = app(clock2);
    await other.createGroup.execute({ name: 'gh', settings: [{ tempMax: 30 }] });
    await other.setAlert.execute({ group: 'gh', topic: TEMPERATURE, max: 35 });
    await other.reading(TEMPERATURE, 31);
    expect((await other.evaluate()).messages, 'its own max is 35').to.deep.equal([]);
  });

  it('when a range is set, then it is stored beside the other settings, changed field by field, and removed without touching them', async () => {
    const clock = new FakeClock(new Date('2026-06-10T12:00:00Z'));
    const hortus = app(clock);
    await hortus.createGroup.execute({ name: 'gh', settings: [{ tempMin: 15 }, { email: 'a@example.org' }] });
    await hortus.setAlert.execute({ group: 'gh', topic: HUMIDITY, min: '40', max: 80, delayMs: 60_000 });
    const changed = await hortus.setAlert.execute({ group: 'gh', topic: HUMIDITY, max: 85, delayMs: null });
    expect(changed).to.deep.equal({ group: 'gh', topic: HUMIDITY, range: { min: 40, max: 85 } });
    await hortus.setAlert.execute({ group: 'gh', topic: CO2, max: 1500 });
    expect((await hortus.getGroup.execute({ name: 'gh' })).settings).to.deep.equal([
      { tempMin: 15 },
      { email: 'a@example.org' },
      { alertRanges: { [HUMIDITY]: { min: 40, max: 85 }, [CO2]: { max: 1500 } } },
    ]);
    await hortus.setAlert.execute({ group: 'gh', topic: HUMIDITY, remove: true });
    await hortus.setAlert.execute({ group: 'gh', topic: CO2, remove: true });
    expect((await hortus.getGroup.execute({ name: 'gh' })).settings).to.deep.equal([
      { tempMin: 15 },
      { email: 'a@example.org' },
    ]);
  });

  it('when a range is inconsistent or the group unknown, then it is refused and nothing is written', async () => {
    const clock = new FakeClock(new Date('2026-06-10T12:00:00Z'));
    const hortus = app(clock);
    await hortus.createGroup.execute({ name: 'gh', settings: [{ tempMin: 15 }] });
    const refused = [
      { max: 'lots' },
      { min: 80, max: 40 },
      { min: 40, max: 50, hysteresis: 10 },
      { max: 50, hysteresis: -1 },
      { max: 50, delayMs: 25 * 3_600_000 },
      {},
    ];
    for (const change of refused)
      await expect(
        hortus.setAlert.execute({ group: 'gh', topic: HUMIDITY, ...change }),
        JSON.stringify(change),
      ).to.be.rejectedWith(InvalidInputError);
    await expect(hortus.setAlert.execute({ group: 'gh', topic: 'esp/#', max: 1 })).to.be.rejectedWith(
      InvalidInputError,
    );
    await expect(hortus.setAlert.execute({ group: 'nope', topic: HUMIDITY, max: 1 })).to.be.rejectedWith(
      NotFoundError,
    );
    expect((await hortus.getGroup.execute({ name: 'gh' })).settings).to.deep.equal([{ tempMin: 15 }]);
  });
});
