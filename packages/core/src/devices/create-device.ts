import { inject, injectable } from 'inversify';
import { RecordAudit } from '../audit/record-audit.js';
import { type Actor } from '../shared/actor.js';
import { CLOCK, type Clock } from '../shared/clock.port.js';
import { ConflictError, QuotaExceededError } from '../shared/errors.js';
import { CORE_LIMITS, type CoreLimits } from '../shared/settings.js';
import { requireText } from '../shared/validation.js';
import { BOX_SETTINGS, type BoxSettings } from './box-settings.js';
import { boxIdOfMac, macOfRegisteredId } from './device-id.js';
import { type Device, requireDeviceId } from './device.js';
import { DEVICE_REPOSITORY, type DeviceRepository } from './device.port.js';

export interface CreateDeviceInput {
  readonly deviceId: unknown;
  readonly group: unknown;
  readonly type: unknown;
  readonly actor?: Actor;
}

@injectable()
export class CreateDevice {
  constructor(
    @inject(DEVICE_REPOSITORY) private readonly devices: DeviceRepository,
    @inject(CORE_LIMITS) private readonly limits: CoreLimits,
    @inject(BOX_SETTINGS) private readonly boxes: BoxSettings,
    @inject(CLOCK) private readonly clock: Clock,
    @inject(RecordAudit) private readonly audit: RecordAudit,
  ) {}

  /**
   * Creating concurrently can pass the group's device quota by the number of racing calls at most. One MAC
   * is one device in whichever form it is written (see device-id.ts): a second spelling is a conflict.
   */
  async execute(input: CreateDeviceInput): Promise<Device> {
    const deviceId = requireDeviceId(input.deviceId);
    const group = requireText(input.group, 'group');
    const type = requireText(input.type, 'type');
    const mac = macOfRegisteredId(deviceId);
    const existing = await this.devices.find(deviceId, mac);
    if (existing !== undefined) throw new ConflictError('device', `A device ${deviceId} exists already`);
    const cap = this.limits.maxDevicesPerGroup;
    if ((await this.devices.listByGroup(group)).length >= cap) {
      throw new QuotaExceededError(
        'device',
        cap,
        `Group ${group} already holds ${cap} devices, the most allowed`,
      );
    }
    const created = await this.devices.create({ deviceId, group, type });
    await this.devices.removePending(deviceId);
    if (mac !== undefined) await this.devices.removePending(boxIdOfMac(mac));
    await this.audit.execute(input.actor, {
      action: 'device.create',
      target: created.deviceId,
      group: created.group,
      after: { group: created.group, type: created.type },
    });
    return created;
  }

  /**
   * Registration by a caller limited to some groups: whether another group holds the id is not theirs to
   * learn (ids are unique across groups), so that case answers as a success would, and is noted in the
   * pending list (`wantedBy`) for an administrator to settle with `hortus device claim --move`.
   * Answers whether the device was created.
   */
  async executeLimited(input: CreateDeviceInput, callerGroups: readonly string[]): Promise<boolean> {
    const deviceId = requireDeviceId(input.deviceId);
    const group = requireText(input.group, 'group');
    const existing = await this.devices.find(deviceId, macOfRegisteredId(deviceId));
    if (existing !== undefined && existing.group !== group && !callerGroups.includes(existing.group)) {
      const mac = macOfRegisteredId(deviceId);
      await this.devices.recordPending(
        {
          boxId: mac === undefined ? deviceId : boxIdOfMac(mac),
          ...(mac === undefined ? {} : { mac }),
          address: 'registration',
          at: this.clock.now(),
          wantedBy: group,
        },
        this.boxes.maxPending,
      );
      return false;
    }
    await this.execute(input);
    return true;
  }
}
