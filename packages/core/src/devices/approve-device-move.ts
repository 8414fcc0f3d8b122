import { inject, injectable } from 'inversify';
import { ConflictError, NotFoundError } from '../shared/errors.js';
import { type Device } from './device.js';
import { DEVICE_REPOSITORY, type DeviceRepository } from './device.port.js';
import { findNamedDevice } from './find-device.js';

@injectable()
export class ApproveDeviceMove {
  constructor(@inject(DEVICE_REPOSITORY) private readonly devices: DeviceRepository) {}

  /** Lets a locked device onboard once from the address of its refused onboarding; it stays locked. */
  async execute(input: { id: unknown }): Promise<Device> {
    const device = await findNamedDevice(this.devices, input.id);
    const move = device.moveRequest;
    if (move === undefined) {
      throw new ConflictError('device', `Device ${device.deviceId} has no refused onboarding to approve`);
    }
    const changed = await this.devices.update(device.deviceId, { moveRequest: { ...move, approved: true } });
    if (changed === undefined)
      throw new NotFoundError('device', `No device ${device.deviceId} is registered`);
    return changed;
  }
}
