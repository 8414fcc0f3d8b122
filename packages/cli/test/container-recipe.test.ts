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
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { dirname, join, relative, sep } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import { dockerRunExample, envOf, type Instruction, readDockerfile, root, type Stage } from './recipes.js';

// No container engine runs where Hortus is developed and tested (deploy.test.ts runs the recipes where one
// does). This suite reads deploy/Dockerfile and does what an engine would, outside a container: the build
// context as .dockerignore leaves it, each RUN line of the build stage through `sh -c` without a TTY, the
// final stage's COPYs, then its CMD with its ENV, and its HEALTHCHECK. Absolute paths of the image map
// into a scratch directory, which is why the recipe's RUN lines name none.

const stages = readDockerfile();
const secret = 'a-simulated-secret-that-is-long-enough-00';
/** The full build takes minutes: CI runs it (HORTUS_TEST_CONTAINER_RECIPE=1, see .ci/run); the reading always runs. */
const simulate = process.env['HORTUS_TEST_CONTAINER_RECIPE'] === '1';

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
  // Its standard output alone is what it answers (a warning on stderr must not break a --json answer).
  let answer = '';
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    answer += chunk.toString();
  });
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
  return answer;
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

/** The status of a GET over HTTPS that takes any certificate, as a box does (TLS=self-signed). */
async function fetchInsecure(url: string): Promise<number | undefined> {
  return new Promise((resolve, reject) => {
    const request = httpsRequest(url, { rejectUnauthorized: false }, (response) => {
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
  const [build, final] = stages;

  it('when read, then the final stage has Node.js 24, no RUN line (so no compilers), /app, /data and /backups from the build stage, user node owning the last two, ALLOWED_HOSTS, a health check and a CMD', () => {
    expect(stages).to.have.length(2);
    expect(build?.name).to.equal('build');
    expect(build?.from).to.match(/^node:24-/u);
    expect(final?.from).to.match(/^node:24-[\w-]*slim$/u);
    const last = final as Stage;
    expect(last.instructions.map(({ keyword }) => keyword)).to.not.include('RUN');
    const copies = last.instructions.filter(({ keyword }) => keyword === 'COPY').map(({ args }) => args);
    expect(copies).to.deep.equal([
      '--from=build /app /app',
      '--from=build --chown=node:node /data /data',
      '--from=build --chown=node:node /backups /backups',
    ]);
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

  (simulate ? it : it.skip)(
    `when each RUN line runs without a TTY in a copy of the build context, then /app holds only production packages, and CMD serves with the image's ENV and the docs' docker run settings: healthy, 421 to unknown host names, HTTPS with a self-signed certificate, hortus from PATH writing the store the server reads, SIGTERM exits 0${
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
        for (const path of ['/data', '/backups'])
          expect(statSync(inImage(path)).mode & 0o777, path).to.equal(0o700);
        // `hortus` on the image's PATH: a link to the launcher, which runs on the image's Node.js.
        expect(lstatSync(inImage('/app/bin/hortus')).isSymbolicLink()).to.equal(true);

        // The image's ENV with the docs' `docker run -e …` on top, as that example runs it. Its MQTT_URL is
        // the operator's broker: here a port nothing listens on (the bridge retries; discovery's settings are
        // still parsed), so that no run touches the machine's broker.
        const finalStage = final as Stage;
        const example = dockerRunExample();
        const env: Record<string, string> = {
          ...envOf(finalStage),
          ...Object.fromEntries(Object.entries(example.env).map(([key, value]) => [key, value ?? secret])),
          MQTT_URL: 'mqtt://127.0.0.1:1',
        };
        const mapped: Record<string, string> = Object.fromEntries(
          Object.entries(env).map(([key, value]) => [key, value.startsWith('/') ? inImage(value) : value]),
        );
        // PATH's /app/bin is the image's; its /usr/local/bin holds the base image's node: this test's.
        mapped['PATH'] = (env['PATH'] ?? '')
          .split(':')
          .map((entry) =>
            entry === '/usr/local/bin'
              ? dirname(process.execPath)
              : entry.startsWith('/app')
                ? inImage(entry)
                : entry,
          )
          .join(':');
        const started = Date.now();
        const [command = '', ...argv] = execForm(only(finalStage, 'CMD').args);
        expect(command).to.equal('node');
        // Loopback instead of every interface, and free ports: the rest is the image's ENV and the example's.
        const serverEnv = { ...imageEnv(mapped), HOST: '127.0.0.1', PORT: '0', HTTPS_PORT: '0' };
        const appDir = inImage(only(finalStage, 'WORKDIR').args);
        server = spawn(process.execPath, argv, {
          cwd: appDir,
          env: serverEnv,
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let log = '';
        server.stdout?.on('data', (chunk: Buffer) => (log += chunk.toString()));
        server.stderr?.on('data', (chunk: Buffer) => (log += chunk.toString()));
        let listening: { url: string; httpsUrl?: string } | undefined;
        for (let waited = 0; listening === undefined && waited < 120_000; waited += 200) {
          const line = log.split('\n').find((text) => text.includes('"event":"listening"'));
          listening =
            line === undefined ? undefined : (JSON.parse(line) as { url: string; httpsUrl?: string });
          if (listening === undefined) await sleep(200);
        }
        expect(listening?.httpsUrl, log).to.be.a('string');
        const port = new URL(listening?.url ?? '').port;

        // HEALTHCHECK's command, as the engine would run it inside the container.
        const health = execForm(/CMD (\[.*\])$/u.exec(only(finalStage, 'HEALTHCHECK').args)?.[1] ?? '[]');
        expect(health[0]).to.equal('node');
        const checked = spawn(process.execPath, health.slice(1), {
          env: imageEnv({ ...mapped, PORT: port }),
          stdio: 'ignore',
        });
        expect(await new Promise((resolve) => checked.once('close', resolve))).to.equal(0);

        // Not /healthz: it answers whatever the Host (orchestrators probe it by address or by any name).
        const allowed = example.env['ALLOWED_HOSTS'] ?? '';
        expect(await statusOf(port, '/api/openapi.json', `other.example.org:${port}`)).to.equal(421);
        expect(await statusOf(port, '/api/openapi.json', `${allowed}:${port}`)).to.equal(200);
        expect(readdirSync(inImage('/data'))).to.include('hortus.db');

        // TLS=self-signed: HTTPS answers (boxes do not check the certificate), which lies in the data volume.
        const secure = await fetchInsecure(`${listening?.httpsUrl ?? ''}/healthz`);
        expect(secure).to.equal(200);
        expect(existsSync(inImage('/data/tls/self-signed-cert.pem'))).to.equal(true);

        // Admin commands as `docker exec <container> hortus …` runs them: the container's ENV and WORKDIR,
        // `hortus` from PATH. What they write, the running server answers with: the same store.
        const exec = async (line: string): Promise<string> => {
          const ran = Date.now();
          const output = await sh(line, appDir, serverEnv);
          process.stdout.write(`      ${line.slice(0, 60)} ${seconds(ran)} s\n`);
          return output;
        };
        const version = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string })
          .version;
        expect((await exec('hortus --version')).trim()).to.equal(version);
        const { secret: adminKey } = JSON.parse(
          await exec('hortus keys create --name ops --kind admin --json'),
        ) as { secret: string };
        await exec('hortus group create greenhouse-1');
        await exec('hortus device claim 100aa286f24 --group greenhouse-1');
        const devices = await fetch(`${listening?.url ?? ''}/api/devices?group=greenhouse-1`, {
          headers: { authorization: `Bearer ${adminKey}` },
        });
        expect(devices.status).to.equal(200);
        expect(JSON.stringify(await devices.json())).to.include('100aa286f24');

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
