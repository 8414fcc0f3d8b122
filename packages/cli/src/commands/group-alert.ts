import { GetGroup, SetTopicAlert, type TopicRange, watchedRanges } from '@hortus/core';
import { type Command } from 'commander';
import { UsageError } from '../exit-codes.js';
import { type RunIo } from '../io.js';
import { fields, table } from '../output.js';
import { listOrNote, outputFor, storeFor, withExamples } from './shared.js';

const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/**
 * `90s`, `5m`, `1h`, `250ms`, or plain seconds; `off` = no delay (kept as the word: commander turns a
 * parser's null into ''). Checked against the limit in the core.
 */
export function parseDelay(text: string): number | 'off' {
  if (text.trim() === 'off') return 'off';
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/u.exec(text.trim());
  if (match === null) throw new UsageError(`--delay must be like 90s, 5m or 1h, or off; got "${text}"`);
  return Math.round(Number(match[1]) * (units[match[2] ?? 's'] ?? 1000));
}

/** A number, or `off` to drop the value (null for the core, which checks the number). */
const orNull = <T>(value: T | undefined): T | null | undefined =>
  typeof value === 'string' && value.trim() === 'off' ? null : value;

function delayText(ms: number | undefined): string {
  if (ms === undefined) return 'none';
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0) return `${ms / 60_000}m`;
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
}

const row = (topic: string, range: TopicRange): unknown[] => [
  topic,
  range.min ?? '-',
  range.max ?? '-',
  range.hysteresis ?? 'default',
  delayText(range.delayMs),
];

interface AlertOptions {
  min?: string;
  max?: string;
  hysteresis?: string;
  delay?: number | 'off';
  remove?: boolean;
}

export function registerGroupAlertCommand(group: Command, io: RunIo): void {
  const store = storeFor(io);
  withExamples(
    group
      .command('alert')
      .description(
        "show or set a topic's alert range (any topic: humidity, light, CO2, ...), kept in the group settings " +
          'beside tempMin/tempMax and moistureMin/moistureMax; without options, lists every range the alerts use',
      )
      .argument('<group>', 'group name')
      .argument('[topic]', 'the topic, as the readings carry it (e.g. esp/air/humidity)')
      .option('--min <number>', 'alert when the value falls below this (off: no lower bound)')
      .option('--max <number>', 'alert when the value rises above this (off: no upper bound)')
      .option(
        '--hysteresis <number>',
        'the alert ends only once the value is this far back inside (off: the engine dead band)',
      )
      .option(
        '--delay <duration>',
        'alert only after the value stays outside this long: 90s, 5m, 1h, off',
        parseDelay,
      )
      .option('--remove', "drop the topic's range")
      .action(async (name: string, topic: string | undefined, options: AlertOptions, command: Command) => {
        const changes = [options.min, options.max, options.hysteresis, options.delay].some(
          (v) => v !== undefined,
        );
        if ((changes || options.remove === true) && topic === undefined)
          throw new UsageError('name the topic whose range to set or remove');
        if (changes && options.remove === true) throw new UsageError('--remove takes no other option');
        if (topic === undefined || (!changes && options.remove !== true)) {
          const found = await store(command, (useCase) => useCase(GetGroup).execute({ name }));
          const ranges = [...watchedRanges(found.settings)]
            .filter(([name]) => topic === undefined || name === topic)
            .map(([name, { range, source }]) => ({ topic: name, ...range, source }));
          outputFor(io, command).result(ranges, (all) =>
            listOrNote(all, 'No alert ranges.', (rows) =>
              table(
                ['TOPIC', 'MIN', 'MAX', 'HYSTERESIS', 'DELAY', 'FROM'],
                rows.map((r) => [...row(r.topic, r), r.source]),
              ),
            ),
          );
          return;
        }
        const result = await store(command, (useCase) =>
          useCase(SetTopicAlert).execute({
            group: name,
            topic,
            ...(options.min === undefined ? {} : { min: orNull(options.min) }),
            ...(options.max === undefined ? {} : { max: orNull(options.max) }),
            ...(options.hysteresis === undefined ? {} : { hysteresis: orNull(options.hysteresis) }),
            ...(options.delay === undefined ? {} : { delayMs: orNull(options.delay) }),
            ...(options.remove === true ? { remove: true } : {}),
          }),
        );
        outputFor(io, command).result(result, (view) =>
          view.range === undefined
            ? `No alert range for ${view.topic} in group ${view.group} (removed).`
            : fields([
                ['Group', view.group],
                ['Topic', view.topic],
                ['Min', view.range.min ?? '-'],
                ['Max', view.range.max ?? '-'],
                ['Hysteresis', view.range.hysteresis ?? 'default (dead band)'],
                ['Delay', delayText(view.range.delayMs)],
              ]),
        );
      }),
    'hortus group alert greenhouse-1 esp/air/humidity --min 40 --max 85 --hysteresis 3 --delay 5m',
    'hortus group alert greenhouse-1 co2 --max 1500',
    'hortus group alert greenhouse-1',
    'hortus group alert greenhouse-1 co2 --remove',
  );
}
