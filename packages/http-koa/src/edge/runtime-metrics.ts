import { collectDefaultMetrics, Registry } from 'prom-client';

/**
 * The process's own series (CPU, resident memory, heap, event-loop lag, GC, open handles), by prom-client's
 * default collectors, so dashboards made for any Node service read them under their usual names. One registry
 * per process: the figures are the process's, however many servers it runs, and the collectors (an event-loop
 * delay monitor, a GC observer) are started once.
 */
let registry: Registry | undefined;

export function runtimeMetrics(): Promise<string> {
  if (registry === undefined) {
    registry = new Registry();
    collectDefaultMetrics({ register: registry });
  }
  return registry.metrics();
}
