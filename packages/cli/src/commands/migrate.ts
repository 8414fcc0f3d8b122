import { type Command, Option } from 'commander';
import { type RunIo } from '../io.js';
import { MIGRATE_DEFAULT_BATCH, MIGRATE_MAX_BATCH } from '../migrate/batch.js';
import { Output } from '../output.js';
import { withExamples } from './shared.js';

export function registerMigrateCommand(program: Command, io: RunIo): void {
  withExamples(
    program
      .command('migrate')
      .description(
        "copy the original service's database into the configured store: readings, groups, users (with " +
          'their password hashes), actions, devices, notifications, alarms and history charts; safe to run ' +
          'again, resumes where an interrupted run stopped, never writes to the source',
      )
      .requiredOption(
        '--from <uri>',
        'MongoDB URI of the original database, e.g. mongodb://old-host:27017/greenhouse',
      )
      .option(
        '--time-zone <zone>',
        'IANA zone the boxes ran in; their stored local times are converted to UTC',
      )
      .option('--dry-run', 'read and check everything, write nothing')
      .option(
        '--update',
        'on a re-run, bring over action values, rules, chart settings and group settings (key by key, ' +
          'keeping keys only Hortus has) that changed in the original ' +
          "since Hortus got its copy (without it Hortus's are kept and each difference is noted)",
      )
      .addOption(
        new Option('--batch-size <n>', `documents per batch (at most ${MIGRATE_MAX_BATCH})`)
          .default(MIGRATE_DEFAULT_BATCH)
          .argParser((text) => Number(text)),
      )
      .action(
        async (
          options: {
            from: string;
            timeZone?: string;
            dryRun?: boolean;
            update?: boolean;
            batchSize: number;
          },
          command: Command,
        ) => {
          const json = command.optsWithGlobals<{ json?: boolean }>().json === true;
          // The MongoDB driver and the copier load only when migrate runs.
          const { runMigrate } = await import('../migrate.js');
          await runMigrate(io, new Output(io.stdout, json), {
            from: options.from,
            dryRun: options.dryRun === true,
            update: options.update === true,
            batchSize: options.batchSize,
            ...(options.timeZone === undefined ? {} : { timeZone: options.timeZone }),
          });
        },
      ),
    'MONGODB_URI=mongodb://localhost:27017/hortus hortus migrate --from mongodb://localhost:27017/greenhouse --time-zone Europe/Berlin',
    'hortus migrate --from mongodb://localhost:27017/greenhouse --dry-run --json > report.json',
  );
}
