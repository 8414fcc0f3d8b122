import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Where the docs' commands run: a temporary directory that looks like the repository's root (its packages,
 * scripts and package.json are links, so `node packages/cli/bin/hortus.js` works) and holds its own ./data,
 * with `hortus` and `npx` on the PATH as stand-ins:
 * - `hortus` is the CLI; `hortus serve` runs until it listens, then gets SIGTERM and must stop cleanly;
 * - `node bench/…` and `node scripts/soak…` refuse to run (minutes of load): their blocks are marked not-run;
 * - `npx` runs nothing: for `npx --yes pnpm@<version> <script>` it checks that the version is the one the
 *   root package.json pins and that the script exists (the docs test never runs `pnpm test` or a bench).
 */

export const repositoryRoot = fileURLToPath(new URL('../../../../', import.meta.url));
const cliMain = join(repositoryRoot, 'packages/cli/bin/hortus.js');

export interface CommandResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Variables of the machine that would point the docs' commands at another store or broker. */
const inherited = ['PATH', 'LANG', 'LC_ALL', 'TZ', 'TERM', 'SYSTEMROOT'];

/** The CLI itself, one process per command; `serve` goes to serveShim. */
const hortusShim = `#!/bin/sh
skip=
for arg in "$@"; do
  case "$arg" in
    --env-file) skip=1 ;;
    -*) ;;
    *) if [ -n "$skip" ]; then skip=; continue; fi
       if [ "$arg" = serve ]; then exec ${JSON.stringify(process.execPath)} "$(dirname "$0")/serve.mjs" "$@"; fi
       break ;;
  esac
done
exec ${JSON.stringify(process.execPath)} ${JSON.stringify(cliMain)} "$@"
`;

/** Benchmarks and soaks run for minutes and load the machine: a doc shows them in a block marked not-run. */
const nodeShim = `#!/bin/sh
case "$1" in
  bench/*|./bench/*|scripts/soak*|./scripts/soak*)
    echo "docs test: node $1 is a benchmark or soak, not run here: mark its block not-run" >&2; exit 97 ;;
esac
exec ${JSON.stringify(process.execPath)} "$@"
`;

/** `hortus serve` until it listens, then SIGTERM; its exit code is the server's. A port the doc names is replaced by a free one. */
const serveShim = `
import { spawn } from 'node:child_process';
const args = process.argv.slice(2);
const port = args.indexOf('--port');
if (port !== -1) args[port + 1] = '0';
const child = spawn(process.execPath, [${JSON.stringify(cliMain)}, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
let seen = '';
let stopping = false;
const stop = () => { if (!stopping) { stopping = true; child.kill('SIGTERM'); } };
child.stdout.setEncoding('utf8').on('data', (chunk) => {
  process.stdout.write(chunk);
  seen += chunk;
  if (seen.includes('"event":"listening"')) stop();
});
const limit = setTimeout(() => { process.stderr.write('docs test: serve did not listen within 30 s\\n'); stop(); }, 30000);
child.on('exit', (code, signal) => { clearTimeout(limit); process.exit(code ?? (signal === null ? 1 : 128)); });
`;

const npxShim = `
import { readFileSync } from 'node:fs';
const args = process.argv.slice(2).filter((arg) => arg !== '--yes' && arg !== '-y');
const fail = (why) => { process.stderr.write('docs test: ' + why + '\\n'); process.exit(97); };
const pinned = JSON.parse(readFileSync(${JSON.stringify(join(repositoryRoot, 'package.json'))}, 'utf8'));
if (!args[0]?.startsWith('pnpm@')) fail('npx ' + args.join(' ') + ' is not run here: mark its block not-run');
if (args[0] !== pinned.packageManager) fail(args[0] + ' is not the pinned ' + pinned.packageManager);
let [, command, script] = args;
if (command !== 'run') script = command;
const builtIn = ['install', 'link'];
if (!builtIn.includes(script) && pinned.scripts?.[script] === undefined) fail('package.json has no script ' + script);
process.stdout.write('docs test: would run pnpm ' + args.slice(1).join(' ') + '\\n');
`;

export class DocSession {
  readonly dir: string;
  readonly env: Record<string, string>;
  private server: ChildProcess | undefined;
  url: string | undefined;

  constructor(extraEnv: Record<string, string> = {}) {
    this.dir = mkdtempSync(join(tmpdir(), 'hortus-docs-'));
    const bin = join(this.dir, '.docs-bin');
    mkdirSync(bin);
    for (const [name, source] of [
      ['hortus', hortusShim],
      ['npx', `#!${process.execPath}\n${npxShim}`],
      ['serve.mjs', serveShim],
      ['node', nodeShim],
    ] as const) {
      writeFileSync(join(bin, name), source);
      chmodSync(join(bin, name), 0o755);
    }
    for (const name of ['packages', 'scripts', 'bench', 'deploy', 'package.json']) {
      symlinkSync(join(repositoryRoot, name), join(this.dir, name));
    }
    const base: Record<string, string> = {};
    for (const name of inherited) {
      const value = process.env[name];
      if (value !== undefined) base[name] = value;
    }
    this.env = {
      ...base,
      PATH: `${bin}:${process.env['PATH'] ?? ''}`,
      HOME: this.dir,
      TMPDIR: this.dir,
      HOST: '127.0.0.1',
      PORT: '0',
      HTTPS_PORT: '0',
      LOG_FORMAT: 'json',
      ...extraEnv,
    };
  }

  /** Runs a block's commands in one bash, so a variable one sets is seen by the next; a result per command. */
  async runCommands(commands: readonly string[], timeoutMs = 150_000): Promise<CommandResult[]> {
    const separator = '\u001eDOCS-COMMAND-END';
    const script = commands
      .map((command) => `${command}\nprintf '\\n${separator} %d\\n' $?; printf '\\n${separator}\\n' >&2`)
      .join('\n');
    const done = await this.bash(script, timeoutMs);
    const outs = done.stdout.split(separator);
    const errs = done.stderr.split(separator);
    return commands.map((_, index) => {
      const out = outs[index] ?? '';
      const code = index + 1 < outs.length ? Number(/^ (\d+)/.exec(outs[index + 1] ?? '')?.[1] ?? NaN) : NaN;
      return {
        code: Number.isNaN(code) ? -1 : code,
        stdout: (index === 0 ? out : out.replace(/^ \d+\n/, '')).replace(/\n$/, ''),
        stderr: (index === 0 ? errs[index] : errs[index]?.replace(/^\n/, ''))?.replace(/\n$/, '') ?? '',
      };
    });
  }

  bash(script: string, timeoutMs = 150_000): Promise<CommandResult> {
    return new Promise((resolve, reject) => {
      const child = spawn('bash', ['-c', script], {
        cwd: this.dir,
        env: this.env,
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
      });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      const limit = setTimeout(() => {
        stderr += `\ndocs test: stopped after ${timeoutMs} ms`;
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      }, timeoutMs);
      child.once('error', reject);
      child.once('close', (code) => {
        clearTimeout(limit);
        resolve({ code: code ?? -1, stdout, stderr });
      });
    });
  }

  /** A `hortus serve` in this directory for the docs' curl commands; its address replaces :8080's. */
  async startServer(args: readonly string[], env: Record<string, string> = {}): Promise<string> {
    const child = spawn(process.execPath, [cliMain, 'serve', '--port', '0', ...args], {
      cwd: this.dir,
      env: { ...this.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.server = child;
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    const url = await new Promise<string>((resolve, reject) => {
      const limit = setTimeout(() => reject(new Error(`the docs' server did not listen: ${output}`)), 30_000);
      const look = (): void => {
        const line = output.split('\n').find((text) => text.includes('"event":"listening"'));
        if (line === undefined) return;
        clearTimeout(limit);
        resolve((JSON.parse(line) as { url: string }).url);
      };
      child.stdout.on('data', look);
      child.once('exit', () => {
        clearTimeout(limit);
        reject(new Error(`the docs' server stopped: ${output}`));
      });
    });
    this.url = url;
    return url;
  }

  async close(): Promise<void> {
    const server = this.server;
    if (server !== undefined && server.exitCode === null) {
      const exited = new Promise((resolve) => server.once('exit', resolve));
      server.kill('SIGTERM');
      await exited;
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
