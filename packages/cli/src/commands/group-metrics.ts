import { BackfillMetrics, type GroupMetricsView, lightFactorOf, SetGroupMetrics } from '@hortus/core';
import { type Command } from 'commander';
import { UsageError } from '../exit-codes.js';
import { type RunIo } from '../io.js';
import { fields, localTime } from '../output.js';
import { Progress } from '../progress.js';
import { consoleActor, outputFor, storeFor, withExamples } from './shared.js';

/** Said wherever DLI is shown: the boxes' light sensor saturates, so full sun reads low. */
export const LUX_CEILING_NOTE =
  "Note: the boxes' lux sensor tops out at 65535 lx, so PPFD and DLI read low in full sun (about 100 000 lx).";

interface MetricsOptions {
  vpd?: boolean;
  dewPoint?: boolean;
  dli?: boolean;
  leafOffset?: string;
  light?: string;
  dayStart?: string;
  backfill?: boolean;
}

const onOff = (on: boolean): string => (on ? 'on' : 'off');

function showMetrics(view: GroupMetricsView): string {
  const { metrics } = view;
  return (
    fields([
      ['Group', view.group],
      ['VPD', `${onOff(metrics.vpd)} (esp/derived/vpd, kPa)`],
      ['Dew point', `${onOff(metrics.dewPoint)} (esp/derived/dew_point, °C)`],
      ['DLI', `${onOff(metrics.dli)} (esp/derived/ppfd, µmol m⁻² s⁻¹; esp/derived/dli, mol m⁻² d⁻¹)`],
      ['Leaf offset', `${metrics.leafOffset} °C`],
      ['Light', `${String(metrics.light)} (${lightFactorOf(metrics)} µmol m⁻² s⁻¹ per lx)`],
      ['Day start', metrics.dayStart],
    ]) + `\n${LUX_CEILING_NOTE}`
  );
}

/** `hortus group metrics`: the derived series of a group (docs/metrics.md). */
export function registerGroupMetricsCommand(group: Command, io: RunIo): void {
  const store = storeFor(io);
  withExamples(
    group
      .command('metrics')
      .description(
        'show or switch the derived series of a group: VPD, dew point, PPFD and DLI, stored as readings ' +
          'under esp/derived/ (docs/metrics.md); --backfill derives the past. ' +
          "The boxes' lux sensor tops out at 65535 lx, so DLI reads low in full sun",
      )
      .argument('<group>', 'group name')
      .option('--vpd', 'derive the leaf VPD (kPa) from temperature and humidity')
      .option('--no-vpd', 'stop deriving the VPD')
      .option('--dew-point', 'derive the dew point (°C)')
      .option('--no-dew-point', 'stop deriving the dew point')
      .option('--dli', 'derive PPFD and the daily light integral from lux')
      .option('--no-dli', 'stop deriving PPFD and DLI')
      .option('--leaf-offset <celsius>', 'leaf minus air temperature in °C, -10 to 10 (0: the air VPD)')
      .option('--light <source>', 'sunlight, white-led, hps, or µmol m⁻² s⁻¹ per lux (e.g. 0.0141)')
      .option('--day-start <when>', 'midnight, a local HH:MM (lights on), or rolling (the last 24 h)')
      .option('--backfill', 'derive the past, from the oldest reading to where the engine took over')
      .action(async (name: string, options: MetricsOptions, command: Command) => {
        const output = outputFor(io, command);
        const change = {
          group: name,
          actor: consoleActor(),
          ...(options.vpd === undefined ? {} : { vpd: options.vpd }),
          ...(options.dewPoint === undefined ? {} : { dewPoint: options.dewPoint }),
          ...(options.dli === undefined ? {} : { dli: options.dli }),
          ...(options.leafOffset === undefined ? {} : { leafOffset: leafOffset(options.leafOffset) }),
          ...(options.light === undefined ? {} : { light: options.light }),
          ...(options.dayStart === undefined ? {} : { dayStart: options.dayStart }),
        };
        const view = await store(command, (useCase) => useCase(SetGroupMetrics).execute(change));
        if (options.backfill !== true) {
          output.result(view, showMetrics);
          return;
        }
        const progress = new Progress(io.stderr, { event: 'group.metrics.backfill.progress', unit: 'hours' });
        let started = false;
        const result = await store(command, (useCase) =>
          useCase(BackfillMetrics).execute({ group: name }, (step) => {
            if (!started) progress.start({ total: step.totalMs / 3_600_000, fields: { group: view.group } });
            started = true;
            progress.update({
              done: step.doneMs / 3_600_000,
              count: step.stored,
              text: `${step.stored} values stored`,
              fields: { stored: step.stored },
            });
          }),
        );
        output.result({ ...view, backfill: result }, () =>
          [
            showMetrics(view),
            result.from === undefined
              ? 'Backfill: no readings to derive from.'
              : `Backfill: ${result.stored} values stored, from ${localTime(result.from)} to ${localTime(result.to)}.`,
          ].join('\n'),
        );
      }),
    'hortus group metrics greenhouse-1 --vpd --dew-point --dli --leaf-offset -2 --light white-led',
    'hortus group metrics greenhouse-1 --dli --day-start 06:00',
    'hortus group metrics greenhouse-1 --backfill',
    'hortus group metrics greenhouse-1',
  );
}

function leafOffset(text: string): number {
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value))
    throw new UsageError(`--leaf-offset takes a number of °C, not "${text}"`);
  return value;
}
