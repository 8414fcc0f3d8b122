import { inject, injectable } from 'inversify';
import { compareVersions, FIRMWARE_TYPE } from './firmware.js';
import { FIRMWARE_REPOSITORY, type FirmwareRepository } from './firmware.port.js';

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

/**
 * The manifest a box's updater polls (every 100 s): the newest image published for its group or for every
 * box, when it is newer than the box's own version; otherwise the box's own version (or NO_UPDATE_VERSION
 * when that is unknown), so nothing happens, as the original service always answered.
 */
@injectable()
export class OfferFirmware {
  constructor(@inject(FIRMWARE_REPOSITORY) private readonly firmware: FirmwareRepository) {}

  async execute(box: AskingBox): Promise<FirmwareOffer> {
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
}
