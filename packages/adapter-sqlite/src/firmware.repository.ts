import { inject, injectable } from 'inversify';
import {
  compareVersions,
  type FirmwareImage,
  type FirmwareRepository,
  type StoredFirmwareImage,
} from '@hortus/core';
import { SQLITE_CONNECTION, type SqliteConnection, SqliteRepository } from './support.js';

interface FirmwareRow {
  version: string;
  grp: string;
  size: number;
  sha256: string;
  published_at: number;
  forced: number | null;
  data?: Buffer;
}

/** The group column holds '' for an image offered to every box, so (version, grp) can be the key. */
function toImage(row: FirmwareRow): FirmwareImage {
  return {
    version: row.version,
    ...(row.grp === '' ? {} : { group: row.grp }),
    size: row.size,
    sha256: row.sha256,
    publishedAt: new Date(row.published_at),
    ...(row.forced === 1 ? { forced: true } : {}),
  };
}

@injectable()
export class SqliteFirmwareRepository extends SqliteRepository implements FirmwareRepository {
  constructor(@inject(SQLITE_CONNECTION) connection: SqliteConnection) {
    super(connection, 'firmware', 'That firmware version is published already');
  }

  async add(image: StoredFirmwareImage): Promise<void> {
    this.run(() =>
      this.connection.write(() =>
        this.connection
          .prepare(
            `INSERT INTO firmware_images (version, grp, size, sha256, published_at, forced, data)
             VALUES (?, ?, ?, ?, ?, ?, ?)`,
          )
          .run(
            image.version,
            image.group ?? '',
            image.size,
            image.sha256,
            image.publishedAt.getTime(),
            image.forced === true ? 1 : null,
            Buffer.from(image.data),
          ),
      ),
    );
  }

  async list(): Promise<FirmwareImage[]> {
    const rows = this.run(
      () =>
        this.connection
          .prepare('SELECT version, grp, size, sha256, published_at, forced FROM firmware_images')
          .all() as FirmwareRow[],
    );
    return rows
      .map(toImage)
      .sort((a, b) => compareVersions(a.version, b.version) || (a.group ?? '').localeCompare(b.group ?? ''));
  }

  async read(sha256: string): Promise<StoredFirmwareImage | undefined> {
    const row = this.run(
      () =>
        this.connection.prepare('SELECT * FROM firmware_images WHERE sha256 = ? LIMIT 1').get(sha256) as
          FirmwareRow | undefined,
    );
    if (row?.data === undefined) return undefined;
    return { ...toImage(row), data: new Uint8Array(row.data) };
  }

  async remove(version: string, group: string | undefined): Promise<boolean> {
    const result = this.run(() =>
      this.connection.write(() =>
        this.connection
          .prepare('DELETE FROM firmware_images WHERE version = ? AND grp = ?')
          .run(version, group ?? ''),
      ),
    );
    return result.changes > 0;
  }
}
