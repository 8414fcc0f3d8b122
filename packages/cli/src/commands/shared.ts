import { readFile } from 'node:fs/promises';
import { userInfo } from 'node:os';
import {
  type Actor,
  cliActor,
  CreateGroup,
  GetGroup,
  InvalidInputError,
  NotFoundError,
  sensorTopics,
} from '@hortus/core';
import { type Command, Option } from 'commander';
import { UsageError } from '../exit-codes.js';
import { type RunIo } from '../io.js';
import { Output } from '../output.js';
import { type UseCaseResolver, withUseCases } from '../app/data-commands.js';

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

export function outputFor(io: RunIo, command: Command): Output {
  return new Output(io.stdout, command.optsWithGlobals<{ json?: boolean }>().json === true);
}

/** A JSON argument given inline, or read from a file when written `@path`. */
export async function jsonArgument(text: string, field: string): Promise<unknown> {
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

export const groupOption = (): Option =>
  new Option('-g, --group <name>', 'name of the group').makeOptionMandatory();

export const createGroupOption = (): Option =>
  new Option('--create-group', 'create the group (package small) when it does not exist yet');

/**
 * A command that puts something into a group refuses a group that does not exist, so a typo in `--group`
 * does not quietly start a second group nobody looks at; `--create-group` creates it on purpose.
 */
export async function requireGroup(useCase: UseCaseResolver, name: string, create: boolean): Promise<void> {
  try {
    await useCase(GetGroup).execute({ name });
  } catch (error) {
    if (!(error instanceof NotFoundError)) throw error;
    if (!create) {
      throw new NotFoundError(
        'group',
        `group ${name} does not exist: create it with \`hortus group create ${name}\`, or add --create-group`,
      );
    }
    await useCase(CreateGroup).execute({ actor: consoleActor(), name });
  }
}

/**
 * A password from stdin (`--password-stdin`): never from argv, where other users of the machine see it.
 * One trailing line break (what `echo` and a typed line add) is not part of it.
 */
export async function readPassword(io: RunIo): Promise<string> {
  let text = '';
  for await (const chunk of io.stdin ?? process.stdin) {
    text += typeof chunk === 'string' ? chunk : chunk.toString('utf8');
    if (text.length > 4096) throw new UsageError('the password on stdin is too long');
  }
  const password = text.replace(/\r?\n$/u, '');
  if (password === '') throw new UsageError('--password-stdin read an empty password');
  return password;
}

/** A sensor name (temperature, lux, ...) stands for its topic; anything else is a topic as it is. */
export function sensorTopic(name: string): string {
  return (sensorTopics as Record<string, string>)[name] ?? name;
}

export function listOrNote<T>(
  items: readonly T[],
  emptyNote: string,
  render: (items: readonly T[]) => string,
): string {
  return items.length === 0 ? emptyNote : render(items);
}

/** Runs one command's work on the configured store, opened for it and closed after it. */
export type StoreRunner = <T>(command: Command, work: (useCase: UseCaseResolver) => Promise<T>) => Promise<T>;

export function storeFor(io: RunIo): StoreRunner {
  return (command, work) => withUseCases(io, pathOf(command), work);
}

const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/**
 * A parser of a duration option: `90s`, `5m`, `1h`, `250ms`, or plain seconds; `off` = none (kept as the
 * word: commander turns a parser's null into ''). Checked against the limits in the core.
 */
export function durationOption(option: string): (text: string) => number | 'off' {
  return (text) => {
    if (text.trim() === 'off') return 'off';
    const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/u.exec(text.trim());
    if (match === null) throw new UsageError(`${option} must be like 90s, 5m or 1h, or off; got "${text}"`);
    return Math.round(Number(match[1]) * (units[match[2] ?? 's'] ?? 1000));
  };
}

export const parseDelay = durationOption('--delay');

/**
 * Who runs this command, for the records that name their actor (the audit trail, acknowledgements): the
 * console, with the OS user when the system can say (a container without a passwd entry cannot: then $USER).
 */
export function consoleActor(): Actor {
  try {
    return cliActor(userInfo().username);
  } catch {
    return cliActor(process.env['USER'] ?? process.env['USERNAME']);
  }
}
