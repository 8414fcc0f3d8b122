import { SeedDemo } from '@hortus/core';
import { type Command, Option } from 'commander';
import { type RunIo } from '../io.js';
import { say } from '../output.js';
import { outputFor, storeFor, withExamples } from './shared.js';

export function registerSeedCommands(program: Command, io: RunIo): void {
  const store = storeFor(io);
  withExamples(
    program
      .command('seed')
      .description('fill the configured store with a demo greenhouse (safe to run twice)')
      .addOption(
        new Option('--demo', 'seed the demo greenhouse (the only seed there is)').makeOptionMandatory(),
      )
      .option('-g, --group <name>', 'name of the demo group', 'demo')
      .action(async (options: { group: string }, command: Command) => {
        const summary = await store(command, (useCase) =>
          useCase(SeedDemo).execute({ group: options.group }),
        );
        outputFor(io, command).result(summary, (s) =>
          [
            say`Seeded group ${s.group}: ${s.readings} new readings.`,
            s.created.length === 0
              ? 'Everything else existed already.'
              : say`Created: ${s.created.join(', ')}.`,
          ].join('\n'),
        );
      }),
    'MONGODB_URI=mongodb://localhost:27017/hortus hortus seed --demo',
  );
}
