import { randomBytes } from 'node:crypto';

// ObjectId-like layout: seconds (8 hex) + per-process random (6 hex) + counter (10 hex). The counter never
// wraps within a process and the seconds never go backwards, so ids sort by creation like Mongo's do.
const processTag = randomBytes(3).toString('hex');
let counter = 0;
let lastSeconds = 0;

export function newId(): string {
  lastSeconds = Math.max(lastSeconds, Math.floor(Date.now() / 1000));
  counter += 1;
  return lastSeconds.toString(16).padStart(8, '0') + processTag + counter.toString(16).padStart(10, '0');
}
