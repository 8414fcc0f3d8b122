import { expect, startTestServer, type TestServer } from './harness.js';

describe('HTTP /api/actions', () => {
  let api: TestServer;
  before(async () => {
    api = await startTestServer();
  });
  after(async () => {
    await api.close();
  });

  describe('GET / (set a value)', () => {
    it('when the action exists, then its value is set and the answer is 200 {message}', async () => {
      const group = api.unique('greenhouse');
      await api.seed.action(group, 'pump_1');
      const reply = await api.get(`/api/actions/?group=${group}&object=pump_1&value=on`);
      expect(reply.status).to.equal(200);
      expect(reply.json()).to.deep.equal({ message: 'Actions success' });
      const state = await api.get(`/api/actions/current_state?group=${group}`);
      expect((state.json() as { message: { value: string }[] }).message[0]?.value).to.equal('on');
    });

    it('when no action matches group and object, then 400 {message: "no data found"}', async () => {
      const reply = await api.get(`/api/actions?group=${api.unique('g')}&object=pump_1&value=on`);
      expect(reply.status).to.equal(400);
      expect(reply.json()).to.deep.equal({ message: 'no data found' });
    });

    it('when value is missing, then 400 {message} names it', async () => {
      const reply = await api.get('/api/actions?group=g&object=pump_1');
      expect(reply.status).to.equal(400);
      expect(reply.json()).to.deep.equal({ message: 'value is required' });
    });

    it('when a parameter is repeated, then 400 and nothing is written', async () => {
      const group = api.unique('greenhouse');
      await api.seed.action(group, 'pump_1');
      const reply = await api.get(`/api/actions?group=${group}&object=pump_1&value=on&value=off`);
      expect(reply.status).to.equal(400);
      expect(reply.json()).to.deep.equal({ message: 'value must be given only once' });
      const state = await api.get(`/api/actions/current_state?group=${group}`);
      expect((state.json() as { message: { value: string }[] }).message[0]?.value).to.equal('off');
    });

    it('when a value is longer than allowed, then 400', async () => {
      const reply = await api.get(`/api/actions?group=g&object=pump_1&value=${'x'.repeat(65)}`);
      expect(reply.status).to.equal(400);
      expect(reply.json()).to.deep.equal({ message: 'value must be at most 64 characters' });
    });
  });

  describe('GET /current_state', () => {
    it('when the group has actions, then 200 {message: [Action]} with _id', async () => {
      const group = api.unique('greenhouse');
      await api.seed.action(group, 'pump_1');
      await api.seed.action(group, 'led_1', 'on');
      const reply = await api.get(`/api/actions/current_state?group=${group}`);
      expect(reply.status).to.equal(200);
      const { message } = reply.json() as { message: Record<string, unknown>[] };
      expect(message.map((action) => [action['object'], action['value']])).to.deep.equal([
        ['led_1', 'on'],
        ['pump_1', 'off'],
      ]);
      expect(message[0]).to.have.all.keys('_id', 'group', 'object', 'value', 'automations');
    });

    it('when the group has no actions, then 200 {message: []} (the old service hung)', async () => {
      const reply = await api.get(`/api/actions/current_state?group=${api.unique('empty')}`);
      expect(reply.status).to.equal(200);
      expect(reply.json()).to.deep.equal({ message: [] });
    });

    it('when group is missing, then 400 {message}', async () => {
      const reply = await api.get('/api/actions/current_state');
      expect(reply.status).to.equal(400);
      expect(reply.json()).to.deep.equal({ message: 'group is required' });
    });
  });

  describe('POST /update', () => {
    const automations = [
      {
        _id: '65f0c0ffee',
        timeAutomations: [{ _id: 't1', action: 'on', time: '06:30', frequency: 'weekdays' }],
        sensorAutomations: [
          { _id: 's1', action: 'off', sensor: 'temperature', condition: 'above', value: '28' },
        ],
      },
    ];

    it('when automations echo _id fields, then they are accepted, dropped, and stored', async () => {
      const group = api.unique('greenhouse');
      await api.seed.action(group, 'ventilator_1');
      const reply = await api.call('POST', '/api/actions/update', {
        json: { group, object: 'ventilator_1', automations },
      });
      expect(reply.status).to.equal(200);
      expect(reply.json()).to.deep.equal({ message: 'Data updated successfully' });
      const stored = await api.get(`/api/actions/get_automations?groupId=${group}&deviceName=ventilator_1`);
      expect((stored.json() as { automations: unknown }).automations).to.deep.equal([
        {
          timeAutomations: [{ action: 'on', time: '06:30', frequency: 'weekdays' }],
          sensorAutomations: [{ action: 'off', sensor: 'temperature', condition: 'above', value: '28' }],
        },
      ]);
    });

    it('when no action matches, then 404 {message: "Action not found"}', async () => {
      const reply = await api.call('POST', '/api/actions/update', {
        json: { group: api.unique('g'), object: 'pump_1', automations: [] },
      });
      expect(reply.status).to.equal(404);
      expect(reply.json()).to.deep.equal({ message: 'Action not found' });
    });

    it('when a field holds an operator object, then 400 {message} and nothing changes', async () => {
      const group = api.unique('greenhouse');
      await api.seed.action(group, 'pump_1');
      const reply = await api.call('POST', '/api/actions/update', {
        json: { group: { $ne: null }, object: 'pump_1', automations: [] },
      });
      expect(reply.status).to.equal(400);
      expect(reply.json()).to.deep.equal({ message: 'group must be string' });
    });

    it('when rules are typed as people type them (7:5, Monday, 28,5), then they are stored normalized', async () => {
      const group = api.unique('greenhouse');
      await api.seed.action(group, 'pump_1');
      const reply = await api.call('POST', '/api/actions/update', {
        json: {
          group,
          object: 'pump_1',
          automations: [
            {
              timeAutomations: [{ action: 'on', time: '7:5', frequency: 'Monday' }],
              sensorAutomations: [
                { action: 'off', sensor: 'temperature', condition: 'ABOVE', value: '28,5' },
              ],
            },
          ],
        },
      });
      expect(reply.status, reply.text).to.equal(200);
      const stored = await api.get(`/api/actions/get_automations?groupId=${group}&deviceName=pump_1`);
      const { automations } = stored.json() as { automations: unknown };
      expect(automations).to.deep.equal([
        {
          timeAutomations: [{ action: 'on', time: '07:05', frequency: 'monday' }],
          sensorAutomations: [{ action: 'off', sensor: 'temperature', condition: 'above', value: '28.5' }],
        },
      ]);
    });

    it('when a rule names an unknown day or condition, then 400 {message} names the field', async () => {
      const group = api.unique('greenhouse');
      await api.seed.action(group, 'pump_1');
      const reply = await api.call('POST', '/api/actions/update', {
        json: {
          group,
          object: 'pump_1',
          automations: [
            {
              sensorAutomations: [{ action: 'off', sensor: 'temperature', condition: 'equal', value: '20' }],
            },
          ],
        },
      });
      expect(reply.status).to.equal(400);
      expect(reply.json()).to.deep.equal({
        message: 'automations[0].sensorAutomations[0].condition must be one of: above, less than, below',
      });
    });

    it('when a rule is malformed, then 400 {message} names the rule field', async () => {
      const group = api.unique('greenhouse');
      await api.seed.action(group, 'pump_1');
      const reply = await api.call('POST', '/api/actions/update', {
        json: {
          group,
          object: 'pump_1',
          automations: [{ timeAutomations: [{ action: 'on', time: '25:00', frequency: 'daily' }] }],
        },
      });
      expect(reply.status).to.equal(400);
      expect(reply.json()).to.deep.equal({
        message: 'automations[0].timeAutomations[0].time must be a time HH:MM',
      });
    });
  });

  describe('GET /get_automations', () => {
    it('when the action exists, then 200 with the whole Action record', async () => {
      const group = api.unique('greenhouse');
      await api.seed.action(group, 'led_1', 'on');
      const reply = await api.get(`/api/actions/get_automations?groupId=${group}&deviceName=led_1`);
      expect(reply.status).to.equal(200);
      expect(reply.json()).to.include({ group, object: 'led_1', value: 'on' }).and.to.have.property('_id');
    });

    it('when parameters are repeated or missing, then 404 {message: "Action not found"} (no validation)', async () => {
      const group = api.unique('greenhouse');
      await api.seed.action(group, 'led_1');
      for (const query of [`groupId=${group}&groupId=${group}&deviceName=led_1`, `groupId=${group}`]) {
        const reply = await api.get(`/api/actions/get_automations?${query}`);
        expect(reply.status).to.equal(404);
        expect(reply.json()).to.deep.equal({ message: 'Action not found' });
      }
    });
  });
});
