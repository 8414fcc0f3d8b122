import { inject, injectable } from 'inversify';
import { NotFoundError } from '../shared/errors.js';
import { requireText } from '../shared/validation.js';
import { type StoredFirmwareImage } from './firmware.js';
import { FIRMWARE_REPOSITORY, type FirmwareRepository } from './firmware.port.js';

/** The bytes of a published image by digest; NotFoundError once it is withdrawn. */
@injectable()
export class ReadFirmwareImage {
  constructor(@inject(FIRMWARE_REPOSITORY) private readonly firmware: FirmwareRepository) {}

  async execute(input: { sha256: unknown }): Promise<StoredFirmwareImage> {
    const sha256 = requireText(input.sha256, 'sha256', 64).toLowerCase();
    const image = /^[0-9a-f]{64}$/u.test(sha256) ? await this.firmware.read(sha256) : undefined;
    if (image === undefined) throw new NotFoundError('firmware', 'No such firmware image');
    return image;
  }
}
