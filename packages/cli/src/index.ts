export * from './run.js';
export * from './exit-codes.js';
export * from './output.js';
export * from './progress.js';
export * from './import-readings.js';
export * from './migrate.js';
export { type StoreCopyResult } from './store-copy.js';
// What a box of the newest firmware sends: the simulator's, shared with the tests and the boxes benchmark.
export { berlinStampOf, FIRMWARE_TOPICS } from './commands/box.js';
export * from './app/index.js';
