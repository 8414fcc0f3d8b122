import { inject, injectable } from 'inversify';
import { requireText } from '../shared/validation.js';
import { STAGE_REPOSITORY, type StageRepository } from './stage.port.js';

/** Drops the group's recipe; the alert ranges and thresholds its last stage wrote stay as they are. */
@injectable()
export class ClearStage {
  constructor(@inject(STAGE_REPOSITORY) private readonly stages: StageRepository) {}

  async execute(input: { group: unknown }): Promise<{ group: string; removed: boolean }> {
    const group = requireText(input.group, 'group');
    return { group, removed: await this.stages.delete(group) };
  }
}
