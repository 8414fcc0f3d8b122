import {
  type AccessKey,
  accessKeyKinds,
  CreateAccessKey,
  type CreatedAccessKey,
  ListAccessKeys,
  RevokeAccessKey,
} from '@hortus/core';
import { type Command, Option } from 'commander';
import { consoleActor, withExamples } from './shared.js';
import { fields, Output, table } from '../output.js';
import { type RunIo } from '../io.js';
import { withUseCases } from '../app/data-commands.js';

const groupsText = (key: AccessKey): string => (key.groups.length === 0 ? 'all' : key.groups.join(', '));

function showKey(key: AccessKey): string {
  return fields([
    ['ID', key.id],
    ['Name', key.name],
    ['Kind', key.kind],
    ['Groups', groupsText(key)],
    ['Created', key.createdAt],
    ['Revoked', key.revokedAt ?? 'no'],
  ]);
}

function showCreated({ key, secret }: CreatedAccessKey): string {
  return [
    showKey(key),
    '',
    'Secret (shown only now, store it safely; Hortus keeps only its hash):',
    `  ${secret}`,
    '',
    `Clients send it as the header:  Authorization: Bearer ${secret}`,
    'With AUTH=auto (the default) a server requires keys on every route but /healthz and /readyz',
    'as soon as one key exists.',
  ].join('\n');
}

/** `--group a --group b` collects both. */
const collect = (value: string, previous: string[] | undefined): string[] => [...(previous ?? []), value];

/** `hortus keys create|list|revoke`: access keys for the HTTP API, on the configured persistent store. */
export function registerKeyCommands(program: Command, io: RunIo): void {
  const output = (command: Command): Output =>
    new Output(io.stdout, command.optsWithGlobals<{ json?: boolean }>().json === true);

  const keys = withExamples(
    program.command('keys').description('create, list and revoke access keys for the HTTP API'),
    'hortus keys create --name web-client --kind client --group greenhouse-1',
  );
  withExamples(
    keys
      .command('create')
      .description(
        'create an access key and print its secret once; admin keys reach everything, client keys the API ' +
          '(of their groups, if any are named), device keys only send readings for their one group',
      )
      .requiredOption('-n, --name <name>', 'what the key is for, e.g. the box or the person')
      .addOption(new Option('-k, --kind <kind>', 'kind of key').choices(accessKeyKinds).makeOptionMandatory())
      .addOption(
        new Option('-g, --group <name>', 'limit the key to this group (repeat for several)').argParser(
          collect,
        ),
      )
      .action(async (options: { name: string; kind: string; group?: string[] }, command: Command) => {
        const created = await withUseCases(io, 'keys create', (useCase) =>
          useCase(CreateAccessKey).execute({
            actor: consoleActor(),
            name: options.name,
            kind: options.kind,
            groups: options.group ?? [],
          }),
        );
        output(command).result(created, showCreated);
      }),
    'hortus keys create --name ops --kind admin',
    'hortus keys create --name box-17 --kind device --group greenhouse-1',
    'hortus keys create --name dashboard --kind client --group greenhouse-1 --group greenhouse-2',
  );
  withExamples(
    keys
      .command('list')
      .description('list every key, revoked ones included, oldest first (never a secret)')
      .action(async (_options: object, command: Command) => {
        const all = await withUseCases(io, 'keys list', (useCase) => useCase(ListAccessKeys).execute());
        output(command).result(all, (rows) =>
          rows.length === 0
            ? 'No access keys: the API is open (with AUTH=auto).'
            : table(
                ['ID', 'NAME', 'KIND', 'GROUPS', 'CREATED', 'REVOKED'],
                rows.map((key) => [
                  key.id,
                  key.name,
                  key.kind,
                  groupsText(key),
                  key.createdAt,
                  key.revokedAt,
                ]),
              ),
        );
      }),
    'hortus keys list --json',
  );
  withExamples(
    keys
      .command('revoke')
      .description('revoke a key; a running server refuses it within AUTH_CACHE_MS (5 s by default)')
      .argument('<id>', 'the key id, as keys list shows it')
      .action(async (id: string, _options: object, command: Command) => {
        const revoked = await withUseCases(io, 'keys revoke', (useCase) =>
          useCase(RevokeAccessKey).execute({ actor: consoleActor(), id }),
        );
        output(command).result(revoked, showKey);
      }),
    'hortus keys revoke 665f1c2e9b1d8a0012345678',
  );
}
