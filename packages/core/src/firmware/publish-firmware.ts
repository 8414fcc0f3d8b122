import { inject, injectable } from 'inversify';
import { RecordAudit } from '../audit/record-audit.js';
import { type Actor } from '../shared/actor.js';
import { CLOCK, type Clock } from '../shared/clock.port.js';
import { optionalText } from '../shared/validation.js';
import { type FirmwareImage, requireFirmwareSize, requireSemver } from './firmware.js';
import {
  FIRMWARE_DIGEST,
  FIRMWARE_REPOSITORY,
  type FirmwareDigest,
  type FirmwareRepository,
} from './firmware.port.js';

/** Stores an image for every box or one group's; the same version for the same boxes twice is a conflict. */
@injectable()
export class PublishFirmware {
  constructor(
    @inject(FIRMWARE_REPOSITORY) private readonly firmware: FirmwareRepository,
    @inject(FIRMWARE_DIGEST) private readonly digest: FirmwareDigest,
    @inject(CLOCK) private readonly clock: Clock,
    @inject(RecordAudit) private readonly audit: RecordAudit,
  ) {}

  /** `force`: offered also to boxes that cannot update over the air or whose version is unknown. */
  async execute(input: {
    data: Uint8Array;
    version: unknown;
    group?: unknown;
    force?: boolean;
    actor?: Actor;
  }): Promise<FirmwareImage> {
    const version = requireSemver(input.version);
    const group = optionalText(input.group, 'group');
    requireFirmwareSize(input.data.byteLength);
    const image = {
      version,
      ...(group === undefined ? {} : { group }),
      size: input.data.byteLength,
      sha256: this.digest(input.data),
      publishedAt: this.clock.now(),
      ...(input.force === true ? { forced: true } : {}),
    };
    await this.firmware.add({ ...image, data: input.data });
    await this.audit.execute(input.actor, {
      action: 'firmware.publish',
      target: version,
      ...(group === undefined ? {} : { group }),
      after: image,
    });
    return image;
  }
}
