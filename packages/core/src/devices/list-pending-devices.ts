import { inject, injectable } from 'inversify';
import { CLOCK, type Clock } from '../shared/clock.port.js';
import { labelOfMac } from './device-id.js';
import { PENDING_MAX_AGE_MS, type PendingDevice } from './device.js';
import { DEVICE_REPOSITORY, type DeviceRepository } from './device.port.js';

@injectable()
export class ListPendingDevices {
  constructor(
    @inject(DEVICE_REPOSITORY) private readonly devices: DeviceRepository,
    @inject(CLOCK) private readonly clock: Clock,
  ) {}

  /** Boxes seen within PENDING_MAX_AGE_MS; older ones are removed at the next unknown onboarding. */
  async execute(): Promise<(PendingDevice & { readonly label?: string })[]> {
    const since = this.clock.now().getTime() - PENDING_MAX_AGE_MS;
    return (await this.devices.listPending())
      .filter((pending) => pending.lastSeenAt.getTime() >= since)
      .map((pending) =>
        pending.mac === undefined ? pending : { ...pending, label: labelOfMac(pending.mac) },
      );
  }
}
