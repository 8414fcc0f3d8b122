import {
  type Action,
  type ActionActor,
  type ActionControls,
  CLI_ACTOR,
  CreateAction,
  durationText,
  GetGroup,
  limitPart,
  readActionControls,
  SetActionLimit,
  NotFoundError,
  DeleteAction,
  GetAction,
  GetActionsOfGroup,
  ListActionHistory,
  ReplaceAutomations,
  SetActionValue,
  switchStates,
} from '@hortus/core';
import { type Command } from 'commander';
import { type RunIo } from '../io.js';
import { type UseCaseResolver } from '../app/data-commands.js';
import { fields, localTime, say, table } from '../output.js';
import { UsageError } from '../exit-codes.js';
import { consoleActor, durationOption } from './shared.js';
import { registerActionSafetyCommand } from './action-safety.js';
import { registerActionLockoutCommands } from './action-lockout.js';
import { registerActionSimulationCommands } from './action-simulate.js';
import {
  createGroupOption,
  groupOption,
  jsonArgument,
  listOrNote,
  outputFor,
  requireGroup,
  storeFor,
  withExamples,
} from './shared.js';

function showAction(action: Action): string {
  const rules = (kind: 'timeAutomations' | 'sensorAutomations'): number =>
    action.automations.reduce((sum, set) => sum + set[kind].length, 0);
  return fields([
    ['Group', action.group],
    ['Object', action.object],
    ['Value', action.value],
    ['Automations', `${rules('timeAutomations')} time rules, ${rules('sensorAutomations')} sensor rules`],
  ]);
}

/**
 * The values an action is known to take: what boxes switch (on, off; all that rules may set) and the value it
 * has now (a box of its own kind may use another). Anything else is most likely a typo a box would not follow.
 */
function knownValues(action: Action): string[] {
  return [...new Set<string>([...switchStates, action.value])];
}

const limitText = (ms: number | undefined): string => (ms === undefined ? 'none' : durationText(ms));

/** An action with its on-time and cycling limits, kept in its group's settings; absent when it has none. */
type LimitedAction = Action & Pick<ActionControls, 'maxOnMs' | 'minOnMs' | 'minOffMs'>;

function withLimit(action: Action, controls: ActionControls | undefined): LimitedAction {
  return { ...action, ...limitPart(controls) };
}

/** The limits of a group's actions; none for a group that does not exist (its listing is empty). */
async function limitsOf(useCase: UseCaseResolver, group: string): Promise<Map<string, ActionControls>> {
  const found = await useCase(GetGroup)
    .execute({ name: group })
    .catch((error: unknown) => {
      if (error instanceof NotFoundError) return undefined;
      throw error;
    });
  return readActionControls(found?.settings);
}

/** The limits shown: the maximum on-time always, the minimum on-time and off-time when set. */
function limitFields(
  limit: Pick<ActionControls, 'maxOnMs' | 'minOnMs' | 'minOffMs'> | undefined,
): [string, string][] {
  return [
    ['Maximum on-time', limitText(limit?.maxOnMs)],
    ...(limit?.minOnMs === undefined
      ? []
      : [['Minimum on-time', limitText(limit.minOnMs)] as [string, string]]),
    ...(limit?.minOffMs === undefined
      ? []
      : [['Minimum off-time', limitText(limit.minOffMs)] as [string, string]]),
  ];
}

function showAutomations(action: LimitedAction): string {
  const timeRules = action.automations.flatMap((set) => set.timeAutomations);
  const sensorRules = action.automations.flatMap((set) => set.sensorAutomations);
  const lines = [
    say`${action.object} in group ${action.group} is ${action.value}.`,
    ...limitFields(action).map(([label, text]) => `${label}: ${text}`),
  ];
  if (timeRules.length === 0 && sensorRules.length === 0) lines.push('No automations.');
  if (timeRules.length > 0) {
    lines.push('', 'Time rules:');
    lines.push(
      table(
        ['ACTION', 'TIME', 'FREQUENCY'],
        timeRules.map((r) => [r.action, r.time, r.frequency]),
      ),
    );
  }
  if (sensorRules.length > 0) {
    lines.push('', 'Sensor rules:');
    lines.push(
      table(
        ['ACTION', 'SENSOR', 'CONDITION', 'VALUE'],
        sensorRules.map((r) => [r.action, r.sensor, r.condition, r.value]),
      ),
    );
  }
  return lines.join('\n');
}

/** `user 64b7…`, `key 64b8…`, `engine (time)`, `cli`: who it was, in the words of the actor kinds. */
function byWhom(actor: ActionActor): string {
  if (actor.id === undefined) return actor.kind;
  return actor.kind === 'engine' ? `engine (${actor.id})` : `${actor.kind} ${actor.id}`;
}

export function registerActionCommands(program: Command, io: RunIo): void {
  const store = storeFor(io);
  const action = withExamples(
    program.command('action').description('create actions (switchable objects), set them, read automations'),
    'hortus action set pump_1 on --group greenhouse-1',
  );
  withExamples(
    action
      .command('create')
      .description('create an action in a group')
      .argument('<object>', 'object name, e.g. pump_1, led_1, ventilator_1')
      .addOption(groupOption())
      .option('--value <value>', 'initial value', 'off')
      .option('--automations <json>', 'initial automations as JSON (inline or @file)')
      .addOption(createGroupOption())
      .action(
        async (
          object: string,
          options: { group: string; value: string; automations?: string; createGroup?: boolean },
          command: Command,
        ) => {
          const automations =
            options.automations === undefined
              ? undefined
              : await jsonArgument(options.automations, 'automations');
          const created = await store(command, async (useCase) => {
            await requireGroup(useCase, options.group, options.createGroup === true);
            return useCase(CreateAction).execute({
              actor: consoleActor(),
              group: options.group,
              object,
              value: options.value,
              ...(automations === undefined ? {} : { automations }),
            });
          });
          outputFor(io, command).result(created, showAction);
        },
      ),
    'hortus action create pump_1 --group greenhouse-1',
  );
  withExamples(
    action
      .command('set')
      .description('set the value of an action (what the box switches to)')
      .argument('<object>', 'object name')
      .argument('<value>', 'new value, usually on or off')
      .addOption(groupOption())
      .option('--force', 'set a value the action is not known to take (not on, off, or one its rules set)')
      .action(
        async (
          object: string,
          value: string,
          options: { group: string; force?: boolean },
          command: Command,
        ) => {
          const updated = await store(command, async (useCase) => {
            const action = await useCase(GetAction)
              .execute({ group: options.group, object })
              .catch((error: unknown) => {
                throw error instanceof NotFoundError
                  ? new NotFoundError('action', `no action ${object} in group ${options.group}`)
                  : error;
              });
            const known = knownValues(action);
            if (options.force !== true && !known.includes(value)) {
              throw new UsageError(
                `${object} is not known to take the value ${value} (known: ${known.join(', ')}); ` +
                  'add --force to set it anyway',
              );
            }
            return useCase(SetActionValue).execute({ group: options.group, object, value, actor: CLI_ACTOR });
          });
          outputFor(io, command).result(updated, showAction);
        },
      ),
    'hortus action set pump_1 on --group greenhouse-1',
  );
  withExamples(
    action
      .command('list')
      .description('list the actions of a group with their current values')
      .addOption(groupOption())
      .action(async (options: { group: string }, command: Command) => {
        const actions = await store(command, async (useCase) => {
          const found = await useCase(GetActionsOfGroup).execute(options);
          const limits = await limitsOf(useCase, options.group);
          return found.map((a) => withLimit(a, limits.get(a.object)));
        });
        const rules = (a: Action, kind: 'timeAutomations' | 'sensorAutomations'): number =>
          a.automations.reduce((sum, set) => sum + set[kind].length, 0);
        outputFor(io, command).result(actions, (all) =>
          listOrNote(all, say`No actions in group ${options.group}.`, (rows) =>
            table(
              ['OBJECT', 'VALUE', 'TIME RULES', 'SENSOR RULES', 'MAX ON', 'MIN ON', 'MIN OFF'],
              rows.map((a) => [
                a.object,
                a.value,
                rules(a, 'timeAutomations'),
                rules(a, 'sensorAutomations'),
                a.maxOnMs === undefined ? '-' : durationText(a.maxOnMs),
                a.minOnMs === undefined ? '-' : durationText(a.minOnMs),
                a.minOffMs === undefined ? '-' : durationText(a.minOffMs),
              ]),
            ),
          ),
        );
      }),
    'hortus action list --group greenhouse-1',
  );
  withExamples(
    action
      .command('delete')
      .description('delete an action with its automations (its retained MQTT topic is cleared)')
      .argument('<object>', 'object name')
      .addOption(groupOption())
      .action(async (object: string, options: { group: string }, command: Command) => {
        const deleted = await store(command, (useCase) =>
          useCase(DeleteAction).execute({ actor: consoleActor(), group: options.group, object }),
        );
        outputFor(io, command).result(deleted, (a) => say`Deleted action ${a.object} of group ${a.group}.`);
      }),
    'hortus action delete pump_1 --group greenhouse-1',
  );
  withExamples(
    action
      .command('history')
      .description('who switched the actions of a group (or one action) and when, newest first')
      .argument('[object]', 'only this action')
      .addOption(groupOption())
      .option('--limit <n>', 'how many entries (1 to 1000)', '20')
      .action(
        async (object: string | undefined, options: { group: string; limit: string }, command: Command) => {
          const entries = await store(command, (useCase) =>
            useCase(ListActionHistory).execute({ group: options.group, object, limit: options.limit }),
          );
          outputFor(io, command).result(entries, (all) =>
            listOrNote(
              all,
              object === undefined
                ? say`No switches recorded in group ${options.group}.`
                : say`No switches of ${object} recorded in group ${options.group}.`,
              (rows) =>
                table(
                  ['TIME', 'OBJECT', 'VALUE', 'BY'],
                  rows.map((entry) => [localTime(entry.at), entry.object, entry.value, byWhom(entry.actor)]),
                ),
            ),
          );
        },
      ),
    'hortus action history --group greenhouse-1',
    'hortus action history pump_1 --group greenhouse-1 --limit 5',
  );
  withExamples(
    action
      .command('automations')
      .description('show the automations of an action, or replace them with --replace')
      .argument('<object>', 'object name')
      .addOption(groupOption())
      .option('--replace <json>', 'replace the automations as a whole (JSON inline or @file)')
      .action(async (object: string, options: { group: string; replace?: string }, command: Command) => {
        const replacement =
          options.replace === undefined ? undefined : await jsonArgument(options.replace, 'automations');
        const result = await store(command, async (useCase) => {
          const found = await (replacement === undefined
            ? useCase(GetAction).execute({ group: options.group, object })
            : useCase(ReplaceAutomations).execute({
                actor: consoleActor(),
                group: options.group,
                object,
                automations: replacement,
              }));
          return withLimit(found, (await limitsOf(useCase, options.group)).get(found.object));
        });
        outputFor(io, command).result(result, showAutomations);
      }),
    'hortus action automations pump_1 --group greenhouse-1',
    `hortus action automations pump_1 --group greenhouse-1 --replace '[{"timeAutomations":[{"action":"on","time":"06:30","frequency":"every day"}],"sensorAutomations":[]}]'`,
  );
  withExamples(
    action
      .command('limit')
      .description(
        'show or set the on-time limits of an action: the automation engine switches it off when it has ' +
          'been on longer than its maximum, whoever switched it on, and never switches it sooner than its ' +
          'minimum on-time or off-time allow (kept in the group settings, actionLimits)',
      )
      .argument('<object>', 'object name')
      .addOption(groupOption())
      .option(
        '--max-on <duration>',
        'the longest it may stay on: 30m, 2h, 90s (1 minute to 7 days), or off to remove the limit',
        durationOption('--max-on'),
      )
      .option(
        '--min-on <duration>',
        'the engine switches it off no sooner after it went on: 2m (10 s to 1 day), or off',
        durationOption('--min-on'),
      )
      .option(
        '--min-off <duration>',
        'the engine switches it on no sooner after it went off: 5m (10 s to 1 day), or off',
        durationOption('--min-off'),
      )
      .action(
        async (
          object: string,
          options: {
            group: string;
            maxOn?: number | 'off';
            minOn?: number | 'off';
            minOff?: number | 'off';
          },
          command: Command,
        ) => {
          const given = (value: number | 'off' | undefined) => (value === 'off' ? null : value);
          const view = await store(command, async (useCase) => {
            if (options.maxOn !== undefined || options.minOn !== undefined || options.minOff !== undefined)
              return useCase(SetActionLimit).execute({
                actor: consoleActor(),
                group: options.group,
                object,
                maxOnMs: given(options.maxOn),
                minOnMs: given(options.minOn),
                minOffMs: given(options.minOff),
              });
            const found = await useCase(GetAction).execute({ group: options.group, object });
            const settings = (await useCase(GetGroup).execute({ name: options.group })).settings;
            const limit = limitPart(readActionControls(settings).get(found.object));
            return { group: found.group, object: found.object, ...(limit === undefined ? {} : { limit }) };
          });
          outputFor(io, command).result(view, (v) =>
            fields([['Group', v.group], ['Object', v.object], ...limitFields(v.limit)]),
          );
        },
      ),
    'hortus action limit pump_1 --group greenhouse-1 --max-on 30m',
    'hortus action limit pump_1 --group greenhouse-1 --min-on 2m --min-off 5m',
    'hortus action limit pump_1 --group greenhouse-1',
    'hortus action limit pump_1 --group greenhouse-1 --max-on off',
  );
  registerActionSafetyCommand(action, io);
  registerActionLockoutCommands(action, io);
  registerActionSimulationCommands(action, io);
}
