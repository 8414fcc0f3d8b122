import { inject, injectable } from 'inversify';
import { type FirmwareImage } from './firmware.js';
import { FIRMWARE_REPOSITORY, type FirmwareRepository } from './firmware.port.js';

@injectable()
export class ListFirmware {
  constructor(@inject(FIRMWARE_REPOSITORY) private readonly firmware: FirmwareRepository) {}

  async execute(): Promise<FirmwareImage[]> {
    return this.firmware.list();
  }
}
