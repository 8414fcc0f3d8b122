import { type AuditEntry, type AuditQuery, type NewAuditEntry } from './audit-entry.js';

/** The audit trail: append-only; nothing changes or removes an entry (deleting a group keeps its entries). */
export interface AuditLog {
  /** Stores the entry; its before and after come back as given (JSON values). */
  record(entry: NewAuditEntry): Promise<AuditEntry>;
  /** Entries matching the query, newest first (entries of one instant: the last recorded first). */
  list(query: AuditQuery): Promise<AuditEntry[]>;
}

export const AUDIT_LOG = Symbol.for('hortus.AuditLog');
