import { expect } from 'chai';
import {
  ConflictError,
  InvalidInputError,
  NotFoundError,
  StoreUnavailableError,
  UpstreamError,
} from '@hortus/core';
import { describeFailure, exitCodes, UsageError } from '@hortus/cli';
import { type Container } from 'inversify';
import { hortus, type StoreContainer, storeContainer, testStore } from './harness.js';

describe(`hortus CLI (in-process, ${testStore} store)`, () => {
  let container: Container;
  let store: StoreContainer;
  beforeEach(async () => {
    store = await storeContainer();
    container = store.container;
  });
  afterEach(async () => {
    await store.close();
  });

  describe('help', () => {
    const commands = [
      [],
      ['serve'],
      ['group'],
      ['group', 'create'],
      ['group', 'show'],
      ['group', 'list'],
      ['group', 'set-settings'],
      ['group', 'retention'],
      ['group', 'delete'],
      ['user'],
      ['user', 'create'],
      ['user', 'change-email'],
      ['device'],
      ['device', 'create'],
      ['device', 'list'],
      ['device', 'pending'],
      ['device', 'claim'],
      ['device', 'lock'],
      ['device', 'unlock'],
      ['device', 'rotate-key'],
      ['device', 'delete'],
      ['action'],
      ['action', 'create'],
      ['action', 'set'],
      ['action', 'list'],
      ['action', 'automations'],
      ['action', 'history'],
      ['action', 'delete'],
      ['notifications'],
      ['notifications', 'list'],
      ['notifications', 'ignore'],
      ['readings'],
      ['readings', 'import'],
      ['readings', 'latest'],
      ['seed'],
    ];
    for (const path of commands) {
      it(`when asked for help on "hortus ${path.join(' ')}", then it prints usage with an example and exits 0`, async () => {
        const { code, stdout } = await hortus(undefined, [...path, '--help']);
        expect(code).to.equal(0);
        expect(stdout).to.match(new RegExp(`^Usage: hortus ${path.join(' ')}`));
        expect(stdout).to.match(/Examples?:\n {2}\$ hortus |MONGODB_URI=\S+ hortus /);
      });
    }

    it('when asked for top-level help, then it documents the exit codes', async () => {
      const { stdout } = await hortus(undefined, ['--help']);
      for (const code of Object.values(exitCodes))
        expect(stdout).to.match(new RegExp(`^ {2}${code} {2}\\S`, 'm'));
    });
  });

  describe('usage errors', () => {
    it('when the command is unknown, then it exits 2 with a message on stderr and nothing on stdout', async () => {
      const { code, stdout, stderr } = await hortus(container, ['frobnicate']);
      expect(code).to.equal(exitCodes.usage);
      expect(stdout).to.equal('');
      expect(stderr).to.contain("unknown command 'frobnicate'");
    });

    it('when a required option is missing, then it exits 2', async () => {
      const { code, stderr } = await hortus(container, ['device', 'claim', '100aa286f24']);
      expect(code).to.equal(exitCodes.usage);
      expect(stderr).to.contain("required option '-g, --group <name>' not specified");
    });
  });

  describe('without a persistent store', () => {
    it('when STORE=memory, then a data command refuses, says how to configure a store and exits 2', async () => {
      const { code, stdout, stderr } = await hortus(
        undefined,
        ['device', 'create', '24:6F:28:AA:00:01', '-g', 'g', '-t', 'box'],
        { env: { STORE: 'memory' } },
      );
      expect(code).to.equal(exitCodes.usage);
      expect(stdout).to.equal('');
      expect(stderr).to.contain('device create needs a persistent store');
      expect(stderr).to.contain('HORTUS_DATA_DIR');
      expect(stderr).to.contain('MONGODB_URI=mongodb://');
    });

    it('when --json is given, then the refusal is a JSON error on stderr', async () => {
      const { code, stderr } = await hortus(undefined, ['group', 'list', '--json'], {
        env: { STORE: 'memory' },
      });
      expect(code).to.equal(exitCodes.usage);
      expect(JSON.parse(stderr)).to.deep.include({
        error: { code: 'USAGE', message: JSON.parse(stderr).error.message },
      });
      expect(JSON.parse(stderr).error.message).to.contain('MONGODB_URI');
    });
    it('when MONGODB_URI names a server that does not answer, then it exits 5 saying the store is unavailable', async () => {
      const { code, stderr } = await hortus(undefined, ['group', 'list'], {
        env: { MONGODB_URI: 'mongodb://127.0.0.1:9/hortus?serverSelectionTimeoutMS=200' },
      });
      expect(code).to.equal(exitCodes.unavailable);
      expect(stderr).to.equal('hortus: The data store is unavailable, try again shortly\n');
    });

    it('when STORE=memory is set next to MONGODB_URI, then data commands still refuse', async () => {
      const { code, stderr } = await hortus(undefined, ['group', 'list'], {
        env: { MONGODB_URI: 'mongodb://127.0.0.1:9/hortus', STORE: 'memory' },
      });
      expect(code).to.equal(exitCodes.usage);
      expect(stderr).to.contain('STORE=memory selects the in-memory store');
    });
  });

  describe('exit codes', () => {
    it('maps every domain error code to its documented exit code', () => {
      expect(describeFailure(new InvalidInputError('bad')).exitCode).to.equal(2);
      expect(describeFailure(new NotFoundError('group', 'Group not found')).exitCode).to.equal(3);
      expect(describeFailure(new ConflictError('device', 'exists')).exitCode).to.equal(4);
      expect(describeFailure(new StoreUnavailableError()).exitCode).to.equal(5);
      expect(describeFailure(new UpstreamError('down')).exitCode).to.equal(5);
      expect(describeFailure(new UsageError('no store')).exitCode).to.equal(2);
      expect(describeFailure(new TypeError('boom'))).to.deep.include({ exitCode: 1, code: 'UNEXPECTED' });
    });
  });

  describe('group', () => {
    it('when a group is created, then show and list find it and set-settings replaces its settings', async () => {
      const created = await hortus(container, [
        'group',
        'create',
        'gh-1',
        '--package',
        'medium',
        '--employee',
        'ann',
        'bob',
      ]);
      expect(created.code).to.equal(0);
      expect(created.stdout).to.match(/^Name: +gh-1$/m);

      const updated = await hortus(container, [
        'group',
        'set-settings',
        'gh-1',
        '[{"tempMin":15}]',
        '--json',
      ]);
      expect(updated.code).to.equal(0);
      expect(JSON.parse(updated.stdout)).to.deep.include({ name: 'gh-1', settings: [{ tempMin: 15 }] });

      const shown = await hortus(container, ['--json', 'group', 'show', 'gh-1']);
      expect(JSON.parse(shown.stdout)).to.deep.include({ package: 'medium', employee: ['ann', 'bob'] });

      await hortus(container, ['group', 'create', 'a-longer-name']);
      const listed = await hortus(container, ['group', 'list']);
      expect(listed.stdout).to.equal(
        [
          'NAME           PACKAGE  EMPLOYEES',
          'a-longer-name  small',
          'gh-1           medium   ann, bob',
          '',
        ].join('\n'),
      );
    });

    it('when the group does not exist, then show exits 3 with the message on stderr', async () => {
      const { code, stdout, stderr } = await hortus(container, ['group', 'show', 'nowhere']);
      expect(code).to.equal(exitCodes.notFound);
      expect(stdout).to.equal('');
      expect(stderr).to.equal('hortus: Group not found\n');
    });

    it('when the settings are not JSON, then set-settings exits 2 and nothing changes', async () => {
      await hortus(container, ['group', 'create', 'gh-1', '--settings', '[{"tempMin":10}]']);
      const { code, stderr } = await hortus(container, ['group', 'set-settings', 'gh-1', '{not json']);
      expect(code).to.equal(exitCodes.usage);
      expect(stderr).to.contain('settings must be valid JSON');
      const shown = await hortus(container, ['group', 'show', 'gh-1', '--json']);
      expect(JSON.parse(shown.stdout).settings).to.deep.equal([{ tempMin: 10 }]);
    });
  });

  describe('user', () => {
    it("when a user is created, then change-email changes the address; another user's address is a conflict", async () => {
      const created = await hortus(container, [
        'user',
        'create',
        '--first-name',
        'Ada',
        '--last-name',
        'Grower',
        '--email',
        'ada@example.org',
        '-g',
        'gh-1',
        '--create-group',
        '--json',
      ]);
      expect(created.code).to.equal(0);
      const { id } = JSON.parse(created.stdout) as { id: string };
      await hortus(container, [
        'user',
        'create',
        '--first-name',
        'Bo',
        '--last-name',
        'B',
        '--email',
        'bo@example.org',
        '-g',
        'gh-1',
      ]);

      const changed = await hortus(container, ['user', 'change-email', id, 'ada@grower.org']);
      expect(changed.code).to.equal(0);
      expect(changed.stdout).to.match(/^Email: +ada@grower\.org$/m);

      const clash = await hortus(container, ['user', 'change-email', id, 'bo@example.org']);
      expect(clash.code).to.equal(exitCodes.conflict);
    });

    it('when the e-mail is malformed, then it exits 2; when the user is unknown, then 3', async () => {
      expect((await hortus(container, ['user', 'change-email', 'x', 'not-an-email'])).code).to.equal(2);
      expect((await hortus(container, ['user', 'change-email', 'x', 'a@b.org'])).code).to.equal(3);
    });
  });

  describe('device', () => {
    it('when devices are created, then list shows them in an aligned table; a duplicate id exits 4', async () => {
      expect(
        (
          await hortus(container, [
            'device',
            'create',
            '24:6F:28:AA:00:01',
            '-g',
            'gh-1',
            '-t',
            'sensor-box',
            '--create-group',
          ])
        ).code,
      ).to.equal(0);
      expect(
        (
          await hortus(container, [
            'device',
            'create',
            '24:6F:28:AA:00:02',
            '-g',
            'gh-1',
            '-t',
            'relay',
            '--create-group',
          ])
        ).code,
      ).to.equal(0);

      const duplicate = await hortus(container, [
        'device',
        'create',
        '24:6F:28:AA:00:01',
        '-g',
        'gh-2',
        '-t',
        'relay',
        '--create-group',
      ]);
      expect(duplicate.code).to.equal(exitCodes.conflict);
      expect(duplicate.stderr).to.match(/^hortus: .+\n$/);

      const listed = await hortus(container, ['device', 'list', '-g', 'gh-1']);
      const [header, ...rows] = listed.stdout.trimEnd().split('\n');
      expect(header).to.match(
        /^DEVICE ID +BOX SENDS +GROUP +TYPE +LAST SEEN +FIRMWARE +UPTIME +LAST ONBOARDING +STATE$/u,
      );
      expect(rows.map((row) => row.split(/ {2,}/u))).to.deep.equal([
        ['24:6F:28:AA:00:01', '100aa286f24', 'gh-1', 'sensor-box', 'never onboarded'],
        ['24:6F:28:AA:00:02', '200aa286f24', 'gh-1', 'relay', 'never onboarded'],
      ]);
      const json = await hortus(container, ['device', 'list', '-g', 'gh-1', '--json']);
      expect((JSON.parse(json.stdout) as { deviceId: string }[]).map((d) => d.deviceId)).to.deep.equal([
        '24:6F:28:AA:00:01',
        '24:6F:28:AA:00:02',
      ]);
    });

    it('when the group has no devices, then list says so', async () => {
      const { code, stdout } = await hortus(container, ['device', 'list', '-g', 'empty']);
      expect(code).to.equal(0);
      expect(stdout).to.equal('No devices in group empty.\n');
    });
  });

  describe('action', () => {
    const rules =
      '[{"timeAutomations":[{"action":"on","time":"06:30","frequency":"every day"}],' +
      '"sensorAutomations":[{"action":"off","sensor":"temperature","condition":"above","value":"30"}]}]';

    it('when an action is created and set, then list shows its value and automations shows the replaced rules', async () => {
      expect(
        (await hortus(container, ['action', 'create', 'pump_1', '-g', 'gh-1', '--create-group'])).code,
      ).to.equal(0);
      expect((await hortus(container, ['action', 'set', 'pump_1', 'on', '-g', 'gh-1'])).code).to.equal(0);
      const replaced = await hortus(container, [
        'action',
        'automations',
        'pump_1',
        '-g',
        'gh-1',
        '--replace',
        rules,
      ]);
      expect(replaced.code).to.equal(0);

      const listed = await hortus(container, ['action', 'list', '-g', 'gh-1']);
      expect(listed.stdout).to.equal(
        'OBJECT  VALUE  TIME RULES  SENSOR RULES  MAX ON  MIN ON  MIN OFF\npump_1  on     1           1             -       -       -\n',
      );

      const shown = await hortus(container, ['action', 'automations', 'pump_1', '-g', 'gh-1']);
      expect(shown.stdout).to.contain('on      06:30  every day');
      expect(shown.stdout).to.contain('off     temperature  above      30');
      const json = await hortus(container, ['action', 'automations', 'pump_1', '-g', 'gh-1', '--json']);
      expect(JSON.parse(json.stdout)).to.deep.include({ value: 'on', automations: JSON.parse(rules) });
    });

    it('when the action does not exist, then set and automations exit 3', async () => {
      expect((await hortus(container, ['action', 'set', 'pump_9', 'on', '-g', 'gh-1'])).code).to.equal(3);
      expect((await hortus(container, ['action', 'automations', 'pump_9', '-g', 'gh-1'])).code).to.equal(3);
    });

    it('when the automations are invalid, then --replace exits 2 and keeps the old ones', async () => {
      await hortus(container, [
        'action',
        'create',
        'pump_1',
        '-g',
        'gh-1',
        '--automations',
        rules,
        '--create-group',
      ]);
      const { code, stderr } = await hortus(container, [
        'action',
        'automations',
        'pump_1',
        '-g',
        'gh-1',
        '--replace',
        '[{"timeAutomations":[{"action":"on","time":"25:00","frequency":"every day"}]}]',
      ]);
      expect(code).to.equal(2);
      expect(stderr).to.contain('must be HH:MM');
      const json = await hortus(container, ['action', 'automations', 'pump_1', '-g', 'gh-1', '--json']);
      expect(JSON.parse(json.stdout).automations).to.deep.equal(JSON.parse(rules));
    });
  });
});
