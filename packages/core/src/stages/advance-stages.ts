import { inject, injectable, optional } from 'inversify';
import { RecordAudit } from '../audit/record-audit.js';
import { groupTimeZone } from '../groups/group-settings.js';
import { GROUP_REPOSITORY, type GroupRepository } from '../groups/group.port.js';
import { CORE_SETTINGS, type CoreSettings } from '../shared/settings.js';
import { LOGGER, type Logger, silentLogger } from '../shared/logger.port.js';
import { stageAt } from './stage-schedule.js';
import { STAGE_ENGINE_ACTOR, startedPart, stagePart } from './stage-audit.js';
import { StartStage, type StageStarted } from './start-stage.js';
import { STAGE_REPOSITORY, type StageAssignment, type StageRepository } from './stage.port.js';

/**
 * Moves every group whose stage's length is over to its next stage and writes the new stage into the
 * group; also writes a stage that was changed but not yet written (a crash in between). Run by the
 * automation engine; several engines on one store race on the assignment's version, and one wins.
 */
@injectable()
export class AdvanceStages {
  constructor(
    @inject(STAGE_REPOSITORY) private readonly stages: StageRepository,
    @inject(GROUP_REPOSITORY) private readonly groups: GroupRepository,
    @inject(StartStage) private readonly start: StartStage,
    @inject(CORE_SETTINGS) private readonly settings: CoreSettings,
    @inject(RecordAudit) private readonly audit: RecordAudit,
    @inject(LOGGER) @optional() private readonly logger: Logger = silentLogger,
  ) {}

  async execute(now: Date): Promise<StageStarted[]> {
    const started: StageStarted[] = [];
    for (const assignment of await this.stages.list()) {
      try {
        const result = await this.advance(assignment, now);
        if (result !== undefined) started.push(result);
      } catch (error) {
        // One group's broken record must not hold back the others.
        this.logger.error('stage.advance-failed', { group: assignment.group, error: String(error) });
      }
    }
    return started;
  }

  private async advance(assignment: StageAssignment, now: Date): Promise<StageStarted | undefined> {
    const group = await this.groups.findByName(assignment.group);
    if (group === undefined) return undefined;
    const timeZone = groupTimeZone(group.settings, this.settings.timeZone);
    const position = stageAt(assignment.recipe, assignment.stage, assignment.startedAt, now, timeZone);
    let current = assignment;
    if (position.stage.name !== assignment.stage) {
      const { version, group: name, recipe } = assignment;
      const moved = {
        group: name,
        recipe,
        stage: position.stage.name,
        startedAt: position.startedAt,
        applied: false,
      };
      if (!(await this.stages.compareAndSet(moved, version))) return undefined;
      current = { ...moved, version: version + 1 };
      const started = await this.start.execute(current);
      await this.audit.execute(STAGE_ENGINE_ACTOR, {
        action: 'group.stage',
        target: name,
        group: name,
        before: stagePart(assignment),
        after: started === undefined ? stagePart(moved) : startedPart(moved, started),
      });
      return started;
    }
    return current.applied ? undefined : this.start.execute(current);
  }
}
