import { expect } from 'chai';
import { CreateNotification } from '@hortus/core';
import { exitCodes } from '@hortus/cli';
import { type Container } from 'inversify';
import { hortus, type StoreContainer, storeContainer, testStore } from './harness.js';

describe(`hortus CLI: notifications, deletion and readings (in-process, ${testStore} store)`, () => {
  let container: Container;
  let store: StoreContainer;
  beforeEach(async () => {
    store = await storeContainer();
    container = store.container;
  });
  afterEach(async () => {
    await store.close();
  });

  describe('audit', () => {
    it('when the CLI changes a range and a key, then `hortus audit` names the console with its OS user, before and after', async () => {
      expect((await hortus(container, ['group', 'create', 'gh-a'])).code).to.equal(0);
      expect(
        (await hortus(container, ['group', 'alert', 'gh-a', 'esp/air/co2', '--max', '1500'])).code,
      ).to.equal(0);
      expect((await hortus(container, ['keys', 'create', '--name', 'ops', '--kind', 'admin'])).code).to.equal(
        0,
      );

      const all = JSON.parse((await hortus(container, ['audit', '--json'])).stdout) as {
        action: string;
        actor: { kind: string; id?: string };
        after?: unknown;
      }[];
      expect(all.map((e) => e.action)).to.deep.equal(['key.create', 'alert.range', 'group.create']);
      expect(all.every((e) => e.actor.kind === 'cli' && typeof e.actor.id === 'string')).to.equal(true);
      expect(all[1]?.after).to.deep.equal({ max: 1500 });

      const table = (await hortus(container, ['audit', '--group', 'gh-a'])).stdout.split('\n');
      expect(table[0]).to.match(/^TIME +BY +ACTION +TARGET +GROUP +BEFORE +AFTER$/u);
      expect(table[1]).to.include('alert.range').and.include('{"max":1500}');
      expect((await hortus(container, ['audit', '--since', 'nope'])).code).to.equal(2);
    });

    it('when the CLI changes actions, devices, retention, metrics and a stage, then each change is in the trail under the console', async () => {
      const run = async (...args: string[]): Promise<void> => {
        const result = await hortus(container, args);
        expect(result.code, `${args.join(' ')}: ${result.stderr}`).to.equal(0);
      };
      await run('group', 'create', 'gh-b');
      await run('action', 'create', 'pump_1', '--group', 'gh-b');
      await run('action', 'safety', 'pump_1', '--group', 'gh-b', '--safe', 'off', '--stale-after', '15m');
      await run('action', 'lockout', 'pump_1', '--group', 'gh-b', '--sensor', 'temperature', '--below', '2');
      await run('action', 'lockout', 'pump_1', '--group', 'gh-b', '--remove', '1');
      await run('action', 'delete', 'pump_1', '--group', 'gh-b');
      await run('device', 'create', '24:6F:28:AA:00:09', '--group', 'gh-b', '--type', 'sensor-box');
      await run('group', 'retention', 'gh-b', '90');
      await run('group', 'metrics', 'gh-b', '--vpd');
      await run('group', 'stage', 'gh-b', '--clear');

      const all = JSON.parse((await hortus(container, ['audit', '--group', 'gh-b', '--json'])).stdout) as {
        action: string;
        actor: { kind: string; id?: string };
        before?: unknown;
        after?: unknown;
      }[];
      expect(all.map((e) => e.action)).to.deep.equal([
        'group.metrics',
        'group.retention',
        'device.create',
        'action.delete',
        'action.lockout.remove',
        'action.lockout.add',
        'action.safety',
        'action.create',
        'group.create',
      ]);
      expect(all.every((e) => e.actor.kind === 'cli' && typeof e.actor.id === 'string')).to.equal(true);
      expect(all[1]).to.deep.include({ before: { retentionDays: null }, after: { retentionDays: 90 } });
      expect(all[6]).to.deep.include({ before: {}, after: { safe: 'off', staleAfterMs: 900_000 } });
    });
  });

  describe('notifications', () => {
    const times = ['2025-06-01T08:00:00.000Z', '2025-06-01T09:00:00.000Z', '2025-06-01T10:00:00.000Z'];
    beforeEach(async () => {
      const create = container.get(CreateNotification);
      for (const time of times) await create.execute({ group: 'gh-1', message: `alert at ${time}`, time });
      await create.execute({ group: 'gh-2', message: 'other group', time: times[0] });
    });

    const openTimes = async (group: string): Promise<string[]> =>
      (
        JSON.parse((await hortus(container, ['notifications', 'list', '-g', group, '--json'])).stdout) as {
          time: string;
        }[]
      )
        .map((n) => n.time)
        .sort();

    it('when listed, then the open notifications of the group show newest first', async () => {
      const { stdout } = await hortus(container, ['notifications', 'list', '-g', 'gh-1']);
      const lines = stdout.trimEnd().split('\n');
      expect(lines[0]).to.match(/^TIME +ID +SEVERITY +MESSAGE +TOPIC +VALUE +ACKNOWLEDGED$/);
      // Local time in TIME_ZONE (the harness's UTC), to the second, with the zone.
      expect(lines.slice(1).map((line) => line.slice(0, 23))).to.deep.equal(
        [...times].reverse().map((time) => `${time.slice(0, 10)} ${time.slice(11, 19)} UTC`),
      );
    });

    it('when one is acknowledged, then the list says by whom (this OS user) and it stays open; an unknown id exits 3', async () => {
      const [first] = JSON.parse(
        (await hortus(container, ['notifications', 'list', '-g', 'gh-1', '--json'])).stdout,
      ) as {
        _id?: string;
        id: string;
      }[];
      const acked = await hortus(container, [
        'notifications',
        'ack',
        first?.id ?? '',
        '-g',
        'gh-1',
        '--json',
      ]);
      expect(acked.code).to.equal(0);
      const shown = JSON.parse(acked.stdout) as { acknowledged: { by: { kind: string; id?: string } } };
      expect(shown.acknowledged.by.kind).to.equal('cli');

      const { stdout } = await hortus(container, ['notifications', 'list', '-g', 'gh-1']);
      expect(stdout.split('\n')[1]).to.match(/ cli\b.* at 20\d\d-/u);
      expect(await openTimes('gh-1')).to.have.lengthOf(3);
      expect((await hortus(container, ['notifications', 'ack', 'nope', '-g', 'gh-1'])).code).to.equal(3);
    });

    it('when one time is ignored, then only that one leaves the list; an unknown time exits 3', async () => {
      const ignored = await hortus(container, [
        'notifications',
        'ignore',
        '-g',
        'gh-1',
        '--time',
        times[1] as string,
      ]);
      expect(ignored.code).to.equal(0);
      expect(ignored.stdout).to.equal('Ignored 1 notification of group gh-1.\n');
      expect(await openTimes('gh-1')).to.deep.equal([times[0], times[2]]);

      const missing = await hortus(container, [
        'notifications',
        'ignore',
        '-g',
        'gh-1',
        '--time',
        '2020-01-01T00:00:00Z',
      ]);
      expect(missing.code).to.equal(exitCodes.notFound);
      expect(missing.stderr).to.equal('hortus: Notification not found\n');
    });

    it('when several times are ignored, then those leave the list and unmatched times are no error', async () => {
      const { code, stdout } = await hortus(container, [
        'notifications',
        'ignore',
        '-g',
        'gh-1',
        '--times',
        times[0] as string,
        times[2] as string,
        '2020-01-01T00:00:00Z',
        '--json',
      ]);
      expect(code).to.equal(0);
      expect(JSON.parse(stdout)).to.deep.equal({ group: 'gh-1', ignored: 2 });
      expect(await openTimes('gh-1')).to.deep.equal([times[1]]);
    });

    it('when --all is given, then every open notification of the group is ignored and other groups keep theirs', async () => {
      const { code, stdout } = await hortus(container, ['notifications', 'ignore', '-g', 'gh-1', '--all']);
      expect(code).to.equal(0);
      expect(stdout).to.equal('Ignored 3 notifications of group gh-1.\n');
      expect(await openTimes('gh-1')).to.deep.equal([]);
      expect(await openTimes('gh-2')).to.deep.equal([times[0]]);
    });

    it('when none or more than one of --time, --times, --all is given, then it exits 2 and ignores nothing', async () => {
      expect((await hortus(container, ['notifications', 'ignore', '-g', 'gh-1'])).code).to.equal(2);
      expect(
        (
          await hortus(container, [
            'notifications',
            'ignore',
            '-g',
            'gh-1',
            '--all',
            '--time',
            times[0] as string,
          ])
        ).code,
      ).to.equal(2);
      expect(await openTimes('gh-1')).to.have.length(3);
    });
  });

  describe('delete', () => {
    beforeEach(async () => {
      for (const argv of [
        ['group', 'create', 'gh-old'],
        ['device', 'create', 'AA:01', '-g', 'gh-old', '-t', 'box', '--any-id', '--create-group'],
        ['action', 'create', 'pump_1', '-g', 'gh-old', '--create-group'],
        ['action', 'create', 'fan_1', '-g', 'gh-old', '--create-group'],
      ]) {
        expect((await hortus(container, argv)).code, argv.join(' ')).to.equal(0);
      }
    });

    it('when a device or an action is deleted, then it says so and it is gone; again, it exits 3', async () => {
      const device = await hortus(container, ['device', 'delete', 'AA:01', '-g', 'gh-old']);
      expect(device).to.include({ code: 0, stdout: 'Deleted device AA:01 of group gh-old.\n' });
      const action = await hortus(container, ['action', 'delete', 'pump_1', '-g', 'gh-old', '--json']);
      expect(JSON.parse(action.stdout)).to.deep.equal({ group: 'gh-old', object: 'pump_1' });

      expect((await hortus(container, ['action', 'list', '-g', 'gh-old'])).stdout).to.match(
        /^OBJECT.*\nfan_1 /u,
      );
      const again = await hortus(container, ['device', 'delete', 'AA:01', '-g', 'gh-old']);
      expect(again.code).to.equal(exitCodes.notFound);
      expect(again.stderr).to.contain('Group gh-old has no device AA:01');
      expect((await hortus(container, ['action', 'delete', 'pump_1', '-g', 'gh-old'])).code).to.equal(
        exitCodes.notFound,
      );
    });

    it('when a group holding data is deleted without --yes, then it exits 4 naming what it holds and keeps it', async () => {
      const refused = await hortus(container, ['group', 'delete', 'gh-old']);

      expect(refused.code).to.equal(exitCodes.conflict);
      expect(refused.stdout).to.equal('');
      expect(refused.stderr).to.contain('Group gh-old holds data (devices: 1, actions: 2)');
      expect(refused.stderr).to.contain('(--yes)');
      expect((await hortus(container, ['group', 'show', 'gh-old'])).code).to.equal(0);
    });

    it('when a group is deleted with --yes, then everything in it goes and the deletion is reported', async () => {
      const deleted = await hortus(container, ['group', 'delete', 'gh-old', '--yes']);

      expect(deleted.code).to.equal(0);
      expect(deleted.stdout).to.contain('Deleted group gh-old:');
      expect(deleted.stdout).to.match(/Devices: +1\n/u);
      expect(deleted.stdout).to.match(/Actions: +2\n/u);
      expect((await hortus(container, ['group', 'show', 'gh-old'])).code).to.equal(exitCodes.notFound);
      expect((await hortus(container, ['device', 'list', '-g', 'gh-old'])).stdout).to.contain('No devices');
      const unknown = await hortus(container, ['group', 'delete', 'gh-old', '--yes', '--json']);
      expect(unknown.code).to.equal(exitCodes.notFound);
    });
  });

  describe('readings latest and seed', () => {
    it('when the demo is seeded, then latest shows one reading per topic and --topic takes a sensor name', async () => {
      const seeded = await hortus(container, ['seed', '--demo', '--json']);
      expect(seeded.code).to.equal(0);
      expect(JSON.parse(seeded.stdout)).to.deep.include({ group: 'demo' });

      const latest = await hortus(container, ['readings', 'latest', '-g', 'demo', '--json']);
      const topics = (JSON.parse(latest.stdout) as { topic: string }[]).map((r) => r.topic);
      expect(topics).to.include('esp/air/temperature');
      expect(new Set(topics).size).to.equal(topics.length);

      const one = await hortus(container, ['readings', 'latest', '-g', 'demo', '--topic', 'temperature']);
      expect(one.stdout).to.match(
        /^TOPIC +VALUE +TIME\nesp\/air\/temperature +[\d.]+ °C +\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC/,
      );
    });

    it('when seed is run without --demo, then it exits 2', async () => {
      expect((await hortus(container, ['seed'])).code).to.equal(2);
    });
  });
});
