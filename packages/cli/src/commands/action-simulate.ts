import {
  type AutomationBacktest,
  type AutomationPreview,
  BacktestAutomations,
  durationText,
  MAX_PREVIEW_HOURS,
  PreviewAutomations,
  requireBacktestRange,
  type SimulatedSwitch,
} from '@hortus/core';
import { type Command } from 'commander';
import { type RunIo } from '../io.js';
import { fields, table } from '../output.js';
import { UsageError } from '../exit-codes.js';
import { groupOption, outputFor, storeFor, withExamples } from './shared.js';

function parseHours(text: string): number {
  const hours = Number(text.trim());
  if (!/^\d+$/u.test(text.trim()) || hours < 1 || hours > MAX_PREVIEW_HOURS)
    throw new UsageError(`--hours must be a whole number from 1 to ${MAX_PREVIEW_HOURS}; got "${text}"`);
  return hours;
}

function switchRows(switches: readonly SimulatedSwitch[]): string {
  if (switches.length === 0) return 'No switches.';
  return table(
    ['UTC', 'LOCAL', 'OBJECT', 'VALUE', 'TRIGGER', 'RULE'],
    switches.map((s) => [s.at.toISOString(), s.local, s.object, s.value, s.trigger, s.rule]),
  );
}

function showPreview(preview: AutomationPreview): string {
  return [
    fields([
      ['Group', preview.group],
      ['Time zone', preview.timeZone],
      ['From', preview.from.toISOString()],
      ['To', preview.to.toISOString()],
    ]),
    '',
    switchRows(preview.switches),
  ].join('\n');
}

function showBacktest(result: AutomationBacktest): string {
  return [
    fields([
      ['Group', result.group],
      ['Time zone', result.timeZone],
      ['From', result.from.toISOString()],
      ['To', result.to.toISOString()],
      ['Readings replayed', result.readings],
    ]),
    '',
    switchRows(result.switches),
    '',
    table(
      ['OBJECT', 'SWITCHES', 'ON-TIME'],
      result.actions.map((a) => [a.object, a.switches, a.onMs === 0 ? '0' : durationText(a.onMs)]),
    ),
  ].join('\n');
}

/**
 * `hortus action preview` and `hortus action backtest`: the live engine's rule code run on a simulated
 * clock over the store's data, writing nothing (see docs/automations.md, Preview and backtest).
 */
export function registerActionSimulationCommands(action: Command, io: RunIo): void {
  const store = storeFor(io);
  withExamples(
    action
      .command('preview')
      .description(
        'list every switch the time rules, maximum on-time and minimum on/off-times will make in the next ' +
          'hours, in UTC and in the group’s local time (sensor rules need readings: see backtest)',
      )
      .addOption(groupOption())
      .option('--hours <n>', `how far ahead, 1 to ${MAX_PREVIEW_HOURS}`, parseHours, 24)
      .action(async (options: { group: string; hours: number }, command: Command) => {
        const preview = await store(command, (useCase) =>
          useCase(PreviewAutomations).execute({ group: options.group, hours: options.hours }),
        );
        outputFor(io, command).result(preview, showPreview);
      }),
    'hortus action preview --group greenhouse-1',
    'hortus action preview --group greenhouse-1 --hours 72 --json',
  );
  withExamples(
    action
      .command('backtest')
      .description(
        'replay the stored readings of a range through today’s rules on a simulated clock: the switches ' +
          'they would have made and each action’s on-time; nothing is written',
      )
      .addOption(groupOption())
      .requiredOption('--from <instant>', 'start, e.g. 2026-11-01T00:00:00Z (an offset or Z is required)')
      .requiredOption('--to <instant>', 'end, at most 31 days after --from')
      .action(async (options: { group: string; from: string; to: string }, command: Command) => {
        // Checked before the store is opened: a bad range is a usage error whatever the store.
        requireBacktestRange(options.from, options.to);
        const result = await store(command, (useCase) =>
          useCase(BacktestAutomations).execute({ group: options.group, from: options.from, to: options.to }),
        );
        outputFor(io, command).result(result, showBacktest);
      }),
    'hortus action backtest --group greenhouse-1 --from 2026-11-01T00:00:00Z --to 2026-11-29T00:00:00Z',
  );
}
