export * from './mailers.js';
