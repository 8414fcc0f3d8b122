import {
  CheckGroup,
  CreateUser,
  ConflictError,
  DEMO_GROUP,
  DEMO_USER_ID,
  GetActionsOfGroup,
  GetHistoryCharts,
  GetLatestReadingsOfGroup,
  InvalidInputError,
  isDerivedTopic,
  ListDevices,
  ListOpenNotifications,
  SeedDemo,
} from '@hortus/core';
import { createTestApp, expect, type TestApp } from './support.js';

const FIVE_MINUTES = 5 * 60_000;

describe('SeedDemo', () => {
  let app: TestApp;

  beforeEach(() => {
    app = createTestApp({ now: '2024-06-15T08:32:10.000Z' });
  });

  it('when the store is empty, then a working demo greenhouse is created', async () => {
    const summary = await app.get(SeedDemo).execute();

    expect(summary.group).to.equal(DEMO_GROUP);
    expect(await app.get(CheckGroup).execute({ name: DEMO_GROUP })).to.equal(true);
    const actions = await app.get(GetActionsOfGroup).execute({ group: DEMO_GROUP });
    expect(actions.map((a) => [a.object, a.value])).to.deep.equal([
      ['led_1', 'off'],
      ['pump_1', 'off'],
      ['ventilator_1', 'off'],
      ['ventilator_2', 'off'],
    ]);
    expect(await app.get(ListDevices).execute({ group: DEMO_GROUP })).to.have.lengthOf(2);
    expect(await app.get(ListOpenNotifications).execute({ group: DEMO_GROUP })).to.have.lengthOf(1);
    const charts = await app.get(GetHistoryCharts).execute({ userId: DEMO_USER_ID });
    expect(charts.charts.map((c) => [c.chartName, c.chartData['update_interval']])).to.deep.equal([
      ['Greenhouse', 15000],
    ]);
    await expect(
      app
        .get(CreateUser)
        .execute({ firstName: 'x', lastName: 'y', email: 'demo@demo.hortus.local', group: 'x' }),
    ).to.be.rejectedWith(ConflictError);
  });

  it('when seeded, then a day of readings every five minutes ends at the last full five minutes', async () => {
    const summary = await app.get(SeedDemo).execute();

    const all = await app.get(GetLatestReadingsOfGroup).execute({ group: DEMO_GROUP });
    const latest = all.filter((r) => !isDerivedTopic(r.topic));
    expect(latest.length).to.be.greaterThanOrEqual(6);
    expect(summary.readings).to.equal(latest.length * (24 * 12));
    const lastStep = Math.floor(app.clock.now().getTime() / FIVE_MINUTES) * FIVE_MINUTES;
    expect(latest.every((r) => r.time.getTime() === lastStep)).to.equal(true);
    // The derived series are on in the demo, derived from the seeded day up to the last closed window.
    expect(all.filter((r) => isDerivedTopic(r.topic)).map((r) => r.topic)).to.deep.equal([
      'esp/derived/dew_point',
      'esp/derived/dli',
      'esp/derived/ppfd',
      'esp/derived/vpd',
    ]);
  });

  it('when run twice, then the second run creates and stores nothing and nothing is duplicated', async () => {
    const first = await app.get(SeedDemo).execute();

    const second = await app.get(SeedDemo).execute();

    expect(first.created.length).to.be.greaterThan(0);
    expect(second).to.deep.equal({ group: DEMO_GROUP, readings: 0, created: [] });
    expect(await app.get(GetActionsOfGroup).execute({ group: DEMO_GROUP })).to.have.lengthOf(4);
    expect(await app.get(ListOpenNotifications).execute({ group: DEMO_GROUP })).to.have.lengthOf(1);
    expect((await app.get(GetHistoryCharts).execute({ userId: DEMO_USER_ID })).charts).to.have.lengthOf(1);
  });

  it('when the group exists already, then a later run seeds nothing, not even a newer day of readings', async () => {
    await app.get(SeedDemo).execute();
    app.clock.advance(2 * 24 * 3_600_000);

    const later = await app.get(SeedDemo).execute();

    expect(later).to.deep.equal({ group: DEMO_GROUP, readings: 0, created: [] });
    const latest = await app.get(GetLatestReadingsOfGroup).execute({ group: DEMO_GROUP });
    expect(latest.every((r) => r.time.getTime() < app.clock.now().getTime() - 24 * 3_600_000)).to.equal(true);
  });

  it('when another group is named, then the demo is created in that group; an empty name is invalid input', async () => {
    expect((await app.get(SeedDemo).execute({ group: 'trial' })).group).to.equal('trial');
    expect(await app.get(CheckGroup).execute({ name: 'trial' })).to.equal(true);
    await expect(app.get(SeedDemo).execute({ group: ' ' })).to.be.rejectedWith(InvalidInputError);
  });
});
