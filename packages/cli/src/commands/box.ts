import { setTimeout as sleep } from 'node:timers/promises';
import { boxIdOfMac, macOfRegisteredId } from '@hortus/core';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { UsageError } from '../exit-codes.js';
import { type RunIo } from '../io.js';
import {
  berlinStampOf,
  FIRMWARE_TOPICS,
  FIRMWARE_TYPE,
  FIRMWARE_VERSION,
  findRequest,
  insertOneRequest,
  isNewer,
  type Onboarding,
  onboardingOf,
  onboardingRequest,
  RELAYS,
  switchesOf,
  updateCheckRequest,
  valueOf,
} from './box-firmware.js';
import { type BoxAnswer, exchange } from './box-wire.js';
import { withExamples } from './shared.js';

export { berlinStampOf, FIRMWARE_TOPICS } from './box-firmware.js';

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

/** `--nan a --nan b` collects both; `all` stands for every topic. */
function failedSensor(text: string, previous: readonly string[]): string[] {
  if (text !== 'all' && !FIRMWARE_TOPICS.includes(text)) {
    throw new InvalidArgumentError(`must be "all" or one of the box's topics: ${FIRMWARE_TOPICS.join(', ')}`);
  }
  return [...previous, text];
}

interface SimulateOptions {
  readonly backend: string;
  readonly device: string;
  readonly count: number;
  readonly interval: number;
  readonly tries: number;
  readonly updateEvery: number;
  readonly nan: readonly string[];
}

const answerText = (answer: BoxAnswer): string =>
  answer.status === 0 ? `no answer (${answer.error ?? 'unknown'})` : `${answer.status} ${answer.text}`.trim();

/**
 * Onboarding as the box does it: tried while the status is not 200, 1 s apart; any 200 ends the tries,
 * and one the box cannot use leaves it with empty strings until it is power-cycled.
 */
async function onboard(
  io: RunIo,
  options: SimulateOptions,
  boxId: string,
  bootedAt: number,
): Promise<Onboarding> {
  for (let attempt = 1; attempt <= options.tries; attempt += 1) {
    const answer = await exchange(onboardingRequest(options.backend, boxId, Date.now() - bootedAt));
    if (answer.status === 200) {
      const box = onboardingOf(answer.status, answer.text);
      if (box === undefined) {
        throw new UsageError(
          `${options.backend} answered 200 ${answer.text}: a box stops trying at any 200 and, with nothing ` +
            'usable in it, posts to https:///… with empty strings until it is power-cycled',
        );
      }
      io.stdout.write(
        `onboarded as ${boxId} (attempt ${attempt}): group ${box.group}, data to https://${box.host}${box.url}\n`,
      );
      return box;
    }
    io.stdout.write(`onboarding attempt ${attempt}: ${answerText(answer)}\n`);
    if (attempt < options.tries) await sleep(1000);
  }
  throw new UsageError(
    `${options.backend} did not onboard ${boxId} in ${options.tries} tries: a box would now give up until ` +
      'power-cycled (is the device registered, claimed and not locked? `hortus device pending` lists it)',
  );
}

/** The updater's check and what it would decide; true when the check itself failed. */
async function checkForUpdate(io: RunIo, backend: string): Promise<boolean> {
  const answer = await exchange(updateCheckRequest(backend));
  if (answer.status === 204) {
    io.stdout.write('update check: 204, nothing offered\n');
    return false;
  }
  if (answer.status !== 200 && answer.status !== 301) {
    io.stdout.write(`update check: ${answerText(answer)}\n`);
    return true;
  }
  let manifest: { type?: unknown; version?: unknown; url?: unknown } = {};
  try {
    manifest = (JSON.parse(answer.text) ?? {}) as typeof manifest;
  } catch {
    io.stdout.write(
      `update check: ${answer.status} with a manifest the updater cannot read: ${answer.text}\n`,
    );
    return true;
  }
  const { type, version, url } = manifest;
  let decision: string;
  if (type !== FIRMWARE_TYPE) decision = `not for this updater (type ${String(type)}), nothing to do`;
  else if (typeof version !== 'string' || !isNewer(version)) {
    decision = `version ${String(version)} is not newer than ${FIRMWARE_VERSION}, nothing to do`;
  } else if (typeof url === 'string' && /^https:/iu.test(url)) {
    decision = `${version} at ${url}: the updater refuses https:// images, nothing is installed`;
  } else {
    decision =
      `${version} at ${String(url)}: a box would download it; boxes built as 1.0.4 have no second ` +
      'app slot, so the install fails on them';
  }
  io.stdout.write(`update check: ${answer.status}, ${decision}\n`);
  return false;
}

/**
 * What a box does after onboarding: the updater's check now and every 100 s; every round the actions
 * first, then one request per sensor, each stamped when it is sent. Prints what the box would switch.
 */
async function simulate(io: RunIo, options: SimulateOptions): Promise<void> {
  const boxId = boxIdOf(options.device);
  const bootedAt = Date.now();
  const box = await onboard(io, options, boxId, bootedAt);
  const relays = new Map<string, 'on' | 'off'>();
  const failed = new Set(options.nan.includes('all') ? FIRMWARE_TOPICS : options.nan);
  let failures = 0;
  let lastUpdateCheck = Number.NEGATIVE_INFINITY;
  for (let round = 1; round <= options.count; round += 1) {
    if (round > 1) await sleep(options.interval * 1000);
    if (Date.now() - lastUpdateCheck >= options.updateEvery * 1000) {
      lastUpdateCheck = Date.now();
      if (await checkForUpdate(io, options.backend)) failures += 1;
    }
    const found = await exchange(findRequest(box));
    if (found.status === 200) {
      for (const [relay, state] of switchesOf(found.text)) relays.set(relay, state);
      const switched = RELAYS.map((relay) => `${relay} ${relays.get(relay) ?? 'off'}`);
      io.stdout.write(`round ${round}: actions 200, would switch: ${switched.join(', ')}\n`);
    } else {
      failures += 1;
      io.stdout.write(`round ${round}: actions ${answerText(found)}; the relays stay as they are\n`);
    }
    const statuses = new Map<number, number>();
    const stamps: string[] = [];
    let tls: string | undefined;
    for (const [index, topic] of FIRMWARE_TOPICS.entries()) {
      const stamp = berlinStampOf(new Date());
      stamps.push(stamp);
      const value = valueOf(index, Date.now(), failed.has(topic));
      const answer = await exchange(insertOneRequest(box, topic, value, stamp));
      tls ??= answer.tls;
      statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
      const stored = answer.status === 200 || answer.status === 201;
      // A failed sensor's `nan` may be refused (4xx); no answer or a 5xx is a failure all the same.
      const expected = value === 'nan' ? answer.status >= 200 && answer.status < 500 : stored;
      if (!expected) failures += 1;
      if (!stored) io.stdout.write(`  ${topic}${value === 'nan' ? ' (nan)' : ''}: ${answerText(answer)}\n`);
    }
    const summary = [...statuses].map(
      ([status, count]) => `${count} x ${status === 0 ? 'no answer' : status}`,
    );
    io.stdout.write(
      `round ${round}: readings ${summary.join(', ')}, box time ${stamps[0]} to ${stamps.at(-1)}` +
        `${tls === undefined ? '' : `, over ${tls}`}\n`,
    );
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
        'act as an HTTP box (firmware 1.0.4), sending the bytes it sends: onboard at the backend, ask for ' +
          'firmware updates, then every round read the actions and post 12 readings, each stamped as the box ' +
          'stamps it; over TLS 1.2 only, with the host as SNI (an IP address too) and no certificate check. ' +
          'Prints what the box would switch. Checks DNS, proxy and certificates before a box is powered',
      )
      .requiredOption(
        '--backend <url>',
        'the address compiled into the box, e.g. http://192.168.178.121:8080',
      )
      .requiredOption('--device <id>', 'the device as registered (its MAC, e.g. 24:6F:28:AA:00:01)')
      .addOption(new Option('--count <n>', 'rounds to run').argParser(positive).default(3))
      .addOption(
        new Option('--interval <seconds>', 'between rounds (a box: 20)').argParser(seconds).default(20),
      )
      .addOption(
        new Option('--tries <n>', 'onboarding attempts, 1 s apart (a box makes 50)')
          .argParser(positive)
          .default(50),
      )
      .addOption(
        new Option(
          '--update-every <seconds>',
          'between update checks; the first comes right after onboarding',
        )
          .argParser(seconds)
          .default(100),
      )
      .addOption(
        new Option(
          '--nan <topic>',
          'send `nan` for this topic, as a box does when a sensor read fails (repeatable; "all" for every topic)',
        )
          .argParser(failedSensor)
          .default([], 'none'),
      )
      .action(async (options: SimulateOptions) => {
        if (!/^https?:\/\/[^/\s]+\/?$/u.test(options.backend)) {
          throw new UsageError('--backend must be http(s)://host[:port], as compiled into the box');
        }
        await simulate(io, { ...options, backend: options.backend.replace(/\/+$/u, '') });
      }),
    'hortus box simulate --backend http://greenhouse.lan:8080 --device 246f28aa0001 --count 5 --nan esp/air/humidity',
  );
}
