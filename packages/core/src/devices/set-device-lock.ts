import { inject, injectable } from 'inversify';
import { RecordAudit } from '../audit/record-audit.js';
import { type Actor } from '../shared/actor.js';
import { NotFoundError } from '../shared/errors.js';
import { type Device } from './device.js';
import { DEVICE_REPOSITORY, type DeviceRepository } from './device.port.js';
import { findNamedDevice } from './find-device.js';

@injectable()
export class SetDeviceLock {
  constructor(
    @inject(DEVICE_REPOSITORY) private readonly devices: DeviceRepository,
    @inject(RecordAudit) private readonly audit: RecordAudit,
  ) {}

  /**
   * A locked device onboards only from the address of its last onboarding; the key it holds keeps working
   * (revoke it to stop that). Locking or unlocking forgets a refused move.
   */
  async execute(input: { id: unknown; locked: boolean; actor?: Actor }): Promise<Device> {
    const device = await findNamedDevice(this.devices, input.id);
    const changed = await this.devices.update(device.deviceId, { locked: input.locked, moveRequest: null });
    if (changed === undefined)
      throw new NotFoundError('device', `No device ${device.deviceId} is registered`);
    await this.audit.execute(input.actor, {
      action: input.locked ? 'device.lock' : 'device.unlock',
      target: device.deviceId,
      group: device.group,
      before: { locked: device.locked === true },
      after: { locked: input.locked },
    });
    return changed;
  }
}
