import { inject, injectable } from 'inversify';
import { RecordAudit } from '../audit/record-audit.js';
import { type Actor } from '../shared/actor.js';
import { groupTimeZone } from '../groups/group-settings.js';
import { GROUP_REPOSITORY, type GroupRepository } from '../groups/group.port.js';
import { CLOCK, type Clock } from '../shared/clock.port.js';
import { ConflictError, InvalidInputError, NotFoundError } from '../shared/errors.js';
import { CORE_SETTINGS, type CoreSettings } from '../shared/settings.js';
import { fromLocal } from '../shared/time-zone.js';
import { parseDateTime, requireText } from '../shared/validation.js';
import { parseRecipe, type RecipeStage, requireStage } from './recipe.js';
import { stageAt } from './stage-schedule.js';
import { startedPart, stagePart } from './stage-audit.js';
import { StartStage, type StageStarted } from './start-stage.js';
import { STAGE_REPOSITORY, type StageRepository } from './stage.port.js';

export interface StageChange {
  readonly group: unknown;
  /** A recipe as its file holds it; absent: the group's assigned recipe, its stage changed by hand. */
  readonly recipe?: unknown;
  /** Absent with a new recipe: its first stage. */
  readonly stage?: unknown;
  /** When the stage started: a date (local midnight in the group's zone) or a date-time; absent: now. */
  readonly started?: unknown;
  readonly actor?: Actor;
}

const datePattern = /^(\d{4})-(\d{2})-(\d{2})$/u;

/** A start given as a date is the local midnight of that day in the group's zone. */
function startOf(value: unknown, timeZone: string): Date | undefined {
  if (value === undefined) return undefined;
  const text = requireText(value, 'started', 40).trim();
  const date = datePattern.exec(text);
  const parsed =
    date === null
      ? parseDateTime(text)
      : fromLocal({ year: Number(date[1]), month: Number(date[2]), day: Number(date[3]) }, timeZone);
  if (parsed === undefined || Number.isNaN(parsed.getTime()))
    throw InvalidInputError.forField(
      'started',
      'must be a date (2026-03-01) or a date-time with Z or an offset',
    );
  return parsed;
}

/**
 * Assigns a recipe and stage to a group, or moves the group to another stage of its recipe by hand. A
 * start in the past counts the stages' lengths from it, so the group may land in a later stage. The
 * stage's bands and thresholds are written into the group at once.
 */
@injectable()
export class AssignStage {
  constructor(
    @inject(STAGE_REPOSITORY) private readonly stages: StageRepository,
    @inject(GROUP_REPOSITORY) private readonly groups: GroupRepository,
    @inject(StartStage) private readonly start: StartStage,
    @inject(CLOCK) private readonly clock: Clock,
    @inject(CORE_SETTINGS) private readonly settings: CoreSettings,
    @inject(RecordAudit) private readonly audit: RecordAudit,
  ) {}

  async execute(change: StageChange): Promise<StageStarted> {
    const name = requireText(change.group, 'group');
    const group = await this.groups.findByName(name);
    if (group === undefined) throw new NotFoundError('group', `Group ${name} not found`);
    const timeZone = groupTimeZone(group.settings, this.settings.timeZone);
    const current = await this.stages.get(group.name);
    const recipe = change.recipe === undefined ? current?.recipe : parseRecipe(change.recipe);
    if (recipe === undefined)
      throw InvalidInputError.forField('recipe', `group ${group.name} has no recipe yet: give one`);
    if (change.recipe === undefined && change.stage === undefined)
      throw InvalidInputError.forField('stage', 'name the stage to move to');
    // A parsed recipe has at least one stage.
    const stage =
      change.stage === undefined ? (recipe.stages[0] as RecipeStage) : requireStage(recipe, change.stage);
    const now = this.clock.now();
    const started = startOf(change.started, timeZone) ?? now;
    if (started.getTime() > now.getTime())
      throw InvalidInputError.forField('started', 'must not lie in the future');
    const position = stageAt(recipe, stage.name, started, now, timeZone);
    const assignment = {
      group: group.name,
      recipe,
      stage: position.stage.name,
      startedAt: position.startedAt,
      applied: false,
    };
    const version = current?.version ?? 0;
    if (!(await this.stages.compareAndSet(assignment, version)))
      throw new ConflictError('group', `The stage of group ${group.name} changed meanwhile: try again`);
    const result = await this.start.execute({ ...assignment, version: version + 1 });
    if (result === undefined)
      throw new ConflictError('group', `The stage of group ${group.name} changed meanwhile: try again`);
    await this.audit.execute(change.actor, {
      action: 'group.stage',
      target: group.name,
      group: group.name,
      before: current === undefined ? null : stagePart(current),
      after: startedPart(assignment, result),
    });
    return result;
  }
}
