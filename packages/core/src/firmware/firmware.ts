import { InvalidInputError } from '../shared/errors.js';
import { requireText } from '../shared/validation.js';

/**
 * The updater of the HTTP boxes (esp32FOTA) asks for a manifest of this type; an image of another type is
 * never installed.
 */
export const FIRMWARE_TYPE = 'esp32-fota-http';

/**
 * Largest image accepted: an ESP32's app slot is at most a few MiB (1.25-3 MiB in the usual partition
 * tables); 4 MiB keeps every image one document of a MongoDB store (16 MiB) and one SQLite blob.
 */
export const MAX_FIRMWARE_BYTES = 4 * 1024 * 1024;

/** A published image, without its bytes. */
export interface FirmwareImage {
  /** Semantic version, e.g. 1.0.5 (what the updater compares with its own). */
  readonly version: string;
  /** The group whose boxes are offered it; absent: every box. */
  readonly group?: string;
  readonly size: number;
  /** SHA-256 of the bytes in lower-case hex: the download's ETag and address. */
  readonly sha256: string;
  readonly publishedAt: Date;
  /**
   * Published with `--force`: offered also to boxes that cannot update over the air (NO_OTA_VERSIONS) and
   * to boxes whose version is unknown.
   */
  readonly forced?: boolean;
}

/**
 * Builds that cannot install an image: firmware 1.0.4 has no second app slot (`no_ota.csv`, COMPAT
 * "Boxes"), so an offered image is downloaded every 100 s and never installed.
 */
export const NO_OTA_VERSIONS: readonly string[] = ['1.0.4'];

/**
 * The one rule of what a box is offered: the newest image for its group or for every box, and to a box
 * whose version is unknown or that cannot update over the air, only an image an administrator forced.
 * The version a box reports (at onboarding, where anyone who knows an unlocked MAC can set it) is
 * otherwise not used: the updater itself installs only a version newer than its own, so a reported
 * version can at most make a box look like one that cannot update, never withhold or change an image.
 */
export function firmwareOfferFor(
  images: readonly FirmwareImage[],
  box: { readonly group?: string; readonly version?: string },
): FirmwareImage | undefined {
  const updatable = box.version !== undefined && !NO_OTA_VERSIONS.includes(box.version);
  return images
    .filter((image) => image.group === undefined || image.group === box.group)
    .filter((image) => updatable || image.forced === true)
    .reduce<FirmwareImage | undefined>(
      (best, image) =>
        best === undefined || compareVersions(image.version, best.version) > 0 ? image : best,
      undefined,
    );
}

export interface StoredFirmwareImage extends FirmwareImage {
  readonly data: Uint8Array;
}

const semverPattern =
  /^(0|[1-9]\d{0,8})\.(0|[1-9]\d{0,8})\.(0|[1-9]\d{0,8})(?:-((?:0|[1-9]\d{0,8}|\d*[A-Za-z-][\dA-Za-z-]*)(?:\.(?:0|[1-9]\d{0,8}|\d*[A-Za-z-][\dA-Za-z-]*))*))?(?:\+[\dA-Za-z-]+(?:\.[\dA-Za-z-]+)*)?$/u;

export function isSemver(text: string): boolean {
  return text.length <= 64 && semverPattern.test(text);
}

export function requireSemver(value: unknown, field = 'version'): string {
  const text = requireText(value, field, 64);
  if (!isSemver(text)) {
    throw InvalidInputError.forField(field, `must be a semantic version such as 1.0.5, got "${text}"`);
  }
  return text;
}

/**
 * Semantic version order (build metadata ignored, a pre-release below its release), so a box is offered
 * only what is newer than what it runs. A text that is no version sorts below every version.
 */
export function compareVersions(a: string, b: string): number {
  const parse = (text: string): { core: number[]; pre: string[] } | undefined => {
    const match = semverPattern.exec(text);
    if (match === null) return undefined;
    return { core: [1, 2, 3].map((i) => Number(match[i])), pre: match[4]?.split('.') ?? [] };
  };
  const left = parse(a);
  const right = parse(b);
  if (left === undefined || right === undefined)
    return (left === undefined ? 0 : 1) - (right === undefined ? 0 : 1);
  for (let i = 0; i < 3; i += 1) {
    const difference = (left.core[i] ?? 0) - (right.core[i] ?? 0);
    if (difference !== 0) return Math.sign(difference);
  }
  if (left.pre.length === 0 || right.pre.length === 0) return Math.sign(right.pre.length - left.pre.length);
  for (let i = 0; i < Math.max(left.pre.length, right.pre.length); i += 1) {
    const x = left.pre[i];
    const y = right.pre[i];
    if (x === undefined || y === undefined) return x === undefined ? -1 : 1;
    if (x === y) continue;
    const numeric = /^\d+$/u;
    if (numeric.test(x) && numeric.test(y)) return Math.sign(Number(x) - Number(y));
    if (numeric.test(x) !== numeric.test(y)) return numeric.test(x) ? -1 : 1;
    return x < y ? -1 : 1;
  }
  return 0;
}

export function requireFirmwareSize(bytes: number): void {
  if (bytes === 0) throw InvalidInputError.forField('image', 'is empty');
  if (bytes > MAX_FIRMWARE_BYTES) {
    throw InvalidInputError.forField(
      'image',
      `is ${bytes} bytes; the largest image accepted is ${MAX_FIRMWARE_BYTES} bytes`,
    );
  }
}
