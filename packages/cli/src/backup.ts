import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { type Command } from 'commander';
import { loadConfig } from './app/config.js';
import { withExamples } from './commands/shared.js';
import { UsageError } from './exit-codes.js';
import { fields, Output } from './output.js';
import { type RunIo } from './io.js';

/**
 * `hortus backup <file>`: a consistent copy of the SQLite data file made with SQLite's online backup, so
 * it runs beside a serving server. MongoDB has its own tools for that (mongodump).
 */
export function registerBackupCommand(program: Command, io: RunIo): void {
  withExamples(
    program
      .command('backup')
      .description(
        'copy the SQLite data file to <file> while the server keeps running (a new file; restore by ' +
          'stopping the server and putting the copy in place of HORTUS_DATA_DIR/hortus.db)',
      )
      .argument('<file>', 'where the copy goes; must not exist yet')
      .action(async (file: string, _options: unknown, command: Command) => {
        const config = loadConfig(io.env);
        if (config.store !== 'sqlite') {
          throw new UsageError(
            `backup copies the SQLite data file, and the configured store is ${config.store}. ` +
              'For MongoDB use mongodump.',
          );
        }
        if (!existsSync(dirname(resolve(file)))) {
          throw new UsageError(
            `cannot write the backup to ${file}: the directory ${dirname(resolve(file))} does not exist`,
          );
        }
        // The SQLite driver loads only for this command, not for every start of the CLI.
        const { sqliteSettingsFromEnv, SqliteStore } = await import('@hortus/adapter-sqlite');
        const store = SqliteStore.fromSettings(config.sqlite ?? sqliteSettingsFromEnv(io.env));
        await store.start();
        try {
          const { totalPages } = await store.backup(file);
          const report = { source: store.file, copy: resolve(file), pages: totalPages };
          new Output(io.stdout, command.optsWithGlobals<{ json?: boolean }>().json === true).result(
            report,
            ({ source, copy, pages }) =>
              fields([
                ['Copied', source],
                ['To', copy],
                ['Pages', pages],
              ]),
          );
        } finally {
          await store.close();
        }
      }),
    'hortus backup /var/backups/hortus-2025-06-01.db',
  );
}
