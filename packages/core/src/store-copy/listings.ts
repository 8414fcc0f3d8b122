import { type ActionHistoryEntry } from '../action-history/action-history.js';
import { type GroupNotifySettings } from '../alerts/alert-message.js';
import { type HistoryChart } from '../history-charts/history-chart.js';
import { type ReadingCursor, type ReadingRepository } from '../readings/reading.port.js';
import { type Repositories } from '../repositories.js';

/** Every group the store knows: those with a record, and those holding readings only. */
export async function groupNames(stores: Pick<Repositories, 'groups' | 'readings'>): Promise<string[]> {
  const names = new Set([
    ...(await stores.groups.list()).map((group) => group.name),
    ...(await stores.readings.groups()),
  ]);
  return [...names].sort();
}

/** The notify settings of the store's groups (webhooks with their secrets, which events). */
export async function alertSettings(
  stores: Pick<Repositories, 'groups' | 'alertOutbox'>,
): Promise<GroupNotifySettings[]> {
  const found: GroupNotifySettings[] = [];
  for (const group of await stores.groups.list()) {
    const settings = await stores.alertOutbox.getSettings(group.name);
    if (settings !== undefined) found.push(settings);
  }
  return found;
}

/** Every history entry of the group, newest first (at most ACTION_HISTORY_KEEP per action are kept). */
export function historyOf(
  stores: Pick<Repositories, 'actionHistory'>,
  group: string,
): Promise<ActionHistoryEntry[]> {
  return stores.actionHistory.list(group, undefined, Number.MAX_SAFE_INTEGER);
}

/** Every chart record: clients name a record by any userId, not only a stored user's. */
export async function chartRecords(stores: Pick<Repositories, 'historyCharts'>): Promise<HistoryChart[]> {
  const records: HistoryChart[] = [];
  for (const userId of await stores.historyCharts.userIds()) {
    const record = await stores.historyCharts.findByUser(userId);
    if (record !== undefined) records.push(record);
  }
  return records;
}

export function firmwareKey(image: { readonly version: string; readonly group?: string }): string {
  return JSON.stringify([image.version, image.group ?? null]);
}

/** One page of a resource listed after the last id of the previous page (none: from the start). */
export type PagedListing<T extends { readonly id: string }> = (
  after: string | undefined,
  limit: number,
) => Promise<readonly T[]>;

/** Every record of a paged listing, counted page by page (constant memory). */
export async function countPages<T extends { readonly id: string }>(
  list: PagedListing<T>,
  pageSize: number,
): Promise<number> {
  let count = 0;
  let after: string | undefined;
  for (;;) {
    const page = await list(after, pageSize);
    count += page.length;
    const last = page[page.length - 1];
    if (last === undefined || page.length < pageSize) return count;
    after = last.id;
  }
}

/** Every reading of the store, counted page by page (constant memory). */
export async function countReadings(readings: ReadingRepository, pageSize: number): Promise<number> {
  let count = 0;
  for (const group of await readings.groups()) {
    let after: ReadingCursor | undefined;
    for (;;) {
      const page = await readings.page({ group }, after, pageSize);
      count += page.length;
      const last = page[page.length - 1];
      if (last === undefined || page.length < pageSize) break;
      after = { topic: last.topic, time: last.time };
    }
  }
  return count;
}
