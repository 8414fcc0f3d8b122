import 'reflect-metadata';
import { expect } from 'chai';
import { boxSettingsFromEnv, ConfigError, defaultBoxSettings } from '@hortus/core';
import { FakeClock, instance, sharedStore, type SharedStore } from './automation-support.js';

// Registered as the box sends it (reversed, no leading zeros), and as its label prints it.
const BOX_A = 'a0b1c2d3e4f5';
const BOX_B = '100aa286f24';
const BOX_C = '24:6F:28:AA:00:02';
const email = [{ emailNotification: true }, { email: 'grower@example.org' }];

/**
 * The server that ran before the power cut: it creates the groups and boxes, sees every box at 11:29:50 and
 * runs its engine at 11:30. The cut takes it and the boxes down; the caller starts the next server.
 */
async function beforeThePowerCut(
  store: SharedStore,
  groups: Record<string, readonly string[]>,
): Promise<FakeClock> {
  const clock = new FakeClock(new Date('2026-06-10T11:00:00Z'));
  const old = instance(store, clock);
  for (const [group, boxes] of Object.entries(groups)) {
    await old.createGroup.execute({ name: group, settings: email });
    for (const deviceId of boxes) {
      await store.devices.create({ deviceId, group, type: 'esp32' });
      await store.devices.update(deviceId, { lastSeenAt: new Date('2026-06-10T11:29:50Z') });
    }
  }
  clock.set('2026-06-10T11:30:00Z');
  await old.engine.tick();
  clock.set('2026-06-10T12:00:00Z');
  return clock;
}

async function reports(store: SharedStore, deviceId: string, at: string): Promise<void> {
  await store.devices.update(deviceId, { lastSeenAt: new Date(at) });
}

describe('boxes silent since the server started (power cuts)', () => {
  it('when 2 of 3 boxes of a group stay silent past the grace after the start, then one alert names both and says to power-cycle them; when they report, it closes', async () => {
    const store = sharedStore();
    const clock = await beforeThePowerCut(store, { gh: [BOX_A, BOX_B, BOX_C] });
    const server = instance(store, clock);
    expect((await server.engine.tick()).alerts, 'at the start').to.have.length(0);
    await reports(store, BOX_A, '2026-06-10T12:01:00Z');
    clock.set('2026-06-10T12:10:00Z');
    expect((await server.engine.tick()).alerts, 'within the grace').to.have.length(0);

    clock.set('2026-06-10T12:10:01Z');
    const silent = await server.engine.tick();
    expect(silent.evaluated, 'the grace is a wake-up of the group').to.deep.equal(['gh']);
    expect(silent.alerts.map((n) => [n.message, n.severity])).to.deep.equal([
      [
        '2 boxes of group gh have sent nothing since the server started at 2026-06-10 14:00:00 CEST: ' +
          '100aa286f24 (MAC 24:6F:28:AA:00:01), 24:6F:28:AA:00:02. Power-cycle them: a box that started ' +
          'before the server could be reached gives up after 50 tries and stays silent until it is ' +
          'switched off and on again',
        'warning',
      ],
    ]);
    expect(silent.queued.map((message) => message.event)).to.deep.equal(['no-data']);
    const listed = await server.openNotifications.execute({ group: 'gh' });
    expect(listed.map((n) => n.id)).to.include(silent.alerts[0]?.id);

    clock.set('2026-06-10T12:11:02Z');
    expect((await server.engine.tick()).alerts, 'once, not every tick').to.have.length(0);
    await reports(store, BOX_B, '2026-06-10T12:12:00Z');
    clock.set('2026-06-10T12:13:03Z');
    expect((await server.engine.tick()).alerts, 'one box still silent').to.have.length(0);

    await reports(store, BOX_C, '2026-06-10T12:14:00Z');
    clock.set('2026-06-10T12:15:04Z');
    const back = await server.engine.tick();
    expect(back.alerts.map((n) => n.message)).to.deep.equal([
      'The 2 boxes of group gh silent since the server started are reporting again: ' +
        '100aa286f24 (MAC 24:6F:28:AA:00:01), 24:6F:28:AA:00:02',
    ]);
    expect(back.queued.map((message) => message.event)).to.deep.equal(['resolved']);
    clock.set('2026-06-10T13:30:00Z');
    expect((await server.engine.tick()).alerts, 'not again in this run').to.have.length(0);
  });

  it('when every box reports within the grace, then there is no alert', async () => {
    const store = sharedStore();
    const clock = await beforeThePowerCut(store, { gh: [BOX_A, BOX_B, BOX_C] });
    const server = instance(store, clock);
    await server.engine.tick();
    for (const box of [BOX_A, BOX_B, BOX_C]) await reports(store, box, '2026-06-10T12:03:00Z');
    for (const at of ['2026-06-10T12:10:01Z', '2026-06-10T12:30:00Z', '2026-06-10T14:00:00Z']) {
      clock.set(at);
      expect((await server.engine.tick()).alerts, at).to.have.length(0);
    }
  });

  it('when boxes of two groups stay silent, then each group gets one alert naming its own', async () => {
    const store = sharedStore();
    const clock = await beforeThePowerCut(store, { gh: [BOX_A, BOX_B], seedlings: [BOX_C] });
    const server = instance(store, clock);
    await server.engine.tick();
    clock.set('2026-06-10T12:10:01Z');
    const silent = await server.engine.tick();
    expect(silent.alerts.map((n) => [n.group, n.message.split(':')[0]])).to.deep.equal([
      ['gh', '2 boxes of group gh have sent nothing since the server started at 2026-06-10 14'],
      ['seedlings', 'Box of group seedlings has sent nothing since the server started at 2026-06-10 14'],
    ]);
    expect(silent.alerts[0]?.message).to.contain(BOX_A).and.contain(BOX_B).and.not.contain(BOX_C);
    expect(silent.alerts[1]?.message).to.contain('Power-cycle it:');
  });

  it('when a box was already silent before the server stopped, or was never seen, then it is not named', async () => {
    const store = sharedStore();
    const clock = await beforeThePowerCut(store, { gh: [BOX_A] });
    await store.devices.create({ deviceId: BOX_B, group: 'gh', type: 'esp32' }); // never seen
    await store.devices.create({ deviceId: BOX_C, group: 'gh', type: 'esp32' });
    // Silent for more than the group's no-data time (30 minutes) when the old server last ran (11:30).
    await reports(store, BOX_C, '2026-06-10T10:59:59Z');
    const server = instance(store, clock);
    await server.engine.tick();
    clock.set('2026-06-10T12:10:01Z');
    const messages = (await server.engine.tick()).alerts.map((n) => n.message);
    expect(messages).to.have.length(1);
    expect(messages[0]).to.match(
      /^Box of group gh has sent nothing .*: a0b1c2d3e4f5 \(MAC A0:B1:C2:D3:E4:F5\)\./u,
    );
  });

  it('when a locked box asked to onboard from another address since the start, then it is not named: it is not silent, its move needs approving', async () => {
    const store = sharedStore();
    const clock = await beforeThePowerCut(store, { gh: [BOX_A, BOX_B] });
    await store.devices.update(BOX_B, { locked: true });
    const server = instance(store, clock);
    await server.engine.tick();
    await store.devices.update(BOX_B, {
      moveRequest: { at: new Date('2026-06-10T12:00:40Z'), address: '192.0.2.9', from: '192.0.2.7' },
    });
    clock.set('2026-06-10T12:10:01Z');
    const messages = (await server.engine.tick()).alerts.map((n) => n.message);
    expect(messages).to.have.length(1);
    expect(messages[0]).to.contain(BOX_A).and.not.contain(BOX_B);
  });

  it('when the server restarts while the alert is open, then it is not raised again, and closes once its boxes report', async () => {
    const store = sharedStore();
    const clock = await beforeThePowerCut(store, { gh: [BOX_A, BOX_B] });
    const first = instance(store, clock);
    await first.engine.tick();
    clock.set('2026-06-10T12:10:01Z');
    expect((await first.engine.tick()).alerts).to.have.length(1);

    clock.set('2026-06-10T12:20:00Z');
    const second = instance(store, clock);
    expect((await second.engine.tick()).alerts).to.have.length(0);
    clock.set('2026-06-10T12:31:00Z');
    expect((await second.engine.tick()).alerts, 'past the new grace').to.have.length(0);

    await reports(store, BOX_A, '2026-06-10T12:32:00Z');
    await reports(store, BOX_B, '2026-06-10T12:32:10Z');
    clock.set('2026-06-10T12:33:00Z');
    const back = await second.engine.tick();
    expect(back.alerts.map((n) => n.message)).to.deep.equal([
      'The 2 boxes of group gh silent since the server started are reporting again: ' +
        '100aa286f24 (MAC 24:6F:28:AA:00:01), a0b1c2d3e4f5 (MAC A0:B1:C2:D3:E4:F5)',
    ]);
  });

  it("when the first tick's alerts fail for the group, then the boxes silent since a cut of over half an hour are still named later", async () => {
    const store = sharedStore();
    const clock = await beforeThePowerCut(store, { gh: [BOX_A] });
    // A box alert makes the group's alerts list its boxes before the power-cut check; that list fails once.
    await store.groups.replaceSettings('gh', [...email, { boxAlerts: { '*': { noDataMs: 86_400_000 } } }]);
    const listByGroup = store.devices.listByGroup.bind(store.devices);
    let hiccups = 1;
    store.devices.listByGroup = async (group) => {
      if (hiccups-- > 0) throw new Error('the store is still starting');
      return listByGroup(group);
    };
    clock.set('2026-06-10T13:00:00Z');
    const server = instance(store, clock);
    const first = await server.engine.tick();
    expect(first.failures.map((failure) => [failure.group, failure.stage])).to.deep.equal([['gh', 'alerts']]);

    clock.set('2026-06-10T13:10:01Z');
    const messages = (await server.engine.tick()).alerts.map((n) => n.message);
    expect(messages).to.have.length(1);
    expect(messages[0]).to.match(
      /^Box of group gh has sent nothing since the server started at 2026-06-10 15:00:00 CEST/u,
    );
  });

  it('when two servers start together on one store, then the alert is raised once', async () => {
    const store = sharedStore();
    const clock = await beforeThePowerCut(store, { gh: [BOX_A] });
    const servers = [instance(store, clock), instance(store, clock)];
    for (const server of servers) await server.engine.tick();
    clock.set('2026-06-10T12:10:01Z');
    const ticks = await Promise.all(servers.map((server) => server.engine.tick()));
    expect(ticks.flatMap((tick) => tick.alerts)).to.have.length(1);
  });

  it('when the grace is 0, then the alert is off', async () => {
    const store = sharedStore();
    const clock = await beforeThePowerCut(store, { gh: [BOX_A] });
    const server = instance(store, clock, 'Europe/Berlin', undefined, { startGraceMs: 0 });
    await server.engine.tick();
    clock.set('2026-06-10T13:00:00Z');
    expect((await server.engine.tick()).alerts).to.have.length(0);
  });

  it('when BOX_START_GRACE_MS is set, then 0 or a minute to a day is taken, and a few seconds are refused', () => {
    expect(defaultBoxSettings.startGraceMs).to.equal(600_000);
    expect(boxSettingsFromEnv({}).startGraceMs).to.equal(600_000);
    expect(boxSettingsFromEnv({ BOX_START_GRACE_MS: '0' }).startGraceMs).to.equal(0);
    expect(boxSettingsFromEnv({ BOX_START_GRACE_MS: '120000' }).startGraceMs).to.equal(120_000);
    for (const bad of ['5000', '-1', '86400001', 'soon'])
      expect(() => boxSettingsFromEnv({ BOX_START_GRACE_MS: bad }), bad).to.throw(
        ConfigError,
        /BOX_START_GRACE_MS/u,
      );
  });
});
