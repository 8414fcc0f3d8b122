import { StoreDeadlineError, StoreUnavailableError } from '@hortus/core';

function opaque(tag: string): string {
  const trimmed = tag.trim();
  return trimmed.startsWith('W/') ? trimmed.slice(2) : trimmed;
}

/**
 * RFC 9110 If-None-Match with weak comparison: true when the client holds the current representation. `*`
 * is left to namesWildcard: it holds only when the resource exists, which a tag alone cannot tell.
 */
export function noneMatchFails(ifNoneMatch: string, tag: string): boolean {
  if (ifNoneMatch === '') return false;
  if (ifNoneMatch === tag) return true;
  const current = opaque(tag);
  return ifNoneMatch.split(',').some((listed) => opaque(listed.trim()) === current);
}

/** If-None-Match: `*` (any current representation): answered 304 once the route has found one. */
export function namesWildcard(ifNoneMatch: string): boolean {
  return ifNoneMatch !== '' && ifNoneMatch.split(',').some((listed) => listed.trim() === '*');
}

/** How many answers a router keeps: one per polled (route, group) is plenty. */
export const CACHED_ANSWERS = 1000;

/** How long a request waits for an answer being built, and how many builds may run at once. */
export interface BuildBounds {
  /** ANSWER_WAIT_MS: past it the request gets 503 with Retry-After; the build goes on and fills the cache. */
  readonly waitMs: number;
  /** MAX_ANSWER_BUILDS: builds in flight across every router of an application; past it, 503 at once. */
  readonly maxBuilds: number;
}

export const defaultBuildBounds: BuildBounds = { waitMs: 2000, maxBuilds: 8 };

/** The builds in flight of one application, shared by its routers' caches (the global cap). */
export class BuildSlots {
  private inFlight = 0;

  constructor(readonly bounds: BuildBounds = defaultBuildBounds) {}

  get running(): number {
    return this.inFlight;
  }

  /** Takes a slot, or answers false when every one is taken. */
  take(): boolean {
    if (this.inFlight >= this.bounds.maxBuilds) return false;
    this.inFlight += 1;
    return true;
  }

  release(): void {
    this.inFlight -= 1;
  }
}

/**
 * Serialised answers of routes whose answer is a function of their entity tag alone, kept while the tag
 * holds: a poll of an unchanged group is answered without asking the store for the data or serialising it.
 * Least recently used answers go first.
 *
 * An answer slower to build than the request may wait (BuildBounds.waitMs) is not thrown away: the request
 * gets 503 with Retry-After and the build goes on, so the next request finds it kept. Otherwise an answer
 * that always takes longer than the deadline would never be built, and every poll would pay the deadline
 * again. Builds are bounded so they cannot pile up: one per tag, `maxBuilds` in all.
 */
export class AnswerCache {
  private readonly answers = new Map<string, string>();
  /** Answers being built: requests arriving meanwhile wait for the same one rather than building their own. */
  private readonly building = new Map<string, Promise<unknown>>();

  constructor(
    private readonly capacity = CACHED_ANSWERS,
    private readonly slots = new BuildSlots(),
  ) {}

  get(tag: string): string | undefined {
    const answer = this.answers.get(tag);
    if (answer !== undefined) {
      this.answers.delete(tag);
      this.answers.set(tag, answer);
    }
    return answer;
  }

  /**
   * The answer of `tag` when one is kept; else the outcome of `build`, shared by every request asking for
   * the tag while it runs (after a change, every poller of a group misses at once: one store query serves
   * them all, where a query each could swamp a slow store). A string outcome is kept. Rejects with
   * StoreUnavailableError (503, Retry-After) when the build is not done within the wait, or when no build
   * slot is free.
   */
  async answer<T>(tag: string, build: () => Promise<string | T>): Promise<string | T> {
    const kept = this.get(tag);
    if (kept !== undefined) return kept;
    let building = this.building.get(tag) as Promise<string | T> | undefined;
    if (building === undefined) {
      if (!this.slots.take()) throw busy('Too many answers are being prepared, try again shortly');
      building = build().then((outcome) => {
        if (typeof outcome === 'string') this.set(tag, outcome);
        return outcome;
      });
      this.building.set(tag, building);
      const done = (): void => {
        this.building.delete(tag);
        this.slots.release();
      };
      building.then(done, done);
    }
    return withinWait(building, this.slots.bounds.waitMs);
  }

  set(tag: string, answer: string): void {
    this.answers.delete(tag);
    this.answers.set(tag, answer);
    if (this.answers.size > this.capacity) {
      const [oldest] = this.answers.keys();
      if (oldest !== undefined) this.answers.delete(oldest);
    }
  }
}

function busy(message: string): StoreUnavailableError {
  return new StoreUnavailableError(message);
}

/** The build's outcome if it comes within `waitMs`; the build itself is not stopped either way. */
async function withinWait<T>(building: Promise<T>, waitMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(
      () => reject(new StoreDeadlineError('answer', 'The answer is still being prepared, try again shortly')),
      waitMs,
    );
  });
  try {
    return await Promise.race([building, expired]);
  } finally {
    clearTimeout(timer);
  }
}
