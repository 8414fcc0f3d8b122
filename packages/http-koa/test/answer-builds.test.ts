import { READING_REPOSITORY, type ReadingRepository } from '@hortus/core';
import { httpSettingsFromEnv } from '@hortus/http-koa';
import { type AppOnMemory, expect, startAppOnMemory } from './harness.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The memory store's readings, slowed down on the two reads the latest-data answers are built from. */
class SlowReadings {
  delayMs = 0;
  reads = 0;
  /** Slowed reads that have answered. */
  done = 0;

  /** Until every slowed read begun has answered, however long a loaded machine takes. */
  async settled(): Promise<void> {
    for (const until = Date.now() + 20_000; this.done < this.reads && Date.now() < until;) await sleep(10);
    // The answer is cached as the read's promise settles: one more turn of the event loop.
    await sleep(10);
  }

  wrap(inner: ReadingRepository): ReadingRepository {
    return new Proxy(inner, {
      get: (target, property, receiver) => {
        const value: unknown = Reflect.get(target, property, receiver);
        if (typeof value !== 'function') return value;
        const slowed = property === 'latestOfEveryTopic' || property === 'latest';
        return async (...args: unknown[]) => {
          if (slowed) {
            this.reads += 1;
            await new Promise((resolve) => setTimeout(resolve, this.delayMs));
            try {
              return await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
            } finally {
              this.done += 1;
            }
          }
          return (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        };
      },
    });
  }
}

describe('cacheable answers slower to build than the request may wait', () => {
  let app: AppOnMemory;
  let store: SlowReadings;

  async function start(env: Record<string, string>): Promise<void> {
    store = new SlowReadings();
    app = await startAppOnMemory(env, (container) => {
      container.onActivation<ReadingRepository>(READING_REPOSITORY, (_context, readings) =>
        store.wrap(readings),
      );
    });
    const posted = await fetch(`${app.url}/api/data/readings`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify([
        { group: 'gh-1', topic: 'esp/air/temperature', value: 21.5 },
        { group: 'gh-2', topic: 'esp/air/temperature', value: 19 },
      ]),
    });
    expect(posted.status).to.equal(202);
  }

  afterEach(async () => {
    await app.close();
  });

  it('when the build outlasts the wait, then the request gets 503 with Retry-After, the build goes on, and the next request gets it from the cache', async () => {
    await start({ ANSWER_WAIT_MS: '50' });
    store.delayMs = 400;

    const first = await fetch(`${app.url}/api/data/latestdata/All?groupId=gh-1`);
    const firstBody = (await first.json()) as { message?: string };
    await store.settled();
    store.delayMs = 0;
    const second = await fetch(`${app.url}/api/data/latestdata/All?groupId=gh-1`);

    expect(first.status).to.equal(503);
    expect(first.headers.get('retry-after')).to.match(/^\d+$/u);
    expect(firstBody.message).to.be.a('string');
    expect(second.status).to.equal(200);
    expect(((await second.json()) as { value: number }[]).map((reading) => reading.value)).to.deep.equal([
      21.5,
    ]);
    expect(store.reads).to.equal(1);
  });

  it('when many requests ask for one answer being built, then one build serves them all', async () => {
    await start({ ANSWER_WAIT_MS: '2000' });
    store.delayMs = 200;

    const answers = await Promise.all(
      Array.from({ length: 5 }, () => fetch(`${app.url}/api/data/latestdata/All?groupId=gh-1`)),
    );

    expect(answers.map((answer) => answer.status)).to.deep.equal([200, 200, 200, 200, 200]);
    expect(store.reads).to.equal(1);
  });

  it('when every build slot is taken, then a request for another answer gets 503 at once and starts no build', async () => {
    await start({ ANSWER_WAIT_MS: '50', MAX_ANSWER_BUILDS: '1' });
    store.delayMs = 400;

    const slow = await fetch(`${app.url}/api/data/latestdata/All?groupId=gh-1`);
    const other = await fetch(`${app.url}/api/data/latestdata/All?groupId=gh-2`);
    const readsWhileFull = store.reads;
    await store.settled();
    store.delayMs = 0;
    const afterwards = await fetch(`${app.url}/api/data/latestdata/All?groupId=gh-2`);

    expect([slow.status, other.status]).to.deep.equal([503, 503]);
    expect(other.headers.get('retry-after')).to.match(/^\d+$/u);
    expect(readsWhileFull).to.equal(1);
    expect(afterwards.status).to.equal(200);
  });

  it('when ANSWER_WAIT_MS or MAX_ANSWER_BUILDS is not a number in range, then the settings are refused', async () => {
    app = await startAppOnMemory();
    expect(() => httpSettingsFromEnv({ ANSWER_WAIT_MS: 'soon' })).to.throw(/ANSWER_WAIT_MS/u);
    expect(() => httpSettingsFromEnv({ MAX_ANSWER_BUILDS: '0' })).to.throw(/MAX_ANSWER_BUILDS/u);
    expect(httpSettingsFromEnv({}).answerBuilds).to.deep.equal({ waitMs: 2000, maxBuilds: 8 });
  });
});
