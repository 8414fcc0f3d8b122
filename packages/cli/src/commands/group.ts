import { randomBytes } from 'node:crypto';
import {
  alertEvents,
  boxGroupName,
  ConfigureGroupNotify,
  ConflictError,
  CreateGroup,
  type DeletedGroup,
  DeleteGroup,
  GetGroup,
  type Group,
  groupPackages,
  ListGroups,
  SetGroupRetention,
  UpdateGroupSettings,
  webhookFormats,
} from '@hortus/core';
import { type Command, Option } from 'commander';
import { UsageError } from '../exit-codes.js';
import { type RunIo } from '../io.js';
import { fields, say, table } from '../output.js';
import { registerGroupAlertCommand } from './group-alert.js';
import { registerGroupMetricsCommand } from './group-metrics.js';
import { registerGroupStageCommand } from './group-stage.js';
import { readSecret } from './secret-input.js';
import { consoleActor, jsonArgument, listOrNote, outputFor, storeFor, withExamples } from './shared.js';

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
              actor: consoleActor(),
              name,
              package: options.package,
              ...(options.employee === undefined ? {} : { employee: options.employee }),
              ...(settings === undefined ? {} : { settings }),
            }),
          );
          outputFor(io, command).result(created, showGroup);
          const told = boxGroupName(created.name);
          // A documented decision (docs/boxes.md): such names work, so they are noted, not refused.
          if (told !== created.name)
            io.stderr.write(
              `hortus: note: firmware 1.0.4 boxes cannot carry ", \\ or control characters, so they are told this group as ${JSON.stringify(told)}; their readings still land in this group\n`,
            );
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
          useCase(SetGroupRetention).execute({ actor: consoleActor(), group: name, days }),
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
            .execute({ actor: consoleActor(), group: name, confirm: options.yes === true })
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
          useCase(UpdateGroupSettings).execute({ actor: consoleActor(), name, settings }),
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
              actor: consoleActor(),
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
              url: hook.masked,
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
