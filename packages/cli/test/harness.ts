import 'reflect-metadata';
import { use } from 'chai';
import chaiAsPromised from 'chai-as-promised';
import { memoryStoreModule } from '@hortus/adapter-memory';
import { mongoSettingsFromEnv, MongoStore } from '@hortus/adapter-mongo';
import { type Clock, createCoreModule, defaultCoreSettings } from '@hortus/core';
import { type RunIo, run } from '@hortus/cli';
import { Container } from 'inversify';

use(chaiAsPromised);

/** Collects what the CLI writes; `isTTY` makes it stand in for a terminal. */
export class Capture {
  text = '';
  constructor(readonly isTTY = false) {}

  write(chunk: string): boolean {
    this.text += chunk;
    return true;
  }
}

/** A container on a fresh memory store: the composition a test hands to `run`. */
export function memoryContainer(clock?: Clock): Container {
  const container = new Container();
  container.load(createCoreModule(defaultCoreSettings, clock), memoryStoreModule());
  return container;
}

export interface Outcome {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `hortus <argv>` in-process against the container, as a test's one line of "when". */
export async function hortus(
  container: Container | undefined,
  argv: readonly string[],
  extra: Partial<RunIo> = {},
): Promise<Outcome> {
  const stdout = extra.stdout instanceof Capture ? extra.stdout : new Capture();
  const stderr = extra.stderr instanceof Capture ? extra.stderr : new Capture();
  const code = await run(argv, {
    env: {},
    ...(container === undefined ? {} : { container }),
    ...extra,
    stdout,
    stderr,
  });
  return { code, stdout: stdout.text, stderr: stderr.text };
}

/** Drops the database a subprocess test's environment names; nothing to do without MONGODB_URI. */
export async function dropTestDatabase(env: Readonly<Record<string, string | undefined>>): Promise<void> {
  const settings = mongoSettingsFromEnv(env);
  if (settings === undefined) return;
  const store = MongoStore.fromSettings(settings);
  try {
    await store.db.dropDatabase();
  } finally {
    await store.close();
  }
}
