import { inject, injectable } from 'inversify';
import { BoxSightings } from '../devices/box-sightings.js';
import { boxIdOfUpdaterId, macOfBoxId } from '../devices/device-id.js';
import { type Device } from '../devices/device.js';
import { DEVICE_REPOSITORY, type DeviceRepository } from '../devices/device.port.js';
import { CLOCK, type Clock } from '../shared/clock.port.js';
import { compareVersions, FIRMWARE_TYPE } from './firmware.js';
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

/**
 * The manifest's content: the version to offer, and the image's digest when it is newer than what the box
 * runs. The updater installs only a newer version, so answering a box its own version changes nothing.
 */
export interface FirmwareOffer {
  readonly type: typeof FIRMWARE_TYPE;
  readonly version: string;
  /** Set when an image newer than the box's own version applies to it. */
  readonly sha256?: string;
}

/**
 * Below every version: answered to a box that cannot be identified when nothing is published for every
 * box, so it updates to nothing.
 */
export const NO_UPDATE_VERSION = '0.0.0';

/** A live box makes a request every 20 s: what came from an address within this long is what is there now. */
const SEEN_WITHIN_MS = 60 * 60_000;
/** The stored onboardings are read again (for addresses this process has not seen) at most this often. */
const ONBOARDINGS_READ_EVERY_MS = 60_000;

/**
 * The manifest a box's updater polls (every 100 s): the newest image published for its group or for every
 * box, when it is newer than the box's own version; otherwise the box's own version (or NO_UPDATE_VERSION
 * when that is unknown), so nothing happens, as the original service always answered.
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

  async execute(request: ManifestRequest): Promise<FirmwareOffer> {
    const box = await this.identify(request);
    const images = await this.firmware.list();
    const applicable = images.filter((image) => image.group === undefined || image.group === box.group);
    const newest = applicable.reduce<(typeof applicable)[number] | undefined>(
      (best, image) =>
        best === undefined || compareVersions(image.version, best.version) > 0 ? image : best,
      undefined,
    );
    const own = box.version ?? NO_UPDATE_VERSION;
    if (newest !== undefined && compareVersions(newest.version, own) > 0) {
      return { type: FIRMWARE_TYPE, version: newest.version, sha256: newest.sha256 };
    }
    return { type: FIRMWARE_TYPE, version: own };
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
