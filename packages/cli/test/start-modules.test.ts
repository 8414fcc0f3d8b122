import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { expect } from 'chai';

const hortus = fileURLToPath(new URL('../../bin/hortus.js', import.meta.url));
const packageRoot = fileURLToPath(new URL('../../', import.meta.url));

/**
 * A module hook that names every file the process loads in the file HORTUS_TEST_LOADED_FILE: what a command's
 * start costs is mostly how many modules it loads (bench/cli.mjs measures the CPU; this names the culprits).
 * Written synchronously: the hooks run on a thread of their own, whose stderr a loaded machine lost at the
 * process's exit (only the first file was seen).
 */
const hook = `
import { register } from 'node:module';
register('data:text/javascript,' + encodeURIComponent(\`
import { appendFileSync } from 'node:fs';
export async function load(url, context, next) {
  if (url.startsWith('file:')) appendFileSync(process.env.HORTUS_TEST_LOADED_FILE, url + '\\\\n');
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
    const loadedFile = join(directory, 'loaded.txt');
    const child = spawn(
      process.execPath,
      ['--import', pathToFileURL(join(directory, 'hook.mjs')).href, hortus, 'group', 'list'],
      {
        env: {
          PATH: process.env['PATH'],
          HORTUS_DATA_DIR: directory,
          HORTUS_ENV_FILE: '/dev/null',
          HORTUS_TEST_LOADED_FILE: loadedFile,
        },
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
    const loaded = (await readFile(loadedFile, 'utf8')).split('\n').filter((line) => line !== '');

    expect(code, stderr).to.equal(0);
    // The command did run: it opened the store through better-sqlite3.
    expect(loaded.map(packageOf)).to.include('better-sqlite3');
    const needless = [...new Set(loaded.map(packageOf))].filter(
      (name) => name !== undefined && notForDataCommands.includes(name),
    );
    expect(needless, 'packages loaded that `group list` does not need').to.deep.equal([]);
  });

  it("when a Node.js older than 22.12 starts it, then it hands over to the project's Node.js and the command runs", async function () {
    // The machine's own Node.js (the README's quick start needs only one that runs pnpm): any on PATH
    // outside node_modules that is older than what Hortus runs on.
    const older = (process.env['PATH'] ?? '')
      .split(delimiter)
      .filter((dir) => dir !== '' && !dir.includes('node_modules'))
      .map((dir) => join(dir, 'node'))
      .filter((file) => existsSync(file))
      .find((file) => {
        const [major = 0, minor = 0] = execFileSync(file, ['-p', 'process.versions.node'], {
          encoding: 'utf8',
        })
          .trim()
          .split('.')
          .map(Number);
        return major < 22 || (major === 22 && minor < 12);
      });
    if (older === undefined) this.skip();
    const child = spawn(older, [hortus, 'group', 'list'], {
      env: { PATH: process.env['PATH'], HORTUS_DATA_DIR: directory, HORTUS_ENV_FILE: '/dev/null' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    const code = await new Promise<number | null>((resolve, reject) => {
      child.once('error', reject);
      child.once('close', resolve);
    });

    expect(code, output).to.equal(0);
  });

  it('when the CLI package is installed with `npm install -g ./packages/cli`, then `hortus` is on that bin directory and runs from anywhere', async function () {
    // The one documented way onto the PATH (docs/deployment.md): npm's global bin is on a fresh machine's
    // PATH, while `pnpm link --global` needs `pnpm setup` first. A prefix of its own keeps the machine as it was.
    this.timeout(60_000);
    const prefix = await mkdtemp(join(tmpdir(), 'hortus-npm-global-'));
    try {
      execFileSync(
        'npm',
        ['install', '--global', '--prefix', prefix, '--offline', '--no-audit', '--no-fund', packageRoot],
        { stdio: 'pipe' },
      );
      const listed = execFileSync('hortus', ['group', 'list'], {
        cwd: tmpdir(),
        env: {
          PATH: [join(prefix, 'bin'), process.env['PATH'] ?? ''].join(delimiter),
          HORTUS_DATA_DIR: directory,
          HORTUS_ENV_FILE: '/dev/null',
        },
        encoding: 'utf8',
      });
      expect(listed).to.match(/^No groups yet\.$/mu);
    } finally {
      await rm(prefix, { recursive: true, force: true });
    }
  });
});
