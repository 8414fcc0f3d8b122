export * from './commit-feed.js';
export * from './mailers.js';
export * from './notifiers.js';
export * from './webhook-formats.js';
