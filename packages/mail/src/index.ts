export * from './mailers.js';
export * from './notifiers.js';
