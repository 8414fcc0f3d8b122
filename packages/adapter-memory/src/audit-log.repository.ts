import { injectable } from 'inversify';
import { type AuditEntry, type AuditLog, type AuditQuery, type NewAuditEntry } from '@hortus/core';
import { newId } from './ids.js';

/** Entries in the order recorded; copies in and out, so no caller can change a stored one. */
@injectable()
export class InMemoryAuditLog implements AuditLog {
  private readonly entries: AuditEntry[] = [];

  async record(entry: NewAuditEntry): Promise<AuditEntry> {
    const stored = structuredClone({ ...entry, id: newId() });
    this.entries.push(stored);
    return structuredClone(stored);
  }

  async list(query: AuditQuery): Promise<AuditEntry[]> {
    // Newest recording first, then by time (a stable sort keeps the recording order within an instant).
    const matching = this.entries
      .filter(
        (entry) =>
          (query.group === undefined || entry.group === query.group) &&
          (query.since === undefined || entry.at.getTime() >= query.since.getTime()),
      )
      .reverse()
      .sort((a, b) => b.at.getTime() - a.at.getTime());
    return matching.slice(0, query.limit).map((entry) => structuredClone(entry));
  }
}
