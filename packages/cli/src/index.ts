export * from './run.js';
export * from './exit-codes.js';
export * from './output.js';
export * from './progress.js';
export * from './import-readings.js';
export * from './migrate.js';
export { type StoreCopyResult } from './store-copy.js';
export * from './app/index.js';
