import { type Device, type NewDevice } from './device.js';

export interface DeviceRepository {
  /** Throws ConflictError when a device with that deviceId exists. */
  create(device: NewDevice): Promise<Device>;
  /** Devices of the group ordered by deviceId. */
  listByGroup(group: string): Promise<Device[]>;
  /** Removes the device when it belongs to that group; false when no device of the group has that id. */
  delete(group: string, deviceId: string): Promise<boolean>;
  /** Removes every device of the group; answers how many. */
  deleteByGroup(group: string): Promise<number>;
}

export const DEVICE_REPOSITORY = Symbol.for('hortus.DeviceRepository');
