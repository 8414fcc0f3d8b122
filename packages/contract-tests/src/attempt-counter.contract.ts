import { type AttemptCounter, type AttemptLimit } from '@hortus/core';
import { expect } from './store.js';

export interface OpenCounter {
  readonly counter: AttemptCounter;
  /**
   * False where the server cannot count concurrent attempts exactly. FerretDB v1 (SQLite) loses
   * concurrent `$inc` updates (20 at once on one document ended at 1), which MongoDB never does.
   */
  readonly exactUnderConcurrency?: boolean;
  readonly dispose?: () => Promise<void>;
}

const MINUTE_MS = 60_000;
const fivePerMinute: AttemptLimit = { name: 'contract-five', points: 5, windowMs: MINUTE_MS };

async function consumeTimes(counter: AttemptCounter, limit: AttemptLimit, key: string, times: number) {
  const decisions = [];
  for (let index = 0; index < times; index += 1) decisions.push(await counter.consume(limit, key));
  return decisions;
}

/** The ATTEMPT_COUNTER port: fixed windows per limit and key, on real time (the windows are short). */
export function attemptCounterContract(name: string, open: () => Promise<OpenCounter>): void {
  describe(`${name}: AttemptCounter contract`, () => {
    let opened: OpenCounter | undefined;
    const counter = (): AttemptCounter => {
      if (opened === undefined) throw new Error('The counter is only open while a test runs');
      return opened.counter;
    };
    beforeEach(async () => {
      opened = await open();
    });
    afterEach(async () => {
      const closing = opened;
      opened = undefined;
      await closing?.dispose?.();
    });

    it('when a key uses its points, then each is allowed with what remains, and the next is refused until the window ends', async () => {
      const decisions = await consumeTimes(counter(), fivePerMinute, 'ada', 6);

      expect(decisions.slice(0, 5)).to.deep.equal(
        [4, 3, 2, 1, 0].map((remaining) => ({ allowed: true, remaining })),
      );
      const refused = decisions[5];
      expect(refused?.allowed).to.equal(false);
      if (refused?.allowed !== false) return;
      expect(refused.retryAfterSeconds).to.be.within(1, 60);
      expect((await counter().consume(fivePerMinute, 'ada')).allowed).to.equal(false);
    });

    it('when one key has used its points, then other keys and other limits of the same key are not touched', async () => {
      await consumeTimes(counter(), fivePerMinute, 'ada', 6);

      expect(await counter().consume(fivePerMinute, 'bob')).to.deep.equal({ allowed: true, remaining: 4 });
      const other: AttemptLimit = { name: 'contract-other', points: 5, windowMs: MINUTE_MS };
      expect(await counter().consume(other, 'ada')).to.deep.equal({ allowed: true, remaining: 4 });
    });

    it('when an attempt is rewarded, then one more is allowed; when the key is forgotten, then all are', async () => {
      await consumeTimes(counter(), fivePerMinute, 'ada', 5);

      await counter().reward(fivePerMinute, 'ada');
      expect(await counter().consume(fivePerMinute, 'ada')).to.deep.equal({ allowed: true, remaining: 0 });
      await counter().forget(fivePerMinute, 'ada');
      expect(await counter().consume(fivePerMinute, 'ada')).to.deep.equal({ allowed: true, remaining: 4 });
    });

    it('when twenty attempts of one key arrive at once, then exactly the points are allowed', async function () {
      if (opened?.exactUnderConcurrency === false) this.skip();
      const decisions = await Promise.all(
        Array.from({ length: 20 }, () => counter().consume(fivePerMinute, 'ada')),
      );

      expect(decisions.filter((decision) => decision.allowed)).to.have.lengthOf(5);
    });

    it('when a window has passed, then the key starts a new one with all its points', async function () {
      this.timeout(30_000);
      const short: AttemptLimit = { name: 'contract-short', points: 1, windowMs: 1000 };
      expect((await counter().consume(short, 'ada')).allowed).to.equal(true);

      // Several times the window, so a loaded machine cannot make it flaky.
      await new Promise((resolve) => setTimeout(resolve, 4000));

      expect(await counter().consume(short, 'ada')).to.deep.equal({ allowed: true, remaining: 0 });
    });
  });
}
