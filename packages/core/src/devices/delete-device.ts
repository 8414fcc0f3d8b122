import { inject, injectable } from 'inversify';
import { RecordAudit } from '../audit/record-audit.js';
import { type Actor } from '../shared/actor.js';
import { NotFoundError } from '../shared/errors.js';
import { requireText } from '../shared/validation.js';
import { requireDeviceId } from './device.js';
import { DEVICE_REPOSITORY, type DeviceRepository } from './device.port.js';

/** Removes one device (box) of a group; NotFoundError when the group has no device of that id. */
@injectable()
export class DeleteDevice {
  constructor(
    @inject(DEVICE_REPOSITORY) private readonly devices: DeviceRepository,
    @inject(RecordAudit) private readonly audit: RecordAudit,
  ) {}

  async execute(input: {
    group: unknown;
    deviceId: unknown;
    actor?: Actor;
  }): Promise<{ group: string; deviceId: string }> {
    const group = requireText(input.group, 'group');
    const deviceId = requireDeviceId(input.deviceId);
    if (!(await this.devices.delete(group, deviceId))) {
      throw new NotFoundError('device', `Group ${group} has no device ${deviceId}`);
    }
    await this.audit.execute(input.actor, {
      action: 'device.delete',
      target: deviceId,
      group,
      before: { deviceId, group },
    });
    return { group, deviceId };
  }
}
