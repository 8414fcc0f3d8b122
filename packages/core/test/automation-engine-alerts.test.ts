import 'reflect-metadata';
import { expect } from 'chai';
import { type Action, sensorTopics } from '@hortus/core';
import { FakeClock, greenhouse, instance, sharedStore, timeRule } from './automation-support.js';

describe('automation engine: alerts and action changes', () => {
  describe('alerts', () => {
    const settings = [{ tempMin: 15 }, { tempMax: '30' }, { moistureMin: 30 }, { moistureMax: 70 }];

    it('when a value leaves its range and returns, then one alert opens and one return notice follows', async () => {
      const store = sharedStore();
      const clock = new FakeClock(new Date('2026-06-10T12:00:00Z'));
      const server = instance(store, clock);
      await greenhouse(server, [], settings);
      await server.record.execute([{ group: 'gh', topic: sensorTopics.temperature, value: 31.5 }]);

      const raised = await server.alerts.execute();
      expect(raised).to.have.length(1);
      expect(raised[0]).to.include({
        group: 'gh',
        topic: sensorTopics.temperature,
        value: 31.5,
        ignore: 'false',
      });
      expect(raised[0]?.message).to.contain('above its maximum of 30');

      clock.set('2026-06-10T12:00:10Z');
      await server.record.execute([{ group: 'gh', topic: sensorTopics.temperature, value: 32 }]);
      expect(await server.alerts.execute(), 'still out of range: no second alert').to.have.length(0);

      clock.set('2026-06-10T12:00:20Z');
      await server.record.execute([{ group: 'gh', topic: sensorTopics.temperature, value: 29.8 }]);
      expect(await server.alerts.execute(), 'inside the dead band: not yet back').to.have.length(0);

      clock.set('2026-06-10T12:00:30Z');
      await server.record.execute([{ group: 'gh', topic: sensorTopics.temperature, value: 25 }]);
      const back = await server.alerts.execute();
      expect(back).to.have.length(1);
      expect(back[0]?.message).to.contain('back in range');

      const listed = await server.openNotifications.execute({ group: 'gh' });
      expect(listed.map((n) => n.message)).to.have.length(2);
    });

    it('when two engines evaluate the same breach, then only one alert is written', async () => {
      const store = sharedStore();
      const clock = new FakeClock(new Date('2026-06-10T12:00:00Z'));
      const first = instance(store, clock);
      const second = instance(store, clock);
      await greenhouse(first, [], settings);
      await first.record.execute([{ group: 'gh', topic: sensorTopics.moisture2, value: 12 }]);
      const [a, b] = await Promise.all([first.alerts.execute(), second.alerts.execute()]);
      expect(a.length + b.length).to.equal(1);
    });

    it('when a group stops reporting, then one "no data" alert is raised, and a notice when data returns', async () => {
      const store = sharedStore();
      const clock = new FakeClock(new Date('2026-06-10T12:00:00Z'));
      const server = instance(store, clock);
      await greenhouse(server, [], []);
      await server.record.execute([{ group: 'gh', topic: sensorTopics.humidity, value: 50 }]);
      expect(await server.alerts.execute()).to.have.length(0);

      clock.set('2026-06-10T12:31:00Z');
      const silent = await server.engine.tick();
      expect(silent.alerts.map((n) => n.message)).to.deep.equal([
        'No data received from group gh for 30 minutes',
      ]);
      clock.set('2026-06-10T12:35:00Z');
      expect((await server.engine.tick()).alerts).to.have.length(0);

      await server.record.execute([{ group: 'gh', topic: sensorTopics.humidity, value: 51 }]);
      const back = await server.engine.tick();
      expect(back.alerts.map((n) => n.message)).to.deep.equal(['Data from group gh is arriving again']);
    });
  });

  describe('action changes', () => {
    it('when a value is set by a client or by a rule, then listeners hear of both', async () => {
      const store = sharedStore();
      const clock = new FakeClock(new Date('2026-06-10T04:30:05Z'));
      const server = instance(store, clock);
      await greenhouse(server, timeRule('06:30', 'every day', 'on'));
      const heard: Action[] = [];
      const unsubscribe = server.changes.subscribe((action) => heard.push(action));
      await server.run.execute();
      await server.setValue.execute({ group: 'gh', object: 'pump_1', value: 'off', actor: { kind: 'cli' } });
      unsubscribe();
      await server.setValue.execute({ group: 'gh', object: 'pump_1', value: 'on', actor: { kind: 'cli' } });
      expect(heard.map((action) => action.value)).to.deep.equal(['on', 'off']);
    });
  });
});
