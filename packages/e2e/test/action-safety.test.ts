import { AddActionLockout } from '@hortus/core';
import { eventually, expect, sample, startTestServer, type TestServer } from './harness.js';

const thermostat = [
  {
    timeAutomations: [],
    sensorAutomations: [
      { action: 'on', sensor: 'temperature', condition: 'less than', value: '18' },
      { action: 'off', sensor: 'temperature', condition: 'above', value: '21' },
    ],
  },
];

describe('HTTP /api/actions: safety (safe mode, minimum on-time and off-time)', () => {
  let api: TestServer;
  before(async () => {
    api = await startTestServer({ AUTOMATIONS: 'on', AUTOMATION_TICK_MS: '20' });
  });
  after(async () => {
    await api.close();
  });

  const valueOf = async (group: string, object: string): Promise<unknown> =>
    (
      (await api.get(`/api/actions/get_automations?groupId=${group}&deviceName=${object}`)).json() as {
        value: unknown;
      }
    ).value;

  it('when the sensor of a heater a rule switched on goes silent, then the engine switches it off, the safety list says since when and why, and /metrics counts it', async () => {
    const group = api.unique('safe-greenhouse');
    await api.seed.group(group);
    await api.seed.action(group, 'heater_1');
    await api.seed.action(group, 'ventilator_1');
    await api.call('POST', '/api/actions/update', {
      json: { group, object: 'heater_1', automations: thermostat },
    });
    const sent = await api.call('POST', '/api/data/readings', {
      json: [{ group, topic: 'esp/air/temperature', value: 15, time: api.clock.now().toISOString() }],
    });
    expect(sent.status).to.equal(202);
    await eventually(async () => expect(await valueOf(group, 'heater_1')).to.equal('on'));

    const before = await api.get(`/api/actions/safety?group=${group}`);
    expect(before.status).to.equal(200);
    expect(before.json()).to.deep.equal({
      message: [
        {
          group,
          object: 'heater_1',
          safe: 'off',
          staleAfterMs: 600_000,
          staleAfterChosen: false,
          topics: ['esp/air/temperature'],
          inSafeMode: false,
        },
        {
          group,
          object: 'ventilator_1',
          safe: 'hold',
          staleAfterChosen: false,
          topics: [],
          inSafeMode: false,
        },
      ],
    });

    api.clock.advance(11 * 60_000);
    await eventually(async () => expect(await valueOf(group, 'heater_1')).to.equal('off'));
    const during = (await api.get(`/api/actions/safety?group=${group}`)).json() as {
      message: Record<string, unknown>[];
    };
    expect(during.message[0]).to.deep.include({ inSafeMode: true, silentTopics: ['esp/air/temperature'] });
    expect(during.message[0]?.['since']).to.be.a('string');
    await eventually(async () =>
      expect(sample((await api.get('/metrics')).text, 'hortus_actions_in_safe_mode')).to.equal(1),
    );
    const log = (await api.get(`/api/actions/automation_log?group=${group}`)).json() as {
      message: { trigger: string; value: string }[];
    };
    expect(log.message.map(({ trigger, value }) => `${trigger} ${value}`)).to.deep.equal([
      'safe off',
      'sensor on',
    ]);
  });

  it('when a heater is locked out while its fan is on, then the engine switches it off, GET /lockouts says why, and the client routes answer as before', async () => {
    const group = api.unique('locked-greenhouse');
    await api.seed.group(group);
    await api.seed.action(group, 'heater_1');
    await api.seed.action(group, 'ventilator_1');
    await api.container
      .get(AddActionLockout)
      .execute({ group, object: 'heater_1', lockout: { while: 'ventilator_1', is: 'on' } });
    await api.call('POST', '/api/actions/update', {
      json: { group, object: 'heater_1', automations: thermostat },
    });
    const fan = (value: string) => api.get(`/api/actions/?group=${group}&object=ventilator_1&value=${value}`);
    const blockedLines = () =>
      api.logger.lines.filter(
        (line) => line.event === 'automation blocked by lockout' && line['group'] === group,
      );
    // The fan runs: the cold reading's rule is blocked, and that is logged once, however many ticks pass.
    expect((await fan('on')).json(), "a person's switch answers as before").to.deep.equal({
      message: 'Actions success',
    });
    await api.call('POST', '/api/data/readings', {
      json: [{ group, topic: 'esp/air/temperature', value: 15, time: api.clock.now().toISOString() }],
    });
    await eventually(async () => expect(blockedLines()).to.have.lengthOf(1));
    expect(blockedLines()[0]).to.deep.include({
      object: 'heater_1',
      value: 'on',
      by: 'temperature less than 18 -> on',
      lockout: 'ventilator_1 is on',
    });
    api.clock.advance(1_000);
    await api.call('POST', '/api/data/readings', {
      json: [{ group, topic: 'esp/air/temperature', value: 14, time: api.clock.now().toISOString() }],
    });
    await fan('off');
    // The crossing was kept: the heater goes on once the fan is off.
    await eventually(async () => expect(await valueOf(group, 'heater_1')).to.equal('on'));
    expect(blockedLines()).to.have.lengthOf(1);

    await fan('on');
    await eventually(async () => expect(await valueOf(group, 'heater_1')).to.equal('off'));
    const listed = await api.get(`/api/actions/lockouts?group=${group}`);
    expect(listed.status).to.equal(200);
    expect(listed.json()).to.deep.equal({
      message: [
        {
          group,
          object: 'heater_1',
          value: 'off',
          lockouts: [
            {
              id: 1,
              while: 'ventilator_1',
              is: 'on',
              text: 'ventilator_1 is on',
              active: true,
              reason: 'ventilator_1 is on',
            },
          ],
        },
      ],
    });
    // The event is recorded right after the switch: waited for, not read at once.
    await eventually(async () => {
      const log = (await api.get(`/api/actions/automation_log?group=${group}`)).json() as {
        message: { trigger: string; value: string; rule: string }[];
      };
      expect(log.message[0]).to.deep.include({
        trigger: 'lockout',
        value: 'off',
        rule: 'lockout: ventilator_1 is on -> off',
      });
    });

    const state = (await api.get(`/api/actions/current_state?group=${group}`)).json() as {
      message: Record<string, unknown>[];
    };
    expect(Object.keys(state.message[0] ?? {}).sort()).to.deep.equal([
      '_id',
      'automations',
      'group',
      'object',
      'value',
    ]);
    const one = (await api.get(`/api/actions/get_automations?groupId=${group}&deviceName=heater_1`)).json();
    expect(one).not.to.have.property('lockouts');
    expect((await api.get('/api/actions/lockouts?group=no-such-group-here')).status).to.equal(404);

    // The fan off again: the heater's rule applies again (after its switch interval), and it is still cold.
    api.clock.advance(61_000);
    await fan('off');
    await eventually(async () => expect(await valueOf(group, 'heater_1')).to.equal('on'));
  });

  it('when the group is unknown or not given, then 404 or 400 {message}', async () => {
    const unknown = await api.get('/api/actions/safety?group=no-such-group-here');
    expect(unknown.status).to.equal(404);
    expect(unknown.json()).to.deep.equal({ message: 'Group no-such-group-here not found' });
    const missing = await api.get('/api/actions/safety');
    expect(missing.status).to.equal(400);
    expect(missing.json()).to.have.property('message');
  });

  it('when the minimum on-time and off-time are set, then 200 names them, get_automations shows them, and each can go alone', async () => {
    const group = api.unique('cycled-greenhouse');
    await api.seed.group(group);
    await api.seed.action(group, 'pump_1');
    const set = await api.call('POST', '/api/actions/limit', {
      json: { group, object: 'pump_1', minOnMs: 120_000, minOffMs: 300_000 },
    });
    expect(set.status, set.text).to.equal(200);
    expect(set.json()).to.deep.equal({
      message: { group, object: 'pump_1', minOnMs: 120_000, minOffMs: 300_000 },
    });
    const shown = await api.get(`/api/actions/get_automations?groupId=${group}&deviceName=pump_1`);
    expect(shown.json()).to.include({ minOnMs: 120_000, minOffMs: 300_000 });
    expect(shown.json()).to.not.have.property('maxOnMs');
    const removed = await api.call('POST', '/api/actions/limit', {
      json: { group, object: 'pump_1', minOnMs: null },
    });
    expect(removed.json()).to.deep.equal({ message: { group, object: 'pump_1', minOffMs: 300_000 } });
    const refused = await api.call('POST', '/api/actions/limit', {
      json: { group, object: 'pump_1', minOffMs: 1000 },
    });
    expect(refused.status).to.equal(400);
    expect(refused.json()).to.deep.equal({
      message: 'min-off must be a whole number from 10000 to 86400000',
    });
  });
});
