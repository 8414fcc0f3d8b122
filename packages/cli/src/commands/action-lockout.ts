import {
  type ActionLockoutsView,
  AddActionLockout,
  ListActionLockouts,
  RemoveActionLockout,
} from '@hortus/core';
import { type Command } from 'commander';
import { type RunIo } from '../io.js';
import { say, table } from '../output.js';
import { UsageError } from '../exit-codes.js';
import { consoleActor, groupOption, listOrNote, outputFor, storeFor, withExamples } from './shared.js';

interface LockoutOptions {
  group: string;
  sensor?: string;
  below?: string;
  above?: string;
  while?: string;
  is?: string;
  remove?: string;
}

function lockoutRows(view: ActionLockoutsView): string[][] {
  return view.lockouts.map((lockout) => [
    String(lockout.id),
    lockout.text,
    lockout.active ? `blocks: ${lockout.reason ?? ''}` : 'free',
  ]);
}

function showLockouts(view: ActionLockoutsView): string {
  const head = say`${view.object} in group ${view.group} is ${view.value}.`;
  if (view.lockouts.length === 0) return `${head}\nNo lockouts.`;
  return `${head}\n${table(['ID', 'LOCKOUT', 'NOW'], lockoutRows(view))}`;
}

/**
 * `hortus action lockout` adds, removes or shows the lockouts of one action; `hortus action lockouts` lists
 * those of a group (see docs/automations.md, Safety).
 */
export function registerActionLockoutCommands(action: Command, io: RunIo): void {
  const store = storeFor(io);
  withExamples(
    action
      .command('lockout')
      .description(
        'show, add or remove the lockouts of an action: the automation engine never switches it on while a ' +
          'sensor is below or above a value, or while another action is on or off, and switches it off ' +
          'when a lockout becomes active (a stale or missing input counts as blocking; a person may still ' +
          'switch it on)',
      )
      .argument('<object>', 'object name')
      .addOption(groupOption())
      .option(
        '--sensor <name|topic>',
        'a sensor name (temperature, moisture1, ...) or a topic such as esp/air/co2',
      )
      .option('--below <value>', 'with --sensor: blocked while its newest reading is below this')
      .option('--above <value>', 'with --sensor: blocked while its newest reading is above this')
      .option('--while <object>', 'blocked while this other action of the group ...')
      .option('--is <on|off>', '... has this value (with --while)')
      .option('--remove <id|all>', 'remove the lockout of that ID (as listed), or all of them')
      .action(async (object: string, options: LockoutOptions, command: Command) => {
        const adding = [options.sensor, options.below, options.above, options.while, options.is].some(
          (given) => given !== undefined,
        );
        if (adding && options.remove !== undefined)
          throw new UsageError('--remove takes no --sensor, --below, --above, --while or --is');
        const view = await store(command, async (useCase) => {
          if (options.remove !== undefined)
            await useCase(RemoveActionLockout).execute({
              actor: consoleActor(),
              group: options.group,
              object,
              id: options.remove,
            });
          else if (adding)
            await useCase(AddActionLockout).execute({
              actor: consoleActor(),
              group: options.group,
              object,
              lockout: {
                sensor: options.sensor,
                below: options.below,
                above: options.above,
                while: options.while,
                is: options.is,
              },
            });
          const [found] = await useCase(ListActionLockouts).execute({ group: options.group, object });
          return found as ActionLockoutsView;
        });
        outputFor(io, command).result(view, showLockouts);
      }),
    'hortus action lockout pump_1 --group greenhouse-1 --sensor temperature --below 2',
    'hortus action lockout pump_1 --group greenhouse-1 --sensor esp/ground/moisture/1 --above 70',
    'hortus action lockout heater_1 --group greenhouse-1 --while ventilator_1 --is on',
    'hortus action lockout pump_1 --group greenhouse-1',
    'hortus action lockout pump_1 --group greenhouse-1 --remove 2',
  );
  withExamples(
    action
      .command('lockouts')
      .description('list the lockouts of every action of a group, and whether each blocks now')
      .addOption(groupOption())
      .action(async (options: { group: string }, command: Command) => {
        const views = await store(command, (useCase) =>
          useCase(ListActionLockouts).execute({ group: options.group }),
        );
        outputFor(io, command).result(views, (all) =>
          listOrNote(all, say`No lockouts in group ${options.group}.`, (rows) =>
            table(
              ['OBJECT', 'VALUE', 'ID', 'LOCKOUT', 'NOW'],
              rows.flatMap((view) => lockoutRows(view).map((row) => [view.object, view.value, ...row])),
            ),
          ),
        );
      }),
    'hortus action lockouts --group greenhouse-1',
  );
}
