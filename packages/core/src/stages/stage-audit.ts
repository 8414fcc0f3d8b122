import { type StageStarted } from './start-stage.js';
import { type NewStageAssignment } from './stage.port.js';

/** Who moves a group to its next stage by date, in the audit trail. */
export const STAGE_ENGINE_ACTOR = Object.freeze({ kind: 'engine', id: 'stage' } as const);

/** A group's place in its recipe as the audit trail shows it (the recipe by name: the file may be long). */
export function stagePart(assignment: Pick<NewStageAssignment, 'recipe' | 'stage' | 'startedAt'>): {
  recipe: string;
  stage: string;
  startedAt: Date;
} {
  return { recipe: assignment.recipe.name, stage: assignment.stage, startedAt: assignment.startedAt };
}

/** The new place with what starting the stage wrote into the group (alert ranges, rule thresholds). */
export function startedPart(
  assignment: Pick<NewStageAssignment, 'recipe' | 'stage' | 'startedAt'>,
  started: StageStarted,
): ReturnType<typeof stagePart> & Pick<StageStarted, 'ranges' | 'rulesUpdated' | 'rulesAdded'> {
  return {
    ...stagePart(assignment),
    ranges: started.ranges,
    rulesUpdated: started.rulesUpdated,
    rulesAdded: started.rulesAdded,
  };
}
