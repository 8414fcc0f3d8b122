import { IgnoreNotifications, ListOpenNotifications, MAX_IGNORE_TIMES } from '@hortus/core';
import { type Command, Option } from 'commander';
import { UsageError } from '../exit-codes.js';
import { type RunIo } from '../io.js';
import { say, table } from '../output.js';
import { groupOption, listOrNote, outputFor, storeFor, withExamples } from './shared.js';

export function registerNotificationCommands(program: Command, io: RunIo): void {
  const store = storeFor(io);
  const notifications = withExamples(
    program.command('notifications').description('list open notifications and ignore them'),
    'hortus notifications list --group greenhouse-1',
  );
  withExamples(
    notifications
      .command('list')
      .description('list the open (not ignored) notifications of a group, newest first')
      .addOption(groupOption())
      .action(async (options: { group: string }, command: Command) => {
        const open = await store(command, (useCase) => useCase(ListOpenNotifications).execute(options));
        outputFor(io, command).result(open, (all) =>
          listOrNote(all, say`No open notifications in group ${options.group}.`, (rows) =>
            table(
              ['TIME', 'MESSAGE', 'TOPIC', 'VALUE'],
              rows.map((n) => [n.time, n.message, n.topic, n.value]),
            ),
          ),
        );
      }),
    'hortus notifications list --group greenhouse-1',
  );
  withExamples(
    notifications
      .command('ignore')
      .description(
        'ignore notifications of a group by time; --all lists the open ones and ignores them by their times',
      )
      .addOption(groupOption())
      .addOption(
        new Option('--time <time>', 'ignore the notification at this ISO-8601 time (exit 3 if none)'),
      )
      .addOption(new Option('--times <times...>', 'ignore every notification at one of these times'))
      .addOption(new Option('--all', 'ignore every open notification of the group'))
      .action(
        async (
          options: { group: string; time?: string; times?: string[]; all?: boolean },
          command: Command,
        ) => {
          const chosen = [options.time, options.times, options.all].filter((given) => given !== undefined);
          if (chosen.length !== 1) throw new UsageError('give exactly one of --time, --times, --all');
          const ignored = await store(command, async (useCase) => {
            const ignore = useCase(IgnoreNotifications);
            if (options.time !== undefined)
              return ignore.execute({ group: options.group, time: options.time });
            if (options.times !== undefined)
              return ignore.execute({ group: options.group, times: options.times });
            // --all: ignoring by time is the only ignore the core offers, so ignore the open ones' times.
            const open = await useCase(ListOpenNotifications).execute(options);
            const times = [...new Set(open.map((n) => n.time.toISOString()))];
            let count = 0;
            for (let start = 0; start < times.length; start += MAX_IGNORE_TIMES) {
              count += await ignore.execute({
                group: options.group,
                times: times.slice(start, start + MAX_IGNORE_TIMES),
              });
            }
            return count;
          });
          outputFor(io, command).result(
            { group: options.group, ignored },
            (r) => say`Ignored ${r.ignored} notification${r.ignored === 1 ? '' : 's'} of group ${r.group}.`,
          );
        },
      ),
    'hortus notifications ignore --group greenhouse-1 --time 2025-06-01T08:00:00.000Z',
    'hortus notifications ignore --group greenhouse-1 --times 2025-06-01T08:00:00Z 2025-06-01T09:00:00Z',
    'hortus notifications ignore --group greenhouse-1 --all',
  );
}
