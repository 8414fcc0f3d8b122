import {
  BOX_ALERTS_KEY,
  durationText,
  GetGroup,
  readBoxAlerts,
  SetBoxAlert,
  SetTopicAlert,
  type TopicRange,
  watchedRanges,
} from '@hortus/core';
import { type Command } from 'commander';
import { UsageError } from '../exit-codes.js';
import { type RunIo } from '../io.js';
import { fields, table } from '../output.js';
import {
  consoleActor,
  durationOption,
  listOrNote,
  outputFor,
  parseDelay,
  storeFor,
  withExamples,
} from './shared.js';

/** A number, or `off` to drop the value (null for the core, which checks the number). */
const orNull = <T>(value: T | undefined): T | null | undefined =>
  typeof value === 'string' && value.trim() === 'off' ? null : value;

function delayText(ms: number | undefined): string {
  return ms === undefined ? 'none' : durationText(ms);
}

const row = (topic: string, range: TopicRange): unknown[] => [
  topic,
  range.min ?? '-',
  range.max ?? '-',
  range.hysteresis ?? 'default',
  delayText(range.delayMs),
  range.noDataMs === undefined ? '-' : durationText(range.noDataMs),
  range.severity ?? 'warning',
];

interface AlertOptions {
  min?: string;
  max?: string;
  hysteresis?: string;
  delay?: number | 'off';
  /** `--no-data`: commander names it `data`, true when the option is not given (see noDataOf). */
  data?: number | 'off' | boolean;
  box?: string;
  severity?: string;
  remove?: boolean;
}

/**
 * The `--no-data` value. Commander takes an option spelt `--no-…` as the negation of `--…`: it names it
 * `data` and sets it true when the option is absent, so only a parsed value counts.
 */
function noDataOf(options: AlertOptions): number | 'off' | undefined {
  return typeof options.data === 'boolean' ? undefined : options.data;
}

export function registerGroupAlertCommand(group: Command, io: RunIo): void {
  const store = storeFor(io);
  withExamples(
    group
      .command('alert')
      .description(
        "show or set a topic's alert range (any topic: humidity, light, CO2, ...) and no-data deadline, or a " +
          "box's no-data deadline (--box), kept in the group settings beside tempMin/tempMax and " +
          'moistureMin/moistureMax; without options, lists every range and deadline the alerts use',
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
      .option(
        '--no-data <duration>',
        'alert when the topic (or the --box) has sent nothing this long: 15m, 2h, off (1 minute to 7 days)',
        durationOption('--no-data'),
      )
      .option(
        '--box <deviceId>',
        'set the no-data deadline of this box of the group (*: every box without its own)',
      )
      .option(
        '--severity <level>',
        'warning (the default) or critical: a critical alert is sent again every ALERT_REPEAT_MS until acknowledged',
      )
      .option('--remove', "drop the topic's range and deadline (or the box's deadline)")
      .action(async (name: string, topic: string | undefined, options: AlertOptions, command: Command) => {
        if (options.box !== undefined) return setBoxAlert(name, topic, options, command);
        const noData = noDataOf(options);
        const changes = [
          options.min,
          options.max,
          options.hysteresis,
          options.delay,
          noData,
          options.severity,
        ].some((v) => v !== undefined);
        if ((changes || options.remove === true) && topic === undefined)
          throw new UsageError('name the topic whose range to set or remove (or a box with --box)');
        if (changes && options.remove === true) throw new UsageError('--remove takes no other option');
        if (topic === undefined || (!changes && options.remove !== true)) {
          const found = await store(command, (useCase) => useCase(GetGroup).execute({ name }));
          const ranges = [...watchedRanges(found.settings)]
            .filter(([name]) => topic === undefined || name === topic)
            .map(([name, { range, source }]) => ({ topic: name, ...range, source }));
          const boxes =
            topic === undefined
              ? [...readBoxAlerts(found.settings)].map(([box, alert]) => ({
                  box,
                  ...alert,
                  source: BOX_ALERTS_KEY,
                }))
              : [];
          // One list for --json, as before box deadlines existed; two tables for people.
          outputFor(io, command).result([...ranges, ...boxes], () =>
            [
              listOrNote(ranges, 'No alert ranges.', (rows) =>
                table(
                  ['TOPIC', 'MIN', 'MAX', 'HYSTERESIS', 'DELAY', 'NO DATA', 'SEVERITY', 'FROM'],
                  rows.map((r) => [...row(r.topic, r), r.source]),
                ),
              ),
              ...(boxes.length === 0
                ? []
                : [
                    '',
                    table(
                      ['BOX', 'NO DATA', 'SEVERITY'],
                      boxes.map((b) => [b.box, durationText(b.noDataMs), b.severity ?? 'warning']),
                    ),
                  ]),
            ].join('\n'),
          );
          return;
        }
        const result = await store(command, (useCase) =>
          useCase(SetTopicAlert).execute({
            actor: consoleActor(),
            group: name,
            topic,
            ...(options.min === undefined ? {} : { min: orNull(options.min) }),
            ...(options.max === undefined ? {} : { max: orNull(options.max) }),
            ...(options.hysteresis === undefined ? {} : { hysteresis: orNull(options.hysteresis) }),
            ...(options.delay === undefined ? {} : { delayMs: orNull(options.delay) }),
            ...(noData === undefined ? {} : { noDataMs: orNull(noData) }),
            ...(options.severity === undefined ? {} : { severity: orNull(options.severity) }),
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
                ['No data', view.range.noDataMs === undefined ? 'none' : durationText(view.range.noDataMs)],
                ['Severity', view.range.severity ?? 'warning'],
              ]),
        );
      }),
    'hortus group alert greenhouse-1 esp/air/humidity --min 40 --max 85 --hysteresis 3 --delay 5m',
    'hortus group alert greenhouse-1 co2 --max 1500',
    'hortus group alert greenhouse-1 esp/air/humidity --no-data 15m',
    "hortus group alert greenhouse-1 --box '*' --no-data 30m",
    'hortus group alert greenhouse-1 esp/air/temperature --max 35 --severity critical',
    'hortus group alert greenhouse-1',
    'hortus group alert greenhouse-1 co2 --remove',
  );

  async function setBoxAlert(
    name: string,
    topic: string | undefined,
    options: AlertOptions,
    command: Command,
  ): Promise<void> {
    const others = [options.min, options.max, options.hysteresis, options.delay].some((v) => v !== undefined);
    if (topic !== undefined || others)
      throw new UsageError('--box takes --no-data, --severity or --remove only, no topic');
    const noData = noDataOf(options);
    const setting = noData !== undefined || options.severity !== undefined;
    if (setting === (options.remove === true))
      throw new UsageError('--box needs either --no-data <duration> (or --severity) or --remove');
    const result = await store(command, (useCase) =>
      useCase(SetBoxAlert).execute({
        actor: consoleActor(),
        group: name,
        deviceId: options.box,
        ...(options.remove === true
          ? { remove: true }
          : {
              ...(noData === undefined ? {} : { noDataMs: orNull(noData) }),
              ...(options.severity === undefined ? {} : { severity: orNull(options.severity) }),
            }),
      }),
    );
    outputFor(io, command).result(result, (view) =>
      view.alert === undefined
        ? `No no-data deadline for box ${view.deviceId} in group ${view.group} (removed).`
        : fields([
            ['Group', view.group],
            ['Box', view.deviceId],
            ['No data', durationText(view.alert.noDataMs)],
            ['Severity', view.alert.severity ?? 'warning'],
          ]),
    );
  }
}
