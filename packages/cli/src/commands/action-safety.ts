import {
  durationText,
  ListActionSafety,
  NotFoundError,
  SetActionSafety,
  type ActionSafetyView,
} from '@hortus/core';
import { type Command } from 'commander';
import { type RunIo } from '../io.js';
import { fields, localTime } from '../output.js';
import { UsageError } from '../exit-codes.js';
import { consoleActor, durationOption } from './shared.js';
import { groupOption, outputFor, storeFor, withExamples } from './shared.js';

const safeChoices = ['off', 'on', 'hold', 'default'];

function parseSafe(text: string): string {
  const given = text.trim().toLowerCase();
  if (!safeChoices.includes(given))
    throw new UsageError(`--safe must be one of ${safeChoices.join(', ')}; got "${text}"`);
  return given;
}

function parseStaleAfter(text: string): number | 'default' {
  if (text.trim() === 'default') return 'default';
  const parsed = durationOption('--stale-after')(text);
  if (parsed === 'off') throw new UsageError('--stale-after must be a duration such as 15m, or default');
  return parsed;
}

function showSafety(view: ActionSafetyView): string {
  const freshness =
    view.staleAfterMs === undefined
      ? 'none (no sensor rules: never in safe mode)'
      : `${durationText(view.staleAfterMs)}${view.staleAfterChosen ? '' : ' (default)'}`;
  return fields([
    ['Group', view.group],
    ['Object', view.object],
    ['Safe state', view.safe],
    ['Inputs', view.topics.length === 0 ? 'none' : view.topics.join(', ')],
    ['Stale after', freshness],
    [
      'Safe mode',
      view.since === undefined
        ? 'no'
        : `since ${localTime(view.since)}: no fresh reading of ${(view.silentTopics ?? []).join(', ')}`,
    ],
  ]);
}

/** `hortus action safety`: shows or sets an action's safe state and freshness limit (see docs/automations.md). */
export function registerActionSafetyCommand(action: Command, io: RunIo): void {
  const store = storeFor(io);
  withExamples(
    action
      .command('safety')
      .description(
        'show or set the safe state of an action (off, on or hold) and how long its sensors stay fresh: ' +
          'when every sensor its rules read has gone stale, the engine switches it to its safe state once',
      )
      .argument('<object>', 'object name')
      .addOption(groupOption())
      .option(
        '--safe <state>',
        'off, on, hold, or default (hold for ventilator_*, off for the rest)',
        parseSafe,
      )
      .option(
        '--stale-after <duration>',
        'readings older than this are stale: 15m, 1h (10 minutes to 7 days), or default',
        parseStaleAfter,
      )
      .action(
        async (
          object: string,
          options: { group: string; safe?: string; staleAfter?: number | 'default' },
          command: Command,
        ) => {
          const view = await store(command, async (useCase) => {
            if (options.safe !== undefined || options.staleAfter !== undefined)
              await useCase(SetActionSafety).execute({
                actor: consoleActor(),
                group: options.group,
                object,
                safe: options.safe === 'default' ? null : options.safe,
                staleAfterMs: options.staleAfter === 'default' ? null : options.staleAfter,
              });
            const [found] = await useCase(ListActionSafety).execute({ group: options.group, object });
            if (found === undefined)
              throw new NotFoundError('action', `no action ${object} in group ${options.group}`);
            return found;
          });
          outputFor(io, command).result(view, showSafety);
        },
      ),
    'hortus action safety heater_1 --group greenhouse-1',
    'hortus action safety pump_1 --group greenhouse-1 --safe off --stale-after 15m',
    'hortus action safety ventilator_1 --group greenhouse-1 --safe default',
  );
}
