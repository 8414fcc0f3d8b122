import { type Command, Option } from 'commander';
import { UsageError } from '../exit-codes.js';
import { type RunIo } from '../io.js';
import { Output } from '../output.js';
import { readPassword, withExamples } from './shared.js';

const DEFAULT_PAGE = 1000;

export function registerStoreCommands(program: Command, io: RunIo): void {
  const store = program.command('store').description('move the whole store to another one');
  withExamples(
    store
      .command('copy')
      .description(
        'copy the configured store into another (groups, users with their password hashes, access keys, ' +
          'devices with their keys, pending boxes, actions, alert settings, the alert outbox, notifications, ' +
          'history charts, firmware, the token key, engine state, the automation log, readings), records as ' +
          'they are; safe to run again: it ' +
          'resumes without duplicating; refuses a target holding another installation unless --force',
      )
      .requiredOption('--to <target>', 'a MongoDB URI (mongodb://host:27017/hortus) or a SQLite file path')
      .option('--force', "copy even into a store that holds another installation's records")
      .option('--check-login <email>', 'after the copy, log in on the target as this user')
      .option('--password-stdin', 'read the --check-login password from stdin')
      .addOption(
        new Option('--page-size <n>', 'records per read and write (at most 10000)')
          .default(DEFAULT_PAGE)
          .argParser((text) => Number(text)),
      )
      .action(
        async (
          options: {
            to: string;
            force?: boolean;
            checkLogin?: string;
            passwordStdin?: boolean;
            pageSize: number;
          },
          command: Command,
        ) => {
          const json = command.optsWithGlobals<{ json?: boolean }>().json === true;
          if (options.checkLogin !== undefined && options.passwordStdin !== true) {
            throw new UsageError(
              '--check-login needs --password-stdin (a password never goes on the command line)',
            );
          }
          const password = options.checkLogin === undefined ? undefined : await readPassword(io);
          // Both stores' drivers and the copy load only when it runs.
          const { runStoreCopy } = await import('../store-copy.js');
          await runStoreCopy(io, new Output(io.stdout, json), {
            to: options.to,
            force: options.force === true,
            pageSize: options.pageSize,
            ...(options.checkLogin === undefined || password === undefined
              ? {}
              : { checkLogin: { email: options.checkLogin, password } }),
          });
        },
      ),
    'hortus store copy --to mongodb://db-host:27017/hortus',
    'echo "$PASSWORD" | hortus store copy --to /srv/hortus/hortus.db --check-login ana@example.com --password-stdin',
  );
}
