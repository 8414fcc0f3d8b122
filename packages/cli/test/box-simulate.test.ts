import { createServer } from 'node:net';
import { expect } from 'chai';
import { CreateAction, CreateDevice, GetLatestReadingsOfGroup } from '@hortus/core';
import { createContainer, createJsonLogger, loadConfig, type RunningServer, startServer } from '@hortus/cli';
import { berlinStampOf } from '../src/commands/box.js';
import { dropTestDatabase, hortus, scratchDataDir, testStore } from './harness.js';

/** A port nothing listens on right now: onboarding names the HTTPS port, so it must be known beforehand. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

function storeEnv(): Record<string, string> {
  if (testStore === 'sqlite') return { STORE: 'sqlite' };
  if (testStore === 'mongodb') {
    return {
      STORE: 'mongodb',
      MONGODB_URI: process.env['MONGODB_URI'] ?? '',
      MONGODB_DB: `hortus_sim_${Date.now()}`,
    };
  }
  return { STORE: 'memory' };
}

describe(`hortus box simulate against a running server (${testStore} store)`, function () {
  // A round is 13 requests, each a new TLS connection; the test MongoDB takes its time over them.
  this.timeout(60_000);
  let running: RunningServer;
  let container: Awaited<ReturnType<typeof createContainer>>;
  const env = storeEnv();
  before(async () => {
    const config = loadConfig({
      PORT: '0',
      HOST: '127.0.0.1',
      HTTPS_PORT: String(await freePort()),
      TLS: 'self-signed',
      HORTUS_DATA_DIR: scratchDataDir(),
      AUTOMATIONS: 'off',
      RATE_LIMIT_PER_MINUTE: '0',
      ...env,
    });
    const logger = createJsonLogger(() => undefined);
    container = await createContainer(config, { logger });
    running = await startServer(config, { container, logger, shutdownGraceMs: 500 });
    await container.get(CreateDevice).execute({ deviceId: '24:6F:28:AA:00:01', group: 'north', type: 'box' });
    await container.get(CreateAction).execute({ group: 'north', object: 'pump_1', value: 'on' });
    await container.get(CreateAction).execute({ group: 'north', object: 'led_1', value: 'off' });
    await container.get(CreateAction).execute({ group: 'south', object: 'ventilator_1', value: 'on' });
  });
  after(async () => {
    await running.close();
    await dropTestDatabase(env);
  });

  it("when simulating a registered box, then it onboards, posts 12 stamped readings a round over HTTPS, and prints its own group's switches only", async () => {
    const before = Date.now();
    const { code, stdout, stderr } = await hortus(undefined, [
      'box',
      'simulate',
      '--backend',
      running.url,
      '--device',
      '24:6F:28:AA:00:01',
      '--count',
      '2',
      '--interval',
      '0',
    ]);

    expect(code, stdout + stderr).to.equal(0);
    expect(stdout).to.contain(
      'onboarded as 100aa286f24 (attempt 1): group north, data to https://127.0.0.1:',
    );
    expect(stdout).to.contain('update check: 204, nothing offered');
    expect(stdout).to.match(/round 1: readings 12 x 201, box time \S+Z to \S+Z, over TLSv1\.2/u);
    expect(stdout).to.match(/round 2: readings 12 x 201, box time \S+Z to \S+Z, over TLSv1\.2/u);
    expect(stdout).to.contain(
      'round 2: actions 200, would switch: pump_1 on, led_1 off, ventilator_1 off, ventilator_2 off',
    );
    const latest = await container.get(GetLatestReadingsOfGroup).execute({ group: 'north' });
    expect(latest).to.have.length(12);
    // Stamped in Berlin wall time with a Z, stored as the real instant (within the seconds of the run).
    for (const reading of latest) {
      expect(reading.time.getTime()).to.be.within(Math.floor(before / 1000) * 1000 - 1000, Date.now() + 1000);
    }
  });

  it("when a sensor read fails, then the box's `nan` reading is answered and told, and the run still succeeds", async () => {
    const { code, stdout, stderr } = await hortus(undefined, [
      'box',
      'simulate',
      '--backend',
      running.url,
      '--device',
      '24:6F:28:AA:00:01',
      '--count',
      '1',
      '--nan',
      'esp/air/humidity',
    ]);

    expect(code, stdout + stderr).to.equal(0);
    expect(stdout).to.contain('esp/air/humidity (nan): 400 {"message":"value must be a finite number"}');
    expect(stdout).to.match(/round 1: readings 11 x 201, 1 x 400, box time /u);
  });

  it('when the box is not registered, then every onboarding is refused and it exits 2 saying a box would give up', async () => {
    const { code, stdout, stderr } = await hortus(undefined, [
      'box',
      'simulate',
      '--backend',
      running.url,
      '--device',
      '24:6F:28:AA:00:99',
      '--tries',
      '2',
    ]);

    expect(code).to.equal(2);
    expect(stdout).to.contain(
      'onboarding attempt 2: 400 {"message":"Invalid device ID or device not found"}',
    );
    expect(stderr).to.contain('give up until power-cycled');
  });

  it('when the arguments are wrong, then it is a usage error before anything is sent', async () => {
    const noMac = await hortus(undefined, ['box', 'simulate', '--backend', running.url, '--device', 'pump']);
    const badBackend = await hortus(undefined, [
      'box',
      'simulate',
      '--backend',
      'ftp://x',
      '--device',
      '246f28aa0001',
    ]);
    expect(noMac.code).to.equal(2);
    expect(noMac.stderr).to.contain('must be a MAC address');
    expect(badBackend.code).to.equal(2);
    expect(badBackend.stderr).to.contain('--backend must be http(s)://host[:port]');
  });

  it('when the box stamps a time, then it is Berlin wall-clock time labelled UTC, in summer and in winter', () => {
    expect(berlinStampOf(new Date('2026-07-01T10:00:05.400Z'))).to.equal('2026-07-01T12:00:05.000Z');
    expect(berlinStampOf(new Date('2026-11-25T14:03:20.000Z'))).to.equal('2026-11-25T15:03:20.000Z');
  });
});
