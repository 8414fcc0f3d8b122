import {
  CopyLegacyRecords,
  CreateGroup,
  ConflictError,
  CreateDevice,
  GetGroup,
  GetHistoryCharts,
  InvalidInputError,
  legacyAction,
  legacyAlarm,
  legacyChartRecord,
  legacyGroup,
  legacyNumber,
  legacyReading,
  legacyUser,
  MigrationCheckpoints,
  WallClockTimes,
} from '@hortus/core';
import { createTestApp, expect, type TestApp } from './support.js';

const NOW = new Date('2024-06-15T08:30:00.000Z');

describe('moving over from the original service', () => {
  describe('converting its documents', () => {
    it('when a value is numeric text, then it is a number; anything else is rejected, never NaN', () => {
      expect(legacyNumber('23.45', 'value')).to.equal(23.45);
      expect(legacyNumber(' -4 ', 'value')).to.equal(-4);
      expect(legacyNumber('1e3', 'value')).to.equal(1000);
      expect(legacyNumber(7, 'value')).to.equal(7);
      for (const bad of ['n/a', '', ' ', '23,5', '0x1A', 'NaN', 'Infinity', null, undefined, true, {}]) {
        expect(() => legacyNumber(bad, 'value'), JSON.stringify(bad)).to.throw(
          InvalidInputError,
          /value must be/u,
        );
      }
      expect(() => legacyNumber(Number.NaN, 'value')).to.throw(InvalidInputError);
    });

    it('when a reading is converted without a zone, then its time is kept as stored', () => {
      const reading = legacyReading({
        _id: 'x',
        time: new Date('2024-05-01T14:00:00.000Z'),
        topic: 'esp/air/temperature',
        value: '23.45',
        group: 'gh-1',
      });

      expect(reading).to.deep.equal({
        group: 'gh-1',
        topic: 'esp/air/temperature',
        value: 23.45,
        time: new Date('2024-05-01T14:00:00.000Z'),
      });
    });

    it('when a zone is given, then stored local times become UTC, summer and winter, seconds kept', () => {
      const berlin = new WallClockTimes('Europe/Berlin');

      expect(berlin.instantOf(new Date('2024-05-01T14:00:07.250Z')).toISOString()).to.equal(
        '2024-05-01T12:00:07.250Z',
      );
      expect(berlin.instantOf(new Date('2024-01-15T14:00:00.000Z')).toISOString()).to.equal(
        '2024-01-15T13:00:00.000Z',
      );
      // Spring forward: 02:30 does not exist in Berlin on 31 March 2024 and moves on by the gap.
      expect(berlin.instantOf(new Date('2024-03-31T02:30:00.000Z')).toISOString()).to.equal(
        '2024-03-31T01:30:00.000Z',
      );
      // Fall back: 02:30 happened twice on 27 October 2024; the earlier instant is taken.
      expect(berlin.instantOf(new Date('2024-10-27T02:30:00.000Z')).toISOString()).to.equal(
        '2024-10-27T00:30:00.000Z',
      );
      const newYork = new WallClockTimes('America/New_York');
      expect(newYork.instantOf(new Date('2024-07-04T08:00:00.000Z')).toISOString()).to.equal(
        '2024-07-04T12:00:00.000Z',
      );
      expect(() => new WallClockTimes('Mars/Olympus')).to.throw(InvalidInputError);
    });

    it('when the clocks go back, then a series read in _id order keeps both passes of the repeated hour', () => {
      const berlin = new WallClockTimes('Europe/Berlin');
      const read = (hhmm: string, topic = 'esp/air/temperature'): string =>
        legacyReading(
          { time: new Date(`2024-10-27T${hhmm}:00.000Z`), topic, value: '20', group: 'gh-1' },
          berlin,
        ).time.toISOString();

      // First pass (summer time, UTC+2), then the clocks show 02:00 again (winter time, UTC+1).
      expect(read('02:00')).to.equal('2024-10-27T00:00:00.000Z');
      expect(read('02:30')).to.equal('2024-10-27T00:30:00.000Z');
      expect(read('02:30')).to.equal('2024-10-27T00:30:00.000Z');
      // Another series is told apart on its own.
      expect(read('02:45', 'esp/air/humidity')).to.equal('2024-10-27T00:45:00.000Z');
      expect(read('02:00')).to.equal('2024-10-27T01:00:00.000Z');
      expect(read('02:30')).to.equal('2024-10-27T01:30:00.000Z');
      expect(read('03:00')).to.equal('2024-10-27T02:00:00.000Z');
      expect(berlin.secondPass).to.equal(2);
    });

    it('when a reading is dated further ahead than the allowed skew, then it is rejected naming its time', () => {
      const reading = {
        time: new Date('2030-01-01T00:00:00.000Z'),
        topic: 'esp/air/humidity',
        value: '5',
        group: 'g',
      };

      expect(() => legacyReading(reading, undefined, Date.parse('2029-12-31T23:55:00.000Z'))).to.throw(
        InvalidInputError,
        'time 2030-01-01T00:00:00.000Z is in the future',
      );
      expect(legacyReading(reading, undefined, Date.parse('2030-01-01T00:00:00.000Z')).value).to.equal(5);
    });

    it('when a reading lacks its group or time, then it is rejected naming the field', () => {
      const base = { time: new Date(), topic: 'esp/air/humidity', value: '50', group: 'gh-1' };

      expect(() => legacyReading({ ...base, group: undefined })).to.throw(/group/u);
      expect(() => legacyReading({ ...base, time: undefined })).to.throw('time is missing');
      expect(() => legacyReading({ ...base, time: 'yesterday' })).to.throw('time must be a date');
      expect(() => legacyReading({ ...base, topic: 'esp/#' })).to.throw(/topic/u);
    });

    it('when employee is a comma-separated text or a list, then it is a list of names either way', () => {
      expect(
        legacyGroup({ name: 'a', package: 'small', employee: 'Ana Grower, Ben Hill,, ' }).record.employee,
      ).to.deep.equal(['Ana Grower', 'Ben Hill']);
      expect(
        legacyGroup({ name: 'b', package: 'big', employee: ['Cy', 'Cy', ' Dee '] }).record.employee,
      ).to.deep.equal(['Cy', 'Dee']);
      const noPackage = legacyGroup({ name: 'c', settings: { tempMin: 3, _id: 'kept' } });
      expect(noPackage.record).to.include({ package: 'small' });
      expect(noPackage.record.settings).to.deep.equal({ tempMin: 3, _id: 'kept' });
      expect(noPackage.notes).to.deep.equal(['no package: stored as small']);
    });

    it('when a user has a bcrypt hash, then it is kept with the id; without one the report says so', () => {
      const hash = `$2a$10$${'a'.repeat(53)}`;
      const id = '65a000000000000000000001';

      expect(
        legacyUser({
          _id: id,
          firstName: 'Ana',
          lastName: 'G',
          email: 'ana@example.org',
          password: hash,
          group: 'gh-1',
        }),
      ).to.deep.equal({
        record: {
          id,
          firstName: 'Ana',
          lastName: 'G',
          email: 'ana@example.org',
          group: 'gh-1',
          passwordHash: hash,
        },
        notes: [],
      });
      const plain = legacyUser({ _id: id, email: 'ben@example.org', password: 'hunter2' });
      expect(plain.record).to.not.have.property('passwordHash');
      expect(plain.notes).to.deep.equal(['no bcrypt hash in password: the user must set a new password']);
      expect(() => legacyUser({ _id: id, email: 'not an address' })).to.throw(InvalidInputError, /email/u);
    });

    it('when automations carry _ids, then they are dropped; rules Hortus cannot run are left out and noted', () => {
      const action = legacyAction({
        group: 'gh-1',
        object: 'pump_1',
        value: 'on',
        automations: [
          {
            _id: 'a1',
            timeAutomations: [{ _id: 'a2', action: 'on', time: '06:30', frequency: 'weekdays' }],
            sensorAutomations: [],
          },
        ],
      });
      expect(action.record.automations).to.deep.equal([
        { timeAutomations: [{ action: 'on', time: '06:30', frequency: 'weekdays' }], sensorAutomations: [] },
      ]);

      const broken = legacyAction({
        group: 'gh-1',
        object: 'led_1',
        automations: [{ timeAutomations: [{ action: 'on', time: '25:00', frequency: 'every day' }] }],
      });
      expect(broken.record).to.include({ value: 'off' });
      expect(broken.record.automations).to.deep.equal([{ timeAutomations: [], sensorAutomations: [] }]);
      expect(broken.notes).to.deep.equal([
        'no value: stored as off',
        'rule left out: automations[0].timeAutomations[0].time must be HH:MM',
      ]);
    });

    it('when one rule is odd among good ones, then the good ones are kept, typed forms normalized, and each rule left out is noted', () => {
      const action = legacyAction({
        group: 'gh-1',
        object: 'fan_1',
        value: 'on',
        automations: [
          {
            timeAutomations: [
              { action: 'on', time: '7:5', frequency: 'Monday' },
              { action: 'off', time: '', frequency: 'every day' },
              { action: 'off', time: '18:00', frequency: 'EVERY DAY' },
            ],
            sensorAutomations: [
              { action: 'on', sensor: 'temperature', condition: 'above', value: '28,5' },
              { action: 'off', sensor: 'temperature', condition: 'equal', value: '20' },
              { action: 'off', sensor: 'humidity', condition: 'Below', value: '' },
            ],
          },
        ],
      });

      expect(action.record.automations).to.deep.equal([
        {
          timeAutomations: [
            { action: 'on', time: '07:05', frequency: 'monday' },
            { action: 'off', time: '18:00', frequency: 'every day' },
          ],
          sensorAutomations: [{ action: 'on', sensor: 'temperature', condition: 'above', value: '28.5' }],
        },
      ]);
      expect(action.notes).to.deep.equal([
        'rule left out: automations[0].timeAutomations[1].time must not be empty',
        'rule left out: automations[0].sensorAutomations[1].condition must be one of: above, less than, below',
        'rule left out: automations[0].sensorAutomations[2].value must be a finite number',
      ]);
    });

    it('when an alarm has no time or message field, then the _id gives the time and topic and value the message', () => {
      const alarm = legacyAlarm({
        _id: '65a0000000000000000000aa',
        group: 'gh-1',
        sensor: 'moisture',
        value: '12',
      });

      expect(alarm.record).to.deep.include({
        group: 'gh-1',
        message: 'Alarm: moisture 12',
        ignore: 'false',
        topic: 'moisture',
        value: 12,
      });
      expect(alarm.record.time.toISOString()).to.equal(new Date(0x65a00000 * 1000).toISOString());
      expect(() => legacyAlarm({ _id: 'x', group: 'gh-1', time: new Date() })).to.throw(
        InvalidInputError,
        /message/u,
      );
    });

    it('when a chart record lacks chart defaults, then it gets those of the original schema', () => {
      const { record } = legacyChartRecord(
        {
          userId: 'u1',
          charts: [
            { _id: 'sub', chartName: 'Bare', chartData: { datasets: [{ _id: 'd', checked_lux: true }] } },
          ],
        },
        NOW,
      );

      expect(record.charts).to.have.lengthOf(1);
      expect(record.charts[0]).to.deep.include({ chartId: 'defaultId', chartName: 'Bare', createdAt: NOW });
      expect(record.charts[0]?.chartData).to.deep.equal({
        type: 'line',
        max_count: 100,
        data_interval: 1,
        update_interval: 15000,
        labels: [],
        datasets: [
          {
            checked_temperature: false,
            checked_humidity: false,
            checked_lux: true,
            checked_moisture_1: false,
            checked_moisture_2: false,
            checked_moisture_3: false,
          },
        ],
      });
    });
  });

  describe('writing into the store', () => {
    let app: TestApp;
    let copy: CopyLegacyRecords;

    beforeEach(() => {
      app = createTestApp();
      copy = app.get(CopyLegacyRecords);
    });

    it('when a group exists in Hortus, then missing employees are added and Hortus keeps its settings', async () => {
      await app.get(CreateGroup).execute({ name: 'gh-1', employee: ['Ana'], settings: [{ tempMin: 10 }] });

      const merged = await copy.copyGroup({
        name: 'gh-1',
        package: 'big',
        employee: ['Ana', 'Ben'],
        settings: [{ tempMin: 5 }],
      });
      const again = await copy.copyGroup({
        name: 'gh-1',
        package: 'small',
        employee: ['Ana', 'Ben'],
        settings: [{ tempMin: 10 }],
      });

      expect(merged).to.deep.equal({
        outcome: 'merged',
        notes: [
          'added employees Ben',
          "settings differ: kept Hortus's; --update brings the original's over",
          "package differs: kept Hortus's small (original: big)",
        ],
      });
      expect(again).to.deep.equal({ outcome: 'already-there', notes: [] });
      expect(await app.get(GetGroup).execute({ name: 'gh-1' })).to.deep.include({
        employee: ['Ana', 'Ben'],
        settings: [{ tempMin: 10 }],
      });
    });

    it('when a device id belongs to another group in Hortus, then copying it is a conflict', async () => {
      await app.get(CreateDevice).execute({ deviceId: 'AA01', group: 'gh-2', type: 'box' });

      await expect(copy.copyDevice({ deviceId: 'AA01', group: 'gh-1', type: 'box' })).to.be.rejectedWith(
        ConflictError,
        'registered in another group',
      );
      expect(await copy.copyDevice({ deviceId: 'AA01', group: 'gh-2', type: 'box' })).to.deep.equal({
        outcome: 'already-there',
        notes: [],
      });
    });

    it('when a chart record is copied twice or its owner got a new id, then charts land once with their owner', async () => {
      const hash = `$2b$10$${'b'.repeat(53)}`;
      const copied = await copy.copyUser({
        id: 'not-a-store-id',
        firstName: 'A',
        lastName: 'B',
        email: 'a@example.org',
        group: 'g',
        passwordHash: hash,
      });
      const { record } = legacyChartRecord(
        { userId: 'not-a-store-id', charts: [{ chartId: 'c', chartName: 'One' }] },
        NOW,
      );

      const first = await copy.copyChartRecord(record, copied.userId);
      const second = await copy.copyChartRecord(record, copied.userId);

      expect(copied.userId).to.match(/^[0-9a-f]{24}$/u);
      expect(first.outcome).to.equal('written');
      expect(first.notes).to.deep.equal([`charts of user not-a-store-id now belong to ${copied.userId}`]);
      expect(second.outcome).to.equal('already-there');
      expect(
        (await app.get(GetHistoryCharts).execute({ userId: copied.userId ?? '' })).charts,
      ).to.have.lengthOf(1);
    });

    it('when a user is matched only by the same e-mail, then it gets no owner id: charts never follow an e-mail', async () => {
      const user = { firstName: 'A', lastName: 'B', email: 'same@example.org', group: 'g' };
      const inHortus = await copy.copyUser({ ...user, id: '65a0000000000000000000f1' });

      const fromAnotherSource = await copy.copyUser({ ...user, id: '65a0000000000000000000f2' });
      const sameId = await copy.copyUser({ ...user, id: '65a0000000000000000000f1' });

      expect(inHortus).to.include({ outcome: 'written', userId: '65a0000000000000000000f1' });
      expect(fromAnotherSource.outcome).to.equal('already-there');
      expect(fromAnotherSource.userId).to.equal(undefined);
      expect(sameId).to.include({ outcome: 'already-there', userId: '65a0000000000000000000f1' });
    });

    it('when two users differ only in the case of their e-mail, then both are kept and the second is noted with both ids', async () => {
      const user = { firstName: 'Anna', lastName: 'S', group: 'g' };
      await copy.copyUser({ ...user, email: 'anna@example.org', id: '65a0000000000000000000e1' });

      const second = await copy.copyUser({
        ...user,
        email: 'Anna@Example.org',
        id: '65a0000000000000000000e2',
      });
      const again = await copy.copyUser({
        ...user,
        email: 'Anna@Example.org',
        id: '65a0000000000000000000e2',
      });

      expect(second).to.include({ outcome: 'written', userId: '65a0000000000000000000e2' });
      expect(second.notes).to.deep.equal([
        'e-mail differs only in case from user 65a0000000000000000000e1 (anna@example.org): kept as its own ' +
          'account, which logs in with its e-mail as written',
      ]);
      expect(again.outcome).to.equal('already-there');
    });

    it('when a checkpoint is saved and then cleared, then the next run starts from the beginning', async () => {
      const checkpoints = app.get(MigrationCheckpoints);

      await checkpoints.save('host/old', 'datas', { after: '65a000000000000000000010', position: 5000 });
      expect(await checkpoints.get('host/old', 'datas')).to.deep.equal({
        after: '65a000000000000000000010',
        position: 5000,
      });
      expect(await checkpoints.get('other/old', 'datas')).to.equal(undefined);
      await checkpoints.save('host/old', 'datas', undefined);
      expect(await checkpoints.get('host/old', 'datas')).to.equal(undefined);
    });
  });
});
