import {
  DeleteReadings,
  type DeleteReadingsResult,
  GetLatestReading,
  GetLatestReadingsOfGroup,
  sensorTopics,
  withUnit,
} from '@hortus/core';
import { type Command, Option } from 'commander';
import { UsageError } from '../exit-codes.js';
import { exportReadings, formatOfFile } from '../export-readings.js';
import { DEFAULT_MAX_LINE_BYTES } from '../import-readings/lines.js';
import { type RunIo } from '../io.js';
import { say, table } from '../output.js';
import { groupOption, listOrNote, outputFor, sensorTopic, storeFor, withExamples } from './shared.js';

function showDeleted(result: DeleteReadingsResult): string {
  const of = result.topic === undefined ? 'every topic' : result.topic;
  const noun = result.deleted === 1 ? 'reading' : 'readings';
  return (
    say`Deleted ${result.deleted} ${noun} of group ${result.group} (${of}) ` +
    say`from ${result.from} to ${result.to}.`
  );
}

export function registerReadingCommands(program: Command, io: RunIo): void {
  const store = storeFor(io);
  const readings = withExamples(
    program.command('readings').description('import, export, delete and show sensor readings'),
    'hortus readings latest --group greenhouse-1',
  );
  withExamples(
    readings
      .command('import')
      .description(
        'import readings from a CSV file (header group,topic,value,time) or an NDJSON file, in batches; ' +
          'valid lines are stored, rejected lines are listed with their line numbers (exit 2 if any)',
      )
      .argument('<file>', 'the file to import (.csv, .ndjson or .jsonl; other names are sniffed)')
      .addOption(
        new Option('--format <format>', 'file format, instead of guessing').choices(['csv', 'ndjson']),
      )
      .addOption(
        new Option('--batch-size <n>', 'readings per batch (at most 5000)')
          .default(1000)
          .argParser((text) => Number(text)),
      )
      .addOption(
        new Option('--max-line-bytes <n>', 'longer lines are rejected and listed, never read whole')
          .default(DEFAULT_MAX_LINE_BYTES)
          .argParser((text) => Number(text)),
      )
      .action(
        async (
          file: string,
          options: { format?: 'csv' | 'ndjson'; batchSize: number; maxLineBytes: number },
          command: Command,
        ) => {
          // The parsers (csv-parse) load only when a file is imported.
          const { importReadings } = await import('../import-readings.js');
          await importReadings(io, outputFor(io, command), file, options, (work) => store(command, work));
        },
      ),
    'hortus readings import readings.csv',
    'hortus readings import box-dump.ndjson --json > summary.json',
  );
  withExamples(
    readings
      .command('export')
      .description(
        'write the readings of a group (of one topic, or of all) as CSV or NDJSON, by topic then time, ' +
          'page by page in constant memory; `readings import` reads the result back',
      )
      .addOption(groupOption())
      .option('--topic <topic>', `one topic, or a sensor name (${Object.keys(sensorTopics).join(', ')})`)
      .option('--from <time>', 'first time to include: RFC 3339 or a date')
      .option('--to <time>', 'last time to include: RFC 3339, or a date meaning the end of that day')
      .addOption(
        new Option(
          '--format <format>',
          'output format (default: from the extension of --output: .csv, .ndjson or .jsonl)',
        ).choices(['csv', 'ndjson']),
      )
      .option('-o, --output <file>', 'write to this file instead of stdout')
      .option('--force', 'overwrite --output when it exists')
      .action(
        async (
          options: {
            group: string;
            topic?: string;
            from?: string;
            to?: string;
            format?: 'csv' | 'ndjson';
            output?: string;
            force?: boolean;
          },
          command: Command,
        ) => {
          const topic = options.topic === undefined ? undefined : sensorTopic(options.topic);
          const format = options.format ?? formatOfFile(options.output);
          if (format === undefined) {
            throw new UsageError(
              options.output === undefined
                ? '--format csv or --format ndjson is needed when writing to stdout'
                : `cannot tell the format from ${options.output}: add --format csv or --format ndjson`,
            );
          }
          const summary = await exportReadings(
            io,
            { ...options, format, ...(topic === undefined ? {} : { topic }) },
            (work) => store(command, work),
          );
          // On stdout the data is the output; a summary would corrupt it.
          if (options.output !== undefined) {
            outputFor(io, command).result(
              summary,
              (s) => say`Exported ${s.readings} readings of group ${s.group} to ${s.output} (${s.format}).`,
            );
          }
        },
      ),
    'hortus readings export --group greenhouse-1 --format csv --output greenhouse-1.csv',
    'hortus readings export --group greenhouse-1 --topic temperature --from 2025-06-01 --to 2025-06-30 --format ndjson | gzip > june.ndjson.gz',
  );
  withExamples(
    readings
      .command('delete')
      .description(
        'delete the readings of a group (of one topic, or of all) between two times, both included; ' +
          'aggregated history and ETags follow',
      )
      .addOption(groupOption())
      .option('--topic <topic>', `one topic, or a sensor name (${Object.keys(sensorTopics).join(', ')})`)
      .requiredOption('--from <time>', 'first time to delete: RFC 3339 (2025-06-15T10:00:00Z) or a date')
      .requiredOption('--to <time>', 'last time to delete: RFC 3339, or a date meaning the end of that day')
      .action(
        async (options: { group: string; topic?: string; from: string; to: string }, command: Command) => {
          const topic = options.topic === undefined ? undefined : sensorTopic(options.topic);
          const result = await store(command, (useCase) =>
            useCase(DeleteReadings).execute({
              group: options.group,
              from: options.from,
              to: options.to,
              ...(topic === undefined ? {} : { topic }),
            }),
          );
          outputFor(io, command).result(result, showDeleted);
        },
      ),
    'hortus readings delete --group greenhouse-1 --topic temperature --from 2099-01-01 --to 2099-12-31',
    'hortus readings delete --group greenhouse-1 --from 2025-06-15T10:00:00Z --to 2025-06-15T10:05:00Z --json',
  );
  withExamples(
    readings
      .command('latest')
      .description('show the newest reading of every topic of a group, or of one topic')
      .addOption(groupOption())
      .option('--topic <topic>', `one topic, or a sensor name (${Object.keys(sensorTopics).join(', ')})`)
      .action(async (options: { group: string; topic?: string }, command: Command) => {
        const topic = options.topic === undefined ? undefined : sensorTopic(options.topic);
        const latest = await store(command, (useCase) =>
          topic === undefined
            ? useCase(GetLatestReadingsOfGroup).execute({ group: options.group })
            : useCase(GetLatestReading).execute({ group: options.group, topic }),
        );
        outputFor(io, command).result(latest, (all) =>
          listOrNote(all, say`No readings in group ${options.group}.`, (rows) =>
            table(
              ['TOPIC', 'VALUE', 'TIME'],
              rows.map((r) => [r.topic, withUnit(r.value, r.topic), r.time]),
            ),
          ),
        );
      }),
    'hortus readings latest --group greenhouse-1',
    'hortus readings latest --group greenhouse-1 --topic temperature --json',
  );
}
