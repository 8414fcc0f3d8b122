import { InstallationValues, type StoreSchema } from '@hortus/core';
import { type Command } from 'commander';
import { type AppConfig, loadConfig } from '../app/config.js';
import { readStoreSchema } from '../app/data-commands.js';
import { describeUnknown, unknownVariables } from '../app/known-variables.js';
import { type RunIo } from '../io.js';
import { fields } from '../output.js';
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
        const report: ConfigReport = {
          configuration: masked(withoutDuplicates(loaded)) as Record<string, unknown>,
          ...(mqtt === undefined ? {} : { mqtt }),
          ...(schema === undefined ? {} : { schema }),
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
  const warnings =
    report.warnings.length === 0
      ? 'No unknown variables.'
      : report.warnings.map((warning) => `warning: ${warning}`).join('\n');
  return `${fields(pairs)}\n\n${warnings}`;
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
    lines.push([`store.migration ${version}`, `applied ${appliedAt.toISOString()}`]);
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
