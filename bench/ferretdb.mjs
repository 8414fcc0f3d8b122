// The benchmarks' own MongoDB-wire test server: a FerretDB started through scripts/ferretdb.sh (the same
// script the tests and CI use), on SQLite or, with BENCH_FERRETDB_BACKEND=postgresql, on the machine's
// PostgreSQL. Never the tests' server: each start has its own state directory and database.
import { execFile, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * The backends the benchmarks' FerretDB uses: BENCH_FERRETDB_BACKEND, one or a comma-separated list
 * (`sqlite,postgresql`), SQLite by default. The engine and capacity parts measure each; the others the first.
 */
export function ferretDbBackends() {
  const backends = (process.env.BENCH_FERRETDB_BACKEND?.trim() || 'sqlite')
    .split(',')
    .map((name) => name.trim());
  for (const backend of backends) {
    if (backend !== 'sqlite' && backend !== 'postgresql') {
      throw new Error(`BENCH_FERRETDB_BACKEND must name sqlite or postgresql, not ${backend}`);
    }
  }
  return backends;
}

/** The MongoDB URI the benchmarks were given (BENCH_MONGODB_URI, else MONGODB_URI), or undefined. */
function givenMongoUri() {
  return process.env.BENCH_MONGODB_URI || process.env.MONGODB_URI || undefined;
}

/**
 * The servers a part that measures every backend runs on: each FerretDB backend named, or `undefined` once
 * for the server given by URI.
 */
export function benchMongoBackends() {
  return givenMongoUri() === undefined ? ferretDbBackends() : [undefined];
}

/**
 * BENCH_MONGODB_URI or MONGODB_URI when set; else a FerretDB of the benchmark's own, or undefined when its
 * binary was never built (bash scripts/ferretdb.sh build). `kind` names the server for the figures.
 */
export async function benchMongoServer(root, backend = ferretDbBackends()[0]) {
  const given = givenMongoUri();
  if (given !== undefined) return { uri: given, kind: 'given', stop: async () => {} };
  if (!existsSync(join(root, 'tools/ferretdb/bin/ferretdb-test'))) return undefined;
  const stateDir = await mkdtemp(join(tmpdir(), 'hortus-bench-ferretdb-'));
  const script = join(root, 'scripts/ferretdb.sh');
  const env = { ...process.env, FERRETDB_BACKEND: backend, FERRETDB_STATE_DIR: stateDir };
  const { stdout } = await run('bash', [script, 'start'], { env });
  const uri = /^MONGODB_URI=(\S+)$/mu.exec(stdout)?.[1];
  // A benchmark that dies (an error, Ctrl-C) must not leave the server or its PostgreSQL database behind.
  const stopNow = () => spawnSync('bash', [script, 'stop'], { env, stdio: 'ignore' });
  process.once('exit', stopNow);
  if (uri === undefined) {
    stopNow();
    throw new Error(`scripts/ferretdb.sh start gave no MONGODB_URI: ${stdout}`);
  }
  return {
    uri,
    kind: `FerretDB v1 (${backend === 'postgresql' ? 'PostgreSQL' : 'SQLite'}), tools/ferretdb`,
    stop: async () => {
      process.removeListener('exit', stopNow);
      await run('bash', [script, 'stop'], { env });
      await rm(stateDir, { recursive: true, force: true });
    },
  };
}
