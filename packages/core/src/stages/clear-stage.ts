import { inject, injectable } from 'inversify';
import { RecordAudit } from '../audit/record-audit.js';
import { type Actor } from '../shared/actor.js';
import { requireText } from '../shared/validation.js';
import { stagePart } from './stage-audit.js';
import { STAGE_REPOSITORY, type StageRepository } from './stage.port.js';

/** Drops the group's recipe; the alert ranges and thresholds its last stage wrote stay as they are. */
@injectable()
export class ClearStage {
  constructor(
    @inject(STAGE_REPOSITORY) private readonly stages: StageRepository,
    @inject(RecordAudit) private readonly audit: RecordAudit,
  ) {}

  async execute(input: { group: unknown; actor?: Actor }): Promise<{ group: string; removed: boolean }> {
    const group = requireText(input.group, 'group');
    const current = await this.stages.get(group);
    const removed = await this.stages.delete(group);
    if (removed && current !== undefined)
      await this.audit.execute(input.actor, {
        action: 'group.stage',
        target: group,
        group,
        before: stagePart(current),
        after: null,
      });
    return { group, removed };
  }
}
