// The console's part (issue 37), on SQLite: how long the overview of 100 groups takes to have every answer
// it shows, and what a 1-year chart of one topic (a reading every 20 s) costs the server per request.
import { mkdtemp, rm } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { log, ORIGIN, percentile, round } from './harness.mjs';

const GROUPS = 100;
/** A browser's connections to one origin over HTTP/1.1. */
const BROWSER_CONNECTIONS = 6;
/** What the overview asks per group (packages/console/src/pages/overview.tsx). */
const overviewPaths = (group) => [
  `/api/devices?group=${group}`,
  `/api/notification/latestdata/notifications?groupId=${group}`,
  `/api/actions/safety?group=${group}`,
  `/api/data/latestdata/All?groupId=${group}`,
];

function fetchAll(url, paths, agent) {
  let next = 0;
  const worker = async () => {
    while (next < paths.length) {
      const path = paths[next];
      next += 1;
      const status = await new Promise((resolve, reject) => {
        const sent = request(`${url}${path}`, { agent, headers: { origin: ORIGIN } }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode));
        });
        sent.on('error', reject);
        sent.end();
      });
      // 400 is the original's answer for a group without devices.
      if (status !== 200 && status !== 400) throw new Error(`GET ${path} answered ${status}`);
    }
  };
  return Promise.all(Array.from({ length: BROWSER_CONNECTIONS }, worker));
}

export async function consolePart(bench) {
  const { startServer, latency, smoke } = bench;
  const days = smoke ? 2 : 365;
  const dataDir = await mkdtemp(join(tmpdir(), 'hortus-bench-console-'));
  try {
    log(`console: SQLite with ${days} days of 20-second readings and ${GROUPS} groups`);
    const server = await startServer('hortus', {
      BENCH_DATA_DIR: dataDir,
      BENCH_HISTORY_DAYS: String(days),
    });
    await new Promise((resolve, reject) => {
      const seeded = (message) => {
        if (message.type !== 'groups') return;
        server.child.off('message', seeded);
        if (message.error === undefined) resolve(message);
        else reject(new Error(`adding groups failed: ${message.error}`));
      };
      server.child.on('message', seeded);
      server.child.send({ type: 'groups', count: GROUPS });
    });
    const agent = new Agent({ keepAlive: true, maxSockets: BROWSER_CONNECTIONS });
    const paths = Array.from({ length: GROUPS }, (_, g) => overviewPaths(`bench-${g}`)).flat();
    await fetchAll(server.url, paths, agent);
    const rounds = smoke ? 1 : 5;
    const overviewMs = [];
    for (let r = 0; r < rounds; r += 1) {
      const started = performance.now();
      await fetchAll(server.url, paths, agent);
      overviewMs.push(performance.now() - started);
    }
    agent.destroy();

    const to = new Date();
    const from = new Date(to.getTime() - days * 86_400_000);
    const chart =
      `/api/data/series/esp/air/temperature?groupId=bench-history&points=600` +
      `&startDate=${from.toISOString()}&endDate=${to.toISOString()}`;
    await latency(server.url, chart, { count: 2 });
    const measured = await latency(server.url, chart, { count: smoke ? 3 : 40 });
    const buckets = JSON.parse(measured.last.body).length;
    await server.stop();
    overviewMs.sort((a, b) => a - b);
    return {
      groups: GROUPS,
      requests: paths.length,
      overviewMs: round(percentile(overviewMs, 50), 1),
      chart: {
        days,
        readings: Math.floor((days * 86_400_000) / 20_000),
        buckets,
        p50Ms: round(measured.p50, 1),
        p95Ms: round(measured.p95, 1),
        p99Ms: round(measured.p99, 1),
        n: measured.n,
      },
    };
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}

export function consoleTargets(result) {
  if (result === undefined) return [];
  return [
    {
      name: `Console overview of ${result.groups} groups (${result.requests} requests, 6 connections), SQLite`,
      goal: '≤ 1000 ms',
      measured: `${result.overviewMs} ms`,
      met: result.overviewMs <= 1000,
    },
    {
      name: `Console chart of ${result.chart.days} days at 20 s (${result.chart.readings} readings, ${result.chart.buckets} buckets), SQLite`,
      goal: 'p95 ≤ 200 ms',
      measured: `p95 ${result.chart.p95Ms} ms (p50 ${result.chart.p50Ms}, n ${result.chart.n})`,
      met: result.chart.p95Ms <= 200,
    },
  ];
}

export function consoleMarkdown(result) {
  return [
    '',
    '## Console',
    '',
    `The overview of ${result.groups} groups asks ${result.requests} requests, 6 at a time as a browser does: ` +
      `all answered in ${result.overviewMs} ms (median of the rounds). A chart of ${result.chart.days} days of ` +
      `one topic (${result.chart.readings} readings) into ${result.chart.buckets} buckets: p50 ` +
      `${result.chart.p50Ms} ms, p95 ${result.chart.p95Ms} ms, p99 ${result.chart.p99Ms} ms per request, one at a time.`,
  ];
}
