// Load generator of run.mjs's capacity part, in a process of its own (pinned to the core the server does
// not have): web clients polling the dashboard's routes as browsers do, and boxes sending readings.
// Raw node:net sockets and a minimal HTTP/1.1 reader: an http.Agent or autocannon costs more CPU per request
// than the server under test, and the generator must not be what limits the figures.
// Driven over IPC by run.mjs: {type: 'step', ...} adds clients, settles, measures, answers {type: 'measured'}.
import { Buffer } from 'node:buffer';
import { connect } from 'node:net';
import { performance } from 'node:perf_hooks';
import { setInterval } from 'node:timers';
import { setTimeout as delay } from 'node:timers/promises';
import { URL } from 'node:url';
import { BOX_TOPICS, quietValue } from './box.mjs';

const ORIGIN = 'http://localhost:3000';
/** An answer later than this is a timeout: the socket is dropped and the client connects anew next time. */
const TIMEOUT_MS = 10_000;
/** Fractions of the golden ratio: any first n clients are spread almost evenly over the period. */
const GOLDEN = 0.6180339887498949;
const CRLFCRLF = Buffer.from('\r\n\r\n');

let host = '127.0.0.1';
let port = 0;
let measuring = false;

/** What the current measurement has seen; reset when it starts. */
let figures = freshFigures();

function freshFigures() {
  return {
    latencies: [],
    lateness: [],
    statuses: {},
    /** Statuses per route, e.g. {'latestdata/All': {200: n, 304: n}}: which routes answer 304. */
    routes: {},
    routeLatencies: {},
    errors: { socket: 0, timeout: 0, closed: 0, status: 0, overrun: 0 },
    retries: 0,
    connects: 0,
    boxPosts: 0,
    firstError: undefined,
  };
}

function fail(kind, detail) {
  if (!measuring) return;
  figures.errors[kind] += 1;
  figures.firstError ??= `${kind}: ${detail}`;
}

/**
 * One browser (or box) with its own keep-alive connection; its requests of one period go one after another.
 * A browser sends If-None-Match by itself once an answer carried an ETag with Cache-Control: no-cache,
 * and keeps its cached body on a 304: so does this, per route.
 */
class Client {
  constructor(requests) {
    /** [{method, path, body?, expect: statuses}] */
    this.requests = requests;
    this.tags = requests.map(() => undefined);
    this.socket = undefined;
    /** Answers read on the current socket: a request lost on a reused socket is retried once, as browsers do. */
    this.answered = 0;
    this.index = -1;
    this.started = 0;
    this.retried = false;
    this.buffer = undefined;
  }

  get busy() {
    return this.index >= 0;
  }

  /** The period is due: its first request goes out now, unless the last period's are still under way. */
  due(dueAt, now) {
    if (this.busy) {
      fail('overrun', 'a period began before the last one was answered');
      return;
    }
    if (measuring && this.requests.length > 1) figures.lateness.push(now - dueAt);
    this.index = 0;
    this.send(now);
  }

  send(now) {
    const request = this.requests[this.index];
    const tag = this.tags[this.index];
    let head =
      `${request.method} ${request.path} HTTP/1.1\r\nHost: ${host}:${port}\r\nOrigin: ${ORIGIN}\r\n` +
      'Accept: application/json\r\n';
    if (tag !== undefined) head += `If-None-Match: ${tag}\r\n`;
    const body = request.body?.();
    if (body !== undefined) {
      head += `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n`;
    }
    head += '\r\n';
    if (this.socket === undefined) this.open();
    this.started = now;
    this.retried = false;
    this.write(body === undefined ? head : head + body);
  }

  write(text) {
    this.lastWrite = text;
    this.socket.write(text, 'latin1');
  }

  open() {
    const socket = connect({ host, port, noDelay: true });
    this.socket = socket;
    this.answered = 0;
    this.buffer = undefined;
    if (measuring) figures.connects += 1;
    socket.on('data', (chunk) => this.read(socket, chunk));
    socket.on('error', (error) => {
      // A reset of an idle or retried socket shows as its close; only the code is kept for the report.
      socket.errorCode = error.code;
    });
    socket.on('close', () => this.closed(socket));
  }

  /** The server closed the connection (its keep-alive timeout, or a failure). */
  closed(socket) {
    if (socket !== this.socket) return;
    this.socket = undefined;
    if (!this.busy) return;
    if (this.answered > 0 && this.buffer === undefined && !this.retried) {
      // The server's idle timeout crossed the request: a browser resends an idempotent request at once.
      if (measuring) figures.retries += 1;
      const text = this.lastWrite;
      this.open();
      this.retried = true;
      this.write(text);
      return;
    }
    fail(
      socket.errorCode === undefined ? 'closed' : 'socket',
      socket.errorCode ?? 'closed without an answer',
    );
    this.index = -1;
  }

  read(socket, chunk) {
    if (socket !== this.socket) return;
    const buffer = this.buffer === undefined ? chunk : Buffer.concat([this.buffer, chunk]);
    const end = buffer.indexOf(CRLFCRLF);
    if (end < 0 || !this.busy) {
      this.buffer = buffer;
      return;
    }
    const head = buffer.latin1Slice(0, end);
    const length = Number(/\r\ncontent-length: *(\d+)/iu.exec(head)?.[1] ?? 0);
    if (buffer.length < end + 4 + length) {
      this.buffer = buffer;
      return;
    }
    this.buffer = undefined;
    const now = performance.now();
    this.answered += 1;
    const status = Number(head.slice(9, 12));
    const request = this.requests[this.index];
    if (measuring) {
      figures.latencies.push(now - this.started);
      (figures.routeLatencies[request.route] ??= []).push(now - this.started);
      figures.statuses[status] = (figures.statuses[status] ?? 0) + 1;
      if (request.method === 'POST') figures.boxPosts += 1;
      const route = (figures.routes[request.route] ??= {});
      route[status] = (route[status] ?? 0) + 1;
    }
    if (!request.expect.includes(status)) {
      fail('status', `${request.method} ${request.path} answered ${status}`);
    } else if (status === 200) {
      const tag = /\r\netag: *([^\r]*)/iu.exec(head)?.[1];
      if (tag !== undefined && /\r\ncache-control:[^\r]*no-cache/iu.test(head)) this.tags[this.index] = tag;
    }
    if (/\r\nconnection: *close/iu.test(head)) {
      this.socket = undefined;
      socket.destroy();
    }
    this.index += 1;
    if (this.index < this.requests.length) this.send(now);
    else this.index = -1;
  }

  /** No answer within TIMEOUT_MS: dropped, as a browser's fetch would give up. */
  expire(now) {
    if (!this.busy || now - this.started < TIMEOUT_MS) return;
    fail('timeout', `${this.requests[this.index].path} unanswered after ${TIMEOUT_MS} ms`);
    this.index = -1;
    const { socket } = this;
    this.socket = undefined;
    socket?.destroy();
  }
}

/** Clients on a ring of one-millisecond slots, one turn per period: due when the clock passes their slot. */
class Wheel {
  constructor(periodMs) {
    this.periodMs = periodMs;
    this.slots = Array.from({ length: periodMs }, () => []);
    this.clients = [];
  }

  add(client, phase) {
    this.slots[Math.floor(phase * this.periodMs) % this.periodMs].push(client);
    this.clients.push(client);
  }

  /** Runs the slots from the one after `fromMs` up to `toMs` (whole milliseconds since the origin). */
  run(fromMs, toMs, now) {
    for (let ms = fromMs + 1; ms <= toMs; ms += 1) {
      for (const client of this.slots[ms % this.periodMs]) client.due(origin + ms, now);
    }
  }
}

let origin = performance.now();
let doneMs = 0;
let web;
let boxes;
let boxPeriodMs = 0;

function tick() {
  const now = performance.now();
  const ms = Math.floor(now - origin);
  if (ms <= doneMs) return;
  web.run(doneMs, ms, now);
  boxes.run(doneMs, ms, now);
  doneMs = ms;
}

function sweep() {
  const now = performance.now();
  for (const client of web.clients) client.expire(now);
  for (const client of boxes.clients) client.expire(now);
}

const GET_EXPECT = [200, 304];

function webClient(group) {
  return new Client([
    {
      route: 'latestdata/All',
      method: 'GET',
      path: `/api/data/latestdata/All?groupId=${group}`,
      expect: GET_EXPECT,
    },
    {
      route: 'notifications',
      method: 'GET',
      // COMPAT.md: the notifications route takes groupId, as latestdata/All does.
      path: `/api/notification/latestdata/notifications?groupId=${group}`,
      expect: GET_EXPECT,
    },
    { route: 'group/abo', method: 'GET', path: `/api/group/abo?group=${group}`, expect: GET_EXPECT },
  ]);
}

/** One sensor box of a group: six readings, values inside the group's limits so no alert is raised. */
function box(group) {
  const body = () => {
    const time = new Date().toISOString();
    return JSON.stringify(
      BOX_TOPICS.map((topic, t) => ({ group, topic, value: quietValue(topic, t) + Math.random(), time })),
    );
  };
  return new Client([{ route: 'readings', method: 'POST', path: '/api/data/readings', body, expect: [202] }]);
}

const sorted = (values) => Float64Array.from(values).sort();
const at = (values, p) => values[Math.min(values.length - 1, Math.floor((p / 100) * values.length))] ?? NaN;

async function step({ clients, clientsPerGroup, settleMs, measureMs }) {
  const groups = Math.ceil(clients / clientsPerGroup);
  for (let i = web.clients.length; i < clients; i += 1) {
    web.add(webClient(`bench-${Math.floor(i / clientsPerGroup)}`), (i * GOLDEN) % 1);
  }
  // A box period of 0: web clients only, no readings arrive (the store's writes measured apart).
  for (let g = boxes.clients.length; boxPeriodMs > 0 && g < groups; g += 1) {
    boxes.add(box(`bench-${g}`), (g * GOLDEN + 0.5) % 1);
  }
  await delay(settleMs);
  figures = freshFigures();
  measuring = true;
  process.send({ type: 'measuring' });
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  await delay(measureMs);
  measuring = false;
  const seconds = (performance.now() - started) / 1000;
  const { user, system } = process.cpuUsage(cpuBefore);
  const latencies = sorted(figures.latencies);
  const lateness = sorted(figures.lateness);
  const answered = latencies.length;
  const errors = Object.values(figures.errors).reduce((sum, n) => sum + n, 0);
  const open = web.clients.filter((client) => client.socket !== undefined).length;
  process.send({
    type: 'measured',
    clients,
    groups,
    seconds,
    answered,
    perSecond: answered / seconds,
    p50: at(latencies, 50),
    p90: at(latencies, 90),
    p99: at(latencies, 99),
    max: latencies.at(-1) ?? NaN,
    statuses: figures.statuses,
    routes: figures.routes,
    routeP99: Object.fromEntries(
      Object.entries(figures.routeLatencies).map(([route, values]) => [route, at(sorted(values), 99)]),
    ),
    notModifiedShare: (figures.statuses[304] ?? 0) / Math.max(1, answered - figures.boxPosts),
    boxPosts: figures.boxPosts,
    errors,
    errorKinds: figures.errors,
    firstError: figures.firstError,
    retries: figures.retries,
    connects: figures.connects,
    openConnections: open,
    generatorCpu: (user + system) / 1000 / (seconds * 1000),
    latenessP50: at(lateness, 50),
    latenessP99: at(lateness, 99),
    latenessMax: lateness.at(-1) ?? NaN,
  });
}

process.on('message', (message) => {
  if (message?.type === 'start') {
    const url = new URL(message.url);
    host = url.hostname;
    port = Number(url.port);
    web = new Wheel(message.periodMs);
    boxPeriodMs = message.boxPeriodMs;
    boxes = new Wheel(Math.max(1, message.boxPeriodMs));
    origin = performance.now();
    doneMs = 0;
    // Node's timers fire at most once a millisecond; a 1 ms interval visits every slot, late if busy.
    setInterval(tick, 1);
    setInterval(sweep, 500);
    process.send({ type: 'started' });
  }
  if (message?.type === 'step') {
    step(message).catch((error) => {
      process.stderr.write(`${error?.stack ?? error}\n`);
      process.exit(1);
    });
  }
});
process.on('disconnect', () => process.exit(0));
