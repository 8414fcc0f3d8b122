import { injectable } from 'inversify';
import { ConflictError, type Device, type DeviceRepository, type NewDevice } from '@hortus/core';
import { newId } from './ids.js';
import { compareText } from './sorted.js';

interface StoredDevice {
  readonly id: string;
  readonly deviceId: string;
  readonly group: string;
  readonly type: string;
}

function toDevice(stored: StoredDevice): Device {
  return { id: stored.id, deviceId: stored.deviceId, group: stored.group, type: stored.type };
}

/** Devices indexed by deviceId (unique across groups) and by group. */
@injectable()
export class InMemoryDeviceRepository implements DeviceRepository {
  private readonly byDeviceId = new Map<string, StoredDevice>();
  private readonly byGroup = new Map<string, StoredDevice[]>();

  async create(device: NewDevice): Promise<Device> {
    if (this.byDeviceId.has(device.deviceId)) {
      throw new ConflictError('device', `A device ${device.deviceId} exists already`);
    }
    const stored: StoredDevice = {
      id: newId(),
      deviceId: device.deviceId,
      group: device.group,
      type: device.type,
    };
    this.byDeviceId.set(stored.deviceId, stored);
    const members = this.byGroup.get(stored.group);
    if (members === undefined) this.byGroup.set(stored.group, [stored]);
    else members.push(stored);
    return toDevice(stored);
  }

  async listByGroup(group: string): Promise<Device[]> {
    const members = this.byGroup.get(group) ?? [];
    return [...members].sort((a, b) => compareText(a.deviceId, b.deviceId)).map(toDevice);
  }

  async delete(group: string, deviceId: string): Promise<boolean> {
    const stored = this.byDeviceId.get(deviceId);
    if (stored === undefined || stored.group !== group) return false;
    this.byDeviceId.delete(deviceId);
    const rest = (this.byGroup.get(group) ?? []).filter((member) => member !== stored);
    if (rest.length === 0) this.byGroup.delete(group);
    else this.byGroup.set(group, rest);
    return true;
  }

  async deleteByGroup(group: string): Promise<number> {
    const members = this.byGroup.get(group) ?? [];
    for (const member of members) this.byDeviceId.delete(member.deviceId);
    this.byGroup.delete(group);
    return members.length;
  }
}
