import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { expect } from 'chai';
import { scratchDataDir } from './harness.js';

/*
 * The embedded store acknowledges a reading only once it is committed: SIGKILL the server in the middle of
 * HTTP ingest, and every reading that got its 202 is in the file, which passes integrity_check.
 */

const main = fileURLToPath(new URL('../src/main.js', import.meta.url));
const WORKERS = 4;
const BATCH = 200;
const LOAD_BEFORE_KILL_MS = 1500;

describe('hortus serve on SQLite: SIGKILL during HTTP ingest', function () {
  this.timeout(30_000);

  it('when the server is killed mid-ingest, then every acknowledged reading is in the file and the file is sound', async () => {
    const dataDir = scratchDataDir();
    const child = spawn(process.execPath, [main, 'serve', '--port', '0'], {
      env: { ...process.env, HOST: '127.0.0.1', HORTUS_DATA_DIR: dataDir, STORE: '', MONGODB_URI: '' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    let url: string | undefined;
    for (let attempt = 0; attempt < 200 && url === undefined; attempt += 1) {
      const line = stdout.split('\n').find((text) => text.includes('"event":"listening"'));
      url = line === undefined ? undefined : (JSON.parse(line) as { url: string }).url;
      if (url === undefined) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    if (url === undefined) throw new Error(`hortus serve did not start: ${stdout}`);

    const acknowledged: { group: string; topic: string; time: string }[] = [];
    let killed = false;
    const worker = async (index: number): Promise<void> => {
      for (let batch = 0; !killed; batch += 1) {
        const items = Array.from({ length: BATCH }, (_, i) => ({
          group: 'durable',
          topic: `esp/box/${index}`,
          value: i,
          time: new Date(Date.UTC(2025, 0, 1) + (batch * BATCH + i) * 1000).toISOString(),
        }));
        try {
          const response = await fetch(`${url}/api/data/readings`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify(items),
          });
          if (response.status === 202) acknowledged.push(...items);
        } catch {
          // The server is gone: what was not acknowledged need not be there.
          return;
        }
      }
    };
    const load = Promise.all(Array.from({ length: WORKERS }, (_, index) => worker(index)));
    // The load runs for a while and until some readings are acknowledged, however slow a loaded machine is.
    for (const loading = Date.now(); Date.now() - loading < LOAD_BEFORE_KILL_MS || acknowledged.length === 0;)
      await new Promise((resolve) => setTimeout(resolve, 20));
    child.kill('SIGKILL');
    killed = true;
    await Promise.all([load, exited]);

    expect(acknowledged.length).to.be.greaterThan(0);
    const file = new Database(join(dataDir, 'hortus.db'));
    try {
      expect(file.pragma('integrity_check', { simple: true })).to.equal('ok');
      const stored = file.prepare(
        `SELECT count(*) AS n FROM readings r JOIN series s ON s.id = r.series
         WHERE s.grp = ? AND s.topic = ? AND r.time = ?`,
      );
      const missing = acknowledged.filter(
        ({ group, topic, time }) => (stored.get(group, topic, Date.parse(time)) as { n: number }).n !== 1,
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
