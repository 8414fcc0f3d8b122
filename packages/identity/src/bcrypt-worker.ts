import { parentPort } from 'node:worker_threads';
import bcrypt from 'bcryptjs';

/** One job of the pool: hash a password at a cost, or compare one with a hash. */
export type BcryptJob =
  | { readonly id: number; readonly op: 'hash'; readonly password: string; readonly cost: number }
  | {
      readonly id: number;
      readonly op: 'verify';
      readonly password: string;
      readonly hash: string;
      /** Dummy hashes also verified, to spend their work (see verificationCosts). */
      readonly pad: readonly string[];
    };

function verify(job: Extract<BcryptJob, { op: 'verify' }>): boolean {
  const matches = bcrypt.compareSync(job.password, job.hash);
  for (const dummy of job.pad) bcrypt.compareSync(job.password, dummy);
  return matches;
}

export type BcryptResult =
  | { readonly id: number; readonly ok: true; readonly value: string | boolean }
  | { readonly id: number; readonly ok: false; readonly error: string };

// Runs in its own thread: the synchronous calls are the fastest form and block only this worker.
parentPort?.on('message', (job: BcryptJob) => {
  let result: BcryptResult;
  try {
    const value = job.op === 'hash' ? bcrypt.hashSync(job.password, job.cost) : verify(job);
    result = { id: job.id, ok: true, value };
  } catch (error) {
    result = { id: job.id, ok: false, error: error instanceof Error ? error.message : String(error) };
  }
  parentPort?.postMessage(result);
});
