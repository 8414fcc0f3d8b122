import { type Repositories } from '../repositories.js';
import { type ReadingCursor } from '../readings/reading.port.js';
import { type NewStageAssignment } from '../stages/stage.port.js';
import { ConflictError, InvalidInputError, type ResourceName } from '../shared/errors.js';
import {
  alertSettings,
  chartRecords,
  countPages,
  countReadings,
  firmwareKey,
  groupNames,
  historyOf,
  type PagedListing,
} from './listings.js';

/** What `hortus store copy` moves, in the order it moves them (groups before what belongs to them). */
export const copiedResources = [
  'groups',
  'users',
  'accessKeys',
  'devices',
  'pendingBoxes',
  'actions',
  'actionHistory',
  'stages',
  'alertSettings',
  'outbox',
  'notifications',
  'historyCharts',
  'firmware',
  'serverSecrets',
  'engineState',
  'automationLog',
  'readings',
] as const;
export type CopiedResource = (typeof copiedResources)[number];

/**
 * The repositories a copy reads (source) or writes (target): alert settings and outbox messages live in the
 * outbox's, pending boxes in the devices'. core/test/store-copy-inventory.test.ts fails when a repository
 * of `repositoryTokens` is neither here nor named there as left out on purpose.
 */
export const copiedRepositories = [
  'groups',
  'users',
  'accessKeys',
  'devices',
  'actions',
  'actionHistory',
  'stages',
  'alertOutbox',
  'notifications',
  'historyCharts',
  'firmware',
  'serverSecrets',
  'engineState',
  'automationLog',
  'readings',
] as const satisfies readonly (keyof Repositories)[];

/** The repositories of one store that a copy reads (source) or writes (target). */
export type CopyStores = Pick<Repositories, (typeof copiedRepositories)[number]>;

export interface ResourceCopyReport {
  readonly resource: CopiedResource;
  /** Records in the source store, counted while they were copied. */
  source: number;
  /** Records in the target store after the copy (verification: equal unless the target held others). */
  target: number;
  /** Records this run wrote that the target did not hold yet (readings, firmware) or wrote again (the rest). */
  written: number;
  complete: boolean;
}

export interface StoreCopyReport {
  readonly resources: ResourceCopyReport[];
  /** Every resource copied and its target count at least its source count. */
  complete: boolean;
  /** Stopped on request between two pages; running the copy again resumes it. */
  interrupted: boolean;
  /** Every source user's password hash and session version are the target's too: the same passwords log in. */
  credentialsMatch: boolean;
}

/** Told how far the copy is, so a transport can show it (count, rate, ETA where the total is known). */
export interface CopyProgress {
  begin(resource: CopiedResource, total: number | undefined): void;
  advance(count: number): void;
  end(): void;
}

export interface CopyStoreOptions {
  /** Records per read and per write: readings are copied in pages of this many, in constant memory. */
  readonly pageSize: number;
  /** Copy even into a store that holds another installation's records; the source's win (a group, action or chart record of the same name, a user with the same e-mail, is replaced). */
  readonly force: boolean;
  /** Asked between pages; true stops the copy there (what was written stays, and is not written twice). */
  readonly stopRequested?: () => boolean;
}

/** Readings per page when counting a store's readings for the report. */
const COUNT_PAGE = 10_000;

const silent: CopyProgress = { begin: () => undefined, advance: () => undefined, end: () => undefined };

/**
 * Copies one store into another, every record as it is (ids, password hashes, times). Each write
 * replaces the record with the same key (readings and firmware: skipped when present), so running it again
 * after an interruption continues without duplicating anything. Refuses a target that holds another
 * installation's records: a group, user or access key the source does not have under the same id, or readings of a
 * group the source does not know.
 */
export class CopyStore {
  constructor(
    private readonly source: CopyStores,
    private readonly target: CopyStores,
    private readonly options: CopyStoreOptions,
  ) {
    if (source === target) throw new InvalidInputError('a store cannot be copied onto itself');
    if (!Number.isInteger(options.pageSize) || options.pageSize < 1) {
      throw new InvalidInputError('the page size must be a whole number of at least 1');
    }
  }

  async execute(progress: CopyProgress = silent): Promise<StoreCopyReport> {
    if (!this.options.force) await this.refuseOtherInstallation();
    const report: StoreCopyReport = {
      resources: [],
      complete: false,
      interrupted: false,
      credentialsMatch: false,
    };
    for (const resource of copiedResources) {
      const entry: ResourceCopyReport = { resource, source: 0, target: 0, written: 0, complete: false };
      report.resources.push(entry);
      progress.begin(resource, resource === 'readings' ? undefined : await this.count(this.source, resource));
      try {
        entry.complete = await this.copy(resource, entry, progress);
      } finally {
        progress.end();
      }
      if (!entry.complete) {
        report.interrupted = true;
        return report;
      }
      entry.target = await this.count(this.target, resource);
    }
    report.credentialsMatch = await this.credentialsMatch();
    report.complete =
      report.credentialsMatch &&
      report.resources.every((entry) => entry.complete && entry.target >= entry.source);
    return report;
  }

  private async credentialsMatch(): Promise<boolean> {
    for (const user of await this.source.users.list()) {
      const [copied, original] = await Promise.all([
        this.target.users.findCredentials(user.id),
        this.source.users.findCredentials(user.id),
      ]);
      if (
        copied?.passwordHash !== original?.passwordHash ||
        copied?.sessionVersion !== original?.sessionVersion
      ) {
        return false;
      }
    }
    return true;
  }

  private stopped(): boolean {
    return this.options.stopRequested?.() ?? false;
  }

  /** Copies one resource; false when stopped before it was done. */
  private async copy(
    resource: CopiedResource,
    entry: ResourceCopyReport,
    progress: CopyProgress,
  ): Promise<boolean> {
    const { source, target } = this;
    const step = async <T>(
      records: readonly T[],
      write: (record: T) => Promise<boolean>,
    ): Promise<boolean> => {
      for (let start = 0; start < records.length; start += this.options.pageSize) {
        if (this.stopped()) return false;
        const page = records.slice(start, start + this.options.pageSize);
        for (const record of page) if (await write(record)) entry.written += 1;
        entry.source += page.length;
        progress.advance(page.length);
      }
      return true;
    };
    switch (resource) {
      case 'groups':
        return step(await source.groups.list(), async (group) => {
          await target.groups.restore(group);
          return true;
        });
      case 'users':
        return step(await source.users.list(), async (user) => {
          const credentials = await source.users.findCredentials(user.id);
          if (credentials === undefined) return false; // deleted meanwhile
          // Forced into another installation: the source's account takes its e-mail over.
          const holder = await target.users.findByEmail(user.email);
          if (holder !== undefined && holder.id !== user.id) await target.users.delete(holder.id);
          await target.users.restore({ ...user, ...credentials });
          return true;
        });
      case 'accessKeys':
        return step(await source.accessKeys.listCopies(), async (key) => {
          await target.accessKeys.restore(key);
          return true;
        });
      case 'devices':
        return step(await source.devices.listCopies(), async (device) => {
          await target.devices.restore(device);
          return true;
        });
      case 'pendingBoxes':
        return step(await source.devices.listPending(), async (box) => {
          await target.devices.restorePending(box);
          return true;
        });
      case 'alertSettings':
        return step(await alertSettings(source), async (settings) => {
          await target.alertOutbox.saveSettings(settings);
          return true;
        });
      case 'outbox':
        // Page by page: delivered messages stay in the outbox, so it grows with the years.
        return this.copyPages(
          (after, limit) => source.alertOutbox.listCopies(after, limit),
          async (page) => {
            await target.alertOutbox.restore(page);
            return page.length;
          },
          entry,
          progress,
        );
      case 'automationLog':
        return this.copyPages(
          (after, limit) => source.automationLog.listCopies(after, limit),
          (page) => target.automationLog.restore(page),
          entry,
          progress,
        );
      case 'serverSecrets':
        return step(await source.serverSecrets.list(), async ({ name, value }) => {
          await target.serverSecrets.restore(name, value);
          return true;
        });
      case 'notifications':
        for (const group of await groupNames(source)) {
          const copies = await source.notifications.listCopies(group);
          for (let start = 0; start < copies.length; start += this.options.pageSize) {
            if (this.stopped()) return false;
            const page = copies.slice(start, start + this.options.pageSize);
            // Stored once per (group, time, message): copying again adds nothing.
            entry.written += await target.notifications.addMissing(page);
            entry.source += page.length;
            progress.advance(page.length);
          }
        }
        return true;
      case 'stages':
        // Written over the target's own assignment of the group, if any; one it holds already is kept.
        return step(await source.stages.list(), async (assignment) => {
          const current = await target.stages.get(assignment.group);
          const { group, recipe, stage, startedAt, applied, appliedAt } = assignment;
          const copied = { group, recipe, stage, startedAt, applied, ...(appliedAt ? { appliedAt } : {}) };
          if (current !== undefined && sameAssignment(current, copied)) return false;
          return target.stages.compareAndSet(copied, current?.version ?? 0);
        });
      case 'engineState':
        return step(await source.engineState.list(), async ({ key, state }) => {
          await target.engineState.restore(key, state);
          return true;
        });
      case 'actions':
        for (const group of [...(await source.actions.groupRevisions()).keys()].sort()) {
          const done = await step(await source.actions.listByGroup(group), async (action) => {
            await target.actions.restore(action);
            return true;
          });
          if (!done) return false;
        }
        return true;
      case 'actionHistory':
        for (const group of await source.actionHistory.groups()) {
          // Oldest first, so entries of the same instant keep their order on the target.
          const entries = (await historyOf(source, group)).reverse();
          const done = await step(entries, async (historyEntry) => {
            await target.actionHistory.restore(historyEntry);
            return true;
          });
          if (!done) return false;
        }
        return true;
      case 'historyCharts':
        return step(await chartRecords(source), async (record) => {
          await target.historyCharts.restore(record);
          return true;
        });
      case 'firmware': {
        const present = new Set((await target.firmware.list()).map(firmwareKey));
        return step(await source.firmware.list(), async (image) => {
          if (present.has(firmwareKey(image))) return false;
          const stored = await source.firmware.read(image.sha256);
          if (stored === undefined) return false; // withdrawn meanwhile
          await target.firmware.add({ ...image, data: stored.data });
          return true;
        });
      }
      case 'readings':
        return this.copyReadings(entry, progress);
    }
  }

  /** A resource listed page by page after the last id read: constant memory, however many records. */
  private async copyPages<T extends { readonly id: string }>(
    list: PagedListing<T>,
    /** Writes one page together (one transaction or one bulk write); answers how many records it wrote. */
    write: (page: readonly T[]) => Promise<number>,
    entry: ResourceCopyReport,
    progress: CopyProgress,
  ): Promise<boolean> {
    let after: string | undefined;
    for (;;) {
      if (this.stopped()) return false;
      const page = await list(after, this.options.pageSize);
      if (page.length > 0) entry.written += await write(page);
      entry.source += page.length;
      progress.advance(page.length);
      const last = page[page.length - 1];
      if (last === undefined || page.length < this.options.pageSize) return true;
      after = last.id;
    }
  }

  /** Page by page, per group: constant memory whatever the number of readings. */
  private async copyReadings(entry: ResourceCopyReport, progress: CopyProgress): Promise<boolean> {
    for (const group of (await this.source.readings.groups()).sort()) {
      let after: ReadingCursor | undefined;
      for (;;) {
        if (this.stopped()) return false;
        const page = await this.source.readings.page({ group }, after, this.options.pageSize);
        if (page.length === 0) break;
        entry.written += await this.target.readings.add(page);
        entry.source += page.length;
        progress.advance(page.length);
        const last = page[page.length - 1];
        if (last === undefined || page.length < this.options.pageSize) break;
        after = { topic: last.topic, time: last.time };
      }
    }
    return true;
  }

  private async count(stores: CopyStores, resource: CopiedResource): Promise<number> {
    switch (resource) {
      case 'groups':
        return (await stores.groups.list()).length;
      case 'users':
        return (await stores.users.list()).length;
      case 'accessKeys':
        return (await stores.accessKeys.list()).length;
      case 'devices':
        return (await stores.devices.list()).length;
      case 'pendingBoxes':
        return (await stores.devices.listPending()).length;
      case 'outbox':
        return countPages((after, limit) => stores.alertOutbox.listCopies(after, limit), this.countPage());
      case 'automationLog':
        return countPages((after, limit) => stores.automationLog.listCopies(after, limit), this.countPage());
      case 'alertSettings':
        return (await alertSettings(stores)).length;
      case 'serverSecrets':
        return (await stores.serverSecrets.list()).length;
      case 'engineState':
        return (await stores.engineState.list()).length;
      case 'stages':
        return (await stores.stages.list()).length;
      case 'notifications': {
        let count = 0;
        for (const group of await groupNames(stores)) {
          count += (await stores.notifications.listCopies(group)).length;
        }
        return count;
      }
      case 'actions': {
        let count = 0;
        for (const group of (await stores.actions.groupRevisions()).keys()) {
          count += (await stores.actions.listByGroup(group)).length;
        }
        return count;
      }
      case 'actionHistory': {
        let count = 0;
        for (const group of await stores.actionHistory.groups())
          count += (await historyOf(stores, group)).length;
        return count;
      }
      case 'historyCharts':
        return (await chartRecords(stores)).length;
      case 'firmware':
        return (await stores.firmware.list()).length;
      case 'readings':
        return countReadings(stores.readings, this.countPage());
    }
  }

  /** Large pages: each page is one query (slow ones on FerretDB), and a count keeps no records. */
  private countPage(): number {
    return Math.max(this.options.pageSize, COUNT_PAGE);
  }

  /** A target that is empty or an earlier (partial) copy of this source holds nothing the source lacks. */
  private async refuseOtherInstallation(): Promise<void> {
    const refuse = (resource: ResourceName, what: string): never => {
      throw new ConflictError(
        resource,
        `the target store holds another installation's data (${what} that the source does not have); ` +
          'copy into an empty store, or give --force to copy into it anyway',
      );
    };
    for (const group of await this.target.groups.list()) {
      const known = await this.source.groups.findByName(group.name);
      if (known?.id !== group.id) refuse('group', `the group ${group.name}`);
    }
    for (const user of await this.target.users.list()) {
      if ((await this.source.users.findById(user.id)) === undefined) refuse('user', `the user ${user.email}`);
    }
    const sourceKeys = new Set((await this.source.accessKeys.list()).map((key) => key.id));
    for (const key of await this.target.accessKeys.list()) {
      if (!sourceKeys.has(key.id)) refuse('access-key', `the access key ${key.name}`);
    }
    const sourceGroups = new Set([
      ...(await this.source.readings.groups()),
      ...(await this.source.groups.list()).map((group) => group.name),
    ]);
    for (const group of await this.target.readings.groups()) {
      if (!sourceGroups.has(group)) refuse('reading', `readings of the group ${group}`);
    }
  }
}

function sameAssignment(a: NewStageAssignment, b: NewStageAssignment): boolean {
  const text = (x: NewStageAssignment): string =>
    JSON.stringify([x.group, x.recipe, x.stage, x.startedAt, x.applied, x.appliedAt ?? null]);
  return text(a) === text(b);
}
