import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { parseEnv } from 'node:util';
import { Command, CommanderError } from 'commander';
import { registerCommands, withExamples } from './commands/index.js';
import { describeFailure, exitCodes, type Failure, UsageError } from './exit-codes.js';
import { type RunIo } from './io.js';
import { printable, showTimesIn, withDisplayZone } from './output.js';

export { type RunIo, type SignalSource } from './io.js';

type Env = RunIo['env'];

/**
 * The environment with an env file under it (KEY=value lines, as Node's --env-file reads them): the named
 * file (--env-file, else HORTUS_ENV_FILE), else ./.env when there is one. A variable set in the real
 * environment wins over the file, so a unit file or container can override one setting.
 */
export function withEnvFile(env: Env, named?: string): Env {
  const path = named ?? env['HORTUS_ENV_FILE'] ?? '.env';
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
    if (missing && named === undefined && env['HORTUS_ENV_FILE'] === undefined) return env;
    throw new UsageError(`cannot read the env file ${path}: ${(error as Error).message}`);
  }
  const fromFile = parseEnv(text);
  const merged: Record<string, string | undefined> = { ...fromFile };
  for (const [key, value] of Object.entries(env)) if (value !== undefined) merged[key] = value;
  return merged;
}

/**
 * The product version is the root package.json's (packages/cli/dist/src → the repository), read at run time.
 * The image holds the CLI package alone (pnpm deploy), so there it is the CLI package's own, which a test
 * keeps equal to the root's.
 */
function productVersion(): string {
  const read = createRequire(import.meta.url);
  for (const path of ['../../../../package.json', '../../package.json']) {
    try {
      const { version } = read(path) as { version?: unknown };
      if (typeof version === 'string') return version;
    } catch {
      // Not there: the next one.
    }
  }
  return 'unknown';
}

const exitCodeHelp = `
Exit codes:
  0  success
  1  unexpected error
  2  usage error, invalid input, missing configuration (or a port in use), or rejected lines in an import
  3  not found
  4  conflict (already exists)
  5  store or upstream service unavailable, or interrupted (try again later; migrate resumes)
  6  a quota is reached (topics, devices, charts or open notifications)
  7  refused (a credential is missing or wrong, not allowed, or the data file is in use)

Environment:
  HORTUS_DATA_DIR  where the SQLite store keeps its file hortus.db (default ./data), used when
                   MONGODB_URI is unset; \`serve\` and the data commands may use it at the same time
  MONGODB_URI      the MongoDB store (mongodb://host:27017/hortus) instead
  STORE            sqlite, mongodb or memory (memory: only \`hortus serve\`, lost at exit)
  LOG_LEVEL        debug, info (default), warn or error
  HORTUS_ENV_FILE  a KEY=value file read first (default ./.env when it exists); real variables win`;

function createProgram(given: RunIo): Command {
  // Commands read `io.env` when they run, after the hook below has put the env file under it.
  const io: { -readonly [K in keyof RunIo]: RunIo[K] } = { ...given };
  const program = new Command('hortus')
    .description('Hortus: monitoring and control backend for greenhouses.')
    // A value is the version of `firmware publish --version 1.0.5`: Commander reads a program option
    // wherever it stands, so a subcommand cannot have a --version of its own.
    .option('-V, --version [semver]', 'print the version of Hortus')
    .on('option:version', (value: unknown) => {
      if (typeof value === 'string') return;
      const version = productVersion();
      io.stdout.write(`${version}\n`);
      throw new CommanderError(0, 'commander.version', version);
    })
    .option('--json', 'print results as JSON for scripts')
    .option(
      '--env-file <path>',
      'read KEY=value settings from this file (default: HORTUS_ENV_FILE, else ./.env)',
    )
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
      // Every message of the CLI starts with its name, the parser's own as well ("error: unknown command").
      outputError: (text, write) => write(text.replace(/^error: /u, 'hortus: ')),
      getOutHelpWidth: () => io.stdout.columns ?? 100,
      getErrHelpWidth: () => io.stderr.columns ?? 100,
      getOutHasColors: () => false,
      getErrHasColors: () => false,
    })
    .configureHelp({
      showGlobalOptions: true,
      // The value is only firmware publish's, which documents it; here it would read as Hortus's own.
      optionTerm: (option) => (option.long === '--version' ? '-V, --version' : option.flags),
    })
    .showHelpAfterError('(add --help for usage and an example)');
  withExamples(
    program,
    'hortus serve --demo --port 8080',
    'MONGODB_URI=mongodb://localhost:27017/hortus hortus group list',
  );
  program.addHelpText('after', exitCodeHelp);
  program.hook('preAction', () => {
    io.env = withEnvFile(given.env, program.opts<{ envFile?: string }>().envFile);
    showTimesIn(io.env['TIME_ZONE']);
  });
  registerCommands(program, io);
  return program;
}

/**
 * A domain error's message may quote stored text, so all of it is escaped; the CLI's own messages (usage,
 * configuration) keep their line breaks and lose only other controls.
 */
function printableMessage(failure: Failure): string {
  if (failure.code !== 'USAGE' && failure.code !== 'UNEXPECTED') return printable(failure.message);
  return failure.message.split('\n').map(printable).join('\n');
}

/**
 * The whole CLI as a function: parses `argv` (the arguments after `hortus`), runs the command and answers
 * its exit code. Every failure becomes a message on stderr and an exit code here, in one place.
 */
export async function run(argv: readonly string[], io: RunIo): Promise<number> {
  try {
    await withDisplayZone(() => createProgram(io).parseAsync([...argv], { from: 'user' }));
    return exitCodes.ok;
  } catch (error) {
    const failure = describeFailure(error);
    if (!failure.reported) {
      io.stderr.write(
        argv.includes('--json')
          ? `${JSON.stringify({ error: { code: failure.code, message: failure.message } })}\n`
          : `hortus: ${printableMessage(failure)}\n`,
      );
    }
    return failure.exitCode;
  }
}
