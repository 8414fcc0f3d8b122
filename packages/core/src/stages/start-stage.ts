import { inject, injectable, optional } from 'inversify';
import { ACTION_REPOSITORY, type ActionRepository } from '../actions/action.port.js';
import { requireSettings } from '../groups/group.js';
import { GROUP_REPOSITORY, type GroupRepository } from '../groups/group.port.js';
import { CLOCK, type Clock } from '../shared/clock.port.js';
import { LOGGER, type Logger, silentLogger } from '../shared/logger.port.js';
import { requireStage } from './recipe.js';
import { type RangeChange, withStageBands, withStageThresholds } from './stage-targets.js';
import { STAGE_REPOSITORY, type StageAssignment, type StageRepository } from './stage.port.js';

/** What writing a stage into its group did. */
export interface StageStarted {
  readonly group: string;
  readonly recipe: string;
  readonly stage: string;
  readonly ranges: readonly RangeChange[];
  /** Sensor rules whose threshold changed, and rules added, by the stage's thresholds. */
  readonly rulesUpdated: number;
  readonly rulesAdded: number;
  /** Actions the stage's thresholds name that the group does not have. */
  readonly missingActions: readonly string[];
}

/**
 * Writes a stage's bands into its group's alert ranges and its thresholds into the group's sensor rules,
 * logs it, then marks the assignment applied. Used when a stage is assigned and when it advances by date;
 * each stage is written once, so later edits by people stand until the next stage.
 */
@injectable()
export class StartStage {
  constructor(
    @inject(STAGE_REPOSITORY) private readonly stages: StageRepository,
    @inject(GROUP_REPOSITORY) private readonly groups: GroupRepository,
    @inject(ACTION_REPOSITORY) private readonly actions: ActionRepository,
    @inject(CLOCK) private readonly clock: Clock,
    @inject(LOGGER) @optional() private readonly logger: Logger = silentLogger,
  ) {}

  /** Answers undefined when another writer changed the assignment meanwhile (it writes its own). */
  async execute(assignment: StageAssignment): Promise<StageStarted | undefined> {
    const stage = requireStage(assignment.recipe, assignment.stage);
    const group = await this.groups.findByName(assignment.group);
    if (group === undefined) return undefined;
    const { settings, changes } = withStageBands(group.settings, stage);
    await this.groups.replaceSettings(group.name, requireSettings(settings));
    let rulesUpdated = 0;
    let rulesAdded = 0;
    const missingActions: string[] = [];
    const objects = [...new Set(stage.rules.map((rule) => rule.object))];
    for (const object of objects) {
      const action = await this.actions.find(group.name, object);
      if (action === undefined) {
        missingActions.push(object);
        continue;
      }
      const outcome = withStageThresholds(
        action.automations,
        stage.rules.filter((rule) => rule.object === object),
      );
      if (outcome.updated + outcome.added > 0)
        await this.actions.setAutomations(group.name, object, outcome.automations);
      rulesUpdated += outcome.updated;
      rulesAdded += outcome.added;
    }
    const now = this.clock.now();
    const { version, ...rest } = assignment;
    const marked = await this.stages.compareAndSet({ ...rest, applied: true, appliedAt: now }, version);
    const started: StageStarted = {
      group: group.name,
      recipe: assignment.recipe.name,
      stage: stage.name,
      ranges: changes,
      rulesUpdated,
      rulesAdded,
      missingActions,
    };
    this.logger.info('stage.started', { ...started, startedAt: assignment.startedAt.toISOString() });
    if (missingActions.length > 0)
      this.logger.warn('stage.missing-actions', { group: group.name, stage: stage.name, missingActions });
    return marked ? started : undefined;
  }
}
