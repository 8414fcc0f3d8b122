import { inject, injectable } from 'inversify';
import { RecordAudit } from '../audit/record-audit.js';
import { type Actor } from '../shared/actor.js';
import { ConflictError, NotFoundError } from '../shared/errors.js';
import { requireText } from '../shared/validation.js';
import { boxIdOfMac, labelOfMac, macOfRegisteredId } from './device-id.js';
import { type Device, requireDeviceId } from './device.js';
import { DEVICE_REPOSITORY, type DeviceRepository } from './device.port.js';

/**
 * Registers a box into a group: a pending one (by the id it sent or its label), or any MAC. A device that
 * another group holds is moved only with `move` (an administrator reclaiming a squatted id); it keeps its
 * key, so a box that learned its group at boot keeps working: rotate or revoke the key to cut off a holder.
 */
@injectable()
export class ClaimDevice {
  constructor(
    @inject(DEVICE_REPOSITORY) private readonly devices: DeviceRepository,
    @inject(RecordAudit) private readonly audit: RecordAudit,
  ) {}

  async execute(input: {
    id: unknown;
    group: unknown;
    type?: unknown;
    move?: boolean;
    actor?: Actor;
  }): Promise<Device> {
    const id = requireDeviceId(input.id);
    const group = requireText(input.group, 'group');
    const type = input.type === undefined ? 'box' : requireText(input.type, 'type');
    const pending = (await this.devices.listPending()).find((entry) => entry.boxId === id);
    const mac = pending?.mac ?? macOfRegisteredId(id);
    const existing =
      (await this.devices.find(id, mac)) ??
      (pending === undefined ? undefined : await this.devices.find(pending.boxId, mac));
    if (existing !== undefined) {
      if (existing.group === group)
        throw new ConflictError('device', `Device ${existing.deviceId} is in group ${group} already`);
      if (input.move !== true) {
        throw new ConflictError(
          'device',
          `Device ${existing.deviceId} is registered in group ${existing.group}; claim it with --move to move it`,
        );
      }
      const moved = await this.devices.update(existing.deviceId, { group });
      if (moved === undefined)
        throw new NotFoundError('device', `No device ${existing.deviceId} is registered`);
      await this.forgetPending(mac, id);
      await this.audit.execute(input.actor, {
        action: 'device.claim',
        target: moved.deviceId,
        group,
        before: { group: existing.group },
        after: { group },
      });
      return moved;
    }
    const created = await this.devices.create({
      deviceId: mac === undefined ? id : labelOfMac(mac),
      group,
      type,
    });
    await this.forgetPending(mac, id);
    return created;
  }

  private async forgetPending(mac: string | undefined, id: string): Promise<void> {
    await this.devices.removePending(id);
    if (mac !== undefined) await this.devices.removePending(boxIdOfMac(mac));
  }
}
