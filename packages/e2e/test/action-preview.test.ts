import { expect, startTestServer, type TestServer } from './harness.js';

describe('HTTP GET /api/actions/preview', () => {
  let api: TestServer;
  before(async () => {
    api = await startTestServer();
  });
  after(async () => {
    await api.close();
  });

  it("when a group has time rules, then {message: {switches}} lists each coming switch in UTC and in the group's local time, and nothing is switched", async () => {
    const group = api.unique('greenhouse');
    await api.seed.group(group);
    await api.seed.action(group, 'led_1');
    const timeAutomations = [
      { action: 'on', time: '18:00', frequency: 'every day' },
      { action: 'off', time: '22:00', frequency: 'every day' },
    ];
    expect(
      (
        await api.call('POST', '/api/actions/update', {
          json: { group, object: 'led_1', automations: [{ timeAutomations, sensorAutomations: [] }] },
        })
      ).status,
    ).to.equal(200);
    const settings = await api.call('PUT', `/api/group/update?groupId=${group}`, {
      json: { settings: [{ timeZone: 'Europe/Berlin' }] },
    });
    expect(settings.status).to.equal(200);

    // testNow is 2025-06-15 12:30 UTC (14:30 in Berlin, summer time).
    const reply = await api.get(`/api/actions/preview?group=${group}&hours=12`);

    expect(reply.status).to.equal(200);
    const { message } = reply.json() as {
      message: { timeZone: string; switches: Record<string, unknown>[] };
    };
    expect(message.timeZone).to.equal('Europe/Berlin');
    expect(message.switches).to.deep.equal([
      {
        at: '2025-06-15T16:00:00.000Z',
        local: '2025-06-15T18:00:00+02:00',
        object: 'led_1',
        value: 'on',
        previousValue: 'off',
        trigger: 'time',
        rule: '18:00 every day -> on',
      },
      {
        at: '2025-06-15T20:00:00.000Z',
        local: '2025-06-15T22:00:00+02:00',
        object: 'led_1',
        value: 'off',
        previousValue: 'on',
        trigger: 'time',
        rule: '22:00 every day -> off',
      },
    ]);
    const log = await api.get(`/api/actions/automation_log?group=${group}`);
    expect(log.json()).to.deep.equal({ message: [] });
  });

  it('when group is missing or unknown, or hours is not a whole number from 1 to 168, then a 4xx {message}', async () => {
    const cases: [string, number, string][] = [
      ['', 400, 'group is required'],
      ['?group=g&hours=soon', 400, 'hours must be a whole number'],
      ['?group=g&hours=0', 400, 'hours must be a whole number from 1 to 168'],
      ['?group=g&hours=169', 400, 'hours must be a whole number from 1 to 168'],
      [`?group=${api.unique('nowhere')}`, 404, ''],
    ];
    for (const [query, status, message] of cases) {
      const reply = await api.get(`/api/actions/preview${query}`);
      expect(reply.status, query).to.equal(status);
      const body = reply.json() as { message: unknown };
      expect(body.message, query).to.be.a('string');
      if (message !== '') expect(body, query).to.deep.equal({ message });
    }
  });
});
