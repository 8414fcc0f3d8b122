import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import {
  type Action,
  ConflictError,
  alertEvents,
  ChangeUserEmail,
  ConfigureGroupNotify,
  CreateAction,
  CreateDevice,
  CreateGroup,
  DeleteAction,
  DeleteDevice,
  type DeletedGroup,
  DeleteGroup,
  SetGroupRetention,
  CreateUser,
  DeleteReadings,
  type DeleteReadingsResult,
  DeleteUser,
  InviteUser,
  RequestPasswordReset,
  RevokeSessions,
  SetPassword,
  type Device,
  GetAction,
  GetActionsOfGroup,
  GetGroup,
  GetLatestReading,
  GetLatestReadingsOfGroup,
  type Group,
  IgnoreNotifications,
  InvalidInputError,
  ListDevices,
  ListGroups,
  ListOpenNotifications,
  MAX_IGNORE_TIMES,
  OPERATOR,
  ReplaceAutomations,
  SeedDemo,
  SetActionValue,
  UpdateGroupSettings,
  type User,
  groupPackages,
  sensorTopics,
} from '@hortus/core';
import { type Command, Option } from 'commander';
import { UsageError } from './exit-codes.js';
import { exportReadings } from './export-readings.js';
import { DEFAULT_MAX_LINE_BYTES, importReadings } from './import-readings.js';
import { Output, fields, say, table } from './output.js';
import { type RunIo } from './run.js';
import { type UseCaseResolver, withUseCases } from './store.js';

/** Appends an "Example" section to a command's --help. */
export function withExamples(command: Command, ...examples: string[]): Command {
  const title = examples.length === 1 ? 'Example' : 'Examples';
  return command.addHelpText('after', `\n${title}:\n${examples.map((line) => `  $ ${line}`).join('\n')}\n`);
}

/** "device create" for the command `hortus device create`. */
function pathOf(command: Command): string {
  const names: string[] = [];
  for (let current: Command | null = command; current?.parent; current = current.parent) {
    names.unshift(current.name());
  }
  return names.join(' ');
}

function outputFor(io: RunIo, command: Command): Output {
  return new Output(io.stdout, command.optsWithGlobals<{ json?: boolean }>().json === true);
}

/** A JSON argument given inline, or read from a file when written `@path`. */
async function jsonArgument(text: string, field: string): Promise<unknown> {
  let source = text;
  if (text.startsWith('@')) {
    try {
      source = await readFile(text.slice(1), 'utf8');
    } catch (error) {
      throw new UsageError(`cannot read ${field} from ${text.slice(1)}: ${(error as Error).message}`);
    }
  }
  try {
    return JSON.parse(source) as unknown;
  } catch {
    throw InvalidInputError.forField(field, 'must be valid JSON (inline, or @file)');
  }
}

const groupOption = (): Option => new Option('-g, --group <name>', 'name of the group').makeOptionMandatory();

/**
 * A password from stdin (`--password-stdin`): never from argv, where other users of the machine see it.
 * One trailing line break (what `echo` and a typed line add) is not part of it.
 */
async function readPassword(io: RunIo): Promise<string> {
  let text = '';
  for await (const chunk of io.stdin ?? process.stdin) {
    text += typeof chunk === 'string' ? chunk : chunk.toString('utf8');
    if (text.length > 4096) throw new UsageError('the password on stdin is too long');
  }
  const password = text.replace(/\r?\n$/u, '');
  if (password === '') throw new UsageError('--password-stdin read an empty password');
  return password;
}

// ---- How results look to people ----

function showGroup(group: Group): string {
  return fields([
    ['Name', group.name],
    ['Package', group.package],
    ['Employees', group.employee.join(', ')],
    ['Settings', group.settings],
    [
      'Retention',
      group.retentionDays === undefined
        ? 'default (RETENTION_DAYS)'
        : group.retentionDays === 0
          ? 'off (kept forever)'
          : `${group.retentionDays} days`,
    ],
    ['ID', group.id],
  ]);
}

function showUser(user: User): string {
  return fields([
    ['ID', user.id],
    ['Name', `${user.firstName} ${user.lastName}`], // cell() escapes the joined name
    ['Email', user.email],
    ['Group', user.group],
  ]);
}

function showDevice(device: Device): string {
  return fields([
    ['Device ID', device.deviceId],
    ['Group', device.group],
    ['Type', device.type],
    ['ID', device.id],
  ]);
}

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

function showAutomations(action: Action): string {
  const timeRules = action.automations.flatMap((set) => set.timeAutomations);
  const sensorRules = action.automations.flatMap((set) => set.sensorAutomations);
  const lines = [say`${action.object} in group ${action.group} is ${action.value}.`];
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

function showDeletedGroup(result: DeletedGroup): string {
  return (
    say`Deleted group ${result.group}` +
    `${result.record ? '' : ' (it had no group record)'}:\n` +
    fields([
      ['Readings', result.readings],
      ['Devices', result.devices],
      ['Actions', result.actions],
      ['Notifications', result.notifications],
      ['Automation events', result.automationEvents],
      ['Access keys revoked', result.accessKeys],
    ])
  );
}

function showDeleted(result: DeleteReadingsResult): string {
  const of = result.topic === undefined ? 'every topic' : result.topic;
  const noun = result.deleted === 1 ? 'reading' : 'readings';
  return (
    say`Deleted ${result.deleted} ${noun} of group ${result.group} (${of}) ` +
    say`from ${result.from} to ${result.to}.`
  );
}

/** A sensor name (temperature, lux, ...) stands for its topic; anything else is a topic as it is. */
function sensorTopic(name: string): string {
  return (sensorTopics as Record<string, string>)[name] ?? name;
}

function listOrNote<T>(
  items: readonly T[],
  emptyNote: string,
  render: (items: readonly T[]) => string,
): string {
  return items.length === 0 ? emptyNote : render(items);
}

// ---- Commands ----

export function registerDataCommands(program: Command, io: RunIo): void {
  const store = <T>(command: Command, work: (useCase: UseCaseResolver) => Promise<T>): Promise<T> =>
    withUseCases(io, pathOf(command), work);

  // group
  const group = withExamples(
    program.command('group').description('create, show, list groups and replace their settings'),
    'hortus group list',
  );
  withExamples(
    group
      .command('create')
      .description('create a group')
      .argument('<name>', 'group name, used by every group route')
      .addOption(
        new Option('--package <size>', 'subscription package').choices(groupPackages).default('small'),
      )
      .option('--employee <names...>', 'user names of the people who work with the group')
      .option('--settings <json>', 'settings as JSON (inline or @file)')
      .action(
        async (
          name: string,
          options: { package: string; employee?: string[]; settings?: string },
          command: Command,
        ) => {
          const settings =
            options.settings === undefined ? undefined : await jsonArgument(options.settings, 'settings');
          const created = await store(command, (useCase) =>
            useCase(CreateGroup).execute({
              name,
              package: options.package,
              ...(options.employee === undefined ? {} : { employee: options.employee }),
              ...(settings === undefined ? {} : { settings }),
            }),
          );
          outputFor(io, command).result(created, showGroup);
        },
      ),
    'hortus group create greenhouse-1 --package medium --employee alice bob',
  );
  withExamples(
    group
      .command('show')
      .description('show one group')
      .argument('<name>', 'group name')
      .action(async (name: string, _options: object, command: Command) => {
        const found = await store(command, (useCase) => useCase(GetGroup).execute({ name }));
        outputFor(io, command).result(found, showGroup);
      }),
    'hortus group show greenhouse-1 --json',
  );
  withExamples(
    group
      .command('list')
      .description('list every group, by name')
      .action(async (_options: object, command: Command) => {
        const groups = await store(command, (useCase) => useCase(ListGroups).execute());
        outputFor(io, command).result(groups, (all) =>
          listOrNote(all, 'No groups yet.', (rows) =>
            table(
              ['NAME', 'PACKAGE', 'EMPLOYEES'],
              rows.map((g) => [g.name, g.package, g.employee.join(', ')]),
            ),
          ),
        );
      }),
    'hortus group list',
  );
  withExamples(
    group
      .command('retention')
      .description(
        'override RETENTION_DAYS for one group: raw readings older than <days> are deleted in the background; ' +
          'off keeps them forever, default follows RETENTION_DAYS again',
      )
      .argument('<name>', 'group name')
      .argument('<days>', 'whole days (1 to 36500), off, or default')
      .action(async (name: string, days: string, _options: object, command: Command) => {
        const updated = await store(command, (useCase) =>
          useCase(SetGroupRetention).execute({ group: name, days }),
        );
        outputFor(io, command).result(updated, showGroup);
      }),
    'hortus group retention greenhouse-1 90',
    'hortus group retention archive off',
  );
  withExamples(
    group
      .command('delete')
      .description(
        'delete a group with everything in it: readings, devices, actions and automations, notifications, ' +
          'the automation log, and access keys limited to it alone (revoked); a group holding data needs --yes',
      )
      .argument('<name>', 'group name')
      .option('--yes', 'confirm: delete even though the group holds data')
      .action(async (name: string, options: { yes?: boolean }, command: Command) => {
        const deleted = await store(command, (useCase) =>
          useCase(DeleteGroup)
            .execute({ group: name, confirm: options.yes === true })
            .catch((error: unknown) => {
              // The core says confirmation is needed; here that is the --yes flag.
              if (error instanceof ConflictError)
                throw new ConflictError('group', `${error.message} (--yes)`);
              throw error;
            }),
        );
        outputFor(io, command).result(deleted, showDeletedGroup);
      }),
    'hortus group delete greenhouse-old --yes',
  );
  withExamples(
    group
      .command('set-settings')
      .description('replace the settings of a group as a whole')
      .argument('<name>', 'group name')
      .argument('<json>', 'the new settings as JSON (inline or @file)')
      .action(async (name: string, json: string, _options: object, command: Command) => {
        const settings = await jsonArgument(json, 'settings');
        const updated = await store(command, (useCase) =>
          useCase(UpdateGroupSettings).execute({ name, settings }),
        );
        outputFor(io, command).result(updated, showGroup);
      }),
    `hortus group set-settings greenhouse-1 '[{"tempMin":15},{"tempMax":30}]'`,
    'hortus group set-settings greenhouse-1 @settings.json',
  );

  withExamples(
    group
      .command('notify')
      .description(
        'show or change where alerts of a group are sent besides e-mail (webhooks), and which events',
      )
      .argument('<name>', 'group name')
      .option('--add-webhook <url>', 'POST each message as signed JSON to this http(s) URL')
      .option(
        '--secret <text>',
        'HMAC-SHA256 key for --add-webhook (16+ characters; generated when not given)',
      )
      .option('--remove-webhook <url>', 'stop sending to this URL')
      .option(
        '--events <events...>',
        `what to send, among ${alertEvents.join(', ')} (default: opened resolved no-data)`,
      )
      .action(
        async (
          name: string,
          options: { addWebhook?: string; secret?: string; removeWebhook?: string; events?: string[] },
          command: Command,
        ) => {
          if (options.secret !== undefined && options.addWebhook === undefined)
            throw new UsageError('--secret goes with --add-webhook');
          const secret = options.secret ?? randomBytes(24).toString('base64url');
          const events = options.events?.flatMap((event) => event.split(',')).filter((event) => event !== '');
          const settings = await store(command, (useCase) =>
            useCase(ConfigureGroupNotify).execute({
              group: name,
              ...(options.addWebhook === undefined
                ? {}
                : { addWebhook: { url: options.addWebhook, secret } }),
              ...(options.removeWebhook === undefined ? {} : { removeWebhook: options.removeWebhook }),
              ...(events === undefined ? {} : { events }),
            }),
          );
          // A secret is printed once, when it is set; afterwards only its end, to tell hooks apart.
          const added = options.addWebhook === undefined ? undefined : new URL(options.addWebhook).toString();
          const shown = {
            ...settings,
            webhooks: settings.webhooks.map((hook) => ({
              url: hook.url,
              secret: hook.url === added ? hook.secret : `…${hook.secret.slice(-4)}`,
            })),
          };
          outputFor(io, command).result(shown, (view) =>
            fields([
              ['Group', view.group],
              ['E-mail', view.email ?? '(off: set emailNotification and email in the group settings)'],
              ['Events', view.events.join(', ')],
              [
                'Webhooks',
                view.webhooks.length === 0
                  ? '(none)'
                  : view.webhooks.map((h) => `${h.url} (secret ${h.secret})`).join('\n'),
              ],
            ]),
          );
        },
      ),
    'hortus group notify greenhouse-1',
    'hortus group notify greenhouse-1 --add-webhook https://ntfy.example.org/greenhouse',
    'hortus group notify greenhouse-1 --events opened resolved no-data switched',
  );

  // user
  const user = withExamples(
    program.command('user').description('create users, set passwords, reset links, sessions and invitations'),
    'hortus user change-email 000000000000000000000001 new@example.org',
  );
  withExamples(
    user
      .command('create')
      .description('create a user (with --password-stdin they can log in; without, they set one by a reset)')
      .requiredOption('--first-name <text>', 'first name')
      .requiredOption('--last-name <text>', 'last name')
      .requiredOption('--email <address>', 'e-mail address, unique among users (ignoring case)')
      .addOption(groupOption())
      .option('--password-stdin', 'read the password from stdin (never give it as an argument)')
      .action(
        async (
          options: {
            firstName: string;
            lastName: string;
            email: string;
            group: string;
            passwordStdin?: boolean;
          },
          command: Command,
        ) => {
          const { passwordStdin, ...fields } = options;
          const password = passwordStdin === true ? await readPassword(io) : undefined;
          const created = await store(command, (useCase) =>
            useCase(CreateUser).execute({ ...fields, ...(password === undefined ? {} : { password }) }),
          );
          outputFor(io, command).result(created, showUser);
        },
      ),
    'hortus user create --first-name Ada --last-name Grower --email ada@example.org --group greenhouse-1',
    'printf \'%s\' "$PASSWORD" | hortus user create --first-name Ada --last-name Grower --email ada@example.org --group greenhouse-1 --password-stdin',
  );
  withExamples(
    user
      .command('set-password')
      .description("set a user's password (read from stdin); every session of the user ends")
      .argument('<email>', "the user's e-mail")
      .requiredOption(
        '--password-stdin',
        'read the password from stdin (required: never give it as an argument)',
      )
      .action(async (email: string, _options: object, command: Command) => {
        const password = await readPassword(io);
        const updated = await store(command, (useCase) => useCase(SetPassword).execute({ email, password }));
        outputFor(io, command).result(updated, showUser);
      }),
    'printf \'%s\' "$PASSWORD" | hortus user set-password ada@example.org --password-stdin',
  );
  withExamples(
    user
      .command('reset-link')
      .description('print a fresh password reset link (valid 1 hour, once) for admins without mail')
      .argument('<email>', "the user's e-mail")
      .action(async (email: string, _options: object, command: Command) => {
        const { user: found, link } = await store(command, (useCase) =>
          useCase(RequestPasswordReset).linkFor({ email }),
        );
        outputFor(io, command).result({ userId: found.id, email: found.email, link }, () => link);
      }),
    'hortus user reset-link ada@example.org',
  );
  const sessions = user.command('sessions').description("end a user's log-in sessions");
  withExamples(
    sessions
      .command('revoke')
      .description(
        'end every log-in token of the user issued so far (within AUTH_CACHE_MS on running servers)',
      )
      .argument('<email>', "the user's e-mail")
      .action(async (email: string, _options: object, command: Command) => {
        const revoked = await store(command, (useCase) => useCase(RevokeSessions).execute({ email }));
        outputFor(io, command).result(revoked, showUser);
      }),
    'hortus user sessions revoke ada@example.org',
  );
  withExamples(
    user
      .command('invite')
      .description('print a code that lets this e-mail sign up into the group while access keys are required')
      .argument('<email>', 'the e-mail that may sign up')
      .addOption(groupOption())
      .action(async (email: string, options: { group: string }, command: Command) => {
        const { invitation, code } = await store(command, (useCase) =>
          useCase(InviteUser).execute({ email, group: options.group }),
        );
        outputFor(io, command).result(
          { ...invitation, code },
          () =>
            `${code}\n\nValid for 7 days, for ${invitation.email} in group ${invitation.group}: send it as ` +
            'the field "invitation" of POST /api/users.',
        );
      }),
    'hortus user invite eve@example.org --group greenhouse-1',
  );
  withExamples(
    user
      .command('delete')
      .description('delete a user; their log-in tokens stop working')
      .argument('<email>', "the user's e-mail")
      .action(async (email: string, _options: object, command: Command) => {
        const deleted = await store(command, (useCase) => useCase(DeleteUser).execute({ email }));
        outputFor(io, command).result(deleted, showUser);
      }),
    'hortus user delete ada@example.org',
  );
  withExamples(
    user
      .command('change-email')
      .description("change a user's e-mail address")
      .argument('<userId>', 'the user id')
      .argument('<newEmail>', 'the new e-mail address')
      .action(async (userId: string, newEmail: string, _options: object, command: Command) => {
        const updated = await store(command, (useCase) =>
          useCase(ChangeUserEmail).execute({ userId, newEmail }, OPERATOR),
        );
        outputFor(io, command).result(updated, showUser);
      }),
    'hortus user change-email 000000000000000000000001 ada@example.org',
  );

  // device
  const device = withExamples(
    program.command('device').description('register and list devices (boxes)'),
    'hortus device list --group greenhouse-1',
  );
  withExamples(
    device
      .command('create')
      .description('register a device')
      .argument('<deviceId>', "the box's MAC address in hex, unique across groups")
      .addOption(groupOption())
      .requiredOption('-t, --type <type>', 'device type, e.g. sensor-box')
      .action(async (deviceId: string, options: { group: string; type: string }, command: Command) => {
        const created = await store(command, (useCase) =>
          useCase(CreateDevice).execute({ deviceId, group: options.group, type: options.type }),
        );
        outputFor(io, command).result(created, showDevice);
      }),
    'hortus device create 24:6F:28:AA:00:01 --group greenhouse-1 --type sensor-box',
  );
  withExamples(
    device
      .command('list')
      .description('list the devices of a group')
      .addOption(groupOption())
      .action(async (options: { group: string }, command: Command) => {
        const devices = await store(command, (useCase) => useCase(ListDevices).execute(options));
        outputFor(io, command).result(devices, (all) =>
          listOrNote(all, say`No devices in group ${options.group}.`, (rows) =>
            table(
              ['DEVICE ID', 'TYPE', 'GROUP'],
              rows.map((d) => [d.deviceId, d.type, d.group]),
            ),
          ),
        );
      }),
    'hortus device list --group greenhouse-1 --json',
  );
  withExamples(
    device
      .command('delete')
      .description('delete a device of a group')
      .argument('<deviceId>', "the box's MAC address in hex")
      .addOption(groupOption())
      .action(async (deviceId: string, options: { group: string }, command: Command) => {
        const deleted = await store(command, (useCase) =>
          useCase(DeleteDevice).execute({ group: options.group, deviceId }),
        );
        outputFor(io, command).result(deleted, (d) => say`Deleted device ${d.deviceId} of group ${d.group}.`);
      }),
    'hortus device delete 24:6F:28:AA:00:01 --group greenhouse-1',
  );

  // action
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
      .action(
        async (
          object: string,
          options: { group: string; value: string; automations?: string },
          command: Command,
        ) => {
          const automations =
            options.automations === undefined
              ? undefined
              : await jsonArgument(options.automations, 'automations');
          const created = await store(command, (useCase) =>
            useCase(CreateAction).execute({
              group: options.group,
              object,
              value: options.value,
              ...(automations === undefined ? {} : { automations }),
            }),
          );
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
      .action(async (object: string, value: string, options: { group: string }, command: Command) => {
        const updated = await store(command, (useCase) =>
          useCase(SetActionValue).execute({ group: options.group, object, value }),
        );
        outputFor(io, command).result(updated, showAction);
      }),
    'hortus action set pump_1 on --group greenhouse-1',
  );
  withExamples(
    action
      .command('list')
      .description('list the actions of a group with their current values')
      .addOption(groupOption())
      .action(async (options: { group: string }, command: Command) => {
        const actions = await store(command, (useCase) => useCase(GetActionsOfGroup).execute(options));
        const rules = (a: Action, kind: 'timeAutomations' | 'sensorAutomations'): number =>
          a.automations.reduce((sum, set) => sum + set[kind].length, 0);
        outputFor(io, command).result(actions, (all) =>
          listOrNote(all, say`No actions in group ${options.group}.`, (rows) =>
            table(
              ['OBJECT', 'VALUE', 'TIME RULES', 'SENSOR RULES'],
              rows.map((a) => [
                a.object,
                a.value,
                rules(a, 'timeAutomations'),
                rules(a, 'sensorAutomations'),
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
          useCase(DeleteAction).execute({ group: options.group, object }),
        );
        outputFor(io, command).result(deleted, (a) => say`Deleted action ${a.object} of group ${a.group}.`);
      }),
    'hortus action delete pump_1 --group greenhouse-1',
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
        const result = await store(command, (useCase) =>
          replacement === undefined
            ? useCase(GetAction).execute({ group: options.group, object })
            : useCase(ReplaceAutomations).execute({ group: options.group, object, automations: replacement }),
        );
        outputFor(io, command).result(result, showAutomations);
      }),
    'hortus action automations pump_1 --group greenhouse-1',
    `hortus action automations pump_1 --group greenhouse-1 --replace '[{"timeAutomations":[{"action":"on","time":"06:30","frequency":"every day"}],"sensorAutomations":[]}]'`,
  );

  // notifications
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

  // readings
  const readings = withExamples(
    program.command('readings').description('import, export, delete and show sensor readings'),
    'hortus readings latest --group greenhouse-1',
  );
  withExamples(
    readings
      .command('import')
      .description(
        'import readings from a CSV file (header group,topic,value,time) or an NDJSON file, in batches; ' +
          'valid lines are stored, rejected lines are listed with their line numbers (exit 2 if any)',
      )
      .argument('<file>', 'the file to import (.csv, .ndjson or .jsonl; other names are sniffed)')
      .addOption(
        new Option('--format <format>', 'file format, instead of guessing').choices(['csv', 'ndjson']),
      )
      .addOption(
        new Option('--batch-size <n>', 'readings per batch (at most 5000)')
          .default(1000)
          .argParser((text) => Number(text)),
      )
      .addOption(
        new Option('--max-line-bytes <n>', 'longer lines are rejected and listed, never read whole')
          .default(DEFAULT_MAX_LINE_BYTES)
          .argParser((text) => Number(text)),
      )
      .action(
        async (
          file: string,
          options: { format?: 'csv' | 'ndjson'; batchSize: number; maxLineBytes: number },
          command: Command,
        ) => {
          await importReadings(io, outputFor(io, command), file, options, (work) => store(command, work));
        },
      ),
    'hortus readings import readings.csv',
    'hortus readings import box-dump.ndjson --json > summary.json',
  );
  withExamples(
    readings
      .command('export')
      .description(
        'write the readings of a group (of one topic, or of all) as CSV or NDJSON, by topic then time, ' +
          'page by page in constant memory; `readings import` reads the result back',
      )
      .addOption(groupOption())
      .option('--topic <topic>', `one topic, or a sensor name (${Object.keys(sensorTopics).join(', ')})`)
      .option('--from <time>', 'first time to include: RFC 3339 or a date')
      .option('--to <time>', 'last time to include: RFC 3339, or a date meaning the end of that day')
      .addOption(
        new Option('--format <format>', 'output format').choices(['csv', 'ndjson']).makeOptionMandatory(),
      )
      .option('-o, --output <file>', 'write to this file instead of stdout')
      .action(
        async (
          options: {
            group: string;
            topic?: string;
            from?: string;
            to?: string;
            format: 'csv' | 'ndjson';
            output?: string;
          },
          command: Command,
        ) => {
          const topic = options.topic === undefined ? undefined : sensorTopic(options.topic);
          const summary = await exportReadings(
            io,
            { ...options, ...(topic === undefined ? {} : { topic }) },
            (work) => store(command, work),
          );
          // On stdout the data is the output; a summary would corrupt it.
          if (options.output !== undefined) {
            outputFor(io, command).result(
              summary,
              (s) => say`Exported ${s.readings} readings of group ${s.group} to ${s.output} (${s.format}).`,
            );
          }
        },
      ),
    'hortus readings export --group greenhouse-1 --format csv --output greenhouse-1.csv',
    'hortus readings export --group greenhouse-1 --topic temperature --from 2025-06-01 --to 2025-06-30 --format ndjson | gzip > june.ndjson.gz',
  );
  withExamples(
    readings
      .command('delete')
      .description(
        'delete the readings of a group (of one topic, or of all) between two times, both included; ' +
          'aggregated history and ETags follow',
      )
      .addOption(groupOption())
      .option('--topic <topic>', `one topic, or a sensor name (${Object.keys(sensorTopics).join(', ')})`)
      .requiredOption('--from <time>', 'first time to delete: RFC 3339 (2025-06-15T10:00:00Z) or a date')
      .requiredOption('--to <time>', 'last time to delete: RFC 3339, or a date meaning the end of that day')
      .action(
        async (options: { group: string; topic?: string; from: string; to: string }, command: Command) => {
          const topic = options.topic === undefined ? undefined : sensorTopic(options.topic);
          const result = await store(command, (useCase) =>
            useCase(DeleteReadings).execute({
              group: options.group,
              from: options.from,
              to: options.to,
              ...(topic === undefined ? {} : { topic }),
            }),
          );
          outputFor(io, command).result(result, showDeleted);
        },
      ),
    'hortus readings delete --group greenhouse-1 --topic temperature --from 2099-01-01 --to 2099-12-31',
    'hortus readings delete --group greenhouse-1 --from 2025-06-15T10:00:00Z --to 2025-06-15T10:05:00Z --json',
  );
  withExamples(
    readings
      .command('latest')
      .description('show the newest reading of every topic of a group, or of one topic')
      .addOption(groupOption())
      .option('--topic <topic>', `one topic, or a sensor name (${Object.keys(sensorTopics).join(', ')})`)
      .action(async (options: { group: string; topic?: string }, command: Command) => {
        const topic = options.topic === undefined ? undefined : sensorTopic(options.topic);
        const latest = await store(command, (useCase) =>
          topic === undefined
            ? useCase(GetLatestReadingsOfGroup).execute({ group: options.group })
            : useCase(GetLatestReading).execute({ group: options.group, topic }),
        );
        outputFor(io, command).result(latest, (all) =>
          listOrNote(all, say`No readings in group ${options.group}.`, (rows) =>
            table(
              ['TOPIC', 'VALUE', 'TIME'],
              rows.map((r) => [r.topic, r.value, r.time]),
            ),
          ),
        );
      }),
    'hortus readings latest --group greenhouse-1',
    'hortus readings latest --group greenhouse-1 --topic temperature --json',
  );

  // seed
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
