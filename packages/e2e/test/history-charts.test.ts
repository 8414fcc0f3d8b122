import { datasetFlags } from '@hortus/core';
import { expect, startTestServer, testNow, type TestServer } from './harness.js';

type Chart = {
  chartId: string;
  chartName: string;
  chartData: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
};
type Record_ = { _id: string; userId: string; charts: Chart[] };

describe('HTTP /api/historyChart', () => {
  let api: TestServer;
  before(async () => {
    api = await startTestServer();
  });
  after(async () => {
    await api.close();
  });

  async function withChart(chartName = 'Greenhouse'): Promise<string> {
    const userId = api.unique('65f0c0ffee00');
    const reply = await api.call('POST', `/api/historyChart/update/${userId}`, {
      json: {
        chartId: 'c1',
        chartName,
        chartData: { type: 'line', update_interval: 1, datasets: [{ checked_lux: false }] },
      },
    });
    expect(reply.status).to.equal(200);
    return userId;
  }
  const notFound = { error: 'No history chart found.' };
  /** What every chart holds unless the client set it (COMPAT "what a new chart must hold"). */
  const defaults = { type: 'line', max_count: 100, data_interval: 1, update_interval: 15000, labels: [] };
  const unchecked = Object.fromEntries(datasetFlags.map((flag) => [flag, false]));

  it('when a chart is added, then 200 with the record; update_interval is forced to 15000', async () => {
    const userId = api.unique('user');
    const reply = await api.call('POST', `/api/historyChart/update/${userId}`, {
      json: { chartName: 'Beds', chartData: { type: 'scatter', update_interval: 1 } },
    });
    expect(reply.status).to.equal(200);
    const record = reply.json() as Record_;
    expect(record).to.include({ userId }).and.to.have.property('_id');
    expect(record.charts).to.deep.equal([
      {
        chartId: 'defaultId',
        chartName: 'Beds',
        chartData: { ...defaults, type: 'scatter', datasets: [unchecked] },
        createdAt: testNow.toISOString(),
        updatedAt: testNow.toISOString(),
      },
    ]);
  });

  it('when a chart is added with an empty body, then the SPEC defaults apply', async () => {
    const reply = await api.call('POST', `/api/historyChart/update/${api.unique('user')}`, { json: {} });
    expect((reply.json() as Record_).charts[0]).to.deep.include({
      chartId: 'defaultId',
      chartName: 'Default Name',
      chartData: { ...defaults, datasets: [unchecked] },
    });
  });

  it('when chartData is not an object, then 400 {error}', async () => {
    const reply = await api.call('POST', `/api/historyChart/update/${api.unique('user')}`, {
      json: { chartData: 'x' },
    });
    expect(reply.status).to.equal(400);
    expect(reply.json()).to.deep.equal({ error: 'chartData must be object' });
  });

  it('GET /all answers the record, and 404 {error} for an unknown or malformed user', async () => {
    const userId = await withChart();
    const reply = await api.get(`/api/historyChart/all/${userId}`);
    expect(reply.status).to.equal(200);
    expect((reply.json() as Record_).charts.map((chart) => chart.chartName)).to.deep.equal(['Greenhouse']);
    for (const unknown of ['000000000000000000000000', 'not-an-id', 'x'.repeat(300)]) {
      const missing = await api.get(`/api/historyChart/all/${unknown}`);
      expect(missing.status).to.equal(404);
      expect(missing.json()).to.deep.equal(notFound);
    }
  });

  it('GET /settings answers chartData, and 404 {error} for an unknown user or chart (old service: 500)', async () => {
    const userId = await withChart();
    const reply = await api.get(`/api/historyChart/settings/${userId}/Greenhouse`);
    expect(reply.status).to.equal(200);
    expect(reply.json()).to.deep.equal({ ...defaults, datasets: [unchecked] });
    for (const path of [`${userId}/Nope`, `${api.unique('nobody')}/Greenhouse`]) {
      const missing = await api.get(`/api/historyChart/settings/${path}`);
      expect(missing.status).to.equal(404);
      expect(missing.json()).to.deep.equal(notFound);
    }
  });

  it('when a chart name has a space, then the encoded path finds it', async () => {
    const userId = await withChart('My Chart');
    const reply = await api.get(`/api/historyChart/settings/${userId}/My%20Chart`);
    expect(reply.status).to.equal(200);
  });

  it('PUT /change_datasets sets datasets[0].checked_<dataTyp>', async () => {
    const userId = await withChart();
    api.clock.advance(1000);
    const reply = await api.call('PUT', `/api/historyChart/change_datasets/${userId}/Greenhouse/moisture_1`, {
      json: { checked: true },
    });
    expect(reply.status).to.equal(200);
    const chart = (reply.json() as Record_).charts[0];
    expect(chart?.chartData['datasets']).to.deep.equal([{ ...unchecked, checked_moisture_1: true }]);
    expect(chart?.updatedAt).to.not.equal(chart?.createdAt);
  });

  it('PUT /change_datasets refuses a non-boolean checked and an unsafe dataTyp with 400 {error}', async () => {
    const userId = await withChart();
    const notBoolean = await api.call('PUT', `/api/historyChart/change_datasets/${userId}/Greenhouse/lux`, {
      json: { checked: 'yes' },
    });
    expect(notBoolean.status).to.equal(400);
    expect(notBoolean.json()).to.deep.equal({ error: 'checked must be boolean' });
    const unsafe = await api.call('PUT', `/api/historyChart/change_datasets/${userId}/Greenhouse/a.b`, {
      json: { checked: true },
    });
    expect(unsafe.status).to.equal(400);
    expect(unsafe.json()).to.have.all.keys('error');
  });

  it('each change_* route sets its field and answers 404 {error} for an unknown chart', async () => {
    const userId = await withChart();
    const changes: [string, string, unknown, unknown][] = [
      ['change_type', 'type', 'scatter', 'scatter'],
      ['change_data_interval', 'data_interval', 60000, 60000],
      ['change_update_interval', 'update_interval', '5000', 5000],
      ['change_max_count', 'max_count', 400, 400],
    ];
    for (const [route, field, sent, stored] of changes) {
      const reply = await api.call('PUT', `/api/historyChart/${route}/${userId}/Greenhouse`, {
        json: { [field]: sent },
      });
      expect(reply.status, route).to.equal(200);
      expect((reply.json() as Record_).charts[0]?.chartData[field], route).to.equal(stored);
      const missing = await api.call('PUT', `/api/historyChart/${route}/${userId}/Nope`, {
        json: { [field]: sent },
      });
      expect(missing.status, route).to.equal(404);
      expect(missing.json(), route).to.deep.equal(notFound);
    }
  });

  it('when a change_* body lacks its field or holds an operator object, then 400 {error}', async () => {
    const userId = await withChart();
    const missing = await api.call('PUT', `/api/historyChart/change_type/${userId}/Greenhouse`, { json: {} });
    expect(missing.status).to.equal(400);
    expect(missing.json()).to.deep.equal({ error: 'type is required' });
    const operator = await api.call('PUT', `/api/historyChart/change_max_count/${userId}/Greenhouse`, {
      json: { max_count: { $inc: 1 } },
    });
    expect(operator.status).to.equal(400);
  });

  it('DELETE /delete removes every chart of that name and answers the record', async () => {
    const userId = await withChart();
    await api.call('POST', `/api/historyChart/update/${userId}`, { json: { chartName: 'Greenhouse' } });
    await api.call('POST', `/api/historyChart/update/${userId}`, { json: { chartName: 'Keep' } });
    const reply = await api.call('DELETE', `/api/historyChart/delete/${userId}/Greenhouse`);
    expect(reply.status).to.equal(200);
    expect((reply.json() as Record_).charts.map((chart) => chart.chartName)).to.deep.equal(['Keep']);
  });

  it('DELETE /delete answers 404 with the COMPAT texts for no record and for no such chart', async () => {
    const noRecord = await api.call('DELETE', `/api/historyChart/delete/${api.unique('nobody')}/Greenhouse`);
    expect(noRecord.status).to.equal(404);
    expect(noRecord.json()).to.deep.equal({ error: 'No chart found with this ID.' });
    const userId = await withChart();
    const noChart = await api.call('DELETE', `/api/historyChart/delete/${userId}/Nope`);
    expect(noChart.status).to.equal(404);
    expect(noChart.json()).to.deep.equal(notFound);
  });
});
