import { type Logger } from '@hortus/core';
import { type Command, InvalidArgumentError, Option } from 'commander';
// `import type`: erased; the server's modules (Koa, MQTT, the stores) load only when `serve` runs.
import type { RunningServer } from '../app/application.js';
import { loadConfig } from '../app/config.js';
import { createJsonLogger } from '../app/json-logger.js';
import { describeUnknown, unknownVariables } from '../app/known-variables.js';
import { withExamples } from './shared.js';
import { type RunIo, type SignalSource } from '../io.js';
import { UsageError } from '../exit-codes.js';

/**
 * A port that is taken or not allowed is a problem of the configuration (HOST, PORT, HTTPS_PORT, --port),
 * exit 2 with the address, not an unexpected error.
 */
function listenProblem(error: unknown): UsageError | undefined {
  const failure = error as NodeJS.ErrnoException & { address?: string; port?: number };
  if (failure.syscall !== 'listen') return undefined;
  const host = failure.address ?? 'the address';
  const where = `${host.includes(':') ? `[${host}]` : host}:${failure.port ?? '?'}`;
  const reasons: Record<string, string> = {
    EADDRINUSE: 'the address is already in use (another server holds it; stop it or choose another port)',
    EACCES: 'not allowed (ports below 1024 need privileges; choose a higher port)',
    EADDRNOTAVAIL: 'this machine has no such address (check HOST)',
  };
  const reason = reasons[failure.code ?? ''];
  return reason === undefined ? undefined : new UsageError(`cannot listen on ${where}: ${reason}`);
}

const shutdownSignals = ['SIGTERM', 'SIGINT'] as const;

/**
 * How long after SIGTERM/SIGINT the process ends at the latest: the shutdown grace of in-flight requests
 * (10 s, application.ts) and 5 s more for the MQTT bridge and the store to close.
 */
export const STOP_DEADLINE_MS = 15_000;

function parsePort(text: string): number {
  const port = /^\d+$/u.test(text) ? Number(text) : Number.NaN;
  if (!Number.isInteger(port) || port > 65535)
    throw new InvalidArgumentError('must be a port from 0 to 65535');
  return port;
}

/**
 * Listens for the first SIGTERM/SIGINT from the start, so a signal during startup still shuts down cleanly;
 * a second signal then gets Node's default, an immediate exit.
 */
function shutdownRequest(signals: SignalSource): {
  received: Promise<NodeJS.Signals>;
  stopListening(): void;
} {
  const handlers: [NodeJS.Signals, () => void][] = [];
  const stopListening = (): void => {
    for (const [signal, handler] of handlers) signals.off(signal, handler);
  };
  const received = new Promise<NodeJS.Signals>((resolve) => {
    for (const signal of shutdownSignals) {
      const handler = (): void => {
        stopListening();
        resolve(signal);
      };
      signals.once(signal, handler);
      handlers.push([signal, handler]);
    }
  });
  return { received, stopListening };
}

/**
 * SIGHUP reads the TLS certificate again (a renewed one replaces the old for new connections; open ones
 * keep theirs). Without TLS the signal is only logged, rather than ending the process as by default.
 */
function reloadOnHangUp(signals: SignalSource, running: RunningServer, logger: Logger): () => void {
  let armed = true;
  const handler = (): void => {
    if (!armed) return;
    signals.once('SIGHUP', handler);
    running.reloadCertificate().then(
      (fingerprint) => {
        if (fingerprint === undefined) logger.info('signal received', { signal: 'SIGHUP', tls: 'off' });
      },
      (error: unknown) =>
        logger.error('certificate reload failed, the previous one stays in use', {
          error: error instanceof Error ? error.message : String(error),
        }),
    );
  };
  signals.once('SIGHUP', handler);
  return () => {
    armed = false;
    signals.off('SIGHUP', handler);
  };
}

/**
 * `hortus serve`: the application from its composition root (src/app), so it reads the same environment as
 * the data commands (MONGODB_URI set: MongoDB; unset: the SQLite file in HORTUS_DATA_DIR; --memory or
 * STORE=memory: a throwaway store that lives as long as the process).
 */
export function registerServeCommand(program: Command, io: RunIo): void {
  withExamples(
    program
      .command('serve')
      .description(
        'start the HTTP server (store: MongoDB when MONGODB_URI is set, else the SQLite file in ' +
          'HORTUS_DATA_DIR, default ./data), and HTTPS on HTTPS_PORT with TLS_CERT_FILE/TLS_KEY_FILE or ' +
          'TLS=self-signed; SIGHUP reloads the certificate; SIGTERM or SIGINT shut it down gracefully',
      )
      .option('--demo', 'seed the demo greenhouse before listening (once: not when it exists already)')
      .option('--memory', 'keep everything in memory, lost at exit (the same as STORE=memory)')
      .option(
        '--client <dir>',
        "serve a web client's single-page build from <dir> under / (the same as CLIENT_DIR); the API stays under /api",
      )
      .addOption(
        new Option('-p, --port <port>', 'port to listen on (default: PORT, else 8080)').argParser(parsePort),
      )
      .action(async (options: { demo?: boolean; memory?: boolean; port?: number; client?: string }) => {
        const config = loadConfig({
          ...io.env,
          ...(options.memory === true ? { STORE: 'memory' } : {}),
          ...(options.client === undefined ? {} : { CLIENT_DIR: options.client }),
        });
        // People read a terminal; logs (a file, journald, a container's) are read by programs.
        const format =
          config.logFormat === 'auto' ? (io.stdout.isTTY === true ? 'text' : 'json') : config.logFormat;
        const logger = createJsonLogger((line) => io.stdout.write(line), undefined, config.logLevel, format);
        for (const unknown of unknownVariables(io.env)) {
          logger.warn('unknown variable', { name: unknown.name, message: describeUnknown(unknown) });
        }
        const shutdown = shutdownRequest(io.signals ?? process);
        // Whatever is stuck (a silent store or Redis, a broker gone, held sockets, a start that hangs), the
        // process ends STOP_DEADLINE_MS after the signal: the grace for requests, then a bounded rest.
        const exit = io.exit;
        let deadline: NodeJS.Timeout | undefined;
        if (exit !== undefined) {
          void shutdown.received.then((signal) => {
            deadline = setTimeout(() => {
              logger.error('stop deadline passed, exiting', { signal, deadlineMs: STOP_DEADLINE_MS });
              logger.flush?.();
              exit(1);
            }, STOP_DEADLINE_MS);
          });
        }
        let running: RunningServer;
        try {
          const { startServer } = await import('../app/application.js');
          running = await startServer(
            { ...config, ...(options.port === undefined ? {} : { port: options.port }) },
            { demo: options.demo === true, logger },
          );
        } catch (error) {
          shutdown.stopListening();
          clearTimeout(deadline);
          logger.error('start failed', { message: error instanceof Error ? error.message : String(error) });
          throw listenProblem(error) ?? error;
        }
        const stopReloading = reloadOnHangUp(io.signals ?? process, running, logger);
        logger.info('signal received', { signal: await shutdown.received });
        stopReloading();
        await running.close();
        clearTimeout(deadline);
      }),
    'hortus serve --demo --port 8080',
    'AUTH=on SIGNUP=open hortus serve --client ./client/build',
    'HORTUS_DATA_DIR=/var/lib/hortus hortus serve',
    'MONGODB_URI=mongodb://localhost:27017/hortus hortus serve',
    'TLS=self-signed HTTPS_PORT=8443 hortus serve',
  );
}
