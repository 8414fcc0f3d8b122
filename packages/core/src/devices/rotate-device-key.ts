import { inject, injectable } from 'inversify';
import { RecordAudit } from '../audit/record-audit.js';
import { type Actor } from '../shared/actor.js';
import { BoxKeys } from './box-keys.js';
import { type Device } from './device.js';
import { DEVICE_REPOSITORY, type DeviceRepository } from './device.port.js';
import { findNamedDevice } from './find-device.js';

@injectable()
export class RotateDeviceKey {
  constructor(
    @inject(DEVICE_REPOSITORY) private readonly devices: DeviceRepository,
    @inject(BoxKeys) private readonly keys: BoxKeys,
    @inject(RecordAudit) private readonly audit: RecordAudit,
  ) {}

  /**
   * Moves the device to a new key generation. By default the key the box holds keeps working until it
   * onboards again (its next boot) and learns the new one; with `revoke` it stops at once, and the box is
   * refused until it is power-cycled.
   */
  async execute(input: { id: unknown; revoke?: boolean; actor?: Actor }): Promise<Device> {
    const device = await findNamedDevice(this.devices, input.id);
    const generation = (device.keyGeneration ?? 0) + 1;
    // The box holds the key of its last onboarding: during a second rotation that is still the first one's.
    const held = device.previousKeyGeneration ?? device.keyGeneration;
    const previous = input.revoke === true || held === undefined || held === 0 ? undefined : held;
    await this.devices.setKeys(device.deviceId, await this.keys.keysOf(device, generation, previous));
    await this.audit.execute(input.actor, {
      action: 'device.rotate-key',
      target: device.deviceId,
      group: device.group,
      before: { keyGeneration: device.keyGeneration ?? 0 },
      after: { keyGeneration: generation, oldKeyRevoked: previous === undefined },
    });
    return findNamedDevice(this.devices, device.deviceId);
  }
}
