import { inject, injectable } from 'inversify';
import { NotFoundError } from '../shared/errors.js';
import { macOfBoxId, macOfRegisteredId } from './device-id.js';
import { type Device, requireDeviceId } from './device.js';
import { DEVICE_REPOSITORY, type DeviceRepository } from './device.port.js';

const deviceIdPattern = /^[A-Za-z0-9:._-]{1,64}$/u;

/**
 * The registered device an id names in any of its forms (label, dashes, bare hex, or what the box sends);
 * undefined when none is, or when the text cannot be a device id. Never throws for the text: a transport
 * asks with whatever a message carried (an MQTT topic level).
 */
@injectable()
export class FindDevice {
  constructor(@inject(DEVICE_REPOSITORY) private readonly devices: DeviceRepository) {}

  async execute(id: string): Promise<Device | undefined> {
    if (!deviceIdPattern.test(id)) return undefined;
    return deviceNamed(this.devices, id);
  }
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
