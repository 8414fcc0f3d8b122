import { inject, injectable } from 'inversify';
import { QuotaExceededError } from '../shared/errors.js';
import { CORE_LIMITS, type CoreLimits } from '../shared/settings.js';
import { requireText } from '../shared/validation.js';
import { type Device, requireDeviceId } from './device.js';
import { DEVICE_REPOSITORY, type DeviceRepository } from './device.port.js';

@injectable()
export class CreateDevice {
  constructor(
    @inject(DEVICE_REPOSITORY) private readonly devices: DeviceRepository,
    @inject(CORE_LIMITS) private readonly limits: CoreLimits,
  ) {}

  /** Creating concurrently can pass the group's device quota by the number of racing calls at most. */
  async execute(input: { deviceId: unknown; group: unknown; type: unknown }): Promise<Device> {
    const deviceId = requireDeviceId(input.deviceId);
    const group = requireText(input.group, 'group');
    const type = requireText(input.type, 'type');
    const cap = this.limits.maxDevicesPerGroup;
    if ((await this.devices.listByGroup(group)).length >= cap) {
      throw new QuotaExceededError(
        'device',
        cap,
        `Group ${group} already holds ${cap} devices, the most allowed`,
      );
    }
    return this.devices.create({ deviceId, group, type });
  }
}
