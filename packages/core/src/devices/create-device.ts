import { inject, injectable } from 'inversify';
import { requireText } from '../shared/validation.js';
import { type Device, requireDeviceId } from './device.js';
import { DEVICE_REPOSITORY, type DeviceRepository } from './device.port.js';

@injectable()
export class CreateDevice {
  constructor(@inject(DEVICE_REPOSITORY) private readonly devices: DeviceRepository) {}

  async execute(input: { deviceId: unknown; group: unknown; type: unknown }): Promise<Device> {
    return this.devices.create({
      deviceId: requireDeviceId(input.deviceId),
      group: requireText(input.group, 'group'),
      type: requireText(input.type, 'type'),
    });
  }
}
