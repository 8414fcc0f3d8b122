import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { dropTestDatabase } from './harness.js';

const main = fileURLToPath(new URL('../src/main.js', import.meta.url));
const uri = process.env['MONGODB_URI']?.trim() ?? '';
const skipReason =
  ' [skipped: MONGODB_URI is unset; start the test server with eval "$(bash scripts/ferretdb.sh start)"]';

interface Finished {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function collect(child: ChildProcess): {
  output: { stdout: string; stderr: string };
  exited: Promise<Finished>;
} {
  const output = { stdout: '', stderr: '' };
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (output.stdout += chunk));
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (output.stderr += chunk));
  const exited = new Promise<Finished>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, ...output }));
  });
  return { output, exited };
}

describe('hortus as a subprocess against MongoDB', function () {
  this.timeout(30_000);
  // A database of its own, so runs never see each other's devices; dropped afterwards.
  const env = {
    ...process.env,
    MONGODB_DB: `hortus_cli_${randomBytes(4).toString('hex')}`,
    HOST: '127.0.0.1',
  };
  const hortus = (...argv: string[]): Promise<Finished> =>
    collect(spawn(process.execPath, [main, ...argv], { env, stdio: ['ignore', 'pipe', 'pipe'] })).exited;

  after(async () => {
    if (uri !== '') await dropTestDatabase(env);
  });

  (uri === '' ? it.skip : it)(
    `when a device is created with the CLI, then the HTTP API of \`hortus serve\` lists it, and SIGTERM stops the server cleanly${uri === '' ? skipReason : ''}`,
    async () => {
      const created = await hortus(
        'device',
        'create',
        '24:6F:28:CC:00:01',
        '-g',
        'cli-test',
        '-t',
        'sensor-box',
        '--create-group',
        '--json',
      );
      expect(created.stderr).to.equal('');
      expect(created.code).to.equal(0);
      expect(JSON.parse(created.stdout)).to.deep.include({
        deviceId: '24:6F:28:CC:00:01',
        group: 'cli-test',
      });

      const again = await hortus('device', 'create', '24:6F:28:CC:00:01', '-g', 'cli-test', '-t', 'relay');
      expect(again.code).to.equal(4);

      const server = spawn(process.execPath, [main, 'serve', '--port', '0'], {
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const { output, exited } = collect(server);
      let running = true;
      const stop = (): void => {
        running = false;
      };
      exited.then(stop, stop);
      try {
        let url: string | undefined;
        for (let attempt = 0; attempt < 300 && url === undefined && running; attempt += 1) {
          const listening = output.stdout.split('\n').find((line) => line.includes('"event":"listening"'));
          url = listening === undefined ? undefined : (JSON.parse(listening) as { url: string }).url;
          if (url === undefined) await new Promise((resolve) => setTimeout(resolve, 50));
        }
        expect(url, `server output: ${output.stdout}${output.stderr}`).to.be.a('string');

        const response = await fetch(`${url}/api/devices?group=cli-test`);
        expect(response.status).to.equal(200);
        const body = (await response.json()) as { message: { deviceId: string; type: string }[] };
        expect(body.message.map(({ deviceId, type }) => ({ deviceId, type }))).to.deep.equal([
          { deviceId: '24:6F:28:CC:00:01', type: 'sensor-box' },
        ]);
      } finally {
        server.kill('SIGTERM');
      }
      const stopped = await exited;
      expect(stopped.code).to.equal(0);
      const events = stopped.stdout
        .trimEnd()
        .split('\n')
        .map((line) => (JSON.parse(line) as { event: string }).event);
      expect(events).to.include.members(['listening', 'signal received', 'shutting down', 'stopped']);
      expect(events.at(-1)).to.equal('stopped');
    },
  );
});
