/**
 * When this server process started, by the core's clock: taken as the core module is built, before the
 * store, the HTTP server or the MQTT bridge take any request. "Since the server started" is counted from it.
 */
export interface ServerStart {
  readonly at: Date;
}

export const SERVER_START = Symbol.for('hortus.ServerStart');
