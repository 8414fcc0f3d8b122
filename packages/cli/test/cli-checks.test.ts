import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { exitCodes } from '@hortus/cli';
import { type Container } from 'inversify';
import { hortus, type StoreContainer, storeContainer, testStore } from './harness.js';

/** Issue 27 item 6: the admin CLI refuses the usual mistakes with a message that says what to do. */
describe(`hortus CLI catches mistakes (${testStore} store)`, () => {
  let container: Container;
  let store: StoreContainer;
  let scratch: string;
  beforeEach(async () => {
    store = await storeContainer();
    container = store.container;
    scratch = mkdtempSync(join(tmpdir(), 'hortus-cli-checks-'));
  });
  afterEach(async () => {
    await store.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  describe('a group that does not exist', () => {
    it('when an action is created in it, then it exits 3, names the group and creates nothing', async () => {
      const { code, stderr } = await hortus(container, ['action', 'create', 'pump_1', '-g', 'gh-typo']);
      expect(code).to.equal(exitCodes.notFound);
      expect(stderr).to.equal(
        'hortus: group gh-typo does not exist: create it with `hortus group create gh-typo`, or add --create-group\n',
      );
      expect((await hortus(container, ['group', 'list', '--json'])).stdout).to.equal('[]\n');
      expect((await hortus(container, ['action', 'list', '-g', 'gh-typo'])).stdout).to.equal(
        'No actions in group gh-typo.\n',
      );
    });

    it('when a device is registered in it, then it exits 3 and registers nothing', async () => {
      const { code, stderr } = await hortus(container, [
        'device',
        'create',
        '24:6F:28:AA:00:01',
        '-g',
        'gh-typo',
        '-t',
        'box',
      ]);
      expect(code).to.equal(exitCodes.notFound);
      expect(stderr).to.contain('group gh-typo does not exist');
      expect((await hortus(container, ['device', 'list', '-g', 'gh-typo'])).stdout).to.equal(
        'No devices in group gh-typo.\n',
      );
    });

    it('when --create-group is given, then the group is created with the action', async () => {
      expect(
        (await hortus(container, ['action', 'create', 'pump_1', '-g', 'gh-new', '--create-group'])).code,
      ).to.equal(0);
      const shown = await hortus(container, ['group', 'show', 'gh-new', '--json']);
      expect(JSON.parse(shown.stdout)).to.deep.include({ name: 'gh-new', package: 'small' });
    });

    it('when the group exists, then no flag is needed', async () => {
      await hortus(container, ['group', 'create', 'gh-1']);
      expect((await hortus(container, ['action', 'create', 'pump_1', '-g', 'gh-1'])).code).to.equal(0);
    });
  });

  describe('group create', () => {
    it('when a name holds " or \\, then the group is created and a note says what boxes are told', async () => {
      const { code, stderr } = await hortus(container, ['group', 'create', 'Nord "A" \\ 2', '--json']);
      const plain = await hortus(container, ['group', 'create', "Gewächshaus O'Brien"]);

      expect(code).to.equal(0);
      expect(stderr).to.equal(
        'hortus: note: firmware 1.0.4 boxes cannot carry ", \\ or control characters, so they are told this group as "Nord _A_ _ 2"; their readings still land in this group\n',
      );
      expect(plain.stderr).to.equal('');
      expect(
        JSON.parse((await hortus(container, ['group', 'show', 'Nord "A" \\ 2', '--json'])).stdout),
      ).to.include({
        name: 'Nord "A" \\ 2',
      });
    });
  });

  describe('action set', () => {
    beforeEach(async () => {
      await hortus(container, ['group', 'create', 'gh-1']);
      await hortus(container, ['action', 'create', 'dimmer_1', '-g', 'gh-1', '--value', 'half']);
    });

    it('when the action does not exist, then the message names it and its group', async () => {
      const { code, stderr } = await hortus(container, ['action', 'set', 'nope', 'on', '-g', 'gh-1']);
      expect(code).to.equal(exitCodes.notFound);
      expect(stderr).to.equal('hortus: no action nope in group gh-1\n');
    });

    it('when the value is not one the action is known to take, then it exits 2 and keeps the value', async () => {
      const { code, stderr } = await hortus(container, ['action', 'set', 'dimmer_1', 'onn', '-g', 'gh-1']);
      expect(code).to.equal(exitCodes.usage);
      expect(stderr).to.contain('dimmer_1 is not known to take the value onn (known: on, off, half)');
      expect(stderr).to.contain('--force');
      const listed = await hortus(container, ['action', 'list', '-g', 'gh-1', '--json']);
      expect((JSON.parse(listed.stdout) as { value: string }[])[0]?.value).to.equal('half');
    });

    it('when the value is on, off or its own, or --force is given, then it is set', async () => {
      expect((await hortus(container, ['action', 'set', 'dimmer_1', 'off', '-g', 'gh-1'])).code).to.equal(0);
      expect(
        (await hortus(container, ['action', 'set', 'dimmer_1', '75', '-g', 'gh-1', '--force'])).code,
      ).to.equal(0);
      const listed = await hortus(container, ['action', 'list', '-g', 'gh-1', '--json']);
      expect((JSON.parse(listed.stdout) as { value: string }[])[0]?.value).to.equal('75');
    });
  });

  describe('device create checks the id', () => {
    beforeEach(async () => {
      await hortus(container, ['group', 'create', 'gh-1']);
    });

    for (const id of ['24:6F:28:AA:00:01', '24-6f-28-aa-00-01', '246f28aa0001', '100aa286f24']) {
      it(`when the id is ${id}, then it is registered`, async () => {
        expect((await hortus(container, ['device', 'create', id, '-g', 'gh-1', '-t', 'box'])).code).to.equal(
          0,
        );
      });
    }

    it('when the id is no MAC and --type is missing, then it exits 2 naming both, the MAC first', async () => {
      const refused = await hortus(container, ['device', 'create', 'nonsense', '-g', 'gh-1']);
      expect(refused.code).to.equal(exitCodes.usage);
      expect(refused.stdout).to.equal('');
      const lines = refused.stderr.split('\n');
      expect(lines[0]).to.match(/^hortus: nonsense is not a MAC: /u);
      expect(refused.stderr).to.contain('--type <type> is required');
    });

    it('when a MAC is given without --type, then it exits 2 saying --type is required', async () => {
      const refused = await hortus(container, ['device', 'create', '24:6F:28:AA:00:01', '-g', 'gh-1']);
      expect(refused.code).to.equal(exitCodes.usage);
      expect(refused.stderr).to.match(/^hortus: --type <type> is required/u);
      expect(refused.stderr).not.to.contain('not a MAC');
    });

    it('when the id is no MAC, then it exits 2 with the forms it takes, unless --any-id', async () => {
      const refused = await hortus(container, [
        'device',
        'create',
        '24:6F:28:AA:00',
        '-g',
        'gh-1',
        '-t',
        'box',
      ]);
      expect(refused.code).to.equal(exitCodes.usage);
      expect(refused.stderr).to.contain('24:6F:28:AA:00 is not a MAC');
      expect((await hortus(container, ['device', 'list', '-g', 'gh-1'])).stdout).to.equal(
        'No devices in group gh-1.\n',
      );
      const legacy = await hortus(container, [
        'device',
        'create',
        'box-7',
        '-g',
        'gh-1',
        '-t',
        'box',
        '--any-id',
      ]);
      expect(legacy.code).to.equal(0);
    });
  });

  describe('errors', () => {
    it("when the command is unknown, then the parser's message starts with hortus:", async () => {
      const { code, stderr } = await hortus(container, ['frobnicate']);
      expect(code).to.equal(exitCodes.usage);
      expect(stderr).to.match(/^hortus: unknown command 'frobnicate'\n/u);
    });

    it('when backup is given a directory that does not exist, then it exits 2 and says so', async () => {
      const target = join(scratch, 'missing', 'copy.db');
      const { code, stderr } = await hortus(container, ['backup', target]);
      expect(code).to.equal(exitCodes.usage);
      expect(stderr).to.equal(
        `hortus: cannot write the backup to ${target}: the directory ${join(scratch, 'missing')} does not exist\n`,
      );
    });
  });

  describe('readings export', () => {
    beforeEach(async () => {
      await hortus(container, ['group', 'create', 'gh-1']);
    });

    it('when --output ends in .csv or .ndjson, then that is the format', async () => {
      const csv = join(scratch, 'out.csv');
      expect((await hortus(container, ['readings', 'export', '-g', 'gh-1', '-o', csv])).code).to.equal(0);
      expect(readFileSync(csv, 'utf8')).to.match(/^group,topic,value,time/u);
      const ndjson = join(scratch, 'out.ndjson');
      const done = await hortus(container, ['readings', 'export', '-g', 'gh-1', '-o', ndjson, '--json']);
      expect(JSON.parse(done.stdout)).to.deep.include({ format: 'ndjson' });
    });

    it('when the format cannot be told, then it exits 2 and writes nothing', async () => {
      const text = join(scratch, 'out.txt');
      const { code, stderr } = await hortus(container, ['readings', 'export', '-g', 'gh-1', '-o', text]);
      expect(code).to.equal(exitCodes.usage);
      expect(stderr).to.contain('add --format csv or --format ndjson');
      expect(existsSync(text)).to.equal(false);
    });

    it('when the output file exists, then it is kept unless --force', async () => {
      const csv = join(scratch, 'kept.csv');
      writeFileSync(csv, 'precious\n');
      const refused = await hortus(container, ['readings', 'export', '-g', 'gh-1', '-o', csv]);
      expect(refused.code).to.equal(exitCodes.usage);
      expect(refused.stderr).to.equal(`hortus: ${csv} exists: add --force to overwrite it\n`);
      expect(readFileSync(csv, 'utf8')).to.equal('precious\n');
      expect(
        (await hortus(container, ['readings', 'export', '-g', 'gh-1', '-o', csv, '--force'])).code,
      ).to.equal(0);
      expect(readFileSync(csv, 'utf8')).to.match(/^group,topic,value,time/u);
    });
  });
});
