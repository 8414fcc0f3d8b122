import { inject, injectable } from 'inversify';
import { optionalDate, optionalText, requireInteger } from '../shared/validation.js';
import { type AuditEntry, DEFAULT_AUDIT_LIMIT, MAX_AUDIT_LIMIT } from './audit-entry.js';
import { AUDIT_LOG, type AuditLog } from './audit-log.port.js';

/** The audit trail, newest first, of one group or all (`hortus audit`, `GET /api/audit`; admins only). */
@injectable()
export class ListAuditTrail {
  constructor(@inject(AUDIT_LOG) private readonly log: AuditLog) {}

  async execute(input: { group?: unknown; since?: unknown; limit?: unknown }): Promise<AuditEntry[]> {
    const group = optionalText(input.group, 'group');
    const since = optionalDate(input.since, 'since');
    const limit =
      input.limit === undefined || input.limit === null
        ? DEFAULT_AUDIT_LIMIT
        : requireInteger(input.limit, 'limit', 1, MAX_AUDIT_LIMIT);
    return this.log.list({
      ...(group === undefined ? {} : { group }),
      ...(since === undefined ? {} : { since }),
      limit,
    });
  }
}
