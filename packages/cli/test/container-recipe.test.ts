import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
} from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, relative, sep } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';

// No container engine runs where Hortus is developed and tested (deploy.test.ts runs the recipes where one
// does). This suite reads deploy/Dockerfile and does what an engine would, outside a container: the build
// context as .dockerignore leaves it, each RUN line of the build stage through `sh -c` without a TTY, the
// final stage's COPYs, then its CMD with its ENV, and its HEALTHCHECK. Absolute paths of the image map
// into a scratch directory, which is why the recipe's RUN lines name none.

const root = fileURLToPath(new URL('../../../../', import.meta.url));
const dockerfile = readFileSync(join(root, 'deploy/Dockerfile'), 'utf8');
/** The full build takes minutes: CI runs it (HORTUS_TEST_CONTAINER_RECIPE=1, see .ci/run); the reading always runs. */
const simulate = process.env['HORTUS_TEST_CONTAINER_RECIPE'] === '1';

interface Instruction {
  readonly keyword: string;
  readonly args: string;
}
interface Stage {
  readonly from: string;
  readonly name?: string;
  readonly instructions: Instruction[];
}

function parseDockerfile(text: string): Stage[] {
  const logical = text
    .replace(/\\\n/gu, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
  const stages: Stage[] = [];
  for (const line of logical) {
    const [keyword = '', ...rest] = line.split(/\s+/u);
    const args = rest.join(' ');
    if (keyword.toUpperCase() === 'FROM') {
      const [from = '', as, name] = args.split(/\s+/u);
      stages.push({ from, ...(as?.toUpperCase() === 'AS' && name ? { name } : {}), instructions: [] });
    } else {
      const stage = stages.at(-1);
      if (stage === undefined) throw new Error(`${keyword} before FROM`);
      stage.instructions.push({ keyword: keyword.toUpperCase(), args });
    }
  }
  return stages;
}

/** ENV a=b c=d (the key=value form only) as pairs. */
function envOf(stage: Stage): Record<string, string> {
  const env: Record<string, string> = {};
  for (const { args } of stage.instructions.filter(({ keyword }) => keyword === 'ENV')) {
    for (const pair of args.split(/\s+/u)) {
      const at = pair.indexOf('=');
      if (at <= 0) throw new Error(`ENV ${args}: only the key=value form is simulated`);
      env[pair.slice(0, at)] = pair.slice(at + 1);
    }
  }
  return env;
}

function only(stage: Stage, keyword: string): Instruction {
  const found = stage.instructions.filter((instruction) => instruction.keyword === keyword);
  expect(found, keyword).to.have.length(1);
  return found[0] as Instruction;
}

/** The build context: the repository less what .dockerignore names (`name` at the root or `** /name` anywhere). */
function copyContext(to: string): void {
  const patterns = readFileSync(join(root, '.dockerignore'), 'utf8')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
  for (const pattern of patterns)
    expect(pattern, '.dockerignore form').to.match(/^(\*\*\/)?[\w.-]+(\/[\w.-]+)*$/u);
  const anywhere = patterns.filter((p) => p.startsWith('**/')).map((p) => p.slice(3));
  const atRoot = patterns.filter((p) => !p.startsWith('**/'));
  cpSync(root, to, {
    recursive: true,
    filter: (source) => {
      const path = relative(root, source).split(sep).join('/');
      if (path === '') return true;
      if (atRoot.some((p) => path === p || path.startsWith(`${p}/`))) return false;
      return !path.split('/').some((part) => anywhere.includes(part));
    },
  });
}

/** The environment of a RUN line or of the server: the image's ENV, not the test runner's. */
function imageEnv(extra: Record<string, string>): Record<string, string> {
  return {
    PATH: `${dirname(process.execPath)}:${process.env['PATH'] ?? ''}`,
    HOME: process.env['HOME'] ?? tmpdir(),
    ...extra,
  };
}

/**
 * A RUN line that takes longer than this has stalled: it fails with its output and its processes' states
 * instead of holding CI. Each line takes under a minute on a warm store, about two beside a second CI run; the
 * bound only has to end a hang, so it is wide.
 */
const runDeadlineMs = 6 * 60_000;

/**
 * The processes of a stalled line's group and where each of their threads sleeps in the kernel: what the next
 * stall shows of its cause (pnpm deploy sat still after resolving, with no CPU and no socket open).
 */
function processesOfGroup(group: number): string {
  const listing = spawnSync('ps', ['-L', '-o', 'pid=,lwp=,stat=,wchan:24=,comm=', '-g', String(group)], {
    encoding: 'utf8',
  });
  return listing.stdout || `ps gave nothing: ${listing.stderr || String(listing.error)}`;
}

async function sh(command: string, cwd: string, env: Record<string, string>): Promise<string> {
  // Its own process group, so that a stall ends with everything the line started (npx, pnpm, npm, tsc).
  const child = spawn('sh', ['-c', command], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  let stalled = false;
  let stuck = '';
  const deadline = setTimeout(() => {
    stalled = true;
    if (child.pid === undefined) return;
    stuck = processesOfGroup(child.pid);
    process.kill(-child.pid, 'SIGKILL');
  }, runDeadlineMs);
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  clearTimeout(deadline);
  if (stalled)
    throw new Error(
      `RUN ${command} stalled: killed after ${runDeadlineMs / 1000} s:\n${output.slice(-4000)}\n` +
        `its processes then (what each thread waited in):\n${stuck}`,
    );
  if (code !== 0) throw new Error(`RUN ${command} exited ${code}:\n${output.slice(-4000)}`);
  return output;
}

function execForm(args: string): string[] {
  const parsed: unknown = JSON.parse(args);
  expect(parsed, `exec form: ${args}`).to.be.an('array');
  return parsed as string[];
}

/**
 * The status of a GET naming `host` in its Host header. node:http, not fetch: fetch sends the URL's host
 * whatever the headers say, and that is an IP address, which every host check lets through.
 */
async function statusOf(port: string, path: string, host: string): Promise<number | undefined> {
  return new Promise((resolve, reject) => {
    const request = httpRequest({ host: '127.0.0.1', port, path, headers: { host } }, (response) => {
      response.resume();
      response.once('end', () => resolve(response.statusCode));
    });
    request.once('error', reject);
    request.end();
  });
}

function seconds(since: number): number {
  return Math.round((Date.now() - since) / 1000);
}

function sizeOf(path: string): number {
  // lstat: a symbolic link (pnpm links every dependency into place) is not followed, so each file counts once.
  const stat = lstatSync(path, { throwIfNoEntry: false });
  if (stat === undefined || stat.isSymbolicLink()) return 0;
  if (!stat.isDirectory()) return stat.size;
  return readdirSync(path).reduce((sum, name) => sum + sizeOf(join(path, name)), 0);
}

describe('deploy/Dockerfile, read and simulated outside a container', function () {
  // CI bounds the step at 15 minutes (.ci/run); a RUN line is ended after 6.
  this.timeout(14 * 60_000);
  const stages = parseDockerfile(dockerfile);
  const [build, final] = stages;

  it('when read, then the final stage has Node.js 24, no RUN line (so no compilers), /app and /data from the build stage, user node owning /data, ALLOWED_HOSTS, a health check and a CMD', () => {
    expect(stages).to.have.length(2);
    expect(build?.name).to.equal('build');
    expect(build?.from).to.match(/^node:24-/u);
    expect(final?.from).to.match(/^node:24-[\w-]*slim$/u);
    const last = final as Stage;
    expect(last.instructions.map(({ keyword }) => keyword)).to.not.include('RUN');
    const copies = last.instructions.filter(({ keyword }) => keyword === 'COPY').map(({ args }) => args);
    expect(copies).to.deep.equal(['--from=build /app /app', '--from=build --chown=node:node /data /data']);
    expect(only(last, 'USER').args).to.equal('node');
    const env = envOf(last);
    expect(env).to.include({ NODE_ENV: 'production', HORTUS_DATA_DIR: '/data', PORT: '8080' });
    expect(env['ALLOWED_HOSTS'] ?? '').to.not.equal('');
    expect(only(last, 'HEALTHCHECK').args).to.match(/^--interval=\S+ .*CMD \[/u);
    expect(execForm(only(last, 'CMD').args)).to.deep.equal(['node', 'bin/hortus.js', 'serve']);
    expect(only(last, 'STOPSIGNAL').args).to.equal('SIGTERM');
  });

  it('when read, then every RUN line of the build stage names no absolute path (what lets this suite run it outside a container)', () => {
    const runs = (build as Stage).instructions.filter(({ keyword }) => keyword === 'RUN');
    expect(runs.length).to.be.greaterThan(0);
    for (const { args } of runs) expect(args, args).to.not.match(/(^|[\s=])\//u);
  });

  it("when read, then the pnpm install takes what the caches hold and installs exactly the lockfile, the deploy takes the lockfile's versions from the store alone (never the registry), and neither runs a dependency's install script", () => {
    const runs = (build as Stage).instructions
      .filter(({ keyword }) => keyword === 'RUN')
      .map(({ args }) => args);
    const pnpm = runs.filter((args) => args.includes('pnpm@'));
    expect(pnpm.map((args) => /\b(install|deploy)\b/u.exec(args)?.[1])).to.deep.equal(['install', 'deploy']);
    const [install = '', deploy = ''] = pnpm.map((args) => args.split('pnpm@')[1] ?? '');
    for (const args of pnpm) {
      // npx's own flag, before the package: a cached pnpm is not checked against the registry again.
      expect(args, args).to.match(/^npx --yes --prefer-offline pnpm@[\d.]+ /u);
      expect(args.split('pnpm@')[1], args).to.match(/ --ignore-scripts /u);
    }
    expect(install)
      .to.match(/ --frozen-lockfile /u)
      .and.match(/ --prefer-offline /u);
    // `deploy --legacy` resolves every range again from the registry's metadata (where CI's deploys stalled);
    // a deploy with injected workspace packages copies the lockfile's versions, and --offline keeps it off
    // the network, failing at once if the store lacks anything.
    expect(deploy)
      .to.match(/ --config\.inject-workspace-packages=true /u)
      .and.match(/ --offline /u)
      .and.not.match(/ --legacy\b/u);
    expect(runs.filter((args) => /^npx --no-install tsc -b /u.test(args))).to.have.length(1);
  });

  it('when compose.yaml is read, then every service restarts unless stopped and Hortus gets ALLOWED_HOSTS', () => {
    const file = readFileSync(join(root, 'deploy/compose.yaml'), 'utf8');
    // The services block: from `services:` to the next key at the top level.
    const compose = /^services:\n((?:[ #].*\n|\n)*)/mu.exec(file)?.[1] ?? '';
    const services = [...compose.matchAll(/^ {2}(\w[\w-]*):$/gmu)].map((match) => match[1]);
    expect(services).to.include.members(['hortus', 'mongo', 'mosquitto']);
    const restarts = [...compose.matchAll(/^ {4}restart: (.+)$/gmu)].map((match) => match[1]);
    expect(restarts).to.deep.equal(services.map(() => 'unless-stopped'));
    expect(compose).to.match(/^ {6}ALLOWED_HOSTS: \S+/mu);
  });

  (simulate ? it : it.skip)(
    `when each RUN line runs without a TTY in a copy of the build context, then /app holds only production packages, and CMD serves with the image's ENV: healthy, 421 to unknown host names, SIGTERM exits 0${
      simulate ? '' : ' (skipped: HORTUS_TEST_CONTAINER_RECIPE=1 runs it; CI does)'
    }`,
    async () => {
      const image = mkdtempSync(join(tmpdir(), 'hortus-image-'));
      const inImage = (path: string): string => join(image, path);
      let server: ChildProcess | undefined;
      try {
        // The build stage.
        const buildStage = build as Stage;
        const workdir = inImage(only(buildStage, 'WORKDIR').args);
        expect(only(buildStage, 'COPY').args).to.equal('. .');
        const buildEnv = imageEnv(envOf(buildStage));
        mkdirSync(workdir, { recursive: true });
        const copied = Date.now();
        copyContext(workdir);
        process.stdout.write(`      COPY . . (the build context) ${seconds(copied)} s\n`);
        // Tried once: every line works from the store and the caches, so a stall is a fault to see, not bad
        // luck to retry past.
        for (const { args } of buildStage.instructions.filter(({ keyword }) => keyword === 'RUN')) {
          const ran = Date.now();
          await sh(args, workdir, buildEnv);
          process.stdout.write(`      RUN ${args.slice(0, 70)}… ${seconds(ran)} s\n`);
        }

        // The final stage: what it copies must exist; /app must hold no development tools.
        const app = inImage('/app');
        for (const path of ['/app', '/data']) expect(existsSync(inImage(path)), path).to.equal(true);
        const packages = readdirSync(join(app, 'node_modules/.pnpm'));
        for (const devTool of [
          'typescript@',
          'eslint@',
          'mocha@',
          '@redocly+cli@',
          'chai@',
          'sinon@',
          'node@',
        ]) {
          expect(
            packages.filter((name) => name.startsWith(devTool)),
            devTool,
          ).to.deep.equal([]);
        }
        expect(packages.some((name) => name.startsWith('better-sqlite3@13'))).to.equal(true);
        process.stdout.write(
          `      /app holds ${Math.round(sizeOf(app) / 1e6)} MB, of which node_modules ${Math.round(sizeOf(join(app, 'node_modules')) / 1e6)} MB\n`,
        );
        // mkdir -m 700: only the user the server runs as reads the data directory.
        expect(statSync(inImage('/data')).mode & 0o777).to.equal(0o700);

        const finalStage = final as Stage;
        const env = envOf(finalStage);
        const mapped = Object.fromEntries(
          Object.entries(env).map(([key, value]) => [key, value.startsWith('/') ? inImage(value) : value]),
        );
        const started = Date.now();
        const [command = '', ...argv] = execForm(only(finalStage, 'CMD').args);
        expect(command).to.equal('node');
        // Loopback instead of every interface, and a free port: the rest is the image's ENV.
        const serverEnv = imageEnv({ ...mapped, HOST: '127.0.0.1', PORT: '0' });
        server = spawn(process.execPath, argv, {
          cwd: inImage(only(finalStage, 'WORKDIR').args),
          env: serverEnv,
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let log = '';
        server.stdout?.on('data', (chunk: Buffer) => (log += chunk.toString()));
        server.stderr?.on('data', (chunk: Buffer) => (log += chunk.toString()));
        let url: string | undefined;
        for (let waited = 0; url === undefined && waited < 120_000; waited += 200) {
          url = /"event":"listening","url":"(http:\/\/[^"]+)"/u.exec(log)?.[1];
          if (url === undefined) await sleep(200);
        }
        expect(url, log).to.be.a('string');
        const port = new URL(url as string).port;

        // HEALTHCHECK's command, as the engine would run it inside the container.
        const health = execForm(/CMD (\[.*\])$/u.exec(only(finalStage, 'HEALTHCHECK').args)?.[1] ?? '[]');
        expect(health[0]).to.equal('node');
        const checked = spawn(process.execPath, health.slice(1), {
          env: imageEnv({ ...mapped, PORT: port }),
          stdio: 'ignore',
        });
        expect(await new Promise((resolve) => checked.once('close', resolve))).to.equal(0);

        // Not /healthz: it answers whatever the Host (orchestrators probe it by address or by any name).
        expect(await statusOf(port, '/api/openapi.json', `hortus.example.org:${port}`)).to.equal(421);
        expect(await statusOf(port, '/api/openapi.json', `localhost:${port}`)).to.equal(200);
        expect(readdirSync(inImage('/data'))).to.include('hortus.db');

        process.stdout.write(`      CMD, HEALTHCHECK and the requests ${seconds(started)} s\n`);
        const exited = new Promise<number | null>((resolve) => server?.once('exit', resolve));
        server.kill('SIGTERM');
        expect(await exited).to.equal(0);
        server = undefined;
      } finally {
        server?.kill('SIGKILL');
        rmSync(image, { recursive: true, force: true });
      }
    },
  );
});
