import { randomBytes } from 'node:crypto';
import {
  alertEvents,
  BOX_ALERTS_KEY,
  ConfigureGroupNotify,
  ConflictError,
  CreateGroup,
  type DeletedGroup,
  DeleteGroup,
  durationText,
  GetGroup,
  type Group,
  groupPackages,
  ListGroups,
  maskWebhookUrl,
  readBoxAlerts,
  SetBoxAlert,
  SetGroupRetention,
  SetTopicAlert,
  type TopicRange,
  UpdateGroupSettings,
  watchedRanges,
  webhookFormats,
} from '@hortus/core';
import { type Command, Option } from 'commander';
import { UsageError } from '../exit-codes.js';
import { type RunIo } from '../io.js';
import { fields, say, table } from '../output.js';
import { registerGroupMetricsCommand } from './group-metrics.js';
import { registerGroupStageCommand } from './group-stage.js';
import { readSecret } from './secret-input.js';
import {
  durationOption,
  jsonArgument,
  listOrNote,
  outputFor,
  parseDelay,
  storeFor,
  withExamples,
} from './shared.js';

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

export function registerGroupCommands(program: Command, io: RunIo): void {
  const store = storeFor(io);
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
  registerGroupAlertCommand(group, io);
  registerGroupMetricsCommand(group, io);
  registerGroupStageCommand(group, io);
  withExamples(
    group
      .command('notify')
      .description(
        'show or change where alerts of a group are sent besides e-mail (webhooks), and which events',
      )
      .argument('<name>', 'group name')
      .option(
        '--add-webhook <url>',
        'POST each message as JSON to this http(s) URL, signed the Standard Webhooks way',
      )
      .option(
        '--secret-stdin',
        'read the signing secret for --add-webhook from stdin (whsec_ + base64 of 24-64 bytes, or any 16+ characters; generated when none is given)',
      )
      .option('--secret-file <path>', 'read the key for --add-webhook from this file')
      .addOption(
        new Option(
          '--secret <text>',
          'the key as an argument (deprecated: others see it in the process list)',
        ).hideHelp(),
      )
      .addOption(
        new Option(
          '--format <format>',
          "body for --add-webhook: json (Hortus's own) or the shape of ntfy, gotify, slack, discord",
        )
          .choices(webhookFormats)
          .default('json'),
      )
      .option('--remove-webhook <url>', 'stop sending to this URL (whole, or masked as the listing shows it)')
      .option(
        '--events <events...>',
        `what to send, among ${alertEvents.join(', ')} (default: opened resolved no-data)`,
      )
      .action(
        async (
          name: string,
          options: {
            addWebhook?: string;
            secret?: string;
            secretStdin?: boolean;
            secretFile?: string;
            removeWebhook?: string;
            events?: string[];
            format: string;
          },
          command: Command,
        ) => {
          const given = [
            options.secret !== undefined,
            options.secretStdin === true,
            options.secretFile !== undefined,
          ];
          if (given.filter(Boolean).length > 1)
            throw new UsageError('give one of --secret-stdin, --secret-file and --secret');
          if (given.includes(true) && options.addWebhook === undefined)
            throw new UsageError('--secret-stdin, --secret-file and --secret go with --add-webhook');
          if (options.format !== 'json' && options.addWebhook === undefined)
            throw new UsageError('--format goes with --add-webhook');
          if (options.secret !== undefined)
            io.stderr.write(
              'hortus: warning: --secret shows the key to every user of this machine (process list); use --secret-stdin or --secret-file\n',
            );
          const secret =
            options.secret ??
            (await readSecret(io, {
              ...(options.secretStdin === true ? { stdin: true } : {}),
              ...(options.secretFile === undefined ? {} : { file: options.secretFile }),
            })) ??
            // The Standard Webhooks form, which receivers' libraries take as it is.
            `whsec_${randomBytes(32).toString('base64')}`;
          const events = options.events?.flatMap((event) => event.split(',')).filter((event) => event !== '');
          const settings = await store(command, (useCase) =>
            useCase(ConfigureGroupNotify).execute({
              group: name,
              ...(options.addWebhook === undefined
                ? {}
                : { addWebhook: { url: options.addWebhook, secret, format: options.format } }),
              ...(options.removeWebhook === undefined ? {} : { removeWebhook: options.removeWebhook }),
              ...(events === undefined ? {} : { events }),
            }),
          );
          // A generated secret is printed once, when it is set; afterwards only its end, to tell hooks apart.
          // URLs are masked: their path, query or user:password@ often is the hook's token.
          const added =
            options.addWebhook === undefined || given.includes(true)
              ? undefined
              : new URL(options.addWebhook).toString();
          const shown = {
            ...settings,
            webhooks: settings.webhooks.map((hook) => ({
              url: maskWebhookUrl(hook.url),
              format: hook.format ?? 'json',
              secret: hook.url === added ? hook.secret : `…${hook.secret.slice(-4)}`,
            })),
          };
          outputFor(io, command).result(shown, (view) =>
            fields([
              ['Group', view.group],
              ['E-mail', view.email ?? '(off: set emailNotification and email in the group settings)'],
              ['Events', view.events.join(', ')],
              // One row per hook: a value's line breaks would be printed escaped.
              ...(view.webhooks.length === 0
                ? [['Webhooks', '(none)'] as const]
                : view.webhooks.map(
                    (h, i) => [`Webhook ${i + 1}`, `${h.url} (${h.format}, secret ${h.secret})`] as const,
                  )),
              ...(view.cancelled === undefined
                ? []
                : [['Cancelled', `${view.cancelled} queued message(s) of the removed webhook`] as const]),
            ]),
          );
        },
      ),
    'hortus group notify greenhouse-1',
    'hortus group notify greenhouse-1 --add-webhook https://ntfy.example.org/greenhouse --format ntfy',
    'hortus group notify greenhouse-1 --add-webhook https://hooks.example.org/x --secret-file /run/secrets/hook',
    'hortus group notify greenhouse-1 --events opened resolved no-data switched',
  );
}

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
];

interface AlertOptions {
  min?: string;
  max?: string;
  hysteresis?: string;
  delay?: number | 'off';
  /** `--no-data`: commander names it `data`, true when the option is not given (see noDataOf). */
  data?: number | 'off' | boolean;
  box?: string;
  remove?: boolean;
}

/**
 * The `--no-data` value. Commander takes an option spelt `--no-…` as the negation of `--…`: it names it
 * `data` and sets it true when the option is absent, so only a parsed value counts.
 */
function noDataOf(options: AlertOptions): number | 'off' | undefined {
  return typeof options.data === 'boolean' ? undefined : options.data;
}

function registerGroupAlertCommand(group: Command, io: RunIo): void {
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
      .option('--remove', "drop the topic's range and deadline (or the box's deadline)")
      .action(async (name: string, topic: string | undefined, options: AlertOptions, command: Command) => {
        if (options.box !== undefined) return setBoxAlert(name, topic, options, command);
        const noData = noDataOf(options);
        const changes = [options.min, options.max, options.hysteresis, options.delay, noData].some(
          (v) => v !== undefined,
        );
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
                  ['TOPIC', 'MIN', 'MAX', 'HYSTERESIS', 'DELAY', 'NO DATA', 'FROM'],
                  rows.map((r) => [...row(r.topic, r), r.source]),
                ),
              ),
              ...(boxes.length === 0
                ? []
                : [
                    '',
                    table(
                      ['BOX', 'NO DATA'],
                      boxes.map((b) => [b.box, durationText(b.noDataMs)]),
                    ),
                  ]),
            ].join('\n'),
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
            ...(noData === undefined ? {} : { noDataMs: orNull(noData) }),
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
              ]),
        );
      }),
    'hortus group alert greenhouse-1 esp/air/humidity --min 40 --max 85 --hysteresis 3 --delay 5m',
    'hortus group alert greenhouse-1 co2 --max 1500',
    'hortus group alert greenhouse-1 esp/air/humidity --no-data 15m',
    "hortus group alert greenhouse-1 --box '*' --no-data 30m",
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
      throw new UsageError('--box takes --no-data or --remove only, no topic');
    const noData = noDataOf(options);
    if ((noData === undefined) === (options.remove !== true))
      throw new UsageError('--box needs either --no-data <duration> or --remove');
    const result = await store(command, (useCase) =>
      useCase(SetBoxAlert).execute({
        group: name,
        deviceId: options.box,
        ...(options.remove === true ? { remove: true } : { noDataMs: orNull(noData) }),
      }),
    );
    outputFor(io, command).result(result, (view) =>
      view.alert === undefined
        ? `No no-data deadline for box ${view.deviceId} in group ${view.group} (removed).`
        : fields([
            ['Group', view.group],
            ['Box', view.deviceId],
            ['No data', durationText(view.alert.noDataMs)],
          ]),
    );
  }
}
