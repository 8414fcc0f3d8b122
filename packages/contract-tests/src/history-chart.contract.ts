import { type Chart, type ChartChange, type HistoryChart, type HistoryChartRepository } from '@hortus/core';
import { at, expect, expectPlainEntity, freshStorePerTest, MINUTE, type StoreFactory } from './store.js';

const USER = '65f0c0ffee0000000000abcd';

function chart(
  chartName: string,
  chartId = `id-${chartName}`,
  chartData: Record<string, unknown> = {},
): Chart {
  return {
    chartId,
    chartName,
    chartData: { type: 'line', max_count: 500, update_interval: 15000, ...chartData },
    createdAt: at(0),
    updatedAt: at(0),
  };
}

const setType = (type: string): ChartChange => ({ kind: 'set-field', field: 'type', value: type });
const setFlag = (flag: string, checked: boolean): ChartChange => ({
  kind: 'set-dataset-flag',
  flag,
  checked,
});

/** Charts compared as plain values, with Dates as epoch milliseconds. */
function comparable(record: HistoryChart | undefined): unknown {
  return record?.charts.map((c) => ({
    ...c,
    createdAt: c.createdAt.getTime(),
    updatedAt: c.updatedAt.getTime(),
  }));
}

export function historyChartRepositoryContract(
  name: string,
  createStore: StoreFactory<'historyCharts'>,
): void {
  describe(`${name}: HistoryChartRepository contract`, () => {
    const store = freshStorePerTest(createStore);
    const repository = (): HistoryChartRepository => store().historyCharts;

    describe('findByUser and appendChart', () => {
      it('when the user has no record, then findByUser answers undefined', async () => {
        await repository().appendChart('someone-else', chart('a'));

        expect(await repository().findByUser(USER)).to.equal(undefined);
        expect(await repository().findByUser('')).to.equal(undefined);
      });

      it('when the first chart is appended, then the record is created holding that chart as plain data', async () => {
        const record = await repository().appendChart(
          USER,
          chart('a', 'id-a', { datasets: [{ checked_lux: true }] }),
        );

        expectPlainEntity(record);
        expect(record.userId).to.equal(USER);
        expect(record.charts[0]?.createdAt).to.be.an.instanceOf(Date);
        expect(record.charts[0]?.updatedAt).to.be.an.instanceOf(Date);
        expect(comparable(record)).to.deep.equal(
          comparable({ ...record, charts: [chart('a', 'id-a', { datasets: [{ checked_lux: true }] })] }),
        );
        expect(await repository().findByUser(USER)).to.deep.equal(record);
      });

      it('when chart data nests arrays in arrays, then it is handed back unchanged', async () => {
        const chartData = {
          labels: [['06:00', '07:00'], []],
          datasets: [{ checked_lux: true, points: [[1, 2]] }],
        };

        await repository().appendChart(USER, chart('a', 'id-a', chartData));

        expect((await repository().findByUser(USER))?.charts[0]?.chartData).to.deep.include(chartData);
      });

      it('when more charts are appended, then they follow in order in the same record, duplicate names included', async () => {
        const first = await repository().appendChart(USER, chart('a'));
        await repository().appendChart(USER, chart('b'));
        const last = await repository().appendChart(USER, chart('a', 'second-a'));

        expect(last.id).to.equal(first.id);
        expect(last.charts.map((c) => c.chartId)).to.deep.equal(['id-a', 'id-b', 'second-a']);
      });

      it('when 50 charts are appended concurrently for one user, then all 50 land', async () => {
        const ids = Array.from({ length: 50 }, (_, i) => `chart-${i}`);

        await Promise.all(ids.map((id) => repository().appendChart(USER, chart(id, id))));

        const record = await repository().findByUser(USER);
        expect(record?.charts.map((c) => c.chartId).sort()).to.deep.equal([...ids].sort());
      });

      it('when charts are appended for different users, then each user has a separate record', async () => {
        await repository().appendChart(USER, chart('a'));
        await repository().appendChart('other-user', chart('b'));

        expect((await repository().findByUser(USER))?.charts.map((c) => c.chartName)).to.deep.equal(['a']);
        expect((await repository().findByUser('other-user'))?.charts.map((c) => c.chartName)).to.deep.equal([
          'b',
        ]);
      });

      it('when the caller changes its input or an answer, then the stored record is unchanged', async () => {
        const input = chart('a', 'id-a', { datasets: [{ checked_lux: true }] });
        const answer = await repository().appendChart(USER, input);

        ((input.chartData['datasets'] as unknown[])[0] as Record<string, unknown>)['checked_lux'] = false;
        input.createdAt.setTime(0);
        (answer.charts as Chart[]).length = 0;
        const found = (await repository().findByUser(USER)) as HistoryChart;
        (found.charts[0]?.chartData as Record<string, unknown>)['type'] = 'scatter';
        found.charts[0]?.updatedAt.setTime(0);

        expect(comparable(await repository().findByUser(USER))).to.deep.equal(
          comparable({ ...found, charts: [chart('a', 'id-a', { datasets: [{ checked_lux: true }] })] }),
        );
      });
    });

    describe('updateChart', () => {
      it('when several charts share the name, then only the first of them changes and the others are kept', async () => {
        await repository().appendChart(USER, chart('other'));
        await repository().appendChart(USER, chart('a', 'first-a'));
        await repository().appendChart(USER, chart('a', 'second-a'));

        const updated = await repository().updateChart(USER, 'a', setType('scatter'), at(5 * MINUTE));

        expect(updated?.charts.map((c) => [c.chartId, c.chartData['type']])).to.deep.equal([
          ['id-other', 'line'],
          ['first-a', 'scatter'],
          ['second-a', 'line'],
        ]);
        expect(await repository().findByUser(USER)).to.deep.equal(updated);
      });

      it('when a field is set, then the other chartData fields and createdAt are kept and updatedAt becomes now', async () => {
        await repository().appendChart(USER, chart('a', 'id-a', { data_interval: 5000, labels: ['x'] }));

        const updated = await repository().updateChart(
          USER,
          'a',
          { kind: 'set-field', field: 'data_interval', value: 60000 },
          at(5 * MINUTE),
        );

        const [changed] = updated?.charts ?? [];
        expect(changed?.chartData).to.deep.equal({
          type: 'line',
          max_count: 500,
          update_interval: 15000,
          data_interval: 60000,
          labels: ['x'],
        });
        expect(changed?.createdAt.getTime()).to.equal(at(0).getTime());
        expect(changed?.updatedAt.getTime()).to.equal(at(5 * MINUTE).getTime());
        expect(changed).to.include({ chartId: 'id-a', chartName: 'a' });
      });

      it('when a dataset flag is set on a chart without datasets, then datasets[0] is created holding the flag', async () => {
        await repository().appendChart(USER, chart('a'));

        const updated = await repository().updateChart(
          USER,
          'a',
          setFlag('checked_humidity', true),
          at(MINUTE),
        );

        expect(updated?.charts[0]?.chartData['datasets']).to.deep.equal([{ checked_humidity: true }]);
        expect(updated?.charts[0]?.chartData['type']).to.equal('line');
      });

      it('when a dataset flag is set on existing datasets, then the other flags and datasets are kept', async () => {
        const datasets = [{ checked_temperature: true, checked_lux: false }, { note: 'second' }];
        await repository().appendChart(USER, chart('a', 'id-a', { datasets }));

        const updated = await repository().updateChart(USER, 'a', setFlag('checked_lux', true), at(MINUTE));

        expect(updated?.charts[0]?.chartData['datasets']).to.deep.equal([
          { checked_temperature: true, checked_lux: true },
          { note: 'second' },
        ]);
      });

      it('when different flags of one chart are set concurrently, then every flag lands', async () => {
        await repository().appendChart(USER, chart('a'));
        const flags = ['checked_temperature', 'checked_humidity', 'checked_lux', 'checked_moisture_1'];

        await Promise.all(
          flags.map((flag) => repository().updateChart(USER, 'a', setFlag(flag, true), at(MINUTE))),
        );

        const record = await repository().findByUser(USER);
        expect(record?.charts[0]?.chartData['datasets']).to.deep.equal([
          Object.fromEntries(flags.map((f) => [f, true])),
        ]);
      });

      it('when the user has no record or no chart of that name, then it answers undefined and changes nothing', async () => {
        await repository().appendChart(USER, chart('a'));
        const before = await repository().findByUser(USER);

        expect(await repository().updateChart('nobody', 'a', setType('scatter'), at(MINUTE))).to.equal(
          undefined,
        );
        expect(await repository().updateChart(USER, 'missing', setType('scatter'), at(MINUTE))).to.equal(
          undefined,
        );
        expect(await repository().findByUser(USER)).to.deep.equal(before);
        expect(await repository().findByUser('nobody')).to.equal(undefined);
      });
    });

    describe('removeCharts', () => {
      it('when charts share the name, then every one of them is removed and the others keep their order', async () => {
        for (const [name, id] of [
          ['a', '1'],
          ['b', '2'],
          ['a', '3'],
          ['c', '4'],
          ['a', '5'],
        ] as const) {
          await repository().appendChart(USER, chart(name, id));
        }

        const updated = await repository().removeCharts(USER, 'a');

        expect(updated?.charts.map((c) => c.chartId)).to.deep.equal(['2', '4']);
        expect(await repository().findByUser(USER)).to.deep.equal(updated);
      });

      it('when no chart has the name, then the record is answered unchanged', async () => {
        const record = await repository().appendChart(USER, chart('a'));

        expect(await repository().removeCharts(USER, 'missing')).to.deep.equal(record);
      });

      it('when the user has no record, then it answers undefined and creates none', async () => {
        expect(await repository().removeCharts(USER, 'a')).to.equal(undefined);
        expect(await repository().findByUser(USER)).to.equal(undefined);
      });
    });
  });
}
