import { inject, injectable } from 'inversify';
import { CLOCK, type Clock } from '../shared/clock.port.js';
import { requireText } from '../shared/validation.js';
import { BOX_SETTINGS, type BoxSettings } from './box-settings.js';
import { boxIdOfMac, labelOfMac, macOfRegisteredId } from './device-id.js';
import { type Device } from './device.js';
import { DEVICE_REPOSITORY, type DeviceRepository } from './device.port.js';

/** A device as operators see it: both id forms and whether it went silent. */
export interface DeviceView extends Device {
  /** The MAC as printed on the label, when the id is one. */
  readonly label?: string;
  /** What the box sends as its deviceId, when the id is a MAC. */
  readonly boxId?: string;
  /** Onboarded, then nothing for longer than DEVICE_SILENT_AFTER_MS. */
  readonly silent: boolean;
}

export function viewOf(device: Device, now: Date, silentAfterMs: number): DeviceView {
  const seen = device.lastSeenAt?.getTime();
  const mac = macOfRegisteredId(device.deviceId);
  return {
    ...device,
    ...(mac === undefined ? {} : { label: labelOfMac(mac), boxId: boxIdOfMac(mac) }),
    silent:
      device.onboardings !== undefined && device.onboardings.length > 0 && seen !== undefined
        ? now.getTime() - seen > silentAfterMs
        : false,
  };
}

@injectable()
export class ListDeviceViews {
  constructor(
    @inject(DEVICE_REPOSITORY) private readonly devices: DeviceRepository,
    @inject(BOX_SETTINGS) private readonly settings: BoxSettings,
    @inject(CLOCK) private readonly clock: Clock,
  ) {}

  /** The devices of one group, or of every group when none is named. */
  async execute(input: { group?: unknown }): Promise<DeviceView[]> {
    const devices =
      input.group === undefined
        ? await this.devices.list()
        : await this.devices.listByGroup(requireText(input.group, 'group'));
    const now = this.clock.now();
    return devices.map((device) => viewOf(device, now, this.settings.silentAfterMs));
  }
}
