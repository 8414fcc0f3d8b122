import 'reflect-metadata';
import { expect } from 'chai';
import { type AutomationSet, sensorTopics } from '@hortus/core';
import {
  FakeClock,
  greenhouse,
  instance,
  type Instance,
  noScheduler,
  pumpValue,
  sensorRule,
  sharedStore,
  timeRule,
} from './automation-support.js';

describe('automation engine', () => {
  describe('sharing the event loop', () => {
    it('when a tick evaluates several groups, then it lets other work run before each group, for rules and for alerts', async () => {
      const store = sharedStore();
      const clock = new FakeClock(new Date('2026-06-10T12:00:00Z'));
      let pauses = 0;
      const server = instance(store, clock, 'Europe/Berlin', {
        ...noScheduler,
        pause: async () => {
          pauses += 1;
        },
      });
      for (const name of ['gh-1', 'gh-2', 'gh-3']) await server.createGroup.execute({ name });
      await server.engine.tick();
      expect(pauses).to.equal(6);
    });
  });

  describe('time rules', () => {
    it('when the minute of an every-day rule comes, then it fires once and the change is recorded', async () => {
      const store = sharedStore();
      const clock = new FakeClock(new Date('2026-06-10T04:29:00Z')); // 06:29 in Berlin (UTC+2)
      const server = instance(store, clock);
      await greenhouse(server, timeRule('06:30', 'every day'));

      expect(await server.run.execute()).to.have.length(0);
      clock.set('2026-06-10T04:30:05Z');
      const fired = await server.run.execute();
      expect(fired).to.have.length(1);
      expect(fired[0]).to.include({
        group: 'gh',
        object: 'pump_1',
        value: 'on',
        previousValue: 'off',
        trigger: 'time',
      });
      expect(await pumpValue(store)).to.equal('on');

      // Someone switches it off by hand; later ticks within the slot's grace must not switch it back on.
      await server.setValue.execute({ group: 'gh', object: 'pump_1', value: 'off', actor: { kind: 'cli' } });
      clock.set('2026-06-10T04:32:00Z');
      expect(await server.run.execute()).to.have.length(0);
      expect(await pumpValue(store)).to.equal('off');
      expect(await store.automationLog.listByGroup('gh', 10)).to.have.length(1);
    });

    const frequencyCases: [string, string, boolean][] = [
      // 2026-06-13 is a Saturday, 2026-06-15 a Monday.
      ['weekdays', '2026-06-13', false],
      ['weekdays', '2026-06-15', true],
      ['weekends', '2026-06-13', true],
      ['weekends', '2026-06-15', false],
      ['monday', '2026-06-15', true],
      ['saturday', '2026-06-15', false],
      ['saturday', '2026-06-13', true],
      ['every day', '2026-06-14', true],
    ];
    for (const [frequency, date, fires] of frequencyCases) {
      it(`when a "${frequency}" rule's minute comes on ${date}, then it ${fires ? 'fires' : 'does not fire'}`, async () => {
        const store = sharedStore();
        const clock = new FakeClock(new Date(`${date}T06:00:30Z`)); // 08:00 in Berlin
        const server = instance(store, clock);
        await greenhouse(server, timeRule('08:00', frequency));
        expect(await server.run.execute()).to.have.length(fires ? 1 : 0);
      });
    }

    it('when a 23:59 slot is first evaluated just after midnight, then it fires once for the previous day', async () => {
      const store = sharedStore();
      const clock = new FakeClock(new Date('2026-01-10T23:01:00Z')); // 00:01 on Jan 11 in Berlin (UTC+1)
      const server = instance(store, clock);
      await greenhouse(server, timeRule('23:59', 'saturday')); // Jan 10 2026 is a Saturday
      expect(await server.run.execute()).to.have.length(1);
      clock.set('2026-01-10T23:03:00Z');
      expect(await server.run.execute()).to.have.length(0);
    });

    it('when clocks spring forward over a rule at 02:30, then it fires once, moved forward by the gap', async () => {
      const store = sharedStore();
      const clock = new FakeClock(new Date('2026-03-29T01:29:00Z')); // 03:29 CEST; 02:00-03:00 never happened
      const server = instance(store, clock);
      await greenhouse(server, timeRule('02:30', 'every day'));
      expect(await server.run.execute()).to.have.length(0);
      clock.set('2026-03-29T01:30:10Z'); // 03:30 CEST
      expect(await server.run.execute()).to.have.length(1);
      clock.set('2026-03-29T01:32:00Z');
      expect(await server.run.execute()).to.have.length(0);
    });

    it('when clocks fall back and 02:30 happens twice, then the rule fires only at the first', async () => {
      const store = sharedStore();
      const clock = new FakeClock(new Date('2026-10-25T00:30:10Z')); // first 02:30, CEST
      const server = instance(store, clock);
      await greenhouse(server, timeRule('02:30', 'every day'));
      expect(await server.run.execute()).to.have.length(1);
      await server.setValue.execute({ group: 'gh', object: 'pump_1', value: 'off', actor: { kind: 'cli' } });
      clock.set('2026-10-25T01:30:10Z'); // second 02:30, CET
      expect(await server.run.execute()).to.have.length(0);
      expect(await pumpValue(store)).to.equal('off');
    });

    it('when the server restarts in the middle of a slot, then the new instance does not fire it again', async () => {
      const store = sharedStore();
      const clock = new FakeClock(new Date('2026-06-10T04:30:05Z'));
      const before = instance(store, clock);
      await greenhouse(before, timeRule('06:30', 'every day'));
      expect(await before.run.execute()).to.have.length(1);
      await before.setValue.execute({ group: 'gh', object: 'pump_1', value: 'off', actor: { kind: 'cli' } });

      clock.set('2026-06-10T04:31:00Z');
      const after = instance(store, clock);
      expect(await after.run.execute()).to.have.length(0);
      expect(await pumpValue(store)).to.equal('off');
    });

    it('when two engines race for one slot, then exactly one fires it', async () => {
      const store = sharedStore();
      const clock = new FakeClock(new Date('2026-06-10T04:30:05Z'));
      const first = instance(store, clock);
      const second = instance(store, clock);
      await greenhouse(first, timeRule('06:30', 'every day'));
      const [a, b] = await Promise.all([first.run.execute(), second.run.execute()]);
      expect(a.length + b.length).to.equal(1);
      expect(await store.automationLog.listByGroup('gh', 10)).to.have.length(1);
    });
  });

  describe('catch-up after downtime', () => {
    // Berlin in June is UTC+2: 06:00 is 04:00Z, 20:00 is 18:00Z.
    const lights = [
      {
        timeAutomations: [
          { action: 'on', time: '06:00', frequency: 'every day' },
          { action: 'off', time: '20:00', frequency: 'every day' },
        ],
        sensorAutomations: [],
      },
    ] as AutomationSet[];

    it('when the server was down at 06:00 and restarts at 07:13, then the lights go on, logged late with the slot', async () => {
      const store = sharedStore();
      const clock = new FakeClock(new Date('2026-06-10T03:50:00Z')); // 05:50
      const before = instance(store, clock);
      await greenhouse(before, lights);
      await before.engine.tick();
      expect(await pumpValue(store)).to.equal('off');

      clock.set('2026-06-10T05:13:00Z'); // 07:13: the 06:00 slot passed while no engine ran
      const after = instance(store, clock);
      const { switched } = await after.engine.tick();
      expect(switched).to.have.length(1);
      expect(switched[0]).to.deep.include({
        value: 'on',
        late: true,
        slot: new Date('2026-06-10T04:00:00Z'),
      });
      expect(await pumpValue(store)).to.equal('on');
      const [logged] = await store.automationLog.listByGroup('gh', 10);
      expect(logged).to.deep.include({
        rule: '06:00 every day -> on',
        late: true,
        slot: new Date('2026-06-10T04:00:00Z'),
      });

      // Fired once: switched off by hand, later ticks leave it off.
      await after.setValue.execute({ group: 'gh', object: 'pump_1', value: 'off', actor: { kind: 'cli' } });
      clock.set('2026-06-10T05:14:00Z');
      expect((await after.engine.tick()).switched).to.have.length(0);
      expect(await pumpValue(store)).to.equal('off');
    });

    it('when the server was down over 20:00 and restarts at 21:30, then the missed "off" still turns them off', async () => {
      const store = sharedStore();
      const clock = new FakeClock(new Date('2026-06-10T04:00:10Z'));
      const before = instance(store, clock);
      await greenhouse(before, lights);
      expect((await before.engine.tick()).switched.map((e) => e.value)).to.deep.equal(['on']);
      clock.set('2026-06-10T17:50:00Z'); // 19:50, the last tick before the restart
      await before.engine.tick();

      clock.set('2026-06-10T19:30:00Z'); // 21:30
      const { switched } = await instance(store, clock).engine.tick();
      expect(switched).to.have.length(1);
      expect(switched[0]).to.deep.include({
        value: 'off',
        late: true,
        slot: new Date('2026-06-10T18:00:00Z'),
      });
    });

    it('when a later slot of the same action also passed during the downtime, then only the latest fires', async () => {
      const store = sharedStore();
      const clock = new FakeClock(new Date('2026-06-10T17:50:00Z')); // 19:50, lights on
      const before = instance(store, clock);
      await greenhouse(before, lights);
      await before.setValue.execute({ group: 'gh', object: 'pump_1', value: 'on', actor: { kind: 'cli' } });
      await before.engine.tick();

      clock.set('2026-06-11T19:00:00Z'); // 21:00 the next day: 20:00, 06:00 and 20:00 were all missed
      const { switched } = await instance(store, clock).engine.tick();
      expect(switched.map(({ value, slot }) => ({ value, slot }))).to.deep.equal([
        { value: 'off', slot: new Date('2026-06-11T18:00:00Z') },
      ]);
      expect(await store.automationLog.listByGroup('gh', 10)).to.have.length(1);
    });

    it("when the restart comes before the day's first slot, then only the missed slot of the day before fires", async () => {
      const store = sharedStore();
      const clock = new FakeClock(new Date('2026-06-10T17:50:00Z'));
      const before = instance(store, clock);
      await greenhouse(before, lights);
      await before.setValue.execute({ group: 'gh', object: 'pump_1', value: 'on', actor: { kind: 'cli' } });
      await before.engine.tick();

      clock.set('2026-06-11T03:00:00Z'); // 05:00: outside the on-window, the 20:00 "off" was missed
      const after = instance(store, clock);
      expect((await after.engine.tick()).switched.map((e) => e.value)).to.deep.equal(['off']);
      clock.set('2026-06-11T04:00:30Z'); // 06:00 comes on time: not late
      const [on] = (await after.engine.tick()).switched;
      expect(on).to.deep.include({ value: 'on', slot: new Date('2026-06-11T04:00:00Z') });
      expect(on).not.to.have.property('late');
    });

    it('when a rule is added while the engine runs, then its slot from earlier today does not fire', async () => {
      const store = sharedStore();
      const clock = new FakeClock(new Date('2026-06-10T08:00:00Z')); // 10:00
      const server = instance(store, clock);
      await server.engine.tick();
      await greenhouse(server, lights);
      clock.set('2026-06-10T08:00:10Z');
      expect((await server.engine.tick()).switched).to.have.length(0);
      expect(await pumpValue(store)).to.equal('off');
    });

    it('when no engine ever ran on the store (a fresh start), then each action gets what its latest slot says', async () => {
      const store = sharedStore();
      const clock = new FakeClock(new Date('2026-06-10T05:13:00Z')); // 07:13
      const server = instance(store, clock);
      await greenhouse(server, lights);
      const { switched } = await server.engine.tick();
      expect(switched.map(({ value, late }) => ({ value, late }))).to.deep.equal([
        { value: 'on', late: true },
      ]);
    });
  });

  describe('sensor rules', () => {
    const temperature = async (server: Instance, value: number, time: string): Promise<void> => {
      const result = await server.record.execute([
        { group: 'gh', topic: sensorTopics.temperature, value, time },
      ]);
      expect(result.rejected).to.deep.equal([]);
    };

    it('when the value crosses the threshold, then the rule fires on the crossing only, with a dead band', async () => {
      const store = sharedStore();
      const clock = new FakeClock(new Date('2026-06-10T12:00:00Z'));
      const server = instance(store, clock);
      await greenhouse(server, sensorRule('above', '28'));

      await temperature(server, 27, '2026-06-10T12:00:00Z');
      expect(await server.run.execute()).to.have.length(0);

      clock.set('2026-06-10T12:01:00Z');
      await temperature(server, 28.3, '2026-06-10T12:01:00Z');
      const fired = await server.run.execute();
      expect(fired).to.have.length(1);
      expect(fired[0]?.reading).to.deep.include({ topic: sensorTopics.temperature, value: 28.3 });

      // Still above: no crossing, so a manual "off" is respected.
      await server.setValue.execute({ group: 'gh', object: 'pump_1', value: 'off', actor: { kind: 'cli' } });
      clock.set('2026-06-10T12:03:00Z');
      await temperature(server, 28.2, '2026-06-10T12:03:00Z');
      expect(await server.run.execute()).to.have.length(0);

      // Hovering just under the threshold, inside the dead band: not re-armed.
      clock.set('2026-06-10T12:05:00Z');
      await temperature(server, 27.8, '2026-06-10T12:05:00Z');
      expect(await server.run.execute()).to.have.length(0);
      clock.set('2026-06-10T12:07:00Z');
      await temperature(server, 28.1, '2026-06-10T12:07:00Z');
      expect(await server.run.execute()).to.have.length(0);
      expect(await pumpValue(store)).to.equal('off');

      // Clearly back below re-arms it; the next crossing fires again.
      clock.set('2026-06-10T12:09:00Z');
      await temperature(server, 27.4, '2026-06-10T12:09:00Z');
      expect(await server.run.execute()).to.have.length(0);
      clock.set('2026-06-10T12:11:00Z');
      await temperature(server, 28.6, '2026-06-10T12:11:00Z');
      expect(await server.run.execute()).to.have.length(1);
      expect(await pumpValue(store)).to.equal('on');
    });

    it('when a crossing comes sooner than the minimum switch interval, then it waits for the interval', async () => {
      const store = sharedStore();
      const clock = new FakeClock(new Date('2026-06-10T12:00:00Z'));
      const server = instance(store, clock);
      await greenhouse(server, [
        {
          timeAutomations: [],
          sensorAutomations: [
            { action: 'on', sensor: 'temperature', condition: 'above', value: '28' },
            { action: 'off', sensor: 'temperature', condition: 'less than', value: '20' },
          ],
        },
      ]);
      await temperature(server, 29, '2026-06-10T12:00:00Z');
      expect(await server.run.execute()).to.have.length(1);

      clock.set('2026-06-10T12:00:30Z');
      await temperature(server, 19, '2026-06-10T12:00:30Z');
      expect(await server.run.execute()).to.have.length(0);
      expect(await pumpValue(store)).to.equal('on');

      clock.set('2026-06-10T12:01:05Z');
      const fired = await server.run.execute();
      expect(fired.map((event) => event.value)).to.deep.equal(['off']);
    });

    it('when a crossing finds the action at its value already, then it takes no switch interval from the next crossing', async () => {
      const store = sharedStore();
      const clock = new FakeClock(new Date('2026-06-10T12:00:00Z'));
      const server = instance(store, clock);
      await greenhouse(server, [
        {
          timeAutomations: [],
          sensorAutomations: [
            { action: 'on', sensor: 'temperature', condition: 'above', value: '28' },
            { action: 'off', sensor: 'temperature', condition: 'less than', value: '24' },
          ],
        },
      ]);
      await temperature(server, 21, '2026-06-10T12:00:00Z');
      expect(await server.run.execute()).to.have.length(0);
      expect(await pumpValue(store)).to.equal('off');

      clock.set('2026-06-10T12:00:05Z');
      await temperature(server, 31, '2026-06-10T12:00:05Z');
      const fired = await server.run.execute();
      expect(fired.map((event) => event.value)).to.deep.equal(['on']);
    });

    it('when the newest reading is older than the configured age, then it never triggers', async () => {
      const store = sharedStore();
      const clock = new FakeClock(new Date('2026-06-10T12:11:00Z'));
      const server = instance(store, clock);
      await greenhouse(server, sensorRule('below', '10'));
      await temperature(server, 5, '2026-06-10T12:00:00Z');
      expect(await server.run.execute()).to.have.length(0);
      expect(await pumpValue(store)).to.equal('off');
    });
  });
});
