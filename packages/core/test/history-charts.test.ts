import {
  datasetFlags,
  HISTORY_CHART_REPOSITORY,
  type HistoryChartRepository,
  AddChart,
  ChangeChart,
  DeleteChart,
  FORCED_UPDATE_INTERVAL,
  GetChartSettings,
  GetHistoryCharts,
  InvalidInputError,
  MAX_CHARTS_PER_USER,
  QuotaExceededError,
  NotFoundError,
} from '@hortus/core';
import { createTestApp, expect, type TestApp } from './support.js';

const USER = '65f0c0ffee0000000000abcd';
/** datasets[0] as every chart gets it (COMPAT): each flag false unless set. */
const unchecked = Object.fromEntries(datasetFlags.map((flag) => [flag, false]));
const defaults = { type: 'line', max_count: 100, data_interval: 1, update_interval: 15000, labels: [] };
const NOW = '2024-06-15T08:30:00.000Z';

describe('history chart use cases', () => {
  let app: TestApp;

  beforeEach(() => {
    app = createTestApp({ now: NOW });
  });

  describe('AddChart', () => {
    it('when a chart is added with no fields, then SPEC defaults apply and the record is created', async () => {
      const record = await app.get(AddChart).execute({ userId: USER });

      expect(record.userId).to.equal(USER);
      expect(record.charts).to.have.lengthOf(1);
      const [chart] = record.charts;
      expect(chart).to.include({ chartId: 'defaultId', chartName: 'Default Name' });
      expect(chart?.chartData).to.deep.equal({ ...defaults, datasets: [unchecked] });
      expect(chart?.createdAt.toISOString()).to.equal(NOW);
      expect(chart?.updatedAt.toISOString()).to.equal(NOW);
    });

    it('when the client sends its own update_interval, then it is overridden with 15000 and the rest kept', async () => {
      const record = await app.get(AddChart).execute({
        userId: USER,
        chartId: 'c1',
        chartName: 'Climate',
        chartData: { type: 'line', max_count: 500, update_interval: 1000, datasets: [{ checked_lux: true }] },
      });

      expect(FORCED_UPDATE_INTERVAL).to.equal(15000);
      expect(record.charts[0]?.chartData).to.deep.equal({
        ...defaults,
        max_count: 500,
        datasets: [{ ...unchecked, checked_lux: true }],
      });
    });

    it('when more charts are added later, then they are appended in order with their own times, same names allowed', async () => {
      await app.get(AddChart).execute({ userId: USER, chartName: 'Climate' });
      app.clock.advance(60_000);
      const record = await app
        .get(AddChart)
        .execute({ userId: USER, chartName: 'Climate', chartId: 'second' });

      expect(record.charts.map((c) => c.chartId)).to.deep.equal(['defaultId', 'second']);
      expect(record.charts[1]?.createdAt.toISOString()).to.equal('2024-06-15T08:31:00.000Z');
    });

    it('when chartData is not an object or userId is empty, then it is invalid input and nothing is stored', async () => {
      await expect(app.get(AddChart).execute({ userId: USER, chartData: [1] })).to.be.rejectedWith(
        InvalidInputError,
      );
      await expect(app.get(AddChart).execute({ userId: '' })).to.be.rejectedWith(InvalidInputError);
      await expect(app.get(GetHistoryCharts).execute({ userId: USER })).to.be.rejectedWith(NotFoundError);
    });

    it('when the user already keeps the maximum number of charts, then adding another exceeds the quota', async () => {
      for (let i = 0; i < MAX_CHARTS_PER_USER; i += 1) await app.get(AddChart).execute({ userId: USER });

      await expect(app.get(AddChart).execute({ userId: USER })).to.be.rejectedWith(QuotaExceededError);
    });
  });

  describe('ChangeChart', () => {
    beforeEach(async () => {
      await app.get(AddChart).execute({
        userId: USER,
        chartName: 'Climate',
        chartData: { type: 'line', datasets: [{ checked_temperature: true, checked_lux: false }] },
      });
      app.clock.advance(5_000);
    });

    it('when a dataset flag is changed, then datasets[0].checked_<dataTyp> is set, other flags kept, updatedAt now', async () => {
      const record = await app
        .get(ChangeChart)
        .setDatasetFlag({ userId: USER, chartName: 'Climate', dataTyp: 'lux', checked: true });

      const [chart] = record.charts;
      expect(chart?.chartData['datasets']).to.deep.equal([
        { ...unchecked, checked_temperature: true, checked_lux: true },
      ]);
      expect(chart?.updatedAt.toISOString()).to.equal('2024-06-15T08:30:05.000Z');
      expect(chart?.createdAt.toISOString()).to.equal(NOW);
    });

    it('when a chart has no datasets, then the flag creates datasets[0]', async () => {
      await app.get(AddChart).execute({ userId: USER, chartName: 'Bare' });

      const record = await app
        .get(ChangeChart)
        .setDatasetFlag({ userId: USER, chartName: 'Bare', dataTyp: 'moisture_1', checked: false });

      expect(record.charts[1]?.chartData['datasets']).to.deep.equal([unchecked]);
    });

    it('when a field is set, then only that chartData field changes', async () => {
      const change = app.get(ChangeChart);
      await change.setField({ userId: USER, chartName: 'Climate', field: 'type', value: 'scatter' });
      await change.setField({ userId: USER, chartName: 'Climate', field: 'data_interval', value: '60000' });
      await change.setField({ userId: USER, chartName: 'Climate', field: 'update_interval', value: 5000 });
      const record = await change.setField({
        userId: USER,
        chartName: 'Climate',
        field: 'max_count',
        value: 4000,
      });

      expect(record.charts[0]?.chartData).to.deep.equal({
        ...defaults,
        type: 'scatter',
        data_interval: 60000,
        update_interval: 5000,
        max_count: 4000,
        datasets: [{ ...unchecked, checked_temperature: true }],
      });
    });

    it('when the user or the chart name is unknown, then it is not found with "No history chart found."', async () => {
      const change = app.get(ChangeChart);
      for (const [userId, chartName] of [
        ['unknown-user', 'Climate'],
        [USER, 'Unknown'],
        [{ $ne: null }, 'Climate'],
      ] as const) {
        await expect(
          change.setDatasetFlag({ userId, chartName, dataTyp: 'lux', checked: true }),
        ).to.be.rejectedWith(NotFoundError, /^No history chart found\.$/u);
      }
    });

    it('when dataTyp is not a plain identifier or checked is not a boolean, then it is invalid input', async () => {
      const change = app.get(ChangeChart);
      await expect(
        change.setDatasetFlag({ userId: USER, chartName: 'Climate', dataTyp: 'a.b', checked: true }),
      ).to.be.rejectedWith(InvalidInputError);
      await expect(
        change.setDatasetFlag({ userId: USER, chartName: 'Climate', dataTyp: 'lux', checked: 'true' }),
      ).to.be.rejectedWith(InvalidInputError);
    });
  });

  describe('GetChartSettings, GetHistoryCharts and DeleteChart', () => {
    beforeEach(async () => {
      const add = app.get(AddChart);
      await add.execute({ userId: USER, chartName: 'Climate', chartData: { type: 'line' } });
      await add.execute({ userId: USER, chartName: 'Soil', chartData: { type: 'scatter' } });
      await add.execute({ userId: USER, chartName: 'Climate', chartData: { type: 'second' } });
    });

    it('when the chart exists, then its settings are the chartData of the first chart of that name', async () => {
      expect(await app.get(GetChartSettings).execute({ userId: USER, chartName: 'Climate' })).to.deep.equal({
        ...defaults,
        datasets: [unchecked],
      });
    });

    it('when a stored chart lacks the defaults (written by an older client), then it is read with them', async () => {
      const repository = app.container.get<HistoryChartRepository>(HISTORY_CHART_REPOSITORY);
      const at = new Date(NOW);
      await repository.appendChart('older-user', {
        chartId: 'old',
        chartName: 'Old',
        chartData: { type: 'scatter', datasets: [{ checked_humidity: true }] },
        createdAt: at,
        updatedAt: at,
      });

      expect(
        await app.get(GetChartSettings).execute({ userId: 'older-user', chartName: 'Old' }),
      ).to.deep.equal({
        ...defaults,
        type: 'scatter',
        update_interval: 15000,
        datasets: [{ ...unchecked, checked_humidity: true }],
      });
      const record = await app.get(GetHistoryCharts).execute({ userId: 'older-user' });
      expect(record.charts[0]?.chartData).to.include({ max_count: 100, data_interval: 1 });
    });

    it('when the user or chart is unknown, then settings are not found with "No history chart found."', async () => {
      for (const input of [
        { userId: 'unknown-user', chartName: 'Climate' },
        { userId: USER, chartName: 'Unknown' },
      ]) {
        await expect(app.get(GetChartSettings).execute(input)).to.be.rejectedWith(
          NotFoundError,
          /^No history chart found\.$/u,
        );
      }
    });

    it('when the user has a record, then the whole record is answered; otherwise it is not found', async () => {
      expect((await app.get(GetHistoryCharts).execute({ userId: USER })).charts).to.have.lengthOf(3);
      await expect(app.get(GetHistoryCharts).execute({ userId: 'unknown-user' })).to.be.rejectedWith(
        NotFoundError,
        /^No history chart found\.$/u,
      );
    });

    it('when a chart name is deleted, then every chart of that name is removed and the record answered', async () => {
      const record = await app.get(DeleteChart).execute({ userId: USER, chartName: 'Climate' });

      expect(record.charts.map((c) => c.chartName)).to.deep.equal(['Soil']);
      expect((await app.get(GetHistoryCharts).execute({ userId: USER })).charts).to.have.lengthOf(1);
    });

    it('when the user has no record, then deleting is not found with "No chart found with this ID."', async () => {
      await expect(
        app.get(DeleteChart).execute({ userId: 'unknown-user', chartName: 'Climate' }),
      ).to.be.rejectedWith(NotFoundError, /^No chart found with this ID\.$/u);
    });

    it('when the record has no chart of that name, then deleting is not found with "No history chart found."', async () => {
      await expect(app.get(DeleteChart).execute({ userId: USER, chartName: 'Unknown' })).to.be.rejectedWith(
        NotFoundError,
        /^No history chart found\.$/u,
      );
      expect((await app.get(GetHistoryCharts).execute({ userId: USER })).charts).to.have.lengthOf(3);
    });
  });
});
