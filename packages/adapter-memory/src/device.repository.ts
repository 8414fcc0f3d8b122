import { injectable } from 'inversify';
import {
  ConflictError,
  type Device,
  type DeviceCopy,
  type DeviceChanges,
  type DeviceKeys,
  type DeviceRepository,
  MAX_ONBOARDINGS_KEPT,
  macSpellings,
  type MoveRequest,
  type NewDevice,
  type Onboarding,
  type PendingDevice,
  type PendingSighting,
} from '@hortus/core';
import { newId } from './ids.js';
import { compareText } from './sorted.js';

interface StoredDevice extends Device {
  readonly keyHash?: string;
  readonly previousKeyHash?: string;
}

/** A copy without the key digests, with fresh dates and lists, so callers never hold stored objects. */
function toDevice(stored: StoredDevice): Device {
  return {
    id: stored.id,
    deviceId: stored.deviceId,
    group: stored.group,
    type: stored.type,
    ...(stored.locked === undefined ? {} : { locked: stored.locked }),
    ...(stored.moveRequest == null ? {} : { moveRequest: copyMove(stored.moveRequest) }),
    ...(stored.lastSeenAt === undefined ? {} : { lastSeenAt: new Date(stored.lastSeenAt) }),
    ...(stored.firmwareVersion === undefined ? {} : { firmwareVersion: stored.firmwareVersion }),
    ...(stored.bootedAt === undefined ? {} : { bootedAt: new Date(stored.bootedAt) }),
    ...(stored.onboardings === undefined
      ? {}
      : { onboardings: stored.onboardings.map(({ at, address }) => ({ at: new Date(at), address })) }),
    ...(stored.keyGeneration === undefined ? {} : { keyGeneration: stored.keyGeneration }),
    ...(stored.previousKeyGeneration === undefined
      ? {}
      : { previousKeyGeneration: stored.previousKeyGeneration }),
  };
}

function copyMove(move: MoveRequest): MoveRequest {
  return { ...move, at: new Date(move.at) };
}

function byGroupThenId(a: Device, b: Device): number {
  return compareText(a.group, b.group) || compareText(a.deviceId, b.deviceId);
}

/** Devices indexed by deviceId (unique across groups); pending boxes by the id they sent. */
@injectable()
export class InMemoryDeviceRepository implements DeviceRepository {
  private readonly byDeviceId = new Map<string, StoredDevice>();
  private readonly pending = new Map<string, PendingDevice>();
  /** Key digest to deviceId: every box request looks its key up. */
  private readonly byKeyHash = new Map<string, string>();

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
    return toDevice(stored);
  }

  async listByGroup(group: string): Promise<Device[]> {
    return [...this.byDeviceId.values()]
      .filter((device) => device.group === group)
      .sort(byGroupThenId)
      .map(toDevice);
  }

  async list(): Promise<Device[]> {
    return [...this.byDeviceId.values()].sort(byGroupThenId).map(toDevice);
  }

  async find(deviceId: string, mac: string | undefined): Promise<Device | undefined> {
    const exact = this.byDeviceId.get(deviceId);
    if (exact !== undefined) return toDevice(exact);
    if (mac === undefined) return undefined;
    for (const spelling of macSpellings(mac)) {
      const found = this.byDeviceId.get(spelling);
      if (found !== undefined) return toDevice(found);
    }
    return undefined;
  }

  async findByKeyHash(keyHash: string): Promise<{ device: Device; current: boolean } | undefined> {
    const device = this.byDeviceId.get(this.byKeyHash.get(keyHash) ?? '');
    if (device === undefined) return undefined;
    if (device.keyHash === keyHash) return { device: toDevice(device), current: true };
    if (device.previousKeyHash === keyHash) return { device: toDevice(device), current: false };
    return undefined;
  }

  async update(deviceId: string, changes: DeviceChanges): Promise<Device | undefined> {
    const stored = this.byDeviceId.get(deviceId);
    if (stored === undefined) return undefined;
    const updated = withChanges(stored, changes);
    this.byDeviceId.set(deviceId, updated);
    return toDevice(updated);
  }

  async setKeys(deviceId: string, keys: DeviceKeys): Promise<boolean> {
    const stored = this.byDeviceId.get(deviceId);
    if (stored === undefined) return false;
    this.forgetKeys(stored);
    this.byKeyHash.set(keys.currentHash, deviceId);
    if (keys.previous !== undefined) this.byKeyHash.set(keys.previous.hash, deviceId);
    const next: { -readonly [K in keyof StoredDevice]: StoredDevice[K] } = {
      ...stored,
      keyGeneration: keys.generation,
      keyHash: keys.currentHash,
    };
    delete next.previousKeyHash;
    delete next.previousKeyGeneration;
    if (keys.previous !== undefined) {
      next.previousKeyHash = keys.previous.hash;
      next.previousKeyGeneration = keys.previous.generation;
    }
    this.byDeviceId.set(deviceId, next);
    return true;
  }

  async recordOnboarding(deviceId: string, onboarding: Onboarding, changes: DeviceChanges): Promise<void> {
    const stored = this.byDeviceId.get(deviceId);
    if (stored === undefined) return;
    const onboardings = [
      { at: new Date(onboarding.at), address: onboarding.address },
      ...(stored.onboardings ?? []),
    ].slice(0, MAX_ONBOARDINGS_KEPT);
    this.byDeviceId.set(deviceId, {
      ...withChanges(stored, changes),
      lastSeenAt: new Date(onboarding.at),
      onboardings,
    });
  }

  async delete(group: string, deviceId: string): Promise<boolean> {
    const stored = this.byDeviceId.get(deviceId);
    if (stored === undefined || stored.group !== group) return false;
    this.forgetKeys(stored);
    this.byDeviceId.delete(deviceId);
    return true;
  }

  async deleteByGroup(group: string): Promise<number> {
    let removed = 0;
    for (const [deviceId, device] of this.byDeviceId) {
      if (device.group !== group) continue;
      this.forgetKeys(device);
      this.byDeviceId.delete(deviceId);
      removed += 1;
    }
    return removed;
  }

  private forgetKeys(device: StoredDevice): void {
    if (device.keyHash !== undefined) this.byKeyHash.delete(device.keyHash);
    if (device.previousKeyHash !== undefined) this.byKeyHash.delete(device.previousKeyHash);
  }

  async recordPending(sighting: PendingSighting, cap: number): Promise<boolean> {
    const known = this.pending.get(sighting.boxId);
    const { at, ...fields } = sighting;
    if (known === undefined) {
      if (cap <= 0) return false;
      // The least recently seen give way, so that a real new box always shows.
      const oldestFirst = [...this.pending.values()].sort(
        (a, b) => a.lastSeenAt.getTime() - b.lastSeenAt.getTime() || compareText(a.boxId, b.boxId),
      );
      for (const old of oldestFirst.slice(0, Math.max(0, this.pending.size - cap + 1)))
        this.pending.delete(old.boxId);
    }
    this.pending.set(sighting.boxId, {
      ...(known ?? {}),
      ...fields,
      firstSeenAt: known?.firstSeenAt ?? new Date(at),
      lastSeenAt: new Date(at),
      attempts: (known?.attempts ?? 0) + 1,
    });
    return true;
  }

  async listCopies(): Promise<DeviceCopy[]> {
    return [...this.byDeviceId.values()].sort(byGroupThenId).map((stored) => ({
      ...toDevice(stored),
      ...(stored.keyHash === undefined ? {} : { keyHash: stored.keyHash }),
      ...(stored.previousKeyHash === undefined ? {} : { previousKeyHash: stored.previousKeyHash }),
    }));
  }

  async restore(device: DeviceCopy): Promise<void> {
    const previous = this.byDeviceId.get(device.deviceId);
    if (previous?.keyHash !== undefined) this.byKeyHash.delete(previous.keyHash);
    if (previous?.previousKeyHash !== undefined) this.byKeyHash.delete(previous.previousKeyHash);
    const stored: StoredDevice = {
      ...toDevice(device),
      ...(device.keyHash === undefined ? {} : { keyHash: device.keyHash }),
      ...(device.previousKeyHash === undefined ? {} : { previousKeyHash: device.previousKeyHash }),
    };
    this.byDeviceId.set(stored.deviceId, stored);
    if (stored.keyHash !== undefined) this.byKeyHash.set(stored.keyHash, stored.deviceId);
    if (stored.previousKeyHash !== undefined) this.byKeyHash.set(stored.previousKeyHash, stored.deviceId);
  }

  async listPending(): Promise<PendingDevice[]> {
    return [...this.pending.values()]
      .sort((a, b) => b.lastSeenAt.getTime() - a.lastSeenAt.getTime() || compareText(a.boxId, b.boxId))
      .map((pending) => ({
        ...pending,
        firstSeenAt: new Date(pending.firstSeenAt),
        lastSeenAt: new Date(pending.lastSeenAt),
      }));
  }

  async removePending(boxId: string): Promise<boolean> {
    return this.pending.delete(boxId);
  }

  async removePendingSeenBefore(before: Date): Promise<number> {
    let removed = 0;
    for (const [boxId, pending] of this.pending) {
      if (pending.lastSeenAt.getTime() >= before.getTime()) continue;
      this.pending.delete(boxId);
      removed += 1;
    }
    return removed;
  }

  async restorePending(box: PendingDevice): Promise<void> {
    this.pending.set(box.boxId, {
      ...box,
      firstSeenAt: new Date(box.firstSeenAt),
      lastSeenAt: new Date(box.lastSeenAt),
    });
  }
}

/** The stored device with the given fields written; a null moveRequest removes it. */
function withChanges(stored: StoredDevice, changes: DeviceChanges): StoredDevice {
  const { moveRequest, ...rest } = changes;
  const next: { -readonly [K in keyof StoredDevice]: StoredDevice[K] } = {
    ...stored,
    ...(Object.fromEntries(Object.entries(rest).filter(([, value]) => value !== undefined)) as Omit<
      DeviceChanges,
      'moveRequest'
    >),
  };
  if (moveRequest === null) delete next.moveRequest;
  else if (moveRequest !== undefined) next.moveRequest = copyMove(moveRequest);
  return next;
}
