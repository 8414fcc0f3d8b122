export * from './application.js';
export * from './background.js';
export * from './config.js';
export * from './container.js';
export * from './exposure.js';
export * from './json-logger.js';
export * from './backups.js';
