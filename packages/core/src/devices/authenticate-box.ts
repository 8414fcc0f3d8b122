import { inject, injectable } from 'inversify';
import { CLOCK, type Clock } from '../shared/clock.port.js';
import { UnauthenticatedError } from '../shared/errors.js';
import { BOX_KEY_MAX_LENGTH, BOX_KEY_PREFIX, BoxKeys } from './box-keys.js';
import { BOX_SETTINGS, type BoxSettings } from './box-settings.js';
import { BoxSightings } from './box-sightings.js';
import { type Device } from './device.js';
import { DEVICE_REPOSITORY, type DeviceRepository } from './device.port.js';

/** Bounds the memory of the last-seen times this process remembers writing. */
const MAX_TRACKED_DEVICES = 100_000;

/**
 * Finds the device an `api-key` belongs to (its current key, or the one of before a rotation), and notes
 * that it was seen. The last-seen time is written at most every lastSeenWriteMs per device and process,
 * since a box makes 13 requests a round.
 */
@injectable()
export class AuthenticateBox {
  private readonly written = new Map<string, number>();

  constructor(
    @inject(DEVICE_REPOSITORY) private readonly devices: DeviceRepository,
    @inject(BoxKeys) private readonly keys: BoxKeys,
    @inject(BOX_SETTINGS) private readonly settings: BoxSettings,
    @inject(CLOCK) private readonly clock: Clock,
    @inject(BoxSightings) private readonly sightings: BoxSightings,
  ) {}

  /** `address`: where the request came from, noted so the box's firmware manifest can find it. */
  async execute(apiKey: unknown, address?: string): Promise<Device> {
    if (apiKey === undefined || apiKey === '')
      throw new UnauthenticatedError('The api-key header is missing');
    if (
      typeof apiKey !== 'string' ||
      !apiKey.startsWith(BOX_KEY_PREFIX) ||
      apiKey.length > BOX_KEY_MAX_LENGTH
    ) {
      throw new UnauthenticatedError('The api-key is not valid', true);
    }
    const found = await this.devices.findByKeyHash(this.keys.hash(apiKey));
    if (found === undefined) throw new UnauthenticatedError('The api-key is not valid', true);
    if (address !== undefined) this.sightings.note(address, found.device.deviceId, this.clock.now());
    await this.seen(found.device);
    return found.device;
  }

  private async seen(device: Device): Promise<void> {
    const now = this.clock.now().getTime();
    const last = this.written.get(device.deviceId) ?? device.lastSeenAt?.getTime() ?? 0;
    if (now - last < this.settings.lastSeenWriteMs) return;
    if (this.written.size >= MAX_TRACKED_DEVICES) this.written.clear();
    this.written.set(device.deviceId, now);
    await this.devices.update(device.deviceId, { lastSeenAt: new Date(now) });
  }
}
