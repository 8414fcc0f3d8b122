import { type ChildProcessByStdio, execFile, spawn } from 'node:child_process';
import { join } from 'node:path';
import { type Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { expect } from 'chai';
import { berlinStampOf, FIRMWARE_TOPICS } from '../src/commands/box.js';
import { scratchDataDir } from './harness.js';

/*
 * Issue 22: no reading a box was told is stored (201) may be lost when the server dies. A real server on
 * the embedded store, boxes posting single readings concurrently through the box endpoint (the firmware's
 * own requests), SIGKILL mid-stream, a restart on the same data directory: every acknowledged reading is
 * there, at the instant its Berlin wall-clock stamp meant.
 */

const main = fileURLToPath(new URL('../src/main.js', import.meta.url));
/** The kill comes once this many readings were acknowledged (and at least this long into the stream). */
const ACKNOWLEDGED_BEFORE_KILL = 100;
const LOAD_BEFORE_KILL_MS = 1000;
const LABEL = '24:6F:28:AA:00:01';
/** What that box sends as its id: the MAC's bytes reversed (COMPAT "Boxes"). */
const BOX_ID = '100aa286f24';

type Serve = ChildProcessByStdio<null, Readable, null>;

const env = (dataDir: string): NodeJS.ProcessEnv => ({
  ...process.env,
  HOST: '127.0.0.1',
  HORTUS_DATA_DIR: dataDir,
  STORE: '',
  MONGODB_URI: '',
  // Every box here posts from 127.0.0.1: on a quiet machine the test outruns the per-address allowance.
  RATE_LIMIT_PER_MINUTE: '0',
});

async function startServe(dataDir: string): Promise<{ child: Serve; url: string; exited: Promise<void> }> {
  const child = spawn(process.execPath, [main, 'serve', '--port', '0'], {
    env: env(dataDir),
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  let stdout = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  for (let attempt = 0; attempt < 400; attempt += 1) {
    const line = stdout.split('\n').find((text) => text.includes('"event":"listening"'));
    if (line !== undefined) return { child, url: (JSON.parse(line) as { url: string }).url, exited };
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  child.kill('SIGKILL');
  await exited;
  throw new Error(`hortus serve did not start: ${stdout}`);
}

function hortus(dataDir: string, args: readonly string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [main, ...args], { env: env(dataDir) }, (error, _stdout, stderr) =>
      error === null ? resolve() : reject(new Error(`hortus ${args.join(' ')}: ${stderr}`)),
    );
  });
}

/**
 * The box's stamp of an instant: Berlin wall-clock time with a literal Z, as the simulator writes it, but with
 * the instant's milliseconds, so that concurrent readings of one topic are distinct.
 */
function berlinStamp(instant: number): string {
  return berlinStampOf(new Date(instant)).replace(/\.000Z$/u, `.${String(instant % 1000).padStart(3, '0')}Z`);
}

describe('hortus serve on SQLite: SIGKILL while boxes post through the box endpoint', function () {
  this.timeout(60_000);

  it('when the server is killed while readings stream in, then after a restart every reading answered 201 is stored at its real instant', async () => {
    const dataDir = scratchDataDir();
    await hortus(dataDir, ['device', 'create', LABEL, '-g', 'durable-box', '-t', 'box', '--create-group']);
    const first = await startServe(dataDir);
    const onboarding = await fetch(`${first.url}/api/hardware`, {
      headers: {
        deviceId: BOX_ID,
        updateVersion: '1.0.4',
        lastactive: '5000',
        'content-type': 'application/json',
      },
    });
    expect(onboarding.status).to.equal(200);
    const { url: path, apiKey } = (await onboarding.json()) as { url: string; apiKey: string };

    // One worker per topic, each stepping 10 ms back from now so that no (group, topic, time) repeats; a
    // stamp the server stores is then never newer than the first one it acknowledged for that topic.
    const base = Date.now() - 1000;
    const acknowledged: { topic: string; time: number }[] = [];
    let killed = false;
    const worker = async (topic: string): Promise<void> => {
      for (let step = 0; !killed; step += 1) {
        const time = base - step * 10;
        const body = JSON.stringify({
          collection: 'datas',
          database: 'Website',
          dataSource: 'Cluster0',
          document: { topic, group: 'durable-box', value: '21.37', time: { $date: berlinStamp(time) } },
        });
        try {
          const response = await fetch(`${first.url}${path}/action/insertOne`, {
            method: 'POST',
            headers: { 'content-type': 'application/ejson', accept: 'application/json', 'api-key': apiKey },
            body,
          });
          if (response.status === 201) acknowledged.push({ topic, time });
          else if (!killed)
            throw new Error(`insertOne answered ${response.status}: ${await response.text()}`);
        } catch (error) {
          // The server is gone: what was not acknowledged need not be there.
          if (killed) return;
          throw error;
        }
      }
    };
    const load = Promise.all(FIRMWARE_TOPICS.map((topic) => worker(topic)));
    // Awaited below; a worker's failure must not count as unhandled meanwhile.
    load.catch(() => undefined);
    // Mid-stream whatever the machine's load: after enough acknowledged readings, not after a fixed time only.
    const streaming = Date.now();
    while (Date.now() - streaming < LOAD_BEFORE_KILL_MS || acknowledged.length < ACKNOWLEDGED_BEFORE_KILL) {
      if (Date.now() - streaming > 30_000) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    killed = true;
    first.child.kill('SIGKILL');
    await Promise.all([load, first.exited]);
    expect(acknowledged.length).to.be.at.least(ACKNOWLEDGED_BEFORE_KILL);

    // The restarted server reads the file the killed one left: the newest reading of each topic is the
    // first one acknowledged for it.
    const second = await startServe(dataDir);
    try {
      const latest = await fetch(`${second.url}/api/data/latestdata/All?groupId=durable-box`);
      expect(latest.status).to.equal(200);
      const newest = new Map<string, number>();
      for (const { topic, time } of acknowledged) newest.set(topic, Math.max(newest.get(topic) ?? 0, time));
      const seen = ((await latest.json()) as { topic: string; time: string }[])
        .map(({ topic, time }) => [topic, Date.parse(time)] as const)
        .filter(([topic]) => newest.has(topic))
        .sort(([a], [b]) => a.localeCompare(b));
      expect(seen).to.deep.equal([...newest].sort(([a], [b]) => a.localeCompare(b)));
    } finally {
      second.child.kill('SIGTERM');
      await second.exited;
    }

    const file = new Database(join(dataDir, 'hortus.db'), { readonly: true });
    try {
      expect(file.pragma('integrity_check', { simple: true })).to.equal('ok');
      const stored = file.prepare(
        `SELECT count(*) AS n FROM readings r JOIN series s ON s.id = r.series
         WHERE s.grp = 'durable-box' AND s.topic = ? AND r.time = ?`,
      );
      const missing = acknowledged.filter(
        ({ topic, time }) => (stored.get(topic, time) as { n: number }).n !== 1,
      );
      expect(
        missing,
        `${missing.length} of ${acknowledged.length} acknowledged readings are missing`,
      ).to.deep.equal([]);
    } finally {
      file.close();
    }
  });
});
