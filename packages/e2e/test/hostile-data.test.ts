import { AutomationEngine, sensorTopics } from '@hortus/core';
import { expect, startTestServer, type TestServer, testNow } from './harness.js';

const TEMPERATURE = sensorTopics.temperature;
const minutes = (n: number): string => new Date(testNow.getTime() + n * 60_000).toISOString();

type Reading = { value: number; time: string };

describe('hostile data over HTTP', () => {
  let api: TestServer;
  before(async () => {
    api = await startTestServer();
  });
  after(async () => {
    await api.close();
  });

  describe('future-dated readings', () => {
    it('when a reading is stamped 2099, then it is rejected, never becomes latest and never fires a sensor rule', async () => {
      const group = api.unique('demo');
      await api.seed.group(group);
      await api.seed.action(group, 'ventilator_1');
      const rule = { action: 'on', sensor: 'temperature', condition: 'above', value: '28' };
      const update = await api.call('POST', '/api/actions/update', {
        json: {
          group,
          object: 'ventilator_1',
          automations: [{ timeAutomations: [], sensorAutomations: [rule] }],
        },
      });
      expect(update.status).to.equal(200);
      await api.seed.readings([{ group, topic: TEMPERATURE, value: 21, time: minutes(-1) }]);

      const reply = await api.call('POST', '/api/data/readings', {
        json: { group, topic: TEMPERATURE, value: 99, time: '2099-01-01T00:00:00Z' },
      });

      expect(reply.status).to.equal(400);
      const body = reply.json() as { message: string; rejected: { index: number; reason: string }[] };
      expect(body.rejected).to.have.length(1);
      expect(body.rejected[0]?.reason).to.match(/ahead of the server's clock/u);
      const latest = await api.get(`/api/data/latestdata/Temperature?groupId=${group}`);
      expect((latest.json() as Reading[]).map((reading) => reading.value)).to.deep.equal([21]);
      await api.container.get(AutomationEngine).tick();
      const actions = await api.get(`/api/actions/current_state?group=${group}`);
      const ventilator = (actions.json() as { message: { object: string; value: string }[] }).message.find(
        (action) => action.object === 'ventilator_1',
      );
      expect(ventilator?.value).to.equal('off');
    });

    it('when a batch mixes readings within and beyond the allowed skew, then only those beyond are rejected, by index', async () => {
      const group = api.unique('skew');
      const reply = await api.call('POST', '/api/data/readings', {
        json: [
          { group, topic: TEMPERATURE, value: 1, time: minutes(4) },
          { group, topic: TEMPERATURE, value: 2, time: minutes(6) },
          { group, topic: TEMPERATURE, value: 3, time: minutes(-60) },
        ],
      });

      expect(reply.status).to.equal(202);
      const body = reply.json() as { accepted: number; rejected: { index: number; reason: string }[] };
      expect(body.accepted).to.equal(2);
      expect(body.rejected.map((rejection) => rejection.index)).to.deep.equal([1]);
      const latest = await api.get(`/api/data/latestdata/Temperature?groupId=${group}`);
      expect((latest.json() as Reading[]).map((reading) => reading.time)).to.deep.equal([minutes(4)]);
    });
  });

  describe('strict dates', () => {
    for (const text of ['2025-02-30', '1', 'March 7 2025', '2025-06-15T10:00:00']) {
      it(`when startDate is ${JSON.stringify(text)}, then 400 {message} naming startDate`, async () => {
        const reply = await api.get(
          `/api/data/All/temperature?groupId=g&startDate=${encodeURIComponent(text)}`,
        );
        expect(reply.status).to.equal(400);
        expect((reply.json() as { message: string }).message).to.match(/^startDate must be/u);
      });

      it(`when a reading's time is ${JSON.stringify(text)}, then it is rejected with a reason naming time`, async () => {
        const reply = await api.call('POST', '/api/data/readings', {
          json: { group: api.unique('dates'), topic: TEMPERATURE, value: 1, time: text },
        });
        expect(reply.status).to.equal(400);
        const body = reply.json() as { rejected: { reason: string }[] };
        expect(body.rejected[0]?.reason).to.match(/^time must be an RFC 3339 date-time/u);
      });
    }

    it('when endDate is a valid date alone, then it covers that whole day', async () => {
      const group = api.unique('day');
      await api.seed.readings([
        { group, topic: TEMPERATURE, value: 1, time: '2025-06-14T23:59:59.999Z' },
        { group, topic: TEMPERATURE, value: 2, time: '2025-06-15T00:00:00.000Z' },
      ]);
      const reply = await api.get(
        `/api/data/All/temperature?groupId=${group}&startDate=2025-06-14&endDate=2025-06-14`,
      );
      expect((reply.json() as Reading[]).map((reading) => reading.value)).to.deep.equal([1]);
    });
  });

  describe('quotas (MAX_TOPICS_PER_GROUP=2, MAX_DEVICES_PER_GROUP=1)', () => {
    let capped: TestServer;
    before(async () => {
      capped = await startTestServer({ MAX_TOPICS_PER_GROUP: '2', MAX_DEVICES_PER_GROUP: '1' });
    });

    it('when a group holds the most devices allowed, then creating another is 409 {message} and stores nothing', async () => {
      const group = capped.unique('devices');
      const first = await capped.get(`/api/devices/create?deviceId=AA:01&group=${group}&type=box`);
      expect(first.status).to.equal(201);

      const second = await capped.get(`/api/devices/create?deviceId=AA:02&group=${group}&type=box`);

      expect(second.status).to.equal(409);
      expect(second.json()).to.deep.equal({
        message: `Group ${group} already holds 1 devices, the most allowed`,
      });
      const list = await capped.get(`/api/devices?group=${group}`);
      expect((list.json() as { message: unknown[] }).message).to.have.length(1);
    });
    after(async () => {
      await capped.close();
    });

    it('when a batch brings a topic beyond the cap, then that reading is rejected with a reason and the rest stored', async () => {
      const group = capped.unique('flood');
      const reply = await capped.call('POST', '/api/data/readings', {
        json: { group, values: { 'esp/a': 1, 'esp/b': 2, 'esp/c': 3 } },
      });

      expect(reply.status).to.equal(202);
      expect(reply.json()).to.deep.equal({
        accepted: 2,
        stored: 2,
        rejected: [
          {
            index: 0,
            topic: 'esp/c',
            reason: `topic is new and group ${group} already holds 2 topics, the most allowed`,
          },
        ],
      });
      const again = await capped.call('POST', '/api/data/readings', {
        json: [
          { group, topic: 'esp/a', value: 4 },
          { group, topic: 'esp/d', value: 5 },
        ],
      });
      expect((again.json() as { rejected: { index: number }[] }).rejected.map((r) => r.index)).to.deep.equal([
        1,
      ]);
    });
  });
});
