import { injectable } from 'inversify';
import {
  compareVersions,
  ConflictError,
  type FirmwareImage,
  type FirmwareRepository,
  type StoredFirmwareImage,
} from '@hortus/core';

const keyOf = (version: string, group: string | undefined): string => `${version}\u0000${group ?? ''}`;

@injectable()
export class InMemoryFirmwareRepository implements FirmwareRepository {
  private readonly images = new Map<string, StoredFirmwareImage>();

  async add(image: StoredFirmwareImage): Promise<void> {
    const key = keyOf(image.version, image.group);
    if (this.images.has(key))
      throw new ConflictError('firmware', 'That firmware version is published already');
    // A copy: the caller's buffer may be reused after the call.
    this.images.set(key, { ...image, data: Uint8Array.from(image.data) });
  }

  async list(): Promise<FirmwareImage[]> {
    return [...this.images.values()]
      .map(({ data: _data, ...image }) => image)
      .sort((a, b) => compareVersions(a.version, b.version) || (a.group ?? '').localeCompare(b.group ?? ''));
  }

  async read(sha256: string): Promise<StoredFirmwareImage | undefined> {
    for (const image of this.images.values()) {
      if (image.sha256 === sha256) return { ...image, data: Uint8Array.from(image.data) };
    }
    return undefined;
  }

  async remove(version: string, group: string | undefined): Promise<boolean> {
    return this.images.delete(keyOf(version, group));
  }
}
