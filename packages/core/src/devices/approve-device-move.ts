import { inject, injectable } from 'inversify';
import { RecordAudit } from '../audit/record-audit.js';
import { type Actor } from '../shared/actor.js';
import { ConflictError, NotFoundError } from '../shared/errors.js';
import { type Device, type MoveRequest } from './device.js';
import { DEVICE_REPOSITORY, type DeviceRepository } from './device.port.js';
import { findNamedDevice } from './find-device.js';

@injectable()
export class ApproveDeviceMove {
  constructor(
    @inject(DEVICE_REPOSITORY) private readonly devices: DeviceRepository,
    @inject(RecordAudit) private readonly audit: RecordAudit,
  ) {}

  /** Lets a locked device onboard once from the address of its refused onboarding; it stays locked. */
  async execute(input: { id: unknown; actor?: Actor }): Promise<Device> {
    const device = await findNamedDevice(this.devices, input.id);
    const move = device.moveRequest;
    if (move === undefined) {
      throw new ConflictError('device', `Device ${device.deviceId} has no refused onboarding to approve`);
    }
    const changed = await this.devices.update(device.deviceId, { moveRequest: { ...move, approved: true } });
    if (changed === undefined)
      throw new NotFoundError('device', `No device ${device.deviceId} is registered`);
    await this.audit.execute(input.actor, {
      action: 'device.approve-move',
      target: device.deviceId,
      group: device.group,
      before: { ...moveOf(move), approved: move.approved === true },
      after: { ...moveOf(move), approved: true },
    });
    return changed;
  }
}

/** The refused onboarding as the trail shows it: from where, and from where it last onboarded. */
function moveOf(move: MoveRequest): { address: string; from?: string } {
  return { address: move.address, ...(move.from === undefined ? {} : { from: move.from }) };
}
