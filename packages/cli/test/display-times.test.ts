import { expect } from 'chai';
import { type Clock, CreateNotification, RecordReadings } from '@hortus/core';
import { type Container } from 'inversify';
import { hortus, type StoreContainer, storeContainer, testStore } from './harness.js';

/** The afternoon of the readings below, so none is ahead of the clock. */
const afternoon: Clock = { now: () => new Date('2026-11-29T14:00:00.000Z') };

describe(`hortus CLI: times in the configured zone, units with values (in-process, ${testStore} store)`, () => {
  let store: StoreContainer;
  let container: Container;
  beforeEach(async () => {
    store = await storeContainer(afternoon);
    container = store.container;
    const create = container.get(CreateNotification);
    // One in winter and one in summer: New York is 5 hours behind UTC, then 4.
    await create.execute({ group: 'gh', message: 'summer', time: '2026-07-01T12:00:00.000Z' });
    await create.execute({ group: 'gh', message: 'winter', time: '2026-11-29T13:05:03.000Z' });
  });
  afterEach(async () => {
    await store.close();
  });

  const list = async (env: Record<string, string | undefined>, json = false): Promise<string> =>
    (await hortus(container, ['notifications', 'list', '-g', 'gh', ...(json ? ['--json'] : [])], { env }))
      .stdout;

  it('when TIME_ZONE is America/New_York, then people read New York time with its zone, on either side of the clock change', async () => {
    const lines = (await list({ TIME_ZONE: 'America/New_York' })).trimEnd().split('\n');
    expect(lines[1]).to.match(/^2026-11-29 08:05:03 EST +\S+ .*winter/u);
    expect(lines[2]).to.match(/^2026-07-01 08:00:00 EDT +\S+ .*summer/u);
  });

  it('when --json is given, then times stay ISO-8601 UTC whatever TIME_ZONE says', async () => {
    const times = (JSON.parse(await list({ TIME_ZONE: 'America/New_York' }, true)) as { time: string }[]).map(
      (n) => n.time,
    );
    expect(times).to.deep.equal(['2026-11-29T13:05:03.000Z', '2026-07-01T12:00:00.000Z']);
  });

  it('when TIME_ZONE is not set, then times are shown in Europe/Berlin, the zone time rules and boxes use', async () => {
    const lines = (await list({ TIME_ZONE: undefined })).trimEnd().split('\n');
    expect(lines[1]).to.match(/^2026-11-29 14:05:03 CET /u);
    expect(lines[2]).to.match(/^2026-07-01 14:00:00 CEST /u);
  });

  it("when the newest readings are shown, then each value has its topic's unit, and a topic without one its number", async () => {
    await container.get(RecordReadings).execute([
      { group: 'gh', topic: 'esp/air/humidity', value: 91, time: '2026-11-29T13:00:00.000Z' },
      { group: 'gh', topic: 'esp/air/co2', value: 600, time: '2026-11-29T13:00:00.000Z' },
    ]);
    const { stdout } = await hortus(container, ['readings', 'latest', '-g', 'gh'], {
      env: { TIME_ZONE: 'America/New_York' },
    });
    expect(stdout).to.match(/esp\/air\/humidity +91 % +2026-11-29 08:00:00 EST/u);
    expect(stdout).to.match(/esp\/air\/co2 +600 +2026-11-29 08:00:00 EST/u);
  });
});
