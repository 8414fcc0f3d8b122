export * from './test-servers.js';
export * from './capturing-logger.js';
