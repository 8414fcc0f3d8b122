export * from './mqtt-config.js';
export * from './mqtt-bridge.js';
export * from './mqtt-identity.js';
export * from './mqtt-payload.js';
export * from './mqtt.module.js';
