export * from './mqtt-config.js';
export * from './mqtt-bridge.js';
export * from './mqtt-identity.js';
export * from './mqtt-payload.js';
export * from './mqtt.module.js';
export * from './mqtt-commands.js';
export * from './mqtt-discovery.js';
export * from './home-assistant-link.js';
