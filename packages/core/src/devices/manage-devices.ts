import { inject, injectable } from 'inversify';
import { CLOCK, type Clock } from '../shared/clock.port.js';
import { ConflictError, NotFoundError } from '../shared/errors.js';
import { requireText } from '../shared/validation.js';
import { BoxKeys } from './box-keys.js';
import { BOX_SETTINGS, type BoxSettings } from './box-settings.js';
import { boxIdOfMac, labelOfMac, macOfBoxId, macOfRegisteredId } from './device-id.js';
import { type Device, PENDING_MAX_AGE_MS, type PendingDevice, requireDeviceId } from './device.js';
import { DEVICE_REPOSITORY, type DeviceRepository } from './device.port.js';

/** A device as operators see it: both id forms and whether it went silent. */
export interface DeviceView extends Device {
  /** The MAC as printed on the label, when the id is one. */
  readonly label?: string;
  /** What the box sends as its deviceId, when the id is a MAC. */
  readonly boxId?: string;
  /** Onboarded, then nothing for longer than DEVICE_SILENT_AFTER_MS. */
  readonly silent: boolean;
}

export function viewOf(device: Device, now: Date, silentAfterMs: number): DeviceView {
  const seen = device.lastSeenAt?.getTime();
  const mac = macOfRegisteredId(device.deviceId);
  return {
    ...device,
    ...(mac === undefined ? {} : { label: labelOfMac(mac), boxId: boxIdOfMac(mac) }),
    silent:
      device.onboardings !== undefined && device.onboardings.length > 0 && seen !== undefined
        ? now.getTime() - seen > silentAfterMs
        : false,
  };
}

/** The registered device an operator names in any form (label, dashes, bare hex, or what the box sends). */
export async function findNamedDevice(devices: DeviceRepository, idText: unknown): Promise<Device> {
  const id = requireDeviceId(idText);
  const device = await deviceNamed(devices, id);
  if (device === undefined) throw new NotFoundError('device', `No device ${id} is registered`);
  return device;
}

/** The same lookup, undefined when no device answers to the name. */
export async function deviceNamed(devices: DeviceRepository, id: string): Promise<Device | undefined> {
  return (await devices.find(id, macOfRegisteredId(id))) ?? (await devices.find(id, macOfBoxId(id)));
}

@injectable()
export class ListDeviceViews {
  constructor(
    @inject(DEVICE_REPOSITORY) private readonly devices: DeviceRepository,
    @inject(BOX_SETTINGS) private readonly settings: BoxSettings,
    @inject(CLOCK) private readonly clock: Clock,
  ) {}

  /** The devices of one group, or of every group when none is named. */
  async execute(input: { group?: unknown }): Promise<DeviceView[]> {
    const devices =
      input.group === undefined
        ? await this.devices.list()
        : await this.devices.listByGroup(requireText(input.group, 'group'));
    const now = this.clock.now();
    return devices.map((device) => viewOf(device, now, this.settings.silentAfterMs));
  }
}

@injectable()
export class ListPendingDevices {
  constructor(
    @inject(DEVICE_REPOSITORY) private readonly devices: DeviceRepository,
    @inject(CLOCK) private readonly clock: Clock,
  ) {}

  /** Boxes seen within PENDING_MAX_AGE_MS; older ones are gone at the next unknown onboarding. */
  async execute(): Promise<(PendingDevice & { readonly label?: string })[]> {
    const since = this.clock.now().getTime() - PENDING_MAX_AGE_MS;
    return (await this.devices.listPending())
      .filter((pending) => pending.lastSeenAt.getTime() >= since)
      .map((pending) =>
        pending.mac === undefined ? pending : { ...pending, label: labelOfMac(pending.mac) },
      );
  }
}

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

/**
 * Registers a box into a group: a pending one (by the id it sent or its label), or any MAC. A device that
 * another group holds is moved only with `move` (an administrator reclaiming a squatted id); it keeps its
 * key, so a box that learned its group at boot keeps working: rotate or revoke the key to cut off a holder.
 */
@injectable()
export class ClaimDevice {
  constructor(@inject(DEVICE_REPOSITORY) private readonly devices: DeviceRepository) {}

  async execute(input: { id: unknown; group: unknown; type?: unknown; move?: boolean }): Promise<Device> {
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

@injectable()
export class SetDeviceLock {
  constructor(@inject(DEVICE_REPOSITORY) private readonly devices: DeviceRepository) {}

  /**
   * A locked device onboards only from the address of its last onboarding; the key it holds keeps working
   * (revoke it to stop that). Locking or unlocking forgets a refused move.
   */
  async execute(input: { id: unknown; locked: boolean }): Promise<Device> {
    const device = await findNamedDevice(this.devices, input.id);
    const changed = await this.devices.update(device.deviceId, { locked: input.locked, moveRequest: null });
    if (changed === undefined)
      throw new NotFoundError('device', `No device ${device.deviceId} is registered`);
    return changed;
  }
}

@injectable()
export class ApproveDeviceMove {
  constructor(@inject(DEVICE_REPOSITORY) private readonly devices: DeviceRepository) {}

  /** Lets a locked device onboard once from the address of its refused move; it stays locked. */
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

@injectable()
export class RotateDeviceKey {
  constructor(
    @inject(DEVICE_REPOSITORY) private readonly devices: DeviceRepository,
    @inject(BoxKeys) private readonly keys: BoxKeys,
  ) {}

  /**
   * Moves the device to a new key generation. By default the key the box holds keeps working until it
   * onboards again (its next boot) and learns the new one; with `revoke` it stops at once, and the box is
   * refused until it is power-cycled.
   */
  async execute(input: { id: unknown; revoke?: boolean }): Promise<Device> {
    const device = await findNamedDevice(this.devices, input.id);
    const generation = (device.keyGeneration ?? 0) + 1;
    // The box holds the key of its last onboarding: during a second rotation that is still the first one's.
    const held = device.previousKeyGeneration ?? device.keyGeneration;
    const previous = input.revoke === true || held === undefined || held === 0 ? undefined : held;
    await this.devices.setKeys(device.deviceId, await this.keys.keysOf(device, generation, previous));
    return findNamedDevice(this.devices, device.deviceId);
  }
}
