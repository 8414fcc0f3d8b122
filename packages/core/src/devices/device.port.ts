import {
  type Device,
  type DeviceCopy,
  type DeviceChanges,
  type DeviceKeys,
  type NewDevice,
  type Onboarding,
  type PendingDevice,
  type PendingSighting,
} from './device.js';

export interface DeviceRepository {
  /** Throws ConflictError when a device with that deviceId exists. */
  create(device: NewDevice): Promise<Device>;
  /** Devices of the group ordered by deviceId. */
  listByGroup(group: string): Promise<Device[]>;
  /** Every device, ordered by group then deviceId. */
  list(): Promise<Device[]>;
  /**
   * The device registered under exactly this deviceId, or else under one of macSpellings(mac) when a MAC
   * is given.
   */
  find(deviceId: string, mac: string | undefined): Promise<Device | undefined>;
  /** The device one of whose key digests (current or previous) this is, and which one matched. */
  findByKeyHash(keyHash: string): Promise<{ device: Device; current: boolean } | undefined>;
  /** Writes the given fields; undefined when no device has that deviceId. */
  update(deviceId: string, changes: DeviceChanges): Promise<Device | undefined>;
  /** Replaces the key digests (no previous key when `previous` is absent); false when no such device. */
  setKeys(deviceId: string, keys: DeviceKeys): Promise<boolean>;
  /** Notes an onboarding: kept newest first (at most MAX_ONBOARDINGS_KEPT), and the device was seen then. */
  recordOnboarding(deviceId: string, onboarding: Onboarding, changes: DeviceChanges): Promise<void>;
  /** Every device with its key digests, ordered by group then deviceId (`hortus store copy`). */
  listCopies(): Promise<DeviceCopy[]>;
  /**
   * Stores a device copied from another store as it is (id, keys, onboardings, times), replacing the
   * device with that deviceId: copying it again changes nothing.
   */
  restore(device: DeviceCopy): Promise<void>;
  /** Removes the device when it belongs to that group; false when no device of the group has that id. */
  delete(group: string, deviceId: string): Promise<boolean>;
  /** Removes every device of the group; answers how many. */
  deleteByGroup(group: string): Promise<number>;

  /**
   * Notes a box that is not registered: a known boxId gets its last sighting (attempts + 1); a new one is
   * added, and when `cap` are held the least recently seen ones give way to it. False only when `cap` is 0.
   */
  recordPending(sighting: PendingSighting, cap: number): Promise<boolean>;
  /** Removes the pending boxes last seen before `before`; answers how many. */
  removePendingSeenBefore(before: Date): Promise<number>;
  /** Pending boxes, most recently seen first. */
  listPending(): Promise<PendingDevice[]>;
  /** False when no pending box has that boxId. */
  removePending(boxId: string): Promise<boolean>;
  /**
   * Stores a pending box copied from another store as it is (`hortus store copy`), replacing the one with
   * that boxId whatever the cap: copying it again changes nothing.
   */
  restorePending(box: PendingDevice): Promise<void>;
}

export const DEVICE_REPOSITORY = Symbol.for('hortus.DeviceRepository');
