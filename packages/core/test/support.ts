import 'reflect-metadata';
import * as chai from 'chai';
import chaiAsPromised from 'chai-as-promised';
import { Container, type Newable } from 'inversify';
import { memoryStoreModule } from '@hortus/adapter-memory';
import { identityModule, identitySettingsFromEnv, sha256Hex } from '@hortus/identity';
import {
  type Clock,
  COMMIT_FEED,
  type CommitFeed,
  type CoreSettings,
  createCoreModule,
  defaultCoreSettings,
  SHA256_HEX,
  type Sha256Hex,
} from '@hortus/core';

chai.use(chaiAsPromised);
export const { expect } = chai;

/** The one clock seam of the core: tests set and advance time explicitly. */
export class FakeClock implements Clock {
  private current: number;

  constructor(start: Date | string) {
    this.current = new Date(start).getTime();
  }

  now(): Date {
    return new Date(this.current);
  }

  set(instant: Date | string): void {
    this.current = new Date(instant).getTime();
  }

  advance(ms: number): void {
    this.current += ms;
  }
}

const unconfiguredFeed: CommitFeed = {
  recentCommits: () => Promise.reject(new Error('no commit feed in this test')),
};

export interface TestApp {
  readonly container: Container;
  readonly clock: FakeClock;
  /** Resolves a use case (or any binding); tests are their own composition root. */
  get<T>(useCase: Newable<T>): T;
}

/** Core use cases on a fresh in-memory store, with a fake clock and, when given, a fake commit feed. */
export function createTestApp(
  options: { now?: string; settings?: Partial<CoreSettings>; commitFeed?: CommitFeed } = {},
): TestApp {
  const clock = new FakeClock(options.now ?? '2024-06-15T08:30:00.000Z');
  const container = new Container();
  container.load(
    // The tests' clocks and time rules are written in UTC; the service's default zone has tests of its own.
    createCoreModule({ ...defaultCoreSettings, timeZone: 'UTC', ...options.settings }, clock),
    memoryStoreModule(),
    identityModule(identitySettingsFromEnv({})),
  );
  container.bind<CommitFeed>(COMMIT_FEED).toConstantValue(options.commitFeed ?? unconfiguredFeed);
  // Hashing is no I/O and has no fake worth having: the platform's own, as the application binds it.
  container.bind<Sha256Hex>(SHA256_HEX).toConstantValue(sha256Hex);
  return { container, clock, get: <T>(useCase: Newable<T>): T => container.get<T>(useCase) };
}
