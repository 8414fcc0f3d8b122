import { inject, injectable } from 'inversify';
import { labelOfMac } from './device-id.js';
import { type PendingDevice } from './device.js';
import { DEVICE_REPOSITORY, type DeviceRepository } from './device.port.js';

@injectable()
export class ListPendingDevices {
  constructor(@inject(DEVICE_REPOSITORY) private readonly devices: DeviceRepository) {}

  async execute(): Promise<(PendingDevice & { readonly label?: string })[]> {
    return (await this.devices.listPending()).map((pending) =>
      pending.mac === undefined ? pending : { ...pending, label: labelOfMac(pending.mac) },
    );
  }
}
