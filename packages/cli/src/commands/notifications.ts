import {
  AcknowledgeNotification,
  IgnoreNotifications,
  ListOpenNotifications,
  MAX_IGNORE_TIMES,
  type Notification,
} from '@hortus/core';
import { type Command, Option } from 'commander';
import { UsageError } from '../exit-codes.js';
import { type RunIo } from '../io.js';
import { fields, localTime, say, table } from '../output.js';
import { consoleActor, groupOption, listOrNote, outputFor, storeFor, withExamples } from './shared.js';

/** Who acknowledged, as people read it: the e-mail or OS user when known, else the kind and id. */
function acknowledgedText(notification: Notification): string {
  const ack = notification.acknowledged;
  if (ack === undefined) return '-';
  const who = ack.by.name ?? (ack.by.id === undefined ? ack.by.kind : `${ack.by.kind} ${ack.by.id}`);
  return `${who} at ${localTime(ack.at)}`;
}

export function registerNotificationCommands(program: Command, io: RunIo): void {
  const store = storeFor(io);
  const notifications = withExamples(
    program
      .command('notifications')
      .description('list open notifications, acknowledge them ("seen, on it") and ignore them'),
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
              ['TIME', 'ID', 'SEVERITY', 'MESSAGE', 'TOPIC', 'VALUE', 'ACKNOWLEDGED'],
              rows.map((n) => [
                n.time,
                n.id,
                n.severity ?? '-',
                n.message,
                n.topic,
                n.value,
                acknowledgedText(n),
              ]),
            ),
          ),
        );
      }),
    'hortus notifications list --group greenhouse-1',
  );
  withExamples(
    notifications
      .command('ack')
      .description(
        'acknowledge a notification: records who (this OS user) and when; a critical alert is no longer sent again',
      )
      .argument('<id>', 'the notification id, as `notifications list` shows it')
      .addOption(groupOption())
      .action(async (id: string, options: { group: string }, command: Command) => {
        const acknowledged = await store(command, (useCase) =>
          useCase(AcknowledgeNotification).execute({ group: options.group, id, actor: consoleActor() }),
        );
        outputFor(io, command).result(acknowledged, (n) =>
          fields([
            ['Notification', n.id],
            ['Message', n.message],
            ['Severity', n.severity ?? '-'],
            ['Acknowledged', acknowledgedText(n)],
          ]),
        );
      }),
    'hortus notifications ack 6650a1b2c3d4e5f6a7b8c9d0 --group greenhouse-1',
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
