import { inject, injectable } from 'inversify';
import { Binary } from 'mongodb';
import {
  compareVersions,
  type FirmwareImage,
  type FirmwareRepository,
  type StoredFirmwareImage,
} from '@hortus/core';
import { type CollectionSpec, MONGO_DATABASE, MongoRepository } from './support.js';
import { type MongoDatabase } from './database.js';

interface FirmwareDocument {
  /** `<version>@<group>`, `<version>@` for every box: one image per version and group. */
  _id: string;
  version: string;
  group?: string;
  size: number;
  sha256: string;
  publishedAt: Date;
  forced?: boolean;
  data: Binary;
}

export const firmwareCollection: CollectionSpec = {
  name: 'firmwareimages',
  indexes: [{ key: { sha256: 1 }, name: 'sha256' }],
};

const idOf = (version: string, group: string | undefined): string => `${version}@${group ?? ''}`;

function toImage(document: Omit<FirmwareDocument, 'data'>): FirmwareImage {
  return {
    version: document.version,
    ...(document.group === undefined ? {} : { group: document.group }),
    size: document.size,
    sha256: document.sha256,
    publishedAt: document.publishedAt,
    ...(document.forced === true ? { forced: true } : {}),
  };
}

@injectable()
export class MongoFirmwareRepository extends MongoRepository<FirmwareDocument> implements FirmwareRepository {
  constructor(@inject(MONGO_DATABASE) db: MongoDatabase) {
    super(db, firmwareCollection, 'firmware', 'That firmware version is published already');
  }

  async add(image: StoredFirmwareImage): Promise<void> {
    const { data, ...fields } = image;
    // An image of a few MiB takes longer than one small write.
    await this.run(
      () =>
        this.collection.insertOne({
          _id: idOf(image.version, image.group),
          ...fields,
          data: new Binary(Buffer.from(data)),
        }),
      4,
    );
  }

  async list(): Promise<FirmwareImage[]> {
    const documents = await this.run(() => this.collection.find({}, { projection: { data: 0 } }).toArray());
    return documents
      .map(toImage)
      .sort((a, b) => compareVersions(a.version, b.version) || (a.group ?? '').localeCompare(b.group ?? ''));
  }

  async read(sha256: string): Promise<StoredFirmwareImage | undefined> {
    const document = await this.run(() => this.collection.findOne({ sha256 }), 4);
    if (document === null) return undefined;
    return { ...toImage(document), data: new Uint8Array(document.data.buffer) };
  }

  async remove(version: string, group: string | undefined): Promise<boolean> {
    const result = await this.run(() => this.collection.deleteOne({ _id: idOf(version, group) }));
    return result.deletedCount > 0;
  }
}
