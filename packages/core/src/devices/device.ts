import { InvalidInputError } from '../shared/errors.js';
import { requireText } from '../shared/validation.js';

/** One onboarding request of a box (`GET /api/hardware`): when, and from which address. */
export interface Onboarding {
  readonly at: Date;
  readonly address: string;
}

/**
 * A locked device's onboarding from an address other than its last one: refused, and kept so that an
 * administrator sees it and may approve the move (`hortus device approve-move`).
 */
export interface MoveRequest {
  readonly at: Date;
  readonly address: string;
  /** The address it last onboarded from; absent when it never onboarded. */
  readonly from?: string;
  /** Set by an administrator: the next onboarding from `address` is accepted. */
  readonly approved?: boolean;
}

/** A pending box not seen for this long is dropped from the list (a real box asks at every boot). */
export const PENDING_MAX_AGE_MS = 7 * 86_400_000;

/** The most recent onboardings kept per device, newest first. */
export const MAX_ONBOARDINGS_KEPT = 10;

export interface Device {
  readonly id: string;
  /** The box's MAC address in hex as registered; unique across all groups, since one box is one device. */
  readonly deviceId: string;
  readonly group: string;
  readonly type: string;
  /**
   * While set, onboardings are accepted only from the address of the last one (or an approved move); keys
   * already issued keep working (`hortus device lock`).
   */
  readonly locked?: boolean;
  /** The latest refused onboarding of the locked device from another address, until it onboards again. */
  readonly moveRequest?: MoveRequest;
  /** The last request of the box: onboarding, readings or actions. */
  readonly lastSeenAt?: Date;
  /** The `updateVersion` header of the last onboarding. */
  readonly firmwareVersion?: string;
  /** When the box started, from the `lastactive` header (milliseconds since boot) of its last onboarding. */
  readonly bootedAt?: Date;
  /** Newest first, at most MAX_ONBOARDINGS_KEPT. */
  readonly onboardings?: readonly Onboarding[];
  /** Which generation of the device's key is current; 0 until the first onboarding issued one. */
  readonly keyGeneration?: number;
  /** Set during a rotation: the key of this generation still works, until the box onboards again. */
  readonly previousKeyGeneration?: number;
}

export type NewDevice = Pick<Device, 'deviceId' | 'group' | 'type'>;

/** A device with the digests of its keys: what `hortus store copy` reads and writes as it is. */
export interface DeviceCopy extends Device {
  readonly keyHash?: string;
  readonly previousKeyHash?: string;
}

/** A box that asked to onboard but is not registered: shown to operators, who may claim it. */
export interface PendingDevice {
  /** The id as the box sent it. */
  readonly boxId: string;
  readonly mac?: string;
  readonly firstSeenAt: Date;
  readonly lastSeenAt: Date;
  readonly firmwareVersion?: string;
  readonly address: string;
  /** How many onboarding requests it sent (a box tries 50 times per boot, then gives up). */
  readonly attempts: number;
  /** Set when a group-limited caller tried to register this id while another group holds it. */
  readonly wantedBy?: string;
}

export type PendingSighting = Omit<PendingDevice, 'firstSeenAt' | 'lastSeenAt' | 'attempts'> & {
  readonly at: Date;
};

/** What the box tracking writes; absent fields are left as they are. */
export interface DeviceChanges {
  readonly group?: string;
  readonly locked?: boolean;
  /** null removes it. */
  readonly moveRequest?: MoveRequest | null;
  readonly lastSeenAt?: Date;
  readonly firmwareVersion?: string;
  readonly bootedAt?: Date;
}

/** The stored digests of a device's keys: the current one, and the one it replaces during a rotation. */
export interface DeviceKeys {
  readonly generation: number;
  readonly currentHash: string;
  readonly previous?: { readonly generation: number; readonly hash: string };
}

const deviceIdPattern = /^[A-Za-z0-9:._-]+$/u;

export function requireDeviceId(value: unknown): string {
  const deviceId = requireText(value, 'deviceId', 64);
  if (!deviceIdPattern.test(deviceId)) {
    throw InvalidInputError.forField('deviceId', 'may hold only letters, digits and : . _ -');
  }
  return deviceId;
}
