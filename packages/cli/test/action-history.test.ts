import { expect } from 'chai';
import { exitCodes } from '@hortus/cli';
import { ACTION_HISTORY_REPOSITORY, type ActionHistoryRepository } from '@hortus/core';
import { type Container } from 'inversify';
import { hortus, type StoreContainer, storeContainer, testStore } from './harness.js';

interface Entry {
  object: string;
  value: string;
  at: string;
  actor: { kind: string; id?: string };
}

describe(`hortus action history (${testStore} store)`, () => {
  let container: Container;
  let store: StoreContainer;
  beforeEach(async () => {
    store = await storeContainer();
    container = store.container;
    await hortus(container, ['group', 'create', 'gh-1']);
    for (const object of ['pump_1', 'led_1'])
      await hortus(container, ['action', 'create', object, '-g', 'gh-1']);
  });
  afterEach(async () => {
    await store.close();
  });

  it('when actions are set from the console, then the history lists them newest first, by cli', async () => {
    for (const [object, value] of [
      ['pump_1', 'on'],
      ['led_1', 'on'],
      ['pump_1', 'off'],
    ] as const) {
      expect((await hortus(container, ['action', 'set', object, value, '-g', 'gh-1'])).code).to.equal(0);
    }

    const json = await hortus(container, ['action', 'history', '-g', 'gh-1', '--json']);
    expect(json.code, json.stderr).to.equal(0);
    const entries = JSON.parse(json.stdout) as Entry[];
    expect(entries.map((entry) => [entry.object, entry.value, entry.actor])).to.deep.equal([
      ['pump_1', 'off', { kind: 'cli' }],
      ['led_1', 'on', { kind: 'cli' }],
      ['pump_1', 'on', { kind: 'cli' }],
    ]);

    const table = await hortus(container, ['action', 'history', 'pump_1', '-g', 'gh-1', '--limit', '1']);
    expect(table.code, table.stderr).to.equal(0);
    const lines = table.stdout.trimEnd().split('\n');
    expect(lines[0]).to.match(/^TIME\s+OBJECT\s+VALUE\s+BY$/u);
    expect(lines.slice(1)).to.have.length(1);
    expect(lines[1]).to.match(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\s+pump_1\s+off\s+cli$/u);
  });

  it('when the engine or a user switched, then the table says who', async () => {
    const history = container.get<ActionHistoryRepository>(ACTION_HISTORY_REPOSITORY);
    const at = new Date('2026-06-10T04:30:00Z');
    await history.record(
      { group: 'gh-1', object: 'pump_1', value: 'on', at, actor: { kind: 'engine', id: 'time' } },
      1000,
    );
    await history.record(
      {
        group: 'gh-1',
        object: 'pump_1',
        value: 'off',
        at: new Date(at.getTime() + 60_000),
        actor: { kind: 'user', id: 'u-7' },
      },
      1000,
    );

    const { stdout } = await hortus(container, ['action', 'history', 'pump_1', '-g', 'gh-1']);

    expect(stdout).to.match(/2026-06-10 04:31:00 UTC\s+pump_1\s+off\s+user u-7\n/u);
    expect(stdout).to.match(/2026-06-10 04:30:00 UTC\s+pump_1\s+on\s+engine \(time\)\n/u);
  });

  it('when nothing was switched, then it says so; an unknown action exits 3, a bad limit exits 2', async () => {
    expect((await hortus(container, ['action', 'history', '-g', 'gh-1'])).stdout).to.equal(
      'No switches recorded in group gh-1.\n',
    );
    const unknown = await hortus(container, ['action', 'history', 'nope', '-g', 'gh-1']);
    expect(unknown.code).to.equal(exitCodes.notFound);
    expect(unknown.stderr).to.equal('hortus: Group gh-1 has no action nope\n');
    const bad = await hortus(container, ['action', 'history', '-g', 'gh-1', '--limit', '0']);
    expect(bad.code).to.equal(exitCodes.usage);
    expect(bad.stderr).to.contain('limit must be a whole number from 1 to 1000');
  });
});
