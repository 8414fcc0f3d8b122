import { InvalidInputError } from '../shared/errors.js';
import { requireText } from '../shared/validation.js';

export interface Device {
  readonly id: string;
  /** The box's MAC address in hex; unique across all groups, since one box is one device. */
  readonly deviceId: string;
  readonly group: string;
  readonly type: string;
}

export type NewDevice = Omit<Device, 'id'>;

const deviceIdPattern = /^[A-Za-z0-9:._-]+$/u;

export function requireDeviceId(value: unknown): string {
  const deviceId = requireText(value, 'deviceId', 64);
  if (!deviceIdPattern.test(deviceId)) {
    throw InvalidInputError.forField('deviceId', 'may hold only letters, digits and : . _ -');
  }
  return deviceId;
}
