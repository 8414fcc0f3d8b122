import { fromLocal, toLocal } from '../shared/time-zone.js';
import { type Recipe, type RecipeStage } from './recipe.js';

export interface StagePosition {
  readonly stage: RecipeStage;
  readonly startedAt: Date;
  /** 1 on the stage's first local day. */
  readonly day: number;
  /** When the stage gives way to the next one by date; absent for a stage without a length or the last. */
  readonly endsAt?: Date;
}

const DAY_MS = 86_400_000;

function localDayNumber(instant: Date, timeZone: string): number {
  const local = toLocal(instant, timeZone);
  return Date.UTC(local.year, local.month - 1, local.day) / DAY_MS;
}

/**
 * When a stage of `days` days that started at `startedAt` ends: the same local time `days` local days
 * later, so a daylight-saving change does not move the change of stage by an hour.
 */
export function stageEnd(startedAt: Date, days: number, timeZone: string): Date {
  const local = toLocal(startedAt, timeZone);
  return fromLocal({ ...local, day: local.day + days }, timeZone);
}

/**
 * Where the group is at `now` after `stageName` started at `startedAt`: stages with a length give way to
 * the next when it is over (several, when the start lies far back); a stage without a length, or the last,
 * lasts until changed by hand.
 */
export function stageAt(
  recipe: Recipe,
  stageName: string,
  startedAt: Date,
  now: Date,
  timeZone: string,
): StagePosition {
  let index = Math.max(
    0,
    recipe.stages.findIndex((stage) => stage.name === stageName),
  );
  let start = startedAt;
  for (;;) {
    const stage = recipe.stages[index] as RecipeStage;
    const last = index === recipe.stages.length - 1;
    const endsAt = stage.days === undefined || last ? undefined : stageEnd(start, stage.days, timeZone);
    if (endsAt !== undefined && endsAt.getTime() <= now.getTime()) {
      start = endsAt;
      index += 1;
      continue;
    }
    const day = Math.max(1, localDayNumber(now, timeZone) - localDayNumber(start, timeZone) + 1);
    return { stage, startedAt: start, day, ...(endsAt === undefined ? {} : { endsAt }) };
  }
}
