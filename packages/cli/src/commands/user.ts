import {
  ChangeUserEmail,
  CreateUser,
  DeleteUser,
  InviteUser,
  ListUsers,
  RequestPasswordReset,
  RevokeSessions,
  SetPassword,
  SetUserRole,
  OPERATOR,
  userRoles,
  type User,
  type UserRecord,
} from '@hortus/core';
import { type Command, Option } from 'commander';
import { type RunIo } from '../io.js';
import { fields, say, table } from '../output.js';
import {
  consoleActor,
  createGroupOption,
  groupOption,
  listOrNote,
  outputFor,
  readPassword,
  requireGroup,
  storeFor,
  withExamples,
} from './shared.js';

function showUser(user: User): string {
  return fields([
    ['ID', user.id],
    ['Name', `${user.firstName} ${user.lastName}`], // cell() escapes the joined name
    ['Email', user.email],
    ['Group', user.group],
    ['Role', user.role],
  ]);
}

const originLabels: Record<UserRecord['origin'], string> = {
  signup: 'sign-up',
  invitation: 'invitation',
  admin: 'sign-up with an admin key',
  cli: 'CLI',
  migration: 'migration',
  unknown: 'unknown',
};

function showUsers(users: readonly UserRecord[]): string {
  return listOrNote(users, 'No users.', (rows) =>
    table(
      ['ID', 'EMAIL', 'GROUP', 'ROLE', 'CREATED', 'HOW'],
      rows.map((user) => [
        user.id,
        user.email,
        user.group,
        user.role,
        user.createdAt ?? 'unknown',
        originLabels[user.origin],
      ]),
    ),
  );
}

export function registerUserCommands(program: Command, io: RunIo): void {
  const store = storeFor(io);
  const user = withExamples(
    program.command('user').description('create users, set passwords, reset links, sessions and invitations'),
    'hortus user change-email ada@example.org new@example.org',
  );
  withExamples(
    user
      .command('create')
      .description(
        'create a user (with --password-stdin they can log in; without, set-password or reset-link gives the first)',
      )
      .requiredOption('--first-name <text>', 'first name')
      .requiredOption('--last-name <text>', 'last name')
      .requiredOption('--email <address>', 'e-mail address, unique among users (ignoring case)')
      .addOption(groupOption())
      .option('--password-stdin', 'read the password from stdin (never give it as an argument)')
      .addOption(
        new Option('--role <role>', 'what the user may do (an admin reaches every group)')
          .choices(userRoles)
          .default('operator'),
      )
      .addOption(createGroupOption())
      .action(
        async (
          options: {
            firstName: string;
            lastName: string;
            email: string;
            group: string;
            passwordStdin?: boolean;
            createGroup?: boolean;
            role: string;
          },
          command: Command,
        ) => {
          const { passwordStdin, createGroup, ...fields } = options;
          const password = passwordStdin === true ? await readPassword(io) : undefined;
          const created = await store(command, async (useCase) => {
            await requireGroup(useCase, fields.group, createGroup === true);
            return useCase(CreateUser).execute({
              actor: consoleActor(),
              ...fields,
              ...(password === undefined ? {} : { password }),
            });
          });
          outputFor(io, command).result(created, showUser);
        },
      ),
    'hortus user create --first-name Ada --last-name Grower --email ada@example.org --group greenhouse-1',
    'printf \'%s\' "$PASSWORD" | hortus user create --first-name Ada --last-name Grower --email ada@example.org --group greenhouse-1 --password-stdin',
    'printf \'%s\' "$PASSWORD" | hortus user create --first-name Root --last-name Admin --email admin@example.org --group greenhouse-1 --role admin --password-stdin',
  );
  withExamples(
    user
      .command('role')
      .description(
        'set what a user may do: viewer (reads its group), operator (also switches and edits its group), ' +
          'admin (also boxes, users and keys, every group); running servers apply it within AUTH_CACHE_MS',
      )
      .argument('<email>', "the user's e-mail")
      .argument('<role>', userRoles.join(' | '))
      .action(async (email: string, role: string, _options: object, command: Command) => {
        const updated = await store(command, (useCase) =>
          useCase(SetUserRole).byEmail({ email, role, actor: consoleActor() }),
        );
        outputFor(io, command).result(updated, showUser);
      }),
    'hortus user role ada@example.org viewer',
    'hortus user role admin@example.org admin',
  );
  withExamples(
    user
      .command('list')
      .description(
        'list every user with creation time and how it was made (sign-up, invitation, CLI, migration): ' +
          'review them before turning access control on',
      )
      .action(async (_options: object, command: Command) => {
        const users = await store(command, (useCase) => useCase(ListUsers).execute());
        outputFor(io, command).result(users, showUsers);
      }),
    'hortus user list',
    'hortus --json user list',
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
        const updated = await store(command, (useCase) =>
          useCase(SetPassword).execute({ actor: consoleActor(), email, password }),
        );
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
          useCase(RequestPasswordReset).linkFor({ actor: consoleActor(), email }),
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
        const revoked = await store(command, (useCase) =>
          useCase(RevokeSessions).execute({ actor: consoleActor(), email }),
        );
        outputFor(io, command).result(
          revoked,
          (done) =>
            say`Ended every log-in session of ${done.email} (user ${done.id}): tokens and cookies issued before now are refused, on running servers within AUTH_CACHE_MS. They log in again with their password.`,
        );
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
          useCase(InviteUser).execute({ actor: consoleActor(), email, group: options.group }),
        );
        outputFor(io, command).result(
          { ...invitation, code },
          () =>
            `${code}\n\nValid once within 7 days, for ${invitation.email} in group ${invitation.group}: send it as ` +
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
        const deleted = await store(command, (useCase) =>
          useCase(DeleteUser).execute({ actor: consoleActor(), email }),
        );
        outputFor(io, command).result(
          deleted,
          (done) =>
            say`Deleted user ${done.email} (${done.id}, group ${done.group}): their log-in tokens and cookies are refused from now on, on running servers within AUTH_CACHE_MS. Their e-mail is free again.`,
        );
      }),
    'hortus user delete ada@example.org',
  );
  withExamples(
    user
      .command('change-email')
      .description("change a user's e-mail address; a pending reset link of the user is voided")
      .argument('<user>', "the user's current e-mail (or their id, as `user list` shows it)")
      .argument('<newEmail>', 'the new e-mail address')
      .action(async (user: string, newEmail: string, _options: object, command: Command) => {
        const updated = await store(command, (useCase) =>
          user.includes('@')
            ? useCase(ChangeUserEmail).byEmail({ email: user, newEmail, actor: consoleActor() }, OPERATOR)
            : useCase(ChangeUserEmail).execute({ userId: user, newEmail, actor: consoleActor() }, OPERATOR),
        );
        outputFor(io, command).result(updated, showUser);
      }),
    'hortus user change-email ada@example.org ada@grower.org',
  );
}
