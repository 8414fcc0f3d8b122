import { expect } from 'chai';
import {
  datasetFlags,
  applyChartChange,
  datasetFlag,
  FORCED_UPDATE_INTERVAL,
  fromLocal,
  InvalidInputError,
  localDayBounds,
  newChart,
  parseAutomations,
  requireNumber,
  toLocal,
} from '@hortus/core';

describe('core entities', () => {
  describe('parseAutomations', () => {
    it('when a client echoes _id fields back, then they are dropped and the rules kept', () => {
      const parsed = parseAutomations([
        {
          _id: 'a1',
          timeAutomations: [{ _id: 't1', action: 'on', time: '06:30', frequency: 'weekdays' }],
          sensorAutomations: [
            { _id: 's1', action: 'off', sensor: 'temperature', condition: 'above', value: '28' },
          ],
        },
      ]);
      expect(parsed).to.deep.equal([
        {
          timeAutomations: [{ action: 'on', time: '06:30', frequency: 'weekdays' }],
          sensorAutomations: [{ action: 'off', sensor: 'temperature', condition: 'above', value: '28' }],
        },
      ]);
    });

    it('when a time is not HH:MM, then it is invalid input naming the field', () => {
      expect(() =>
        parseAutomations([{ timeAutomations: [{ action: 'on', time: '24:00', frequency: 'every day' }] }]),
      )
        .to.throw(InvalidInputError)
        .with.property('message')
        .that.contains('automations[0].timeAutomations[0].time');
    });

    it('when automations is not an array, then it is invalid input', () => {
      expect(() => parseAutomations({ $ne: null })).to.throw(InvalidInputError);
    });
  });

  describe('numbers', () => {
    it('when a value is a numeric string, then it becomes a number', () => {
      expect(requireNumber('23.45', 'value')).to.equal(23.45);
    });

    it('when a value is not numeric, then it is invalid input', () => {
      for (const bad of ['abc', '', null, {}, Number.NaN, Number.POSITIVE_INFINITY]) {
        expect(() => requireNumber(bad, 'value'), String(bad)).to.throw(InvalidInputError);
      }
    });
  });

  describe('charts', () => {
    const now = new Date('2026-11-22T10:00:00.000Z');
    const unchecked = Object.fromEntries(datasetFlags.map((flag) => [flag, false]));

    it('when a chart is added without fields, then SPEC defaults apply and update_interval is forced', () => {
      expect(newChart({ chartData: { update_interval: 1 } }, now)).to.deep.equal({
        chartId: 'defaultId',
        chartName: 'Default Name',
        chartData: {
          type: 'line',
          max_count: 100,
          data_interval: 1,
          update_interval: FORCED_UPDATE_INTERVAL,
          labels: [],
          datasets: [unchecked],
        },
        createdAt: now,
        updatedAt: now,
      });
    });

    it('when a dataset flag is set on a chart without datasets, then datasets[0] is created', () => {
      const chart = newChart({}, now);
      const later = new Date(now.getTime() + 1000);
      const changed = applyChartChange(
        chart,
        { kind: 'set-dataset-flag', flag: 'checked_lux', checked: true },
        later,
      );
      expect(changed.chartData['datasets']).to.deep.equal([{ ...unchecked, checked_lux: true }]);
      expect(changed.updatedAt).to.deep.equal(later);
      expect(changed.createdAt).to.deep.equal(now);
    });

    it('when dataTyp is not a plain identifier, then it is invalid input', () => {
      for (const bad of ['a.b', '$set', 'x y', '', '__proto__.x']) {
        expect(() => datasetFlag(bad), bad).to.throw(InvalidInputError);
      }
      expect(datasetFlag('moisture_1')).to.equal('checked_moisture_1');
    });
  });

  describe('time zones', () => {
    it('when a day in Berlin springs forward, then it lasts 23 hours', () => {
      const { start, end } = localDayBounds(new Date('2026-03-29T12:00:00Z'), 'Europe/Berlin');
      expect(start.toISOString()).to.equal('2026-03-28T23:00:00.000Z');
      expect(end.getTime() - start.getTime()).to.equal(23 * 3_600_000);
    });

    it('when a day in Berlin falls back, then it lasts 25 hours', () => {
      const { start, end } = localDayBounds(new Date('2026-10-25T12:00:00Z'), 'Europe/Berlin');
      expect(end.getTime() - start.getTime()).to.equal(25 * 3_600_000);
    });

    it('when a local time is converted to an instant and back, then it is the same wall time', () => {
      const instant = fromLocal({ year: 2026, month: 7, day: 1, hour: 6, minute: 30 }, 'Asia/Kolkata');
      expect(instant.toISOString()).to.equal('2026-07-01T01:00:00.000Z');
      expect(toLocal(instant, 'Asia/Kolkata')).to.include({ hour: 6, minute: 30, weekday: 3 });
    });
  });
});
