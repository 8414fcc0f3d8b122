import { type OutboxMessage } from './alert-message.js';

/** Hands one message to its channel (mail server, webhook receiver); rejects when it was not taken. */
export interface Notifier {
  deliver(message: OutboxMessage): Promise<void>;
}

export const NOTIFIER = Symbol.for('hortus.Notifier');
