import { ContainerModule } from 'inversify';
import {
  AutomationEngine,
  CreateDevice,
  CreateGroup,
  CreateNotification,
  IgnoreNotifications,
  ListOpenNotifications,
  QuotaExceededError,
  EvaluateAlerts,
  GetLatestReadingsOfGroup,
  READING_REPOSITORY,
  type ReadingRepository,
  RecordReadings,
  SCHEDULER,
  type Scheduler,
  sensorTopics,
} from '@hortus/core';
import { createTestApp, expect } from './support.js';

const NOW = '2024-06-15T08:30:00.000Z';
const TEMPERATURE = sensorTopics.temperature;

const noScheduler: Scheduler = {
  every: () => {
    throw new Error('tests drive ticks by hand');
  },
};

describe('hostile data', () => {
  describe('topics per group', () => {
    it('when a batch brings more new topics than the group has room for, then the first fill it and the rest are rejected by index', async () => {
      const app = createTestApp({ now: NOW, settings: { limits: { maxTopicsPerGroup: 3 } } });
      const record = app.get(RecordReadings);
      await record.execute([{ group: 'a', topic: 'esp/t1', value: 1 }]);

      const result = await record.execute(
        ['esp/t1', 'esp/t2', 'esp/t3', 'esp/t4', 'esp/t4', 'esp/t5'].map((topic, value) => ({
          group: 'a',
          topic,
          value,
          time: `2024-06-15T08:0${value}:00Z`,
        })),
      );

      expect(result.accepted).to.equal(3);
      expect(result.rejected).to.deep.equal(
        [3, 4, 5].map((index) => ({
          index,
          reason: 'topic is new and group a already holds 3 topics, the most allowed',
        })),
      );
      const topics = (await app.get(GetLatestReadingsOfGroup).execute({ group: 'a' })).map((r) => r.topic);
      expect(topics).to.deep.equal(['esp/t1', 'esp/t2', 'esp/t3']);
    });

    it('when a group is full, then its known topics and other groups still take readings', async () => {
      const app = createTestApp({ now: NOW, settings: { limits: { maxTopicsPerGroup: 1 } } });
      const record = app.get(RecordReadings);
      await record.execute([{ group: 'a', topic: 'esp/t1', value: 1, time: '2024-06-15T08:00:00Z' }]);

      const result = await record.execute([
        { group: 'a', topic: 'esp/t1', value: 2 },
        { group: 'a', topic: 'esp/t2', value: 3 },
        { group: 'b', topic: 'esp/t2', value: 4 },
      ]);

      expect(result).to.deep.include({ accepted: 2, stored: 2 });
      expect(result.rejected.map((r) => r.index)).to.deep.equal([1]);
    });
  });

  describe('the engine', () => {
    it('when a group already holds 150 000 topics (past the ~120 000 arguments a spread may pass), then evaluating alerts does not overflow the stack', async () => {
      const app = createTestApp({ now: NOW });
      await app.get(CreateGroup).execute({ name: 'flooded', settings: [{ tempMax: 28 }] });
      const readings = app.container.get<ReadingRepository>(READING_REPOSITORY);
      const time = new Date(NOW);
      for (let start = 0; start < 150_000; start += 15_000) {
        await readings.add(
          Array.from({ length: 15_000 }, (_, i) => ({
            group: 'flooded',
            topic: `esp/flood/${start + i}`,
            value: 1,
            time,
          })),
        );
      }
      await readings.add([{ group: 'flooded', topic: TEMPERATURE, value: 35, time }]);

      const raised = await app.get(EvaluateAlerts).execute();

      expect(raised.map((n) => n.message)).to.deep.equal([
        `Temperature (${TEMPERATURE}) is above its maximum of 28 °C: 35 °C at 2024-06-15 08:30:00 UTC`,
      ]);
    });

    it('when one group fails to evaluate, then the failure is reported and another group still gets its alert', async () => {
      const app = createTestApp({ now: NOW });
      const memory = app.container.get<ReadingRepository>(READING_REPOSITORY);
      // A store that fails on one group's data only: the seam where a broken record or a flood breaks a group.
      const failingForBroken: ReadingRepository = Object.assign(Object.create(memory) as ReadingRepository, {
        latestOfEveryTopic: (group: string) =>
          group === 'broken'
            ? Promise.reject(new RangeError('Maximum call stack size exceeded'))
            : memory.latestOfEveryTopic(group),
      });
      app.container.unbind(READING_REPOSITORY);
      app.container.load(
        new ContainerModule(({ bind }) => {
          bind<ReadingRepository>(READING_REPOSITORY).toConstantValue(failingForBroken);
          bind<Scheduler>(SCHEDULER).toConstantValue(noScheduler);
        }),
      );
      for (const name of ['broken', 'healthy']) {
        await app.get(CreateGroup).execute({ name, settings: [{ tempMax: 28 }] });
        await app.get(RecordReadings).execute([{ group: name, topic: TEMPERATURE, value: 35 }]);
      }

      const result = await app.get(AutomationEngine).tick();

      expect(result.alerts.map((n) => n.group)).to.deep.equal(['healthy']);
      expect(result.failures).to.have.length(1);
      expect(result.failures[0]).to.include({ group: 'broken', stage: 'alerts' });
      expect((result.failures[0]?.error as Error).message).to.equal('Maximum call stack size exceeded');
    });
  });

  describe('quotas', () => {
    it('when a group holds the most devices allowed, then another is a QuotaExceededError and other groups still take devices', async () => {
      const app = createTestApp({ now: NOW, settings: { limits: { maxDevicesPerGroup: 2 } } });
      const create = app.get(CreateDevice);
      await create.execute({ deviceId: 'AA:01', group: 'a', type: 'box' });
      await create.execute({ deviceId: 'AA:02', group: 'a', type: 'box' });

      const third = create.execute({ deviceId: 'AA:03', group: 'a', type: 'box' });

      await expect(third)
        .to.be.rejectedWith(QuotaExceededError, 'Group a already holds 2 devices, the most allowed')
        .and.eventually.have.property('code', 'QUOTA_EXCEEDED');
      await create.execute({ deviceId: 'AA:04', group: 'b', type: 'box' });
    });

    it('when a group holds the most open notifications allowed, then creating one fails until one is ignored', async () => {
      const app = createTestApp({ now: NOW, settings: { limits: { maxOpenNotificationsPerGroup: 2 } } });
      const create = app.get(CreateNotification);
      await create.execute({ group: 'a', message: 'one', time: '2024-06-15T08:00:00Z' });
      await create.execute({ group: 'a', message: 'two', time: '2024-06-15T08:01:00Z' });

      await expect(create.execute({ group: 'a', message: 'three' })).to.be.rejectedWith(QuotaExceededError);
      await app.get(IgnoreNotifications).execute({ group: 'a', time: '2024-06-15T08:00:00Z' });
      await create.execute({ group: 'a', message: 'three' });
      expect(
        (await app.get(ListOpenNotifications).execute({ group: 'a' })).map((n) => n.message),
      ).to.deep.equal(['three', 'two']);
    });

    it('when the open notification quota is reached, then a due alert is withheld and reported, and raised once there is room', async () => {
      const app = createTestApp({ now: NOW, settings: { limits: { maxOpenNotificationsPerGroup: 1 } } });
      app.container.bind<Scheduler>(SCHEDULER).toConstantValue(noScheduler);
      await app.get(CreateGroup).execute({ name: 'a', settings: [{ tempMax: 28 }] });
      await app.get(CreateNotification).execute({ group: 'a', message: 'old', time: '2024-06-15T08:00:00Z' });
      await app.get(RecordReadings).execute([{ group: 'a', topic: TEMPERATURE, value: 35 }]);

      const full = await app.get(AutomationEngine).tick();

      expect(full.alerts).to.deep.equal([]);
      expect(full.withheld).to.deep.equal([{ group: 'a', topic: TEMPERATURE, kind: 'high' }]);
      await app.get(IgnoreNotifications).execute({ group: 'a', time: '2024-06-15T08:00:00Z' });
      const room = await app.get(AutomationEngine).tick();
      expect(room.alerts.map((n) => n.message)).to.deep.equal([
        `Temperature (${TEMPERATURE}) is above its maximum of 28 °C: 35 °C at 2024-06-15 08:30:00 UTC`,
      ]);
    });

    it('when a value flaps across its bound, then the alert opens at most once per ALERT_REOPEN_MS', async () => {
      const app = createTestApp({ now: NOW, settings: { limits: { alertReopenMs: 10 * 60_000 } } });
      await app.get(CreateGroup).execute({ name: 'a', settings: [{ tempMax: 28 }] });
      const alerts = app.get(EvaluateAlerts);
      const opened: string[] = [];
      // Every minute for 20 minutes the value jumps between 35 and 20 (well past the dead band).
      for (let minute = 0; minute < 20; minute += 1) {
        const value = minute % 2 === 0 ? 35 : 20;
        await app.get(RecordReadings).execute([{ group: 'a', topic: TEMPERATURE, value }]);
        for (const notification of await alerts.execute()) {
          if (notification.message.includes('above')) opened.push(app.clock.now().toISOString());
        }
        app.clock.advance(60_000);
      }

      expect(opened).to.deep.equal(['2024-06-15T08:30:00.000Z', '2024-06-15T08:40:00.000Z']);
    });
  });
});
