import { inject, injectable } from 'inversify';
import { RecordAudit } from '../audit/record-audit.js';
import { type Actor } from '../shared/actor.js';
import { NotFoundError } from '../shared/errors.js';
import { optionalText } from '../shared/validation.js';
import { requireSemver } from './firmware.js';
import { FIRMWARE_REPOSITORY, type FirmwareRepository } from './firmware.port.js';

/** Withdraws one published image: boxes are no longer offered it, and its download answers 404. */
@injectable()
export class WithdrawFirmware {
  constructor(
    @inject(FIRMWARE_REPOSITORY) private readonly firmware: FirmwareRepository,
    @inject(RecordAudit) private readonly audit: RecordAudit,
  ) {}

  async execute(input: { version: unknown; group?: unknown; actor?: Actor }): Promise<void> {
    const version = requireSemver(input.version);
    const group = optionalText(input.group, 'group');
    if (!(await this.firmware.remove(version, group))) {
      const boxes = group === undefined ? 'every box' : `group ${group}`;
      throw new NotFoundError('firmware', `No firmware ${version} is published for ${boxes}`);
    }
    await this.audit.execute(input.actor, {
      action: 'firmware.withdraw',
      target: version,
      ...(group === undefined ? {} : { group }),
      before: { version, ...(group === undefined ? {} : { group }) },
    });
  }
}
