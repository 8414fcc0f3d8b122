import {
  type Clock,
  CreateAction,
  CreateGroup,
  READING_REPOSITORY,
  type ReadingRepository,
} from '@hortus/core';
import { expect } from 'chai';
import { hortus, type StoreContainer, storeContainer, testStore } from './harness.js';

class FixedClock implements Clock {
  now(): Date {
    return new Date('2026-03-28T12:00:00Z');
  }
}

const rules = [
  {
    timeAutomations: [{ action: 'off', time: '20:00', frequency: 'every day' }],
    sensorAutomations: [{ action: 'on', sensor: 'temperature', condition: 'less than', value: '18' }],
  },
];

describe(`hortus action preview and backtest (${testStore})`, () => {
  let store: StoreContainer;
  beforeEach(async () => {
    store = await storeContainer(new FixedClock());
    await store.container.get(CreateGroup).execute({ name: 'gh', settings: [{ timeZone: 'Europe/Berlin' }] });
    await store.container
      .get(CreateAction)
      .execute({ group: 'gh', object: 'heater_1', value: 'off', automations: rules });
  });
  afterEach(async () => {
    await store.close();
  });

  it('when preview is asked, then it lists the coming switches in UTC and local time, as JSON too', async () => {
    const text = await hortus(store.container, ['action', 'preview', '--group', 'gh', '--hours', '12']);
    expect(text.code, text.stderr).to.equal(0);
    expect(text.stdout).to.match(/^Time zone: +Europe\/Berlin$/mu);
    // heater_1 is off already: the 20:00 slot changes nothing.
    expect(text.stdout).to.include('No switches.');

    const json = await hortus(store.container, ['--json', 'action', 'preview', '--group', 'gh']);
    expect(json.code, json.stderr).to.equal(0);
    expect(JSON.parse(json.stdout)).to.include({ group: 'gh', timeZone: 'Europe/Berlin' });
  });

  it('when backtest replays stored readings, then it lists the switches and the on-time, and changes nothing', async () => {
    const readings = store.container.get<ReadingRepository>(READING_REPOSITORY);
    const start = Date.parse('2026-03-27T10:00:00Z');
    await readings.add(
      Array.from({ length: 60 }, (_, minute) => ({
        group: 'gh',
        topic: 'esp/air/temperature',
        value: minute < 30 ? 20 : 16,
        time: new Date(start + minute * 60_000),
      })),
    );

    const run = await hortus(store.container, [
      '--json',
      'action',
      'backtest',
      '--group',
      'gh',
      '--from',
      '2026-03-27T10:00:00Z',
      '--to',
      '2026-03-27T20:30:00Z',
    ]);

    expect(run.code, run.stderr).to.equal(0);
    const result = JSON.parse(run.stdout) as {
      switches: { at: string; local: string; value: string; trigger: string }[];
      actions: { object: string; onMs: number }[];
    };
    expect(result.switches.map(({ at, local, value, trigger }) => [at, local, value, trigger])).to.deep.equal(
      [
        ['2026-03-27T10:30:00.000Z', '2026-03-27T11:30:00+01:00', 'on', 'sensor'],
        // The readings stop at 10:59: ten minutes on, the heater goes to its safe state, and its rules rest.
        ['2026-03-27T11:09:10.000Z', '2026-03-27T12:09:10+01:00', 'off', 'safe'],
      ],
    );
    expect(result.actions).to.deep.equal([{ object: 'heater_1', onMs: 39 * 60_000 + 10_000, switches: 2 }]);
    const list = await hortus(store.container, ['action', 'history', '--group', 'gh']);
    expect(list.stdout).to.not.match(/heater_1/u);
  });

  it('when the range is unparseable, backwards or longer than 31 days, then it is a usage error (exit 2)', async () => {
    const cases: [string, string, RegExp][] = [
      ['last week', '2026-03-27T00:00:00Z', /from must be/u],
      ['2026-03-27T00:00:00Z', '2026-03-26T00:00:00Z', /to must be after from/u],
      ['2026-01-01T00:00:00Z', '2026-03-01T00:00:00Z', /to must be at most 31 days after from/u],
    ];
    for (const [from, to, message] of cases) {
      const run = await hortus(store.container, [
        'action',
        'backtest',
        '-g',
        'gh',
        '--from',
        from,
        '--to',
        to,
      ]);
      expect(run.code, `${from} ${to}`).to.equal(2);
      expect(run.stderr).to.match(message);
    }
    const hours = await hortus(store.container, ['action', 'preview', '-g', 'gh', '--hours', '0']);
    expect(hours.code).to.equal(2);
    expect(hours.stderr).to.match(/--hours must be a whole number from 1 to 168/u);
  });
});
