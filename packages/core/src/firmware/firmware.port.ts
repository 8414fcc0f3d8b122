import { type FirmwareImage, type StoredFirmwareImage } from './firmware.js';

/** Firmware images in the store, so every server of one store offers and serves the same ones. */
export interface FirmwareRepository {
  /** Throws ConflictError when an image of that version is published for that group (or for all) already. */
  add(image: StoredFirmwareImage): Promise<void>;
  /** Every published image without its bytes, by version then group. */
  list(): Promise<FirmwareImage[]>;
  /** An image with these bytes (any group's: the bytes are the same), or undefined. */
  read(sha256: string): Promise<StoredFirmwareImage | undefined>;
  /** Withdraws the image of that version for that group (absent: the one for every box); false when none. */
  remove(version: string, group: string | undefined): Promise<boolean>;
}

export const FIRMWARE_REPOSITORY = Symbol.for('hortus.FirmwareRepository');

/** SHA-256 of bytes in lower-case hex: the platform computes it (the core does no crypto of its own). */
export type FirmwareDigest = (data: Uint8Array) => string;

export const FIRMWARE_DIGEST = Symbol.for('hortus.FirmwareDigest');
