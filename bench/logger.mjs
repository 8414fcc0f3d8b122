// What one log line costs: Hortus's own JSON logger against pino, for the request log line (the hot path:
// one per request) and an alert-delivery line whose fields name `event`. Both write to a sink that drops
// the text (the cost measured is making the line, not the disk). Prints nanoseconds per line, median of 7.
import { Writable } from 'node:stream';
import { setImmediate } from 'node:timers/promises';
import { pino } from 'pino';
import { createJsonLogger } from '../packages/cli/dist/src/app/json-logger.js';

const LINES = 200_000;
const ROUNDS = 7;
const request = {
  requestId: 'a1b2c3d4',
  method: 'GET',
  path: '/api/devices/abc/latest',
  status: 200,
  ms: 1.27,
};
const delivery = {
  group: 'gh',
  event: 'opened',
  attempts: 3,
  error: 'ECONNREFUSED',
  webhook: 'https://hooks.example/…',
};

function own() {
  return createJsonLogger(() => {}, undefined, 'info', 'json');
}

function viaPino() {
  const sink = new Writable({ write: (_chunk, _encoding, done) => done() });
  sink.write = () => true; // drop the text without a stream's bookkeeping, like the other sink
  return pino(
    {
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    sink,
  );
}

async function perLine(log) {
  const times = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < LINES; i += 1) log(i);
    times.push(Number(process.hrtime.bigint() - start) / LINES);
    await setImmediate();
  }
  return times.sort((a, b) => a - b)[Math.floor(ROUNDS / 2)];
}

const ownLogger = own();
const pinoLogger = viaPino();
const figures = {
  'own, request line': await perLine(() => ownLogger.info('request', request)),
  'pino, request line': await perLine(() => pinoLogger.info(request, 'request')),
  'own, delivery line': await perLine(() => ownLogger.error('alert delivery given up', delivery)),
  'pino, delivery line': await perLine(() => pinoLogger.error(delivery, 'alert delivery given up')),
};
for (const [name, ns] of Object.entries(figures)) console.log(`${name.padEnd(22)} ${Math.round(ns)} ns/line`);
