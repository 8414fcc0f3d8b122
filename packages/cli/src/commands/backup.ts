import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { type Command } from 'commander';
import { loadDataConfig } from '../app/config.js';
import { withExamples } from './shared.js';
import { UsageError } from '../exit-codes.js';
import { fields, Output } from '../output.js';
import { type RunIo } from '../io.js';

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
          'stopping the server and running hortus restore <file>)',
      )
      .argument('<file>', 'where the copy goes; must not exist yet')
      .action(async (file: string, _options: unknown, command: Command) => {
        const config = loadDataConfig(io.env);
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

/**
 * `hortus restore <file>`: puts a copy `hortus backup` made in place of the SQLite data file, with the
 * server stopped. Refuses (exit 7) while any process has the data file open; checks the copy (exit 2 when
 * it is damaged, not Hortus's or from a newer Hortus) before it touches anything; keeps the old file.
 */
export function registerRestoreCommand(program: Command, io: RunIo): void {
  withExamples(
    program
      .command('restore')
      .description(
        'put a copy made by hortus backup in place of the SQLite data file (stop the server first); the ' +
          'old file is kept beside it as hortus.db.before-restore-<time>',
      )
      .argument('<file>', 'the copy to restore')
      .action(async (file: string, _options: unknown, command: Command) => {
        const config = loadDataConfig(io.env);
        if (config.store !== 'sqlite') {
          throw new UsageError(
            `restore replaces the SQLite data file, and the configured store is ${config.store}. ` +
              'For MongoDB use mongorestore.',
          );
        }
        const { restoreSqliteFile, sqliteSettingsFromEnv } = await import('@hortus/adapter-sqlite');
        const settings = config.sqlite ?? sqliteSettingsFromEnv(io.env);
        const report = restoreSqliteFile(settings.file, file);
        new Output(io.stdout, command.optsWithGlobals<{ json?: boolean }>().json === true).result(
          report,
          ({ from, file: dataFile, kept, schemaVersion, cancelledMessages }) =>
            fields([
              ['Restored', from],
              ['Into', dataFile],
              ['Old file kept as', kept ?? '(there was none)'],
              ['Schema version', schemaVersion],
              ['Integrity', 'ok'],
              ['Alert messages cancelled', `${cancelledMessages} (queued before the backup)`],
            ]),
        );
      }),
    'hortus restore /var/backups/hortus-2025-06-01.db',
  );
}
