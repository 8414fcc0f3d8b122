import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * A suite of spawned servers: they run on the store their test names (memory by default) whatever the pass, so
 * the suite is registered in the default pass only, not again in each store's pass.
 */
export function describeOncePerRun(title: string, suite: (this: Mocha.Suite) => void): void {
  if (process.env['HORTUS_TEST_STORE'] === undefined) describe(title, suite);
}

export const repositoryRoot = fileURLToPath(new URL('../../../../', import.meta.url));
export const cliMain = join(repositoryRoot, 'packages/cli/bin/hortus.js');

/** What a spawned server wrote and how it ended. */
export interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** Milliseconds from stop() (or the start, when never stopped) to the exit. */
  readonly afterMs: number;
}

/** A `hortus serve` in a process of its own, as operators run it: the client never shares its event loop. */
export interface ServedProcess {
  readonly child: ChildProcess;
  readonly url: string;
  readonly httpsUrl: string | undefined;
  /** Everything written to stdout and stderr so far. */
  output(): string;
  readonly exited: Promise<Exit>;
  /** Sends the signal and resolves with the exit. */
  stop(signal?: NodeJS.Signals): Promise<Exit>;
  /** SIGKILL if still running, and the data directory removed. */
  cleanUp(): Promise<void>;
}

/**
 * Spawns `hortus serve --port 0` (or `command` when given, e.g. the README's start command) with a data
 * directory of its own and waits for its `listening` log line.
 */
export async function spawnServe(
  env: Record<string, string> = {},
  options: {
    readonly command?: readonly string[];
    readonly detached?: boolean;
    readonly startMs?: number;
    /** false: resolve at once, for a start that is expected to hang (url is then empty). */
    readonly listening?: boolean;
  } = {},
): Promise<ServedProcess> {
  const dataDir = mkdtempSync(join(tmpdir(), 'hortus-served-'));
  const [file, ...args] = options.command ?? [process.execPath, cliMain, 'serve', '--port', '0'];
  const child = spawn(file ?? process.execPath, args, {
    cwd: repositoryRoot,
    env: {
      ...process.env,
      HOST: '127.0.0.1',
      PORT: '0',
      STORE: 'memory',
      HORTUS_DATA_DIR: dataDir,
      LOG_FORMAT: 'json',
      LOG_REQUESTS: 'off',
      AUTOMATIONS: 'off',
      RATE_LIMIT_PER_MINUTE: '0',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.detached === true,
  });
  let output = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  let stoppedAt = Date.now();
  const exited = new Promise<Exit>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal, afterMs: Date.now() - stoppedAt })),
  );
  const cleanUp = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
    rmSync(dataDir, { recursive: true, force: true });
  };
  const listening = await new Promise<{ url: string; httpsUrl?: string }>((resolve, reject) => {
    if (options.listening === false) {
      resolve({ url: '' });
      return;
    }
    const limit = setTimeout(
      () => reject(new Error(`hortus serve did not listen: ${output}`)),
      options.startMs ?? 30_000,
    );
    const look = (): void => {
      const line = output.split('\n').find((text) => text.includes('"event":"listening"'));
      if (line === undefined) return;
      clearTimeout(limit);
      resolve(JSON.parse(line) as { url: string; httpsUrl?: string });
    };
    child.stdout?.on('data', look);
    void exited.then(() => {
      clearTimeout(limit);
      reject(new Error(`hortus serve stopped before listening: ${output}`));
    });
  }).catch(async (error: unknown) => {
    await cleanUp();
    throw error;
  });
  return {
    child,
    url: listening.url,
    httpsUrl: listening.httpsUrl,
    output: () => output,
    exited,
    stop: (signal = 'SIGTERM') => {
      stoppedAt = Date.now();
      child.kill(signal);
      return exited;
    },
    cleanUp,
  };
}
