import { spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { expect } from 'chai';
import { exitCodes } from '@hortus/cli';
import { Capture, hortus, scratchDataDir } from './harness.js';

async function groupsIn(dataDir: string): Promise<string[]> {
  const listed = await hortus(undefined, ['group', 'list', '--json'], { env: { HORTUS_DATA_DIR: dataDir } });
  expect(listed.code, listed.stderr).to.equal(exitCodes.ok);
  return (JSON.parse(listed.stdout) as { name: string }[]).map(({ name }) => name).sort();
}

async function serving(env: Record<string, string>): Promise<{ stop: () => Promise<void> }> {
  const signals = new EventEmitter();
  const stdout = new Capture();
  const server = hortus(undefined, ['serve', '--port', '0'], { env, signals, stdout });
  for (let attempt = 0; !stdout.text.includes('"listening"'); attempt += 1) {
    if (attempt > 400) throw new Error(`the server did not start: ${stdout.text}`);
    await sleep(25);
  }
  return {
    stop: async () => {
      signals.emit('SIGTERM');
      await server;
    },
  };
}

describe('hortus restore <file>', function () {
  this.timeout(30_000);

  it('when a server in another process has the file open, then it refuses; after that server was killed (-9), the old file keeps what its log held', async () => {
    const dataDir = scratchDataDir();
    const env = { HOST: '127.0.0.1', HORTUS_DATA_DIR: dataDir };
    const copy = join(scratchDataDir(), 'copy.db');
    mkdirSync(join(copy, '..'), { recursive: true });
    expect((await hortus(undefined, ['backup', copy], { env })).code).to.equal(0);
    const main = fileURLToPath(new URL('../src/main.js', import.meta.url));
    const server = spawn(process.execPath, [main, 'serve', '--port', '0'], {
      // The shell's MONGODB_URI (the test command exports it for the Mongo suites) must not move it off SQLite.
      env: { ...process.env, ...env, STORE: '', MONGODB_URI: '', MQTT_URL: '', LOG_FORMAT: 'json' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const exited = new Promise((resolve) => server.once('exit', resolve));
    let log = '';
    server.stdout.setEncoding('utf8').on('data', (chunk: string) => (log += chunk));
    let refused;
    try {
      for (let attempt = 0; !log.includes('"listening"'); attempt += 1) {
        if (attempt > 600) throw new Error(`the server did not start: ${log}`);
        await sleep(25);
      }
      // Written while the server holds the file: it sits in the write-ahead log, not yet in the file.
      expect((await hortus(undefined, ['group', 'create', 'in-the-log'], { env })).code).to.equal(0);
      refused = await hortus(undefined, ['restore', copy], { env });
    } finally {
      server.kill('SIGKILL');
      await exited;
    }
    expect(refused.code).to.equal(exitCodes.refused);

    const restored = await hortus(undefined, ['restore', copy, '--json'], { env });

    expect(restored.code, restored.stderr).to.equal(exitCodes.ok);
    const { kept } = JSON.parse(restored.stdout) as { kept: string };
    expect(readdirSync(dataDir).filter((name) => name.startsWith('hortus.db.before-restore'))).to.deep.equal([
      kept.slice(dataDir.length + 1),
    ]);
    const old = new Database(kept, { readonly: true });
    try {
      const names = old.prepare('SELECT name FROM groups').all() as { name: string }[];
      expect(names.map(({ name }) => name)).to.include('in-the-log');
    } finally {
      old.close();
    }
  });

  it('when a server has the data file open, then it refuses with exit 7 and changes nothing; once stopped, the copy goes in and the old file is kept', async () => {
    const dataDir = scratchDataDir();
    const env = { HOST: '127.0.0.1', HORTUS_DATA_DIR: dataDir };
    const copy = join(scratchDataDir(), 'copy.db');
    mkdirSync(join(copy, '..'), { recursive: true });
    expect((await hortus(undefined, ['group', 'create', 'before-backup'], { env })).code).to.equal(0);
    expect((await hortus(undefined, ['backup', copy], { env })).code).to.equal(0);
    expect((await hortus(undefined, ['group', 'create', 'after-backup'], { env })).code).to.equal(0);
    const server = await serving(env);
    let refused;
    try {
      refused = await hortus(undefined, ['restore', copy], { env });
    } finally {
      await server.stop();
    }

    expect(refused.code).to.equal(exitCodes.refused);
    expect(refused.stderr).to.contain('is in use');
    expect(readdirSync(dataDir).filter((name) => name.includes('restor'))).to.deep.equal([]);
    expect(await groupsIn(dataDir)).to.deep.equal(['after-backup', 'before-backup']);

    const restored = await hortus(undefined, ['restore', copy, '--json'], { env });

    expect(restored.code, restored.stderr).to.equal(exitCodes.ok);
    const report = JSON.parse(restored.stdout) as { file: string; kept: string; integrity: string };
    expect(report).to.include({ file: join(dataDir, 'hortus.db'), integrity: 'ok' });
    expect(report.kept).to.match(/hortus\.db\.before-restore-\d{4}-\d\d-\d\dT/u);
    expect(await groupsIn(dataDir)).to.deep.equal(['before-backup']);
    expect(statSync(join(dataDir, 'hortus.db')).mode & 0o777).to.equal(0o600);
    // The old file stands alone (its write-ahead log folded in), so it can itself be restored.
    expect(readdirSync(dataDir).filter((name) => name.includes('restoring'))).to.deep.equal([]);
    const old = new Database(report.kept, { readonly: true });
    try {
      const names = old.prepare('SELECT name FROM groups ORDER BY name').all() as { name: string }[];
      expect(names.map(({ name }) => name)).to.deep.equal(['after-backup', 'before-backup']);
    } finally {
      old.close();
    }
  });

  it('when the copy is not a sound Hortus database, then it exits 2 naming the problem and the data file stays', async () => {
    const dataDir = scratchDataDir();
    const env = { HORTUS_DATA_DIR: dataDir };
    expect((await hortus(undefined, ['group', 'create', 'kept'], { env })).code).to.equal(0);
    const scratch = scratchDataDir();
    mkdirSync(scratch, { recursive: true });
    const notes = join(scratch, 'notes.db');
    writeFileSync(
      notes,
      'these are my notes, not a database, but long enough to look like a page. '.repeat(20),
    );
    const foreign = join(scratch, 'foreign.db');
    const other = new Database(foreign);
    other.exec('CREATE TABLE recipes (name TEXT)');
    other.close();
    const newer = join(scratch, 'newer.db');
    expect((await hortus(undefined, ['backup', newer], { env })).code).to.equal(0);
    const future = new Database(newer);
    future.exec('INSERT INTO schema_version (version, applied_at) VALUES (999, 0)');
    future.close();

    const live = join(scratch, 'live.db');
    expect((await hortus(undefined, ['backup', live], { env })).code).to.equal(0);
    writeFileSync(`${live}-wal`, 'the newest writes');

    const outcomes = await Promise.all(
      [notes, foreign, newer, join(scratch, 'missing.db'), live].map(async (file) =>
        hortus(undefined, ['restore', file], { env }),
      ),
    );

    expect(outcomes.map(({ code }) => code)).to.deep.equal([2, 2, 2, 2, 2]);
    expect(outcomes[0]?.stderr).to.contain('is not a SQLite database');
    expect(outcomes[1]?.stderr).to.contain('not a Hortus one');
    expect(outcomes[2]?.stderr).to.contain('newer Hortus (schema version 999');
    expect(outcomes[3]?.stderr).to.contain('does not exist');
    expect(outcomes[4]?.stderr).to.contain('has a write-ahead log beside it');
    expect(readdirSync(dataDir).filter((name) => name.includes('restor'))).to.deep.equal([]);
    expect(await groupsIn(dataDir)).to.deep.equal(['kept']);
  });

  it('when the copy still had alert messages to send, then they are cancelled with the reason, secrets blanked, and counted', async () => {
    const dataDir = scratchDataDir();
    const env = { HORTUS_DATA_DIR: dataDir };
    const copy = join(scratchDataDir(), 'copy.db');
    mkdirSync(join(copy, '..'), { recursive: true });
    expect((await hortus(undefined, ['group', 'create', 'gh'], { env })).code).to.equal(0);
    expect((await hortus(undefined, ['backup', copy], { env })).code).to.equal(0);
    const raw = new Database(copy);
    const insert = raw.prepare(
      `INSERT INTO outbox (id, grp, event, channel, subject, text, payload, created_at, status, attempts, next_attempt_at)
       VALUES (?, 'gh', 'opened', ?, 's', 't', '{}', 0, ?, 0, 0)`,
    );
    insert.run(
      'm1',
      JSON.stringify({ type: 'webhook', url: 'https://hooks.example/x', secret: 'whsec_abc' }),
      'pending',
    );
    insert.run('m2', JSON.stringify({ type: 'email', to: 'ana@example.org' }), 'delivered');
    raw.close();

    const restored = await hortus(undefined, ['restore', copy, '--json'], { env });

    expect(restored.code, restored.stderr).to.equal(exitCodes.ok);
    expect(JSON.parse(restored.stdout)).to.include({ cancelledMessages: 1 });
    const db = new Database(join(dataDir, 'hortus.db'), { readonly: true });
    try {
      const rows = db
        .prepare('SELECT id, status, last_error AS error, channel FROM outbox ORDER BY id')
        .all() as {
        id: string;
        status: string;
        error: string | null;
        channel: string;
      }[];
      expect(rows.map(({ id, status }) => [id, status])).to.deep.equal([
        ['m1', 'cancelled'],
        ['m2', 'delivered'],
      ]);
      expect(rows[0]?.error).to.contain('hortus restore');
      expect(JSON.parse(rows[0]?.channel ?? '{}')).to.include({ secret: '' });
    } finally {
      db.close();
    }
  });

  it('when the store is not SQLite, then it exits 2 and names the tool to use', async () => {
    const { code, stderr } = await hortus(undefined, ['restore', 'x.db'], { env: { STORE: 'memory' } });
    expect(code).to.equal(exitCodes.usage);
    expect(stderr).to.contain('mongorestore');
  });
});
