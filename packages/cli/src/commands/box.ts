import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { setTimeout as sleep } from 'node:timers/promises';
import { boxIdOfMac, macOfRegisteredId } from '@hortus/core';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { UsageError } from '../exit-codes.js';
import { type RunIo } from '../io.js';
import { withExamples } from './shared.js';

/** What firmware 1.0.4 posts every round, one request per sensor. */
const SENSORS: readonly (readonly [topic: string, base: number, spread: number])[] = [
  ['esp/air/temperature', 21, 4],
  ['esp/air/humidity', 55, 15],
  ['esp/air/pressure', 1013, 8],
  ['esp/air/gasResistance', 120, 40],
  ['esp/ground/moisture/1', 45, 10],
  ['esp/ground/moisture/2', 48, 10],
  ['esp/ground/light/colorTemp', 5200, 800],
  ['esp/ground/light/lux', 800, 600],
  ['esp/ground/light/red', 300, 100],
  ['esp/ground/light/green', 320, 100],
  ['esp/ground/light/blue', 280, 100],
  ['esp/ground/light/clear', 900, 300],
];
/** The topics a box of firmware 1.0.4 posts, in its order. */
export const FIRMWARE_TOPICS: readonly string[] = SENSORS.map(([topic]) => topic);
const RELAYS = ['pump_1', 'led_1', 'ventilator_1', 'ventilator_2'] as const;
const FIRMWARE_VERSION = '1.0.4';
const NOT_FOUND_BODY = '{"message":"Invalid device ID or device not found"}';

interface Answer {
  readonly status: number;
  readonly text: string;
}

/**
 * One request on a new connection, as the box's HTTP client makes it; an https:// address is never checked
 * against a CA, as the firmware never checks it.
 */
function call(url: string, method: string, headers: Record<string, string>, body?: string): Promise<Answer> {
  const target = new URL(url);
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const sent = send(
      target,
      { method, headers, agent: false, rejectUnauthorized: false, timeout: 5000 },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, text }));
        response.on('error', reject);
      },
    );
    sent.on('timeout', () => sent.destroy(new Error('no answer within 5 s')));
    sent.on('error', reject);
    sent.end(body);
  });
}

/**
 * The box's wall-clock time: it sets TZ to Berlin's rule and formats local time with a literal `Z`, so its
 * stamps are 1 h (winter) or 2 h (summer) ahead of the instant.
 */
export function berlinStampOf(instant: Date): string {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-GB', {
      timeZone: 'Europe/Berlin',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
    })
      .formatToParts(instant)
      .map(({ type, value }) => [type, value]),
  );
  return `${parts['year']}-${parts['month']}-${parts['day']}T${parts['hour']}:${parts['minute']}:${parts['second']}.000Z`;
}

/** The box's id as it sends it, from any registered spelling of its MAC (or the box's own form). */
function boxIdOf(device: string): string {
  const mac = macOfRegisteredId(device.trim());
  if (mac === undefined) {
    throw new UsageError('--device must be a MAC address (24:6F:28:AA:00:01) or the id the box sends');
  }
  return boxIdOfMac(mac);
}

function positive(text: string): number {
  const value = /^\d+$/u.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < 1)
    throw new InvalidArgumentError('must be a whole number above 0');
  return value;
}

function seconds(text: string): number {
  const value = Number(text);
  if (!/^\d+(\.\d+)?$/u.test(text) || value > 3600)
    throw new InvalidArgumentError('must be 0 to 3600 seconds');
  return value;
}

interface SimulateOptions {
  readonly backend: string;
  readonly device: string;
  readonly count: number;
  readonly interval: number;
  readonly tries: number;
}

interface Onboarding {
  readonly group: string;
  readonly host: string;
  readonly url: string;
  readonly apiKey: string;
}

async function onboard(
  io: RunIo,
  options: SimulateOptions,
  boxId: string,
  bootedAt: number,
): Promise<Onboarding> {
  const address = `${options.backend.replace(/\/+$/u, '')}/api/hardware`;
  for (let attempt = 1; attempt <= options.tries; attempt += 1) {
    const answer = await call(address, 'GET', {
      'Content-Type': 'application/json',
      deviceId: boxId,
      updateVersion: FIRMWARE_VERSION,
      lastactive: String(Date.now() - bootedAt),
    }).catch((error: unknown): Answer => ({
      status: 0,
      text: error instanceof Error ? error.message : String(error),
    }));
    if (answer.status === 200 && answer.text !== NOT_FOUND_BODY) {
      const body = JSON.parse(answer.text) as Partial<Onboarding>;
      const { group = '', host = '', url = '', apiKey = '' } = body;
      io.stdout.write(`onboarded as ${boxId}: group ${group}, data to https://${host}${url}\n`);
      return { group, host, url, apiKey };
    }
    io.stdout.write(
      `onboarding attempt ${attempt}: ${answer.status === 0 ? 'no answer' : answer.status} ${answer.text}\n`,
    );
    if (attempt < options.tries) await sleep(1000);
  }
  throw new UsageError(
    `${options.backend} did not onboard ${boxId} in ${options.tries} tries: a box would now give up until ` +
      'power-cycled (is the device registered, claimed and not locked? `hortus device pending` lists it)',
  );
}

/** What a box does: onboarding, then rounds of 12 readings and one find; prints what it would switch. */
async function simulate(io: RunIo, options: SimulateOptions): Promise<void> {
  const boxId = boxIdOf(options.device);
  const bootedAt = Date.now();
  const box = await onboard(io, options, boxId, bootedAt);
  const endpoint = `https://${box.host}${box.url}`;
  const headers = { 'Content-Type': 'application/ejson', Accept: 'application/json', 'api-key': box.apiKey };
  const relays = new Map<string, string>();
  let failures = 0;
  for (let round = 1; round <= options.count; round += 1) {
    if (round > 1) await sleep(options.interval * 1000);
    const time = berlinStampOf(new Date());
    const statuses = new Map<number, number>();
    for (const [index, [topic, base, spread]] of SENSORS.entries()) {
      const value = (base + spread * Math.sin(Date.now() / 60_000 + index)).toFixed(2);
      const body = JSON.stringify({
        collection: 'datas',
        database: 'Website',
        dataSource: 'Cluster0',
        document: { topic, group: box.group, value, time: { $date: time } },
      });
      const answer = await call(`${endpoint}/action/insertOne`, 'POST', headers, body).catch(
        (error: unknown): Answer => ({ status: 0, text: String(error) }),
      );
      statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
      if (answer.status !== 200 && answer.status !== 201) {
        failures += 1;
        io.stdout.write(`  ${topic}: ${answer.status === 0 ? 'no answer' : answer.status} ${answer.text}\n`);
      }
    }
    const summary = [...statuses].map(([status, count]) => `${count} x ${status === 0 ? 'failed' : status}`);
    io.stdout.write(`round ${round} at box time ${time}: readings ${summary.join(', ')}\n`);
    const found = await call(
      `${endpoint}/action/find`,
      'POST',
      { 'Content-Type': 'application/json', 'api-key': box.apiKey },
      JSON.stringify({ collection: 'actions', database: 'Website', dataSource: 'Cluster0' }),
    ).catch((error: unknown): Answer => ({ status: 0, text: String(error) }));
    if (found.status !== 200) {
      failures += 1;
      io.stdout.write(`  actions: ${found.status === 0 ? 'no answer' : found.status} ${found.text}\n`);
      continue;
    }
    const documents =
      (JSON.parse(found.text) as { documents?: { object?: unknown; value?: unknown }[] }).documents ?? [];
    for (const { object, value } of documents) {
      if (typeof object === 'string' && (RELAYS as readonly string[]).includes(object)) {
        relays.set(object, value === 'on' ? 'on' : 'off');
      }
    }
    const switched = RELAYS.map((relay) => `${relay} ${relays.get(relay) ?? 'off'}`);
    io.stdout.write(`  would switch: ${switched.join(', ')}\n`);
  }
  if (failures > 0) throw new Error(`${failures} requests of the simulated box failed`);
}

export function registerBoxCommands(program: Command, io: RunIo): void {
  const box = withExamples(
    program.command('box').description('try out what an HTTP box does, without hardware'),
    'hortus box simulate --backend http://192.168.178.121:8080 --device 24:6F:28:AA:00:01 --count 1',
  );
  withExamples(
    box
      .command('simulate')
      .description(
        'act as an HTTP box (firmware 1.0.4): onboard at the backend, then every round post 12 readings ' +
          'stamped as the box stamps them and read the actions, over HTTPS without checking the ' +
          'certificate; prints what the box would switch. Checks DNS, proxy and certificates before a box is powered',
      )
      .requiredOption(
        '--backend <url>',
        'the address compiled into the box, e.g. http://192.168.178.121:8080',
      )
      .requiredOption('--device <id>', 'the device as registered (its MAC, e.g. 24:6F:28:AA:00:01)')
      .addOption(new Option('--count <n>', 'rounds to run').argParser(positive).default(3))
      .addOption(new Option('--interval <seconds>', 'between rounds').argParser(seconds).default(20))
      .addOption(
        new Option('--tries <n>', 'onboarding attempts, 1 s apart (a box makes 50)')
          .argParser(positive)
          .default(50),
      )
      .action(async (options: SimulateOptions) => {
        if (!/^https?:\/\/[^/\s]+\/?$/u.test(options.backend)) {
          throw new UsageError('--backend must be http(s)://host[:port], as compiled into the box');
        }
        await simulate(io, options);
      }),
    'hortus box simulate --backend http://greenhouse.lan:8080 --device 246f28aa0001 --count 5',
  );
}
