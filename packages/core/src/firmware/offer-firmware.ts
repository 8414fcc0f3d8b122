import { inject, injectable } from 'inversify';
import { BoxSightings } from '../devices/box-sightings.js';
import { boxIdOfUpdaterId, macOfBoxId } from '../devices/device-id.js';
import { type Device } from '../devices/device.js';
import { DEVICE_REPOSITORY, type DeviceRepository } from '../devices/device.port.js';
import { CLOCK, type Clock } from '../shared/clock.port.js';
import { FIRMWARE_TYPE, firmwareOfferFor } from './firmware.js';
import { FIRMWARE_REPOSITORY, type FirmwareRepository } from './firmware.port.js';

/** What the manifest request tells of the box that sends it. */
export interface ManifestRequest {
  /** `?id=`: sent only by updater builds that turn it on (the factory MAC as a decimal number). */
  readonly updaterId?: string;
  /** The address the request came from. */
  readonly address?: string;
}

/** What is known of the box that asks: its group and the version it runs, where it could be identified. */
export interface AskingBox {
  readonly group?: string;
  readonly version?: string;
}

/** The manifest's content: an image's version and digest. The updater installs it only when it is newer. */
export interface FirmwareOffer {
  readonly type: typeof FIRMWARE_TYPE;
  readonly version: string;
  readonly sha256: string;
}

/** A live box makes a request every 20 s: what came from an address within this long is what is there now. */
const SEEN_WITHIN_MS = 60 * 60_000;
/** The stored onboardings are read again (for addresses this process has not seen) at most this often. */
const ONBOARDINGS_READ_EVERY_MS = 60_000;

/**
 * The manifest a box's updater polls (every 100 s): the image firmwareOfferFor chooses, or nothing (the
 * route answers 204, which the updater treats as "no update").
 *
 * Firmware 1.0.4's updater sends no id, so the box is the registered device whose requests came from the
 * same address: those this process saw in the last hour (onboarding, readings, actions), else the stored
 * onboardings (another server's, or before a restart). Boxes of more than one group behind one address
 * cannot be told apart: they are offered only images for every box, never one group's.
 */
@injectable()
export class OfferFirmware {
  private onboardings: { readonly at: number; readonly byAddress: Map<string, string[]> } | undefined;

  constructor(
    @inject(FIRMWARE_REPOSITORY) private readonly firmware: FirmwareRepository,
    @inject(DEVICE_REPOSITORY) private readonly devices: DeviceRepository,
    @inject(BoxSightings) private readonly sightings: BoxSightings,
    @inject(CLOCK) private readonly clock: Clock,
  ) {}

  async execute(request: ManifestRequest): Promise<FirmwareOffer | undefined> {
    const images = await this.firmware.list();
    // Nothing published, nothing to find out about the box.
    if (images.length === 0) return undefined;
    const offered = firmwareOfferFor(images, await this.identify(request));
    return offered === undefined
      ? undefined
      : { type: FIRMWARE_TYPE, version: offered.version, sha256: offered.sha256 };
  }

  private async identify(request: ManifestRequest): Promise<AskingBox> {
    const updaterId = request.updaterId?.trim();
    if (updaterId !== undefined && updaterId !== '') {
      const boxId = boxIdOfUpdaterId(updaterId);
      const device = boxId === undefined ? undefined : await this.devices.find(boxId, macOfBoxId(boxId));
      // An id that names no registered box says nothing of the address either: it is not that box.
      return device === undefined ? {} : asking([device]);
    }
    if (request.address === undefined) return {};
    const now = this.clock.now();
    let ids = this.sightings.seenSince(request.address, new Date(now.getTime() - SEEN_WITHIN_MS));
    if (ids.length === 0) ids = (await this.storedOnboardings(now)).get(request.address) ?? [];
    const devices = await Promise.all(ids.map((id) => this.devices.find(id, undefined)));
    return asking(devices.filter((device): device is Device => device !== undefined));
  }

  /** Each address's devices whose newest stored onboarding came from it. */
  private async storedOnboardings(now: Date): Promise<Map<string, string[]>> {
    if (this.onboardings !== undefined && now.getTime() - this.onboardings.at < ONBOARDINGS_READ_EVERY_MS) {
      return this.onboardings.byAddress;
    }
    const byAddress = new Map<string, string[]>();
    for (const device of await this.devices.list()) {
      const [newest] = device.onboardings ?? [];
      if (newest === undefined) continue;
      byAddress.set(newest.address, [...(byAddress.get(newest.address) ?? []), device.deviceId]);
    }
    this.onboardings = { at: now.getTime(), byAddress };
    return byAddress;
  }
}

/** One group (and its version, when they all run one) for the devices, or nothing when they differ. */
function asking(devices: readonly Device[]): AskingBox {
  const groups = new Set(devices.map((device) => device.group));
  const [group] = groups;
  if (groups.size !== 1 || group === undefined) return {};
  const versions = new Set(devices.map((device) => device.firmwareVersion));
  const [version] = versions;
  return versions.size === 1 && version !== undefined ? { group, version } : { group };
}
