import { inject, injectable } from 'inversify';
import { macOfBoxId, macOfRegisteredId } from './device-id.js';
import { type Device } from './device.js';
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
    return (
      (await this.devices.find(id, macOfRegisteredId(id))) ?? (await this.devices.find(id, macOfBoxId(id)))
    );
  }
}
