import 'reflect-metadata';
import * as chai from 'chai';
import chaiAsPromised from 'chai-as-promised';
import { type AutomationSet, InvalidInputError, NotFoundError } from '@hortus/core';
import { FakeClock, instance, sharedStore } from './automation-support.js';

chai.use(chaiAsPromised);
const { expect } = chai;

const lights: AutomationSet[] = [
  {
    timeAutomations: [
      { action: 'on', time: '06:00', frequency: 'every day' },
      { action: 'off', time: '20:00', frequency: 'every day' },
    ],
    sensorAutomations: [],
  },
];
const pump: AutomationSet[] = [
  {
    // 02:30 does not exist on the night of spring forward in Berlin: it fires at 03:30 CEST.
    timeAutomations: [{ action: 'on', time: '02:30', frequency: 'every day' }],
    sensorAutomations: [{ action: 'on', sensor: 'temperature', condition: 'less than', value: '5' }],
  },
];

async function berlinGreenhouse(now: string) {
  const store = sharedStore();
  const clock = new FakeClock(new Date(now));
  const server = instance(store, clock, 'UTC');
  await server.createGroup.execute({ name: 'gh', settings: [{ timeZone: 'Europe/Berlin' }] });
  await server.createAction.execute({ group: 'gh', object: 'led_1', value: 'on', automations: lights });
  await server.createAction.execute({ group: 'gh', object: 'pump_1', value: 'off', automations: pump });
  await server.setLimit.execute({ group: 'gh', object: 'pump_1', maxOnMs: 30 * 60_000 });
  return { store, clock, server };
}

describe('automation preview', () => {
  it("when the group's zone springs forward within the hours asked, then each switch is at its instant in UTC and on the local clock with the offset of then, the on-time limit included", async () => {
    const { server } = await berlinGreenhouse('2026-03-28T12:00:00Z');

    const preview = await server.preview.execute({ group: 'gh', hours: 48 });

    expect(preview.timeZone).to.equal('Europe/Berlin');
    expect(
      preview.switches.map(({ at, local, object, value, trigger, rule }) => [
        at.toISOString(),
        local,
        object,
        value,
        trigger,
        rule,
      ]),
    ).to.deep.equal([
      [
        '2026-03-28T19:00:00.000Z',
        '2026-03-28T20:00:00+01:00',
        'led_1',
        'off',
        'time',
        '20:00 every day -> off',
      ],
      [
        '2026-03-29T01:30:00.000Z',
        '2026-03-29T03:30:00+02:00',
        'pump_1',
        'on',
        'time',
        '02:30 every day -> on',
      ],
      [
        '2026-03-29T02:00:00.000Z',
        '2026-03-29T04:00:00+02:00',
        'pump_1',
        'off',
        'limit',
        'on longer than 30m -> off',
      ],
      [
        '2026-03-29T04:00:00.000Z',
        '2026-03-29T06:00:00+02:00',
        'led_1',
        'on',
        'time',
        '06:00 every day -> on',
      ],
      [
        '2026-03-29T18:00:00.000Z',
        '2026-03-29T20:00:00+02:00',
        'led_1',
        'off',
        'time',
        '20:00 every day -> off',
      ],
      [
        '2026-03-30T00:30:00.000Z',
        '2026-03-30T02:30:00+02:00',
        'pump_1',
        'on',
        'time',
        '02:30 every day -> on',
      ],
      [
        '2026-03-30T01:00:00.000Z',
        '2026-03-30T03:00:00+02:00',
        'pump_1',
        'off',
        'limit',
        'on longer than 30m -> off',
      ],
      [
        '2026-03-30T04:00:00.000Z',
        '2026-03-30T06:00:00+02:00',
        'led_1',
        'on',
        'time',
        '06:00 every day -> on',
      ],
    ]);
  });

  it('when a preview ran, then nothing was switched, logged, claimed or recorded in the store', async () => {
    const { store, server } = await berlinGreenhouse('2026-03-28T12:00:00Z');
    const stateBefore = await store.engineState.list();

    const preview = await server.preview.execute({ group: 'gh' });

    expect(preview.switches).to.have.lengthOf(4);
    expect((await store.actions.listByGroup('gh')).map((a) => [a.object, a.value])).to.deep.equal([
      ['led_1', 'on'],
      ['pump_1', 'off'],
    ]);
    expect(await store.automationLog.listByGroup('gh', 100)).to.deep.equal([]);
    expect(await store.actionHistory.list('gh', undefined, 100)).to.deep.equal([]);
    expect(await store.engineState.list()).to.deep.equal(stateBefore);
  });

  it('when the hours are not a whole number from 1 to 168 or the group is unknown, then it is refused', async () => {
    const { server } = await berlinGreenhouse('2026-03-28T12:00:00Z');

    for (const hours of [0, 169, '1.5', 'soon', -3])
      await expect(server.preview.execute({ group: 'gh', hours })).to.be.rejectedWith(InvalidInputError);
    await expect(server.preview.execute({ group: 'nowhere' })).to.be.rejectedWith(NotFoundError);
    expect((await server.preview.execute({ group: 'gh', hours: '2' })).switches).to.deep.equal([]);
  });
});
