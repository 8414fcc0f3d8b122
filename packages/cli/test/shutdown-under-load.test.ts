import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { dropTestDatabase } from './harness.js';

/*
 * SIGTERM while boxes are sending readings: every request the server began is answered, the process exits
 * 0, and after a restart every reading that was acknowledged (202) is stored.
 */

const main = fileURLToPath(new URL('../src/main.js', import.meta.url));
const uri = process.env['MONGODB_URI']?.trim() ?? '';
const skipReason =
  ' [skipped: MONGODB_URI is unset; start the test server with eval "$(bash scripts/ferretdb.sh start)"]';

const WORKERS = 8;
const BATCH = 100;
/** A series answers at most 10 000 readings per query; each worker stays below that. */
const MAX_PER_WORKER = 9000;
const LOAD_BEFORE_SIGTERM_MS = 1500;

interface Served {
  readonly child: ChildProcess;
  readonly url: string;
  readonly stdout: () => string;
  readonly exited: Promise<number | null>;
}

async function serve(env: NodeJS.ProcessEnv): Promise<Served> {
  const child = spawn(process.execPath, [main, 'serve', '--port', '0'], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
  let url: string | undefined;
  for (let attempt = 0; attempt < 400 && url === undefined && child.exitCode === null; attempt += 1) {
    const listening = stdout.split('\n').find((line) => line.includes('"event":"listening"'));
    url = listening === undefined ? undefined : (JSON.parse(listening) as { url: string }).url;
    if (url === undefined) await new Promise((resolve) => setTimeout(resolve, 50));
  }
  if (url === undefined) {
    child.kill('SIGKILL');
    throw new Error(`hortus serve did not start: ${stdout}${stderr}`);
  }
  return { child, url, stdout: () => stdout, exited };
}

type Outcome =
  | { readonly kind: 'answered'; readonly status: number; readonly body: string }
  | { readonly kind: 'refused' }
  | { readonly kind: 'cut'; readonly error: string };

/** One request on a connection of its own, so "refused" means the server had stopped accepting. */
function post(url: string, path: string, body: unknown): Promise<Outcome> {
  const target = new URL(url);
  const text = JSON.stringify(body);
  return new Promise((resolve) => {
    const outgoing = request(
      {
        host: target.hostname,
        port: target.port,
        path,
        method: 'POST',
        agent: false,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) },
      },
      (response) => {
        let answer = '';
        response.setEncoding('utf8').on('data', (chunk: string) => (answer += chunk));
        response.on('end', () =>
          resolve({ kind: 'answered', status: response.statusCode ?? 0, body: answer }),
        );
        response.on('error', (error) => resolve({ kind: 'cut', error: error.message }));
      },
    );
    outgoing.on('error', (error: NodeJS.ErrnoException) =>
      resolve(error.code === 'ECONNREFUSED' ? { kind: 'refused' } : { kind: 'cut', error: error.message }),
    );
    outgoing.end(text);
  });
}

describe('hortus serve: SIGTERM under load, against MongoDB', function () {
  this.timeout(60_000);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    MONGODB_DB: `hortus_sigterm_${randomBytes(4).toString('hex')}`,
    HOST: '127.0.0.1',
    // One address sends everything here; the rate limit is not what is being tested.
    RATE_LIMIT_PER_MINUTE: '0',
    AUTOMATIONS: 'off',
  };
  const children: ChildProcess[] = [];

  after(async () => {
    for (const child of children)
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    if (uri !== '') await dropTestDatabase(env);
  });

  (uri === '' ? it.skip : it)(
    `when SIGTERM arrives while ${WORKERS} boxes post batches, then every begun request is answered, the exit is clean, and every acknowledged reading is stored${uri === '' ? skipReason : ''}`,
    async () => {
      const first = await serve(env);
      children.push(first.child);
      const groups = Array.from({ length: WORKERS }, (_, index) => `sigterm-${index}`);
      let acknowledged = 0;
      let unansweredReadings = 0;
      let refused = 0;
      const cut: string[] = [];
      const otherAnswers: string[] = [];
      let signalled = false;

      const worker = async (group: string): Promise<void> => {
        for (let sent = 0; sent < MAX_PER_WORKER; sent += BATCH) {
          const readings = Array.from({ length: BATCH }, (_, index) => ({
            group,
            topic: 'esp/air/temperature',
            value: 20 + (index % 10),
            // Unique per reading: an acknowledged reading is exactly one more stored reading.
            time: new Date(Date.UTC(2025, 5, 1) + (sent + index) * 1000).toISOString(),
          }));
          const outcome = await post(first.url, '/api/data/readings', readings);
          if (outcome.kind === 'refused') {
            refused += 1;
            if (signalled) return;
          } else if (outcome.kind === 'cut') {
            cut.push(outcome.error);
            unansweredReadings += BATCH;
            if (signalled) return;
          } else if (outcome.status === 202) {
            const answer = JSON.parse(outcome.body) as { accepted: number; stored: number };
            expect(answer.accepted).to.equal(BATCH);
            acknowledged += answer.stored;
          } else {
            otherAnswers.push(`${outcome.status} ${outcome.body}`);
          }
        }
      };
      const load = Promise.all(groups.map(worker));
      // The load runs for a while and until some readings are acknowledged, however slow a loaded machine is.
      for (const loading = Date.now(); Date.now() - loading < LOAD_BEFORE_SIGTERM_MS || acknowledged === 0;)
        await new Promise((resolve) => setTimeout(resolve, 20));
      signalled = true;
      first.child.kill('SIGTERM');
      await load;
      const code = await first.exited;

      const lines = first
        .stdout()
        .trimEnd()
        .split('\n')
        .map(
          (line) => JSON.parse(line) as { event: string; method?: string; path?: string; status?: number },
        );
      const handled = lines.filter(({ event, path }) => event === 'request' && path === '/api/data/readings');

      const second = await serve(env);
      children.push(second.child);
      let stored = 0;
      try {
        for (const group of groups) {
          const reply = await fetch(`${second.url}/api/data/All/temperature?groupId=${group}&count=10000`);
          stored += ((await reply.json()) as unknown[]).length;
        }
      } finally {
        second.child.kill('SIGTERM');
        await second.exited;
      }

      console.log(
        `      SIGTERM under load: ${handled.length} batches handled by the server, readings acknowledged ${acknowledged}, stored after restart ${stored}; ${refused} requests refused after the stop, ${cut.length} cut`,
      );
      expect(otherAnswers).to.deep.equal([]);
      expect(code).to.equal(0);
      expect(lines.at(-1)?.event).to.equal('stopped');
      // Every request the server began, it answered 202, and every one of those answers arrived.
      expect(handled.map(({ status }) => status)).to.deep.equal(handled.map(() => 202));
      expect(handled.length * BATCH).to.equal(acknowledged);
      expect(acknowledged).to.be.greaterThan(0);
      // Unique readings: what was acknowledged is stored, and only a request cut before its answer may add more.
      expect(stored).to.be.at.least(acknowledged);
      expect(stored).to.be.at.most(acknowledged + unansweredReadings);
    },
  );
});
