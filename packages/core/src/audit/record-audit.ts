import { inject, injectable } from 'inversify';
import { ANONYMOUS_ACTOR, type Actor } from '../shared/actor.js';
import { CLOCK, type Clock } from '../shared/clock.port.js';
import { NameActor } from '../shared/name-actor.js';
import { type AuditEntry } from './audit-entry.js';
import { AUDIT_LOG, type AuditLog } from './audit-log.port.js';

/** What a use case says of its change; the recorder adds who (named) and when. */
export interface AuditChange {
  readonly action: string;
  readonly target: string;
  readonly group?: string;
  readonly before?: unknown;
  readonly after?: unknown;
}

/**
 * Writes one entry of the audit trail for a change a use case has just made. Every door passes its actor to
 * the use case (HTTP: the caller; CLI: the console with its OS user); one that passes none is recorded as
 * `anonymous`. A change that changed nothing (before equals after) is not recorded.
 */
@injectable()
export class RecordAudit {
  constructor(
    @inject(AUDIT_LOG) private readonly log: AuditLog,
    @inject(CLOCK) private readonly clock: Clock,
    @inject(NameActor) private readonly nameActor: NameActor,
  ) {}

  async execute(actor: Actor | undefined, change: AuditChange): Promise<AuditEntry | undefined> {
    const before = plain(change.before);
    const after = plain(change.after);
    if (before !== undefined && JSON.stringify(before) === JSON.stringify(after)) return undefined;
    return this.log.record({
      at: this.clock.now(),
      actor: await this.nameActor.execute(actor ?? ANONYMOUS_ACTOR),
      action: change.action,
      target: change.target,
      ...(change.group === undefined ? {} : { group: change.group }),
      ...(before === undefined ? {} : { before }),
      ...(after === undefined ? {} : { after }),
    });
  }
}

/** A value as JSON keeps it (dates as text, no undefined fields), so every store gives back the same. */
function plain(value: unknown): unknown {
  return value === undefined ? undefined : (JSON.parse(JSON.stringify(value)) as unknown);
}
