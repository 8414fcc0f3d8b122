export * from './bcrypt-password-hasher.js';
export * from './jwt-token-service.js';
export * from './one-time-tokens.js';
export * from './identity.module.js';
export * from './common-passwords.js';
export * from './node-crypto.js';
export * from './hash-queue.js';
