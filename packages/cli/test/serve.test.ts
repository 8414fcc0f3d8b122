import { EventEmitter } from 'node:events';
import { type AddressInfo, createServer } from 'node:net';
import { chmodSync, existsSync, mkdirSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import { Capture, hortus, scratchDataDir } from './harness.js';

interface LogLine {
  readonly level: string;
  readonly event: string;
  readonly [field: string]: unknown;
}

const logLines = (capture: Capture): LogLine[] =>
  capture.text
    .trimEnd()
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as LogLine);

async function listeningUrl(capture: Capture): Promise<string> {
  for (let attempt = 0; attempt < 200; attempt += 1) {
    const listening =
      capture.text === '' ? undefined : logLines(capture).find((l) => l.event === 'listening');
    if (listening !== undefined) return listening['url'] as string;
    await sleep(25);
  }
  throw new Error(`the server did not log "listening"; output so far: ${capture.text}`);
}

describe('hortus serve (in-process)', () => {
  const dataDir = scratchDataDir();

  it('when started with --demo and no MONGODB_URI, then it serves the demo from the SQLite file and shuts down gracefully on SIGTERM', async () => {
    const signals = new EventEmitter();
    const stdout = new Capture();
    const exited = hortus(undefined, ['serve', '--demo', '--port', '0'], {
      env: { HOST: '127.0.0.1', HORTUS_DATA_DIR: dataDir },
      signals,
      stdout,
    });
    const url = await listeningUrl(stdout);

    const response = await fetch(`${url}/api/devices?group=demo`);
    expect(response.status).to.equal(200);
    expect(((await response.json()) as { message: unknown[] }).message).to.have.length(2);

    signals.emit('SIGTERM');
    const { code, stderr } = await exited;

    expect(code).to.equal(0);
    expect(stderr).to.equal('');
    const events = logLines(stdout).map((line) => line.event);
    const signalAt = events.indexOf('signal received');
    expect(signalAt).to.be.greaterThan(events.indexOf('listening'));
    expect(events.indexOf('shutting down')).to.be.greaterThan(signalAt);
    expect(events.at(-1)).to.equal('stopped');
    expect(logLines(stdout).find((l) => l.event === 'listening')).to.include({ store: 'sqlite' });
    expect(logLines(stdout).find((l) => l.event === 'signal received')).to.include({ signal: 'SIGTERM' });
    expect(signals.listenerCount('SIGTERM') + signals.listenerCount('SIGINT')).to.equal(0);
    await expect(fetch(`${url}/api`)).to.be.rejected;
  });

  it('when restarted on the same data directory, then what was written is there and --demo seeds nothing again', async () => {
    const signals = new EventEmitter();
    const stdout = new Capture();
    const exited = hortus(undefined, ['serve', '--demo', '--port', '0'], {
      env: { HOST: '127.0.0.1', HORTUS_DATA_DIR: dataDir },
      signals,
      stdout,
    });
    const url = await listeningUrl(stdout);
    const devices = (await (await fetch(`${url}/api/devices?group=demo`)).json()) as { message: unknown[] };
    const actions = (await (await fetch(`${url}/api/actions/current_state?group=demo`)).json()) as {
      message: unknown[];
    };
    signals.emit('SIGTERM');
    expect((await exited).code).to.equal(0);

    expect(devices.message).to.have.length(2);
    expect(actions.message).to.have.length(4);
    const events = logLines(stdout).map((line) => line.event);
    expect(events).to.include('demo already there');
    expect(events).not.to.include('demo seeded');
  });

  it('when started with --memory, then the store is memory and nothing is written to the data directory', async () => {
    const signals = new EventEmitter();
    const stdout = new Capture();
    const emptyDir = scratchDataDir();
    const exited = hortus(undefined, ['serve', '--memory', '--demo', '--port', '0'], {
      env: { HOST: '127.0.0.1', HORTUS_DATA_DIR: emptyDir },
      signals,
      stdout,
    });
    await listeningUrl(stdout);
    signals.emit('SIGTERM');
    expect((await exited).code).to.equal(0);
    expect(logLines(stdout).find((l) => l.event === 'listening')).to.include({ store: 'memory' });
    expect(existsSync(emptyDir)).to.equal(false);
  });

  it('when SIGINT arrives, then it shuts down the same way', async () => {
    const signals = new EventEmitter();
    const stdout = new Capture();
    const exited = hortus(undefined, ['serve', '--port', '0'], {
      env: { HOST: '127.0.0.1' },
      signals,
      stdout,
    });
    await listeningUrl(stdout);
    signals.emit('SIGINT');
    expect((await exited).code).to.equal(0);
    expect(logLines(stdout).at(-1)?.event).to.equal('stopped');
  });

  it('when HOST is unset, then it listens on 127.0.0.1 only and logs that access control is off, without a warning', async () => {
    const signals = new EventEmitter();
    const stdout = new Capture();
    const exited = hortus(undefined, ['serve', '--memory', '--port', '0'], { env: {}, signals, stdout });
    const url = await listeningUrl(stdout);
    signals.emit('SIGTERM');
    expect((await exited).code).to.equal(0);

    expect(url).to.match(/^http:\/\/127\.0\.0\.1:\d+$/u);
    const listening = logLines(stdout).find((l) => l.event === 'listening');
    expect(listening).to.include({ accessControl: 'off' });
    expect(listening?.['addresses']).to.deep.equal([url]);
    expect(logLines(stdout).filter((l) => l.level === 'warn')).to.deep.equal([]);
  });

  it('when the data directory is readable by other users, then the start warns, naming it and the fix', async function () {
    if (process.platform === 'win32') this.skip();
    const dir = scratchDataDir();
    mkdirSync(dir, { recursive: true });
    chmodSync(dir, 0o755);
    const signals = new EventEmitter();
    const stdout = new Capture();
    const exited = hortus(undefined, ['serve', '--port', '0'], {
      env: { HOST: '127.0.0.1', HORTUS_DATA_DIR: dir },
      signals,
      stdout,
    });
    await listeningUrl(stdout);
    signals.emit('SIGTERM');
    expect((await exited).code).to.equal(0);

    const warnings = logLines(stdout).filter((l) => l.event === 'data files readable by others');
    expect(warnings.map((l) => [l.level, l['message']])).to.deep.equal([
      ['warn', `${dir} is 0755, other users may read it: chmod 700 ${dir}`],
    ]);
  });

  it('when a variable looks meant for Hortus but is not read (HORTUS_DATADIR), then the start warns, naming the one meant', async () => {
    const signals = new EventEmitter();
    const stdout = new Capture();
    const exited = hortus(undefined, ['serve', '--memory', '--port', '0'], {
      env: { HORTUS_DATADIR: '/srv/hortus', PORTT: '9000' },
      signals,
      stdout,
    });
    await listeningUrl(stdout);
    signals.emit('SIGTERM');
    expect((await exited).code).to.equal(0);

    const warnings = logLines(stdout).filter((l) => l.event === 'unknown variable');
    expect(warnings.map((l) => [l.level, l['name'], l['message']])).to.deep.equal([
      ['warn', 'HORTUS_DATADIR', 'HORTUS_DATADIR is not a Hortus setting (did you mean HORTUS_DATA_DIR?)'],
      ['warn', 'PORTT', 'PORTT is not a Hortus setting (did you mean PORT?)'],
    ]);
  });

  it('when HOST opens it beyond loopback with no keys and AUTH off, then a warning says what anyone on the network can do', async () => {
    const signals = new EventEmitter();
    const stdout = new Capture();
    const exited = hortus(undefined, ['serve', '--memory', '--port', '0'], {
      env: { HOST: '0.0.0.0', AUTH: 'off' },
      signals,
      stdout,
    });
    await listeningUrl(stdout);
    signals.emit('SIGTERM');
    expect((await exited).code).to.equal(0);

    const listening = logLines(stdout).find((l) => l.event === 'listening');
    expect(listening).to.include({ accessControl: 'off', accessReason: 'AUTH=off' });
    expect(listening?.['addresses']).to.be.an('array').with.length.greaterThan(0);
    const warning = logLines(stdout).find((l) => l.event === 'open to the network without access control');
    expect(warning?.level).to.equal('warn');
    expect(warning?.['message']).to.contain('switch devices');
  });

  it('when AUTH=on, then the start log says access control is on and nothing warns, whatever HOST', async () => {
    const signals = new EventEmitter();
    const stdout = new Capture();
    const exited = hortus(undefined, ['serve', '--memory', '--port', '0'], {
      env: { HOST: '0.0.0.0', AUTH: 'on' },
      signals,
      stdout,
    });
    await listeningUrl(stdout);
    signals.emit('SIGTERM');
    expect((await exited).code).to.equal(0);
    expect(logLines(stdout).find((l) => l.event === 'listening')).to.include({ accessControl: 'on' });
    expect(logLines(stdout).map((l) => l.event)).not.to.include('open to the network without access control');
  });

  it('when the configuration is invalid, then it exits 2 naming the problem and never listens', async () => {
    const { code, stdout, stderr } = await hortus(undefined, ['serve'], { env: { PORT: 'eighty' } });
    expect(code).to.equal(2);
    expect(stderr).to.contain('PORT must be a whole number');
    expect(stdout).not.to.contain('listening');
  });

  it('when the port is in use, then it exits 2 naming the address and port, not as an unexpected error', async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = holder.address() as AddressInfo;
      const { code, stderr } = await hortus(undefined, ['serve', '--memory', '--port', String(port)], {
        env: { HOST: '127.0.0.1' },
      });
      expect(code).to.equal(2);
      expect(stderr).to.contain(`hortus: cannot listen on 127.0.0.1:${port}: the address is already in use`);
      expect(stderr).not.to.contain('unexpected error');
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
  });

  it('when --port is not a port, then it is a usage error', async () => {
    const { code, stderr } = await hortus(undefined, ['serve', '--port', '99999']);
    expect(code).to.equal(2);
    expect(stderr).to.contain('must be a port from 0 to 65535');
  });
});
