// Issue 35, item 4: HTTP and MQTT ingest with the derived series (VPD, dew point, PPFD and DLI) on keep >= 90 %
// of their rate without them. Two `hortus serve` on SQLite with the engine ticking every second, alike but for
// the groups' metrics setting; runs alternate between them and the ratio is of the medians, in one run. MQTT
// goes through the broker at MQTT_URL (default the machine's Mosquitto), on a topic prefix of each server's own.
// Figures only: `node bench/derived-ingest.mjs [--runs=3] [--groups=6] [--minutes=600]` (after `tsc -b`).
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as delay } from 'node:timers/promises';
import { get, log, median, post, root, round } from './harness.mjs';

const argument = (name, fallback) =>
  Number(process.argv.find((text) => text.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
const RUNS = argument('runs', 3);
const GROUPS = argument('groups', 6);
// Box rounds every 20 s (temperature, humidity, lux) over the last MINUTES minutes, per group: the engine,
// ticking every second meanwhile, derives every closed minute of them while the ingest goes on.
const MINUTES = argument('minutes', 600);
const BATCH = 300;
/** MQTT messages published before waiting for the bridge to store them (its queue drops beyond a limit). */
const MQTT_BURST = 200;
const cli = join(root, 'packages/cli/bin/hortus.js');
const METRICS_ON = [{ metrics: { vpd: true, dewPoint: true, dli: true } }];
const BROKER = process.env.MQTT_URL ?? 'mqtt://127.0.0.1:1883';
const { connectAsync } = createRequire(join(root, 'packages/mqtt/package.json'))('mqtt');

function hortus(env, ...args) {
  execFileSync(process.execPath, [cli, ...args], { env: { ...process.env, ...env }, stdio: 'ignore' });
}

/** A server on its own SQLite file with groups `<prefix>-<run>-<g>`, the metrics on or off. */
async function serve(name, metricsOn) {
  const prefix = `hortus-bench-${randomBytes(4).toString('hex')}-${name}`;
  const dataDir = mkdtempSync(join(tmpdir(), `hortus-bench-derived-${name}-`));
  const env = {
    STORE: 'sqlite',
    HORTUS_DATA_DIR: dataDir,
    HOST: '127.0.0.1',
    PORT: '0',
    AUTOMATIONS: 'on',
    AUTOMATION_TICK_MS: '1000',
    LOG_FORMAT: 'json',
    LOG_REQUESTS: 'off',
    RATE_LIMIT_PER_MINUTE: '0',
    MQTT_URL: BROKER,
    MQTT_TOPIC: `${prefix}/#`,
  };
  // Run 0 warms each server up and is not counted.
  for (let run = 0; run <= RUNS; run += 1) {
    for (let g = 0; g < GROUPS; g += 1) {
      const settings = metricsOn ? ['--settings', JSON.stringify(METRICS_ON)] : [];
      hortus(env, 'group', 'create', `${name}-${run}-${g}`, ...settings);
      hortus(env, 'group', 'create', `${name}-mqtt-${run}-${g}`, ...settings);
    }
  }
  const child = spawn(process.execPath, [cli, 'serve'], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise((resolve, reject) => {
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk) => {
      output += chunk;
      const line = output.split('\n').find((text) => text.includes('"event":"listening"'));
      if (line !== undefined) resolve(JSON.parse(line).url);
    });
    child.once('exit', (code) => reject(new Error(`${name} exited with ${code}: ${output}`)));
  });
  return {
    url,
    prefix,
    stop: async () => {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The readings of one run: each group's box rounds (one stamp, three topics) of the last MINUTES minutes. */
function rounds(groupPrefix) {
  const now = Date.now();
  const all = [];
  for (let g = 0; g < GROUPS; g += 1) {
    const group = `${groupPrefix}-${g}`;
    for (let minute = MINUTES; minute >= 3; minute -= 1) {
      for (let second = 0; second < 60; second += 20) {
        const time = new Date(now - minute * 60_000 + second * 1000).toISOString();
        const i = minute * 3 + second / 20;
        all.push({
          group,
          time,
          values: {
            'esp/air/temperature': round(22 + 3 * Math.sin(i / 40), 2),
            'esp/air/humidity': round(60 + 10 * Math.cos(i / 50), 2),
            'esp/ground/light/lux': round(20_000 + 5000 * Math.sin(i / 30), 0),
          },
        });
      }
    }
  }
  return all;
}

/** The HTTP batches of one run. */
function bodies(name, run) {
  const readings = rounds(`${name}-${run}`).flatMap(({ group, time, values }) =>
    Object.entries(values).map(([topic, value]) => ({ group, topic, value, time })),
  );
  const batches = [];
  for (let first = 0; first < readings.length; first += BATCH) {
    batches.push(JSON.stringify(readings.slice(first, first + BATCH)));
  }
  return batches;
}

/** Readings the server's MQTT bridge has stored so far (its metric). */
async function mqttIngested(server) {
  const { body } = await get(server.url, '/metrics');
  const line = body
    .split('\n')
    .find((text) => text.startsWith('hortus_readings_ingested_total{source="mqtt"}'));
  return Number(line?.split(' ').at(-1) ?? 0);
}

/**
 * One MQTT run: a box round a message (compact JSON, QoS 1), in bursts the bridge's queue holds, each
 * waited for until the bridge has stored it; a burst that stops moving for 10 s ends the run with an error.
 */
async function mqttRun(server, name, run) {
  const messages = rounds(`${name}-mqtt-${run}`);
  const client = await connectAsync(BROKER, { clientId: `${server.prefix}-${run}` });
  const started = performance.now();
  try {
    for (let first = 0; first < messages.length; first += MQTT_BURST) {
      const burst = messages.slice(first, first + MQTT_BURST);
      const expected = (await mqttIngested(server)) + burst.length * 3;
      await Promise.all(
        burst.map((message) =>
          client.publishAsync(`${server.prefix}/box/${message.group}`, JSON.stringify(message), { qos: 1 }),
        ),
      );
      let seen = await mqttIngested(server);
      for (let movedAt = performance.now(); seen < expected;) {
        await delay(10);
        const now = await mqttIngested(server);
        if (now > seen) movedAt = performance.now();
        else if (performance.now() - movedAt > 10_000)
          throw new Error(`${name}: the bridge stored ${now} of ${expected} readings and stopped`);
        seen = now;
      }
    }
  } finally {
    await client.endAsync();
  }
  return (messages.length * 3) / ((performance.now() - started) / 1000);
}

async function ingestRun(server, name, run) {
  const batches = bodies(name, run);
  let stored = 0;
  const started = performance.now();
  for (const body of batches) {
    const reply = await post(server.url, '/api/data/readings', body);
    if (reply.status !== 202)
      throw new Error(`${name} answered ${reply.status}: ${reply.body.slice(0, 200)}`);
    stored += JSON.parse(reply.body).stored;
  }
  return stored / ((performance.now() - started) / 1000);
}

const off = await serve('off', false);
const on = await serve('on', true);
try {
  const rates = { off: [], on: [], mqttOff: [], mqttOn: [] };
  await ingestRun(off, 'off', 0);
  await ingestRun(on, 'on', 0);
  await mqttRun(off, 'off', 0);
  await mqttRun(on, 'on', 0);
  for (let run = 1; run <= RUNS; run += 1) {
    // Alternating, so a change of machine load falls on both.
    rates.off.push(await ingestRun(off, 'off', run));
    rates.on.push(await ingestRun(on, 'on', run));
    rates.mqttOff.push(await mqttRun(off, 'off', run));
    rates.mqttOn.push(await mqttRun(on, 'on', run));
    const last = (list) => Math.round(list.at(-1));
    log(
      `run ${run}: HTTP off ${last(rates.off)}/s, on ${last(rates.on)}/s; MQTT off ${last(rates.mqttOff)}/s, on ${last(rates.mqttOn)}/s`,
    );
  }
  // Proof that the engine derived while it was measured: the newest VPD of a group of the last run.
  let derived = { body: '[]' };
  for (const deadline = Date.now() + 60_000; Date.now() < deadline && derived.body === '[]';) {
    derived = await get(on.url, `/api/data/latestdata/VPD?groupId=on-${RUNS}-0`);
    if (derived.body === '[]') await delay(200);
  }
  const ratio = median(rates.on) / median(rates.off);
  const mqttRatio = median(rates.mqttOn) / median(rates.mqttOff);
  console.log(
    JSON.stringify({
      readingsPerRun: (MINUTES - 2) * 9 * GROUPS,
      offPerSecond: rates.off.map(Math.round),
      onPerSecond: rates.on.map(Math.round),
      ratio: round(ratio, 3),
      mqttOffPerSecond: rates.mqttOff.map(Math.round),
      mqttOnPerSecond: rates.mqttOn.map(Math.round),
      mqttRatio: round(mqttRatio, 3),
      goal: '>= 0.90 both ways',
      met: ratio >= 0.9 && mqttRatio >= 0.9,
      newestVpd: derived.body.slice(0, 200),
    }),
  );
} finally {
  await off.stop();
  await on.stop();
}
