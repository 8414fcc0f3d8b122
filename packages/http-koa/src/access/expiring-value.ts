import { setTimeout as delay } from 'node:timers/promises';

/** How long a request waits for a refresh when an answer from moments ago is at hand. */
export const REFRESH_WAIT_MS = 250;

/**
 * A value loaded from the store and reused for `ttlMs`. Concurrent requests share one load. Once it has
 * expired, a request waits for the reload at most REFRESH_WAIT_MS and otherwise goes on with the previous
 * value, as it does when the reload fails: a slow or absent store must not add its timeout to every
 * request. Only without any previous value does a request wait for (or fail with) the load.
 */
export class ExpiringValue<V> {
  private known: { readonly value: V } | undefined;
  private until = 0;
  private loading: Promise<V> | undefined;

  constructor(
    private readonly load: () => Promise<V>,
    private readonly ttlMs: number,
    private readonly now: () => number,
  ) {}

  /** The value while it is fresh, without waiting; undefined once it has expired or before the first load. */
  fresh(): { readonly value: V } | undefined {
    return this.known !== undefined && this.now() < this.until ? this.known : undefined;
  }

  async get(): Promise<V> {
    if (this.known !== undefined && this.now() < this.until) return this.known.value;
    this.loading ??= this.load()
      .then((value) => {
        this.known = { value };
        this.until = this.now() + this.ttlMs;
        return value;
      })
      .finally(() => {
        this.loading = undefined;
      });
    if (this.known === undefined) return this.loading;
    const previous = this.known.value;
    return Promise.race([
      this.loading.catch(() => previous),
      delay(REFRESH_WAIT_MS, previous, { ref: false }),
    ]);
  }
}
