import { InstallationValues, type StoreSchema } from '@hortus/core';
import { type Command } from 'commander';
import { type AppConfig, loadConfig } from '../app/config.js';
import { newestBackup } from '../app/backups.js';
import { readStoreSchema } from '../app/data-commands.js';
import { describeUnknown, unknownVariables } from '../app/known-variables.js';
import { type RunIo } from '../io.js';
import { fields, localTime } from '../output.js';
import { outputFor, storeFor, withExamples } from './shared.js';

/** Settings whose value must not be printed: the key names them (`secret`, `password`, `token`). */
const secretKey = /secret|password|token/iu;
const MASK = '***';

/** The MQTT names the server would use, read from the store (see mqttIdentityOf). */
interface MqttNames {
  readonly clientId: string;
  readonly sharedGroup: string | false;
  /** Home Assistant discovery and `.../set` commands, commands following discovery unless set. */
  readonly discovery: boolean;
  readonly commands: boolean;
}

interface ConfigReport {
  readonly configuration: Readonly<Record<string, unknown>>;
  readonly mqtt?: MqttNames;
  /** The store's applied migrations (none for the in-memory store). */
  readonly schema?: StoreSchema;
  /** With BACKUP_DIR: the newest scheduled backup there and its age (null and null when there is none). */
  readonly backups?: { readonly newest: string | null; readonly ageSeconds: number | null };
  readonly warnings: readonly string[];
}

/**
 * `hortus config check`: the configuration the server would start with, every value resolved (defaults
 * included) and secrets masked, the MQTT names it would use, and the variables that look meant for Hortus
 * but are not read (a typo keeps a default silently otherwise). An unusable configuration exits 2 like
 * `serve`; unknown variables are warnings (exit 0).
 */
export function registerConfigCommands(program: Command, io: RunIo): void {
  const store = storeFor(io);
  const config = program.command('config').description('check the configuration');
  withExamples(
    config
      .command('check')
      .description(
        'print the effective configuration (secrets masked) and warn about unknown HORTUS_*, MONGODB_*, ' +
          'MQTT_* and misspelled variables',
      )
      .action(async (_options: object, command: Command) => {
        const loaded = loadConfig(io.env);
        const warnings = unknownVariables(io.env).map(describeUnknown);
        const mqtt =
          loaded.mqtt === undefined
            ? undefined
            : await store(command, async (useCase) => {
                const { homeAssistantSwitches, mqttIdentityOf } = await import('@hortus/mqtt');
                const mqttConfig = loaded.mqtt ?? { url: '' };
                const names = await mqttIdentityOf(mqttConfig, useCase(InstallationValues), '');
                // The random part is drawn anew by every server process: only its form is known here.
                const clientId =
                  mqttConfig.clientId ?? names.clientId.replace(/-[0-9a-f]+$/u, '-<random per process>');
                return { clientId, sharedGroup: names.sharedGroup, ...homeAssistantSwitches(mqttConfig) };
              });
        const schema = await readStoreSchema(io);
        const backups = loaded.backups === undefined ? undefined : newestBackupReport(loaded.backups.dir);
        const report: ConfigReport = {
          configuration: masked(withoutDuplicates(loaded)) as Record<string, unknown>,
          ...(mqtt === undefined ? {} : { mqtt }),
          ...(schema === undefined ? {} : { schema }),
          ...(backups === undefined ? {} : { backups }),
          warnings,
        };
        outputFor(io, command).result(report, showReport);
      }),
    'hortus config check',
    'hortus --env-file /etc/hortus.env config check --json',
  );
}

function showReport(report: ConfigReport): string {
  const pairs = flatten(report.configuration, '');
  if (report.mqtt !== undefined) {
    pairs.push(['mqtt.clientId (effective)', report.mqtt.clientId]);
    pairs.push([
      'mqtt.sharedGroup (effective)',
      report.mqtt.sharedGroup === false ? 'off' : report.mqtt.sharedGroup,
    ]);
    pairs.push(['mqtt.discovery (effective)', report.mqtt.discovery ? 'on' : 'off']);
    pairs.push(['mqtt.commands (effective)', report.mqtt.commands ? 'on' : 'off']);
  }
  if (report.schema !== undefined) pairs.push(...schemaLines(report.schema));
  if (report.backups !== undefined) {
    const { newest, ageSeconds } = report.backups;
    pairs.push([
      'backups.newest',
      newest === null || ageSeconds === null ? 'none yet' : `${newest} (${ageWords(ageSeconds)} old)`,
    ]);
  }
  const warnings =
    report.warnings.length === 0
      ? 'No unknown variables.'
      : report.warnings.map((warning) => `warning: ${warning}`).join('\n');
  return `${fields(pairs)}\n\n${warnings}`;
}

function newestBackupReport(dir: string): { newest: string | null; ageSeconds: number | null } {
  const now = Date.now();
  const newest = newestBackup(dir, now);
  return newest === undefined
    ? { newest: null, ageSeconds: null }
    : { newest: newest.file, ageSeconds: Math.round((now - newest.time) / 1000) };
}

/** `2 d 3 h`, `5 h 12 min`, `40 min`, `12 s`: an age for people. */
function ageWords(seconds: number): string {
  const minutes = Math.floor(seconds / 60);
  const hours = Math.floor(minutes / 60);
  const days = Math.floor(hours / 24);
  if (days > 0) return `${days} d ${hours % 24} h`;
  if (hours > 0) return `${hours} h ${minutes % 60} min`;
  return minutes > 0 ? `${minutes} min` : `${seconds} s`;
}

/** `store.schema 13 (this Hortus knows up to 15)`, then one line per applied migration with its date. */
function schemaLines(schema: StoreSchema): [string, unknown][] {
  const state =
    schema.version === schema.known
      ? 'up to date'
      : schema.version < schema.known
        ? `the next start migrates it to ${schema.known}`
        : 'newer than this Hortus: refused at start';
  const lines: [string, unknown][] = [
    ['store.schema', `${schema.version} (this Hortus knows up to ${schema.known}; ${state})`],
  ];
  for (const { version, appliedAt } of schema.applied) {
    lines.push([`store.migration ${version}`, `applied ${localTime(appliedAt)}`]);
  }
  return lines;
}

/** `mongo.uri` repeats `mongodbUri`: one is enough to read. */
function withoutDuplicates(config: AppConfig): object {
  const { mongo, ...rest } = config;
  if (mongo === undefined) return rest;
  const mongoRest = Object.fromEntries(Object.entries(mongo).filter(([name]) => name !== 'uri'));
  return Object.keys(mongoRest).length === 0 ? rest : { ...rest, mongo: mongoRest };
}

/** A copy with every secret replaced by `***` and the credentials of every URL masked. */
export function masked(value: unknown, key = ''): unknown {
  if (typeof value === 'string') {
    if (secretKey.test(key)) return MASK;
    return maskUrl(value);
  }
  if (Array.isArray(value)) return value.map((item) => masked(item, key));
  if (value instanceof Set) return [...value].map((item) => masked(item, key));
  if (value !== null && typeof value === 'object' && !(value instanceof Date)) {
    return Object.fromEntries(Object.entries(value).map(([name, item]) => [name, masked(item, name)]));
  }
  return value;
}

function maskUrl(text: string): string {
  if (!/^[a-z][a-z0-9+.-]*:\/\//iu.test(text)) return text;
  try {
    const url = new URL(text);
    if (url.username === '' && url.password === '') return text;
    url.username = MASK;
    url.password = '';
    return url.toString();
  } catch {
    return text;
  }
}

function flatten(value: unknown, path: string): [string, unknown][] {
  if (value !== null && typeof value === 'object' && !Array.isArray(value) && !(value instanceof Date)) {
    const entries = Object.entries(value);
    if (entries.length === 0) return [[path, '(none)']];
    return entries.flatMap(([name, item]) => flatten(item, path === '' ? name : `${path}.${name}`));
  }
  return [[path, Array.isArray(value) ? value.join(', ') : value]];
}
