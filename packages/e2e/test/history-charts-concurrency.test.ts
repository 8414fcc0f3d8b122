import { expect, startTestServer, type TestServer } from './harness.js';

describe('HTTP /api/historyChart under concurrent requests', () => {
  let api: TestServer;
  before(async () => {
    api = await startTestServer();
  });
  after(async () => {
    await api.close();
  });

  it('when 30 charts are added concurrently for one user, then all 30 are stored and each answer holds its own', async function () {
    this.timeout(30_000);
    const userId = api.unique('65f0c0ffee01');
    const names = Array.from({ length: 30 }, (_, i) => `chart-${i}`);

    const replies = await Promise.all(
      names.map((chartName) =>
        api.call('POST', `/api/historyChart/update/${userId}`, {
          json: { chartId: chartName, chartName, chartData: { type: 'line' } },
        }),
      ),
    );

    replies.forEach((reply, i) => {
      expect(reply.status, names[i]).to.equal(200);
      const charts = (reply.json() as { charts: { chartName: string }[] }).charts;
      expect(charts.map((chart) => chart.chartName)).to.include(names[i]);
    });
    const all = await api.get(`/api/historyChart/all/${userId}`);
    expect(all.status).to.equal(200);
    const stored = (all.json() as { charts: { chartName: string }[] }).charts.map((chart) => chart.chartName);
    expect([...stored].sort()).to.deep.equal([...names].sort());
  });
});
