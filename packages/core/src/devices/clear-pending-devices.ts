import { inject, injectable } from 'inversify';
import { NotFoundError } from '../shared/errors.js';
import { boxIdOfMac, macOfRegisteredId } from './device-id.js';
import { requireDeviceId } from './device.js';
import { DEVICE_REPOSITORY, type DeviceRepository } from './device.port.js';

/** The latest instant a Date holds: every pending box was seen before it. */
const END_OF_TIME = new Date(8.64e15);

@injectable()
export class ClearPendingDevices {
  constructor(@inject(DEVICE_REPOSITORY) private readonly devices: DeviceRepository) {}

  /** Forgets one pending box (by the id it sent or its label MAC), or all of them; answers how many. */
  async execute(input: { id?: unknown }): Promise<number> {
    if (input.id === undefined) return this.devices.removePendingSeenBefore(END_OF_TIME);
    const id = requireDeviceId(input.id);
    const mac = macOfRegisteredId(id);
    const removed =
      (await this.devices.removePending(id)) ||
      (mac !== undefined && (await this.devices.removePending(boxIdOfMac(mac))));
    if (!removed) throw new NotFoundError('device', `No box ${id} is pending`);
    return 1;
  }
}
