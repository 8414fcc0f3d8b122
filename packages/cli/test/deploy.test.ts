import { execFile, spawnSync } from 'node:child_process';
import { request } from 'node:https';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../../../../', import.meta.url));
// `info` rather than `--version`: a client without a running daemon cannot build anything.
const engine = ['docker', 'podman'].find((name) => spawnSync(name, ['info']).status === 0);
const secret = 'a-test-secret-that-is-long-enough-000000';

async function answers(url: string, status: number): Promise<void> {
  for (let attempt = 0; attempt < 120; attempt += 1) {
    const response = await fetch(url).catch(() => undefined);
    if (response?.status === status) return;
    await sleep(1000);
  }
  throw new Error(`${url} did not answer ${status} within 2 minutes`);
}

/** The status of an HTTPS GET that takes any certificate (TLS=self-signed), as boxes do. */
function secureStatus(url: string): Promise<number | undefined> {
  return new Promise((resolve, reject) => {
    request(url, { rejectUnauthorized: false }, (response) => {
      response.resume();
      response.once('end', () => resolve(response.statusCode));
    })
      .once('error', reject)
      .end();
  });
}

describe('deploy/Dockerfile and deploy/compose.yaml in a container engine', function () {
  this.timeout(15 * 60_000);
  before(function () {
    if (engine === undefined) {
      process.stderr.write(
        '  skipped: no container engine answers (`docker info` and `podman info` fail), so the recipes are not run\n',
      );
      this.skip();
    }
  });

  it('when the image is built and run, then /readyz answers 200 on the embedded store and SIGTERM stops it with exit 0', async () => {
    const tool = engine ?? 'docker';
    await run(tool, ['build', '-f', 'deploy/Dockerfile', '-t', 'hortus-test', '.'], { cwd: root });
    const { stdout } = await run(tool, [
      'run',
      '-d',
      '-p',
      '127.0.0.1:18080:8080',
      '-e',
      `AUTH_SECRET=${secret}`,
      'hortus-test',
    ]);
    const id = stdout.trim();
    try {
      await answers('http://127.0.0.1:18080/readyz', 200);
      await run(tool, ['stop', '--time', '15', id]);
      const { stdout: exitCode } = await run(tool, ['inspect', '--format', '{{.State.ExitCode}}', id]);
      expect(exitCode.trim()).to.equal('0');
    } finally {
      await run(tool, ['rm', '-f', id]).catch(() => undefined);
    }
  });

  it('when compose.yaml is up, then Hortus answers on MongoDB with the MQTT bridge on Mosquitto, HTTPS for boxes, and `hortus` commands in its container', async () => {
    const tool = engine ?? 'docker';
    const compose = ['compose', '-f', 'deploy/compose.yaml', '-p', 'hortus-test'];
    // Ports of their own, on loopback: the machine's broker may hold 1883.
    const env = {
      ...process.env,
      AUTH_SECRET: secret,
      HORTUS_PORT: '18081',
      HORTUS_HTTPS_PORT: '18443',
      MQTT_PORT: '127.0.0.1:11883',
    };
    await run(tool, [...compose, 'up', '-d', '--build', '--wait'], { cwd: root, env });
    try {
      await answers('http://127.0.0.1:18081/readyz', 200);
      expect(await secureStatus('https://127.0.0.1:18443/healthz')).to.equal(200);
      const exec = [...compose, 'exec', '-T', 'hortus', 'hortus'];
      await run(tool, [...exec, 'group', 'create', 'greenhouse-1'], { cwd: root, env });
      await run(tool, [...exec, 'device', 'claim', '100aa286f24', '--group', 'greenhouse-1'], {
        cwd: root,
        env,
      });
      const devices = await fetch('http://127.0.0.1:18081/api/devices?group=greenhouse-1');
      expect(devices.status).to.equal(200);
      expect(JSON.stringify(await devices.json())).to.include('100aa286f24');
    } finally {
      await run(tool, [...compose, 'down', '-v'], { cwd: root, env }).catch(() => undefined);
    }
  });
});
