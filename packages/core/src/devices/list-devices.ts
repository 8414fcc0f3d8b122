import { inject, injectable } from 'inversify';
import { requireText } from '../shared/validation.js';
import { type Device } from './device.js';
import { DEVICE_REPOSITORY, type DeviceRepository } from './device.port.js';

@injectable()
export class ListDevices {
  constructor(@inject(DEVICE_REPOSITORY) private readonly devices: DeviceRepository) {}

  async execute(input: { group: unknown }): Promise<Device[]> {
    return this.devices.listByGroup(requireText(input.group, 'group'));
  }
}
