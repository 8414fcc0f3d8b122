// The `logins` part of `pnpm bench`: bcrypt log-ins on worker threads beside polling.
import { performance } from 'node:perf_hooks';
import { setTimeout as delay } from 'node:timers/promises';
import { median, round, signed } from './harness.mjs';

const LOGIN_PASSWORD = 'Bench#Login42';
// Below the log-in throttle's allowance per e-mail (10): an attempt is reserved before it is hashed, so more
// log-ins of one account at once than the allowance are refused with 429 whether or not they are right.
const CONCURRENT_LOGINS = 8;
const pollPath = '/api/data/latestdata/All?groupId=demo';

async function logIn(post, url) {
  const reply = await post(
    url,
    '/api/auth',
    JSON.stringify({ email: 'bench@example.org', password: LOGIN_PASSWORD }),
  );
  if (reply.status !== 200) throw new Error(`log-in answered ${reply.status}: ${reply.body.slice(0, 200)}`);
}

/**
 * bcrypt at cost 12 runs on worker threads: a burst of log-ins must not stall the requests around it.
 * Log-in p50 one at a time, then poll latency idle and while 8 log-ins are in flight at every moment.
 */
export async function loginsPart({ startServer, stopChild, latency, post, plan }) {
  // Not pinned to one core: the hashing threads must have a core of their own beside the event loop.
  const server = await startServer(
    'hortus',
    { BENCH_DEMO: 'on', BENCH_ACCOUNT: LOGIN_PASSWORD },
    { pin: false },
  );
  const { url } = server;
  const times = [];
  for (let i = 0; i < plan.logins; i += 1) {
    const started = performance.now();
    await logIn(post, url);
    times.push(performance.now() - started);
  }
  const idle = await latency(url, pollPath, { seconds: plan.loginPollSeconds });
  let busy = true;
  let completed = 0;
  const loop = async () => {
    while (busy) {
      try {
        await logIn(post, url);
        completed += 1;
      } catch (error) {
        // Log-ins still queued when the server stops are cut off; only failures while measuring count.
        if (busy) throw error;
      }
    }
  };
  const logins = Array.from({ length: CONCURRENT_LOGINS }, loop);
  // Let the burst start before measuring.
  await delay(100);
  const loaded = await latency(url, pollPath, { seconds: plan.loginPollSeconds });
  busy = false;
  // The hashing queue is left to the server's end rather than waited out.
  await stopChild(server.child);
  await Promise.all(logins);
  return {
    loginP50Ms: round(median(times)),
    logins: plan.logins,
    pollIdle: { p50Ms: round(idle.p50), p99Ms: round(idle.p99), n: idle.n },
    pollDuringLogins: { p50Ms: round(loaded.p50), p99Ms: round(loaded.p99), n: loaded.n },
    concurrentLogins: CONCURRENT_LOGINS,
    loginsCompletedMeanwhile: completed,
  };
}

export function loginsTargets(figures) {
  const list = [];
  const add = (name, goal, measured, met) => list.push({ name, goal, measured, met });
  if (figures !== undefined) {
    const { pollIdle, pollDuringLogins, concurrentLogins } = figures;
    const added = round(pollDuringLogins.p99Ms - pollIdle.p99Ms);
    add(
      `Poll p99 while ${concurrentLogins} log-ins run at once`,
      '<= idle p99 + 5 ms',
      `${pollDuringLogins.p99Ms} ms vs ${pollIdle.p99Ms} ms idle (${signed(added)} ms)`,
      added <= 5,
    );
  }
  return list;
}

export function loginsMarkdown(figures) {
  const lines = [];
  if (figures !== undefined) {
    const { loginP50Ms, logins, pollIdle, pollDuringLogins, concurrentLogins, loginsCompletedMeanwhile } =
      figures;
    lines.push(
      '',
      `Log-in (bcrypt cost 12 on worker threads): p50 ${loginP50Ms} ms over ${logins} log-ins one at a time. ` +
        `Polling ${pollPath} one request at a time: p50 ${pollIdle.p50Ms} ms, p99 ${pollIdle.p99Ms} ms idle; ` +
        `p50 ${pollDuringLogins.p50Ms} ms, p99 ${pollDuringLogins.p99Ms} ms while ${concurrentLogins} log-ins ` +
        `were in flight (${loginsCompletedMeanwhile} completed meanwhile).`,
    );
  }
  return lines;
}
