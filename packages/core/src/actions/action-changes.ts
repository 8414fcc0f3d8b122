import { injectable } from 'inversify';
import { type Action } from './action.js';

export type ActionChangeListener = (action: Action) => void;

/**
 * In-process fan-out of action value changes, whoever made them (a client, the CLI, the automation
 * engine), so a transport can push them to boxes (MQTT retained topics) instead of boxes polling.
 */
@injectable()
export class ActionChanges {
  private readonly listeners = new Set<ActionChangeListener>();

  subscribe(listener: ActionChangeListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  emit(action: Action): void {
    for (const listener of this.listeners) {
      try {
        listener(action);
      } catch {
        // A failing listener must not undo or fail the change that already happened.
      }
    }
  }
}
