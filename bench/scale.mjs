// The `scale` part of `pnpm bench`: newest readings with a long history on the memory store, and the memory
// that history takes.
import { log, MB, median, round, signed } from './harness.mjs';

export async function scalePart({ startServer, get, latency, plan }) {
  const few = 1000;
  log(`newest readings: seeding ${few} and ${plan.manyReadings} readings`);
  const [small, large] = await Promise.all([
    startServer('hortus', { BENCH_SEED_READINGS: String(few) }),
    startServer('hortus', { BENCH_SEED_READINGS: String(plan.manyReadings) }),
  ]);
  const path = '/api/data/latestdata/All?groupId=bench-latest';
  const answer = JSON.parse((await get(large.url, path)).body);
  if (answer.length !== 10) throw new Error(`latestdata/All answered ${answer.length} readings, expected 10`);
  for (const server of [small, large]) await latency(server.url, path, { seconds: plan.latencySeconds });
  const p50s = { few: [], many: [] };
  for (let r = 0; r < plan.latencyRounds; r += 1) {
    p50s.few.push((await latency(small.url, path, { seconds: plan.latencySeconds })).p50);
    p50s.many.push((await latency(large.url, path, { seconds: plan.latencySeconds })).p50);
  }
  const seeded = large.messages.find((message) => message.type === 'seeded');
  const { before, after } = large.memory;
  await Promise.all([small.stop(), large.stop()]);
  return {
    latency: {
      readingsFew: few,
      readingsMany: plan.manyReadings,
      p50MsFew: round(median(p50s.few), 3),
      p50MsMany: round(median(p50s.many), 3),
      ratio: round(median(p50s.many.map((value, i) => value / p50s.few[i]))),
      rounds: plan.latencyRounds,
    },
    memory: {
      readings: plan.manyReadings,
      seedSeconds: round(seeded?.seconds ?? Number.NaN, 1),
      heapUsedMb: round(after.heapUsed / MB, 1),
      arrayBuffersMb: round(after.arrayBuffers / MB, 1),
      heapUsedGrowthMb: round((after.heapUsed - before.heapUsed) / MB, 1),
      arrayBuffersGrowthMb: round((after.arrayBuffers - before.arrayBuffers) / MB, 1),
      rssMb: round(after.rss / MB, 1),
    },
  };
}

export function scaleTargets(scale) {
  const list = [];
  const add = (name, goal, measured, met) => list.push({ name, goal, measured, met });
  if (scale !== undefined) {
    const { latency, memory } = scale;
    add(
      `latestdata/All p50, ${latency.readingsMany.toLocaleString('en')} vs ${latency.readingsFew} readings`,
      '<= 1.3 x',
      `${latency.ratio} x (${latency.p50MsMany} ms vs ${latency.p50MsFew} ms)`,
      latency.ratio <= 1.3,
    );
    // Typed-array columns live outside V8's heap (arrayBuffers): both count.
    const total = memory.heapUsedMb + memory.arrayBuffersMb;
    add(
      `Memory of ${memory.readings.toLocaleString('en')} readings (memory store)`,
      '< 400 MB',
      `${round(total, 1)} MB = heapUsed ${memory.heapUsedMb} + arrayBuffers ${memory.arrayBuffersMb} (whole process)`,
      total < 400,
    );
  }
  return list;
}

export function scaleMarkdown(scale) {
  const lines = [];
  if (scale !== undefined) {
    const { memory } = scale;
    lines.push(
      '',
      `Memory store with ${memory.readings.toLocaleString('en')} readings (seeded in ${memory.seedSeconds} s): ` +
        `heapUsed ${memory.heapUsedMb} MB (${signed(memory.heapUsedGrowthMb)} MB while seeding), arrayBuffers ` +
        `${memory.arrayBuffersMb} MB (${signed(memory.arrayBuffersGrowthMb)} MB), rss ${memory.rssMb} MB.`,
    );
  }
  return lines;
}
