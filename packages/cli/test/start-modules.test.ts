import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { expect } from 'chai';

const hortus = fileURLToPath(new URL('../../bin/hortus.js', import.meta.url));

/**
 * A module hook that names every file the process loads on stderr: what a command's start costs is mostly
 * how many modules it loads (bench/cli.mjs measures the CPU; this names the culprits).
 */
const hook = `
import { register } from 'node:module';
register('data:text/javascript,' + encodeURIComponent(\`
export async function load(url, context, next) {
  if (url.startsWith('file:')) process.stderr.write('loaded ' + url + '\\\\n');
  return next(url, context);
}\`));
`;

/** The packages a data command never needs: transports, drivers of other stores, outbound clients. */
const notForDataCommands = [
  'koa',
  '@koa/router',
  'koa-bodyparser',
  'mongodb',
  'nodemailer',
  'redis',
  '@redis/client',
  'rate-limiter-flexible',
  'prom-client',
  'ky',
  'jose',
];

/** The package a file of node_modules belongs to (`@scope/name` or `name`), or undefined. */
function packageOf(url: string): string | undefined {
  const match = /^.*\/node_modules\/((?:@[^/]+\/)?[^/]+)\/(.*)$/u.exec(url);
  if (match === null) return undefined;
  // The MQTT settings check topic names with the client package's own validator, a file of its own.
  if (match[1] === 'mqtt' && match[2]?.endsWith('lib/validations.js') === true) return undefined;
  return match[1];
}

describe('the CLI start', function () {
  this.timeout(30_000);
  let directory: string;

  before(async () => {
    directory = await mkdtemp(join(tmpdir(), 'hortus-start-'));
    await writeFile(join(directory, 'hook.mjs'), hook);
  });
  after(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  it('when `hortus group list` runs on the SQLite store, then it loads no transport, other store driver or outbound client', async () => {
    const child = spawn(
      process.execPath,
      ['--import', pathToFileURL(join(directory, 'hook.mjs')).href, hortus, 'group', 'list'],
      {
        env: { PATH: process.env['PATH'], HORTUS_DATA_DIR: directory, HORTUS_ENV_FILE: '/dev/null' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.stdout.resume();
    const code = await new Promise<number | null>((resolve, reject) => {
      child.once('error', reject);
      child.once('close', resolve);
    });
    const loaded = stderr
      .split('\n')
      .filter((line) => line.startsWith('loaded '))
      .map((line) => line.slice('loaded '.length));

    expect(code, stderr).to.equal(0);
    // The command did run: it opened the store through better-sqlite3.
    expect(loaded.map(packageOf)).to.include('better-sqlite3');
    const needless = [...new Set(loaded.map(packageOf))].filter(
      (name) => name !== undefined && notForDataCommands.includes(name),
    );
    expect(needless, 'packages loaded that `group list` does not need').to.deep.equal([]);
  });
});
