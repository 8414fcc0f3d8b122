import { EventEmitter } from 'node:events';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { expect } from 'chai';
import { exitCodes } from '@hortus/cli';
import { Capture, hortus, scratchDataDir } from './harness.js';

async function listeningUrl(capture: Capture): Promise<string> {
  for (let attempt = 0; attempt < 200; attempt += 1) {
    const line = capture.text
      .split('\n')
      .filter((text) => text.startsWith('{'))
      .map((text) => JSON.parse(text) as { event: string; url?: string })
      .find((entry) => entry.event === 'listening');
    if (line?.url !== undefined) return line.url;
    await sleep(25);
  }
  throw new Error(`the server did not log "listening": ${capture.text}`);
}

describe('the SQLite store shared by hortus serve and the data commands', function () {
  this.timeout(20_000);
  const dataDir = scratchDataDir();
  const env = { HOST: '127.0.0.1', HORTUS_DATA_DIR: dataDir };
  const signals = new EventEmitter();
  let server: Promise<unknown> | undefined;
  let url: string;

  before(async () => {
    const stdout = new Capture();
    server = hortus(undefined, ['serve', '--port', '0'], { env, signals, stdout });
    url = await listeningUrl(stdout);
  });
  after(async () => {
    signals.emit('SIGTERM');
    await server;
  });

  it('when nothing is configured, then a data command stores in HORTUS_DATA_DIR/hortus.db and a later run reads it back', async () => {
    const created = await hortus(undefined, ['group', 'create', 'persisted'], { env });
    expect(created.code, created.stderr).to.equal(exitCodes.ok);

    const listed = await hortus(undefined, ['group', 'list', '--json'], { env });

    expect(existsSync(join(dataDir, 'hortus.db'))).to.equal(true);
    expect((JSON.parse(listed.stdout) as { name: string }[]).map((group) => group.name)).to.include(
      'persisted',
    );
  });

  it('when the CLI switches an action while the server runs on the same file, then the next poll sees it, with a new ETag', async () => {
    expect((await hortus(undefined, ['group', 'create', 'shared'], { env })).code).to.equal(exitCodes.ok);
    const made = await hortus(undefined, ['action', 'create', 'pump_1', '-g', 'shared', '--create-group'], {
      env,
    });
    expect(made.code, made.stderr).to.equal(exitCodes.ok);
    const path = `${url}/api/actions/current_state?group=shared`;
    const before = await fetch(path);
    const etag = before.headers.get('etag') ?? '';
    expect(etag).not.to.equal('');
    expect((await fetch(path, { headers: { 'if-none-match': etag } })).status).to.equal(304);

    const set = await hortus(undefined, ['action', 'set', 'pump_1', 'on', '-g', 'shared'], { env });
    expect(set.code, set.stderr).to.equal(exitCodes.ok);

    const after = await fetch(path, { headers: { 'if-none-match': etag } });
    expect(after.status).to.equal(200);
    expect(after.headers.get('etag')).not.to.equal(etag);
    const { message } = (await after.json()) as { message: { object: string; value: string }[] };
    expect(message.map(({ object, value }) => ({ object, value }))).to.deep.equal([
      { object: 'pump_1', value: 'on' },
    ]);
  });

  it('when backed up while the server runs, then the copy is a sound database holding the data; an existing target is refused', async () => {
    const target = join(scratchDataDir(), 'copy.db');
    await hortus(undefined, ['group', 'create', 'in-backup'], { env });
    // The copy goes into a directory of its own that must exist.
    mkdirSync(join(target, '..'), { recursive: true });

    const made = await hortus(undefined, ['backup', target, '--json'], { env });

    expect(made.code, made.stderr).to.equal(exitCodes.ok);
    expect(JSON.parse(made.stdout)).to.include({ copy: target });
    const copy = new Database(target, { readonly: true });
    try {
      expect(copy.pragma('integrity_check', { simple: true })).to.equal('ok');
      const names = copy.prepare('SELECT name FROM groups').all() as { name: string }[];
      expect(names.map((row) => row.name)).to.include('in-backup');
    } finally {
      copy.close();
    }
    const again = await hortus(undefined, ['backup', target], { env });
    expect(again.code).to.equal(exitCodes.usage);
    expect(again.stderr).to.contain('exists already');
  });

  it('when the store is not SQLite, then backup refuses and names the tool to use', async () => {
    const { code, stderr } = await hortus(undefined, ['backup', join(dataDir, 'x.db')], {
      env: { STORE: 'memory' },
    });
    expect(code).to.equal(exitCodes.usage);
    expect(stderr).to.contain('backup copies the SQLite data file');
  });

  it('when the data file is not a SQLite database, then the command exits 2 with one line and the file is untouched', async () => {
    const brokenDir = scratchDataDir();
    mkdirSync(brokenDir, { recursive: true });
    writeFileSync(join(brokenDir, 'hortus.db'), 'these are my notes, not a database\n');

    const { code, stderr } = await hortus(undefined, ['group', 'list'], {
      env: { HORTUS_DATA_DIR: brokenDir },
    });

    expect(code).to.equal(exitCodes.usage);
    expect(stderr.trimEnd().split('\n')).to.have.length(1);
    expect(stderr).to.contain('not a SQLite database');
    expect(readFileSync(join(brokenDir, 'hortus.db'), 'utf8')).to.equal(
      'these are my notes, not a database\n',
    );
  });
});
