import { createRequire } from 'node:module';
import { Command } from 'commander';
import { type Container } from 'inversify';
import { registerDataCommands, withExamples } from './commands.js';
import { describeFailure, exitCodes } from './exit-codes.js';
import { registerKeyCommands } from './keys.js';
import { type TextSink } from './output.js';
import { registerServeCommand } from './serve.js';

/** Where `serve` hears SIGTERM and SIGINT: the process, or an emitter in tests. */
export interface SignalSource {
  once(signal: NodeJS.Signals, listener: () => void): unknown;
  off(signal: NodeJS.Signals, listener: () => void): unknown;
}

export interface RunIo {
  readonly stdout: TextSink;
  readonly stderr: TextSink;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** A container with the core and a store module loaded; the caller owns (and closes) it. */
  readonly container?: Container;
  readonly signals?: SignalSource;
}

const { version } = createRequire(import.meta.url)('../../package.json') as { version: string };

const exitCodeHelp = `
Exit codes:
  0  success
  1  unexpected error
  2  usage error, invalid input, missing configuration, or rejected lines in an import
  3  not found
  4  conflict (already exists)
  5  store or upstream service unavailable (try again later)

Environment:
  MONGODB_URI  the MongoDB store every data command works on (mongodb://host:27017/hortus);
               without it only \`hortus serve\` runs, on an in-memory store`;

function createProgram(io: RunIo): Command {
  const program = new Command('hortus')
    .description('Hortus: monitoring and control backend for greenhouses.')
    .version(version, '-V, --version', 'print the version')
    .option('--json', 'print results as JSON for scripts')
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
      getOutHelpWidth: () => io.stdout.columns ?? 100,
      getErrHelpWidth: () => io.stderr.columns ?? 100,
      getOutHasColors: () => false,
      getErrHasColors: () => false,
    })
    .configureHelp({ showGlobalOptions: true })
    .showHelpAfterError('(add --help for usage and an example)');
  withExamples(
    program,
    'hortus serve --demo --port 8080',
    'MONGODB_URI=mongodb://localhost:27017/hortus hortus group list',
  );
  program.addHelpText('after', exitCodeHelp);
  registerServeCommand(program, io);
  registerDataCommands(program, io);
  registerKeyCommands(program, io);
  return program;
}

/**
 * The whole CLI as a function: parses `argv` (the arguments after `hortus`), runs the command and answers
 * its exit code. Every failure becomes a message on stderr and an exit code here, in one place.
 */
export async function run(argv: readonly string[], io: RunIo): Promise<number> {
  try {
    await createProgram(io).parseAsync([...argv], { from: 'user' });
    return exitCodes.ok;
  } catch (error) {
    const failure = describeFailure(error);
    if (!failure.reported) {
      io.stderr.write(
        argv.includes('--json')
          ? `${JSON.stringify({ error: { code: failure.code, message: failure.message } })}\n`
          : `hortus: ${failure.message}\n`,
      );
    }
    return failure.exitCode;
  }
}
