import { createHash } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { type PasswordHasher } from '@hortus/core';
import { type BcryptJob, type BcryptResult } from './bcrypt-worker.js';
import { defaultMaxWaiting, type HashPriority, HashQueue } from './hash-queue.js';

/** New hashes: cost 12 (about 4096 × 2^12 rounds), four times the original's cost 10. */
export const DEFAULT_BCRYPT_COST = 12;
export const MIN_BCRYPT_COST = 12;
export const MAX_BCRYPT_COST = 15;

/** $2a$, $2b$ and $2y$ are one algorithm (the letters mark fixed implementation bugs of other libraries). */
const bcryptHashPattern = /^\$2[aby]\$(\d{2})\$[./A-Za-z0-9]{53}$/u;

export interface BcryptOptions {
  /** The cost of new hashes; stored hashes of a lower cost are replaced at the next log-in. */
  readonly cost?: number;
  /** Threads hashing in parallel; by default one core fewer than the machine has (at least 1, at most 4), so a burst of log-ins leaves a core to the requests. */
  readonly threads?: number;
  /** Jobs that may wait for a thread, per priority (see HashQueue). */
  readonly maxWaiting?: Readonly<Record<HashPriority, number>>;
}

/** bcrypt reads at most 72 bytes of a password and ignores the rest. */
export const BCRYPT_MAX_BYTES = 72;

/**
 * What bcrypt is given for a password: the password itself up to 72 bytes (every hash of the original
 * service, whose passwords were shorter, still verifies), and beyond that its SHA-256 in base64 (44
 * bytes), so every character of a long passphrase counts instead of being cut off silently. Which form
 * applies follows from the password alone, so hashing and verifying always agree.
 */
export function bcryptInput(password: string): string {
  if (Buffer.byteLength(password, 'utf8') <= BCRYPT_MAX_BYTES) return password;
  return `sha256:${createHash('sha256').update(password, 'utf8').digest('base64')}`;
}

/** A valid hash at this cost that matches nothing: verifying against it spends that cost's work. */
export function dummyHashAt(cost: number): string {
  return `$2b$${String(cost).padStart(2, '0')}$${'O'.repeat(22)}${'x'.repeat(31)}`;
}

/**
 * The bcrypt costs one verification computes against a stored hash, the work of cost c being 2^c rounds:
 * the hash's own cost, and for a hash cheaper than `cost` (the original's cost 10) dummy work at costs
 * stored, stored+1, ..., cost-1, since 2^s + (2^s + ... + 2^(c-1)) = 2^c. So a wrong password for a
 * migrated user costs what an unknown e-mail costs (the dummy hash at `cost`), and timing does not tell
 * them apart. A hash costlier than `cost` (BCRYPT_COST lowered since) is verified at its own cost.
 */
export function verificationCosts(hash: string, cost: number): number[] {
  const stored = Number(bcryptHashPattern.exec(hash)?.[1] ?? cost);
  const padding = Array.from({ length: Math.max(0, cost - stored) }, (_, index) => stored + index);
  return [stored, ...padding];
}

type Pending = { resolve(value: string | boolean): void; reject(error: Error): void };

/** One worker thread and the jobs it has been given but not answered. */
class BcryptThread {
  readonly pending = new Map<number, Pending>();
  private worker: Worker;
  private closed = false;

  constructor() {
    this.worker = this.spawn();
  }

  private spawn(): Worker {
    const worker = new Worker(new URL('./bcrypt-worker.js', import.meta.url));
    worker.unref();
    worker.on('message', (result: BcryptResult) => {
      const waiting = this.pending.get(result.id);
      this.pending.delete(result.id);
      if (this.pending.size === 0) worker.unref();
      if (result.ok) waiting?.resolve(result.value);
      else waiting?.reject(new Error(result.error));
    });
    // A crashed thread fails its jobs and is replaced, so one bad job cannot stop log-ins for good.
    worker.on('error', (error) => this.fail(error));
    worker.on('exit', (code) => {
      if (!this.closed && this.worker === worker && code !== 0)
        this.fail(new Error(`bcrypt thread exited with ${code}`));
    });
    return worker;
  }

  private fail(error: Error): void {
    if (this.closed) return;
    for (const waiting of this.pending.values()) waiting.reject(error);
    this.pending.clear();
    void this.worker.terminate();
    this.worker = this.spawn();
  }

  run(job: BcryptJob): Promise<string | boolean> {
    return new Promise((resolve, reject) => {
      this.pending.set(job.id, { resolve, reject });
      // Busy threads keep the process alive until they answer; idle ones never do.
      this.worker.ref();
      this.worker.postMessage(job);
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const waiting of this.pending.values()) waiting.reject(new Error('The password hasher was closed'));
    this.pending.clear();
    await this.worker.terminate();
  }
}

/**
 * bcrypt with bcryptjs (pure JavaScript: nothing to compile, no prebuilt binary to download) on worker
 * threads. bcryptjs's own async API computes on the main thread in slices of up to 100 ms, which would
 * stall every other request for that long; on workers the event loop never waits for a hash.
 */
export class BcryptPasswordHasher implements PasswordHasher {
  readonly cost: number;
  readonly dummyHash: string;
  private readonly threadCount: number;
  /** Started at the first hash, so commands that never hash start no threads. */
  private threads: BcryptThread[] | undefined;
  private nextId = 0;
  private readonly queue: HashQueue;

  constructor(options: BcryptOptions = {}) {
    this.cost = options.cost ?? DEFAULT_BCRYPT_COST;
    if (!Number.isInteger(this.cost) || this.cost < 4 || this.cost > 31) {
      throw new RangeError(`bcrypt cost must be a whole number from 4 to 31, got ${this.cost}`);
    }
    this.threadCount = options.threads ?? Math.min(4, Math.max(1, availableParallelism() - 1));
    this.queue = new HashQueue({
      concurrency: this.threadCount,
      maxWaiting: options.maxWaiting ?? defaultMaxWaiting,
    });
    // Verifying costs the same whatever the hash holds: this one spends a real log-in's time and matches nothing.
    this.dummyHash = dummyHashAt(this.cost);
  }

  hash(password: string, options: { readonly deferrable?: boolean } = {}): Promise<string> {
    return this.run(
      { op: 'hash', password: bcryptInput(password), cost: this.cost },
      options.deferrable === true ? 'deferrable' : 'urgent',
    ) as Promise<string>;
  }

  async verify(password: string, hash: string): Promise<boolean> {
    if (!bcryptHashPattern.test(hash)) return false;
    const pad = verificationCosts(hash, this.cost).slice(1).map(dummyHashAt);
    return (await this.run({ op: 'verify', password: bcryptInput(password), hash, pad }, 'urgent')) === true;
  }

  needsRehash(hash: string): boolean {
    const cost = bcryptHashPattern.exec(hash)?.[1];
    return cost === undefined || Number(cost) < this.cost;
  }

  /** Ends the threads (they never keep the process alive, so this is for tests and tidy shutdowns). */
  async close(): Promise<void> {
    const threads = this.threads ?? [];
    this.threads = undefined;
    await Promise.all(threads.map((thread) => thread.close()));
  }

  private run(
    job:
      | { op: 'hash'; password: string; cost: number }
      | { op: 'verify'; password: string; hash: string; pad: readonly string[] },
    priority: HashPriority,
  ): Promise<string | boolean> {
    return this.queue.run(priority, () => {
      // The queue runs at most one job per thread, so this finds an idle one.
      this.threads ??= Array.from({ length: this.threadCount }, () => new BcryptThread());
      const thread = this.threads.reduce((least, candidate) =>
        candidate.pending.size < least.pending.size ? candidate : least,
      );
      this.nextId += 1;
      return thread.run({ ...job, id: this.nextId } as BcryptJob);
    });
  }
}
