import { inject, injectable } from 'inversify';
import { groupTimeZone } from '../groups/group-settings.js';
import { GROUP_REPOSITORY, type GroupRepository } from '../groups/group.port.js';
import { CLOCK, type Clock } from '../shared/clock.port.js';
import { NotFoundError } from '../shared/errors.js';
import { CORE_SETTINGS, type CoreSettings } from '../shared/settings.js';
import { requireText } from '../shared/validation.js';
import { type RecipeStage } from './recipe.js';
import { stageAt } from './stage-schedule.js';
import { STAGE_REPOSITORY, type StageRepository } from './stage.port.js';

export interface StageView {
  readonly group: string;
  readonly recipe: string;
  readonly source?: string;
  /** Where the group is now: the stored stage, moved on by date when its length is over. */
  readonly stage: RecipeStage;
  readonly startedAt: Date;
  readonly day: number;
  readonly endsAt?: Date;
  readonly next?: string;
  readonly stages: readonly string[];
  /** Whether the current stage's bands and thresholds are written into the group yet. */
  readonly applied: boolean;
  readonly appliedAt?: Date;
}

/** The group's recipe, its stage and the day within it; undefined when the group has no recipe. */
@injectable()
export class GetStage {
  constructor(
    @inject(STAGE_REPOSITORY) private readonly stages: StageRepository,
    @inject(GROUP_REPOSITORY) private readonly groups: GroupRepository,
    @inject(CLOCK) private readonly clock: Clock,
    @inject(CORE_SETTINGS) private readonly settings: CoreSettings,
  ) {}

  async execute(input: { group: unknown }): Promise<StageView | undefined> {
    const name = requireText(input.group, 'group');
    const group = await this.groups.findByName(name);
    if (group === undefined) throw new NotFoundError('group', `Group ${name} not found`);
    const assignment = await this.stages.get(group.name);
    if (assignment === undefined) return undefined;
    const timeZone = groupTimeZone(group.settings, this.settings.timeZone);
    const { recipe } = assignment;
    const position = stageAt(recipe, assignment.stage, assignment.startedAt, this.clock.now(), timeZone);
    const index = recipe.stages.indexOf(position.stage);
    const next = recipe.stages[index + 1]?.name;
    const moved = position.stage.name !== assignment.stage;
    return {
      group: group.name,
      recipe: recipe.name,
      ...(recipe.source === undefined ? {} : { source: recipe.source }),
      stage: position.stage,
      startedAt: position.startedAt,
      day: position.day,
      ...(position.endsAt === undefined ? {} : { endsAt: position.endsAt }),
      ...(next === undefined ? {} : { next }),
      stages: recipe.stages.map((stage) => stage.name),
      applied: assignment.applied && !moved,
      ...(assignment.appliedAt === undefined || moved ? {} : { appliedAt: assignment.appliedAt }),
    };
  }
}
