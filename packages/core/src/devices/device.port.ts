import { type Device, type NewDevice } from './device.js';

export interface DeviceRepository {
  /** Throws ConflictError when a device with that deviceId exists. */
  create(device: NewDevice): Promise<Device>;
  /** Devices of the group ordered by deviceId. */
  listByGroup(group: string): Promise<Device[]>;
}

export const DEVICE_REPOSITORY = Symbol.for('hortus.DeviceRepository');
