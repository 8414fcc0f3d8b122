import { type AuditEntry, ListAuditTrail } from '@hortus/core';
import { type Command, Option } from 'commander';
import { type RunIo } from '../io.js';
import { table } from '../output.js';
import { listOrNote, outputFor, storeFor, withExamples } from './shared.js';

/** Who, as people read it: the e-mail or OS user when known, else the kind and id. */
function who(entry: AuditEntry): string {
  const { kind, id, name } = entry.actor;
  return name === undefined ? (id === undefined ? kind : `${kind} ${id}`) : `${kind} ${name}`;
}

/** A value of the trail on one line, cut so a table stays readable (--json has it whole). */
function shown(value: unknown): string {
  if (value === undefined) return '-';
  const text = JSON.stringify(value);
  return text.length > 60 ? `${text.slice(0, 59)}…` : text;
}

export function registerAuditCommand(program: Command, io: RunIo): void {
  const store = storeFor(io);
  withExamples(
    program
      .command('audit')
      .description(
        'show the audit trail: who changed which configuration (settings, ranges, rules, limits, boxes, keys, users), before and after, newest first',
      )
      .addOption(new Option('-g, --group <group>', "only this group's changes"))
      .addOption(new Option('--since <time>', 'only changes at or after this ISO-8601 time'))
      .addOption(new Option('--limit <n>', 'how many, newest first (1 to 1000)').default('100'))
      .action(async (options: { group?: string; since?: string; limit: string }, command: Command) => {
        const entries = await store(command, (useCase) =>
          useCase(ListAuditTrail).execute({
            ...(options.group === undefined ? {} : { group: options.group }),
            ...(options.since === undefined ? {} : { since: options.since }),
            limit: options.limit,
          }),
        );
        outputFor(io, command).result(entries, (all) =>
          listOrNote(all, 'No changes recorded.', (rows) =>
            table(
              ['TIME', 'BY', 'ACTION', 'TARGET', 'GROUP', 'BEFORE', 'AFTER'],
              rows.map((e) => [
                e.at,
                who(e),
                e.action,
                e.target,
                e.group ?? '-',
                shown(e.before),
                shown(e.after),
              ]),
            ),
          ),
        );
      }),
    'hortus audit',
    'hortus audit --group greenhouse-1 --since 2026-11-01T00:00:00Z',
    'hortus audit --json',
  );
}
