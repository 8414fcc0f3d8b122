import { inject, injectable } from 'inversify';
import { ObjectId } from 'mongodb';
import {
  type Device,
  type DeviceCopy,
  type DeviceChanges,
  type DeviceKeys,
  type DeviceRepository,
  MAX_ONBOARDINGS_KEPT,
  macSpellings,
  type NewDevice,
  type Onboarding,
  type PendingDevice,
  type PendingSighting,
} from '@hortus/core';
import { type CollectionSpec, copiedObjectId, MONGO_DATABASE, MongoRepository, toDate } from './support.js';
import { type MongoDatabase } from './database.js';

interface DeviceDocument {
  _id: ObjectId;
  deviceId: string;
  group: string;
  type: string;
  locked?: boolean;
  moveRequest?: { at: Date; address: string; from?: string; approved?: boolean } | null;
  lastSeenAt?: Date;
  firmwareVersion?: string;
  bootedAt?: Date;
  onboardings?: { at: Date; address: string }[];
  keyGeneration?: number;
  keyHash?: string;
  previousKeyGeneration?: number;
  previousKeyHash?: string;
}

interface PendingDocument {
  _id: string;
  mac?: string;
  firstSeenAt: Date;
  lastSeenAt: Date;
  firmwareVersion?: string;
  address: string;
  attempts: number;
  wantedBy?: string;
}

export const deviceCollection: CollectionSpec = {
  name: 'devices',
  indexes: [
    // One box is one device: its MAC address is unique across all groups, not per group.
    { key: { deviceId: 1 }, name: 'deviceId_unique', unique: true },
    { key: { group: 1, deviceId: 1 }, name: 'group_deviceId' },
    // Every box request finds its device by the digest of its key.
    { key: { keyHash: 1 }, name: 'keyHash' },
    { key: { previousKeyHash: 1 }, name: 'previousKeyHash' },
  ],
};

export const pendingDeviceCollection: CollectionSpec = {
  name: 'pendingdevices',
  indexes: [{ key: { lastSeenAt: -1 }, name: 'lastSeenAt' }],
};

const deviceMapper = {
  toDocument(device: NewDevice): DeviceDocument {
    return { _id: new ObjectId(), deviceId: device.deviceId, group: device.group, type: device.type };
  },
  toEntity(document: DeviceDocument): Device {
    return {
      id: document._id.toHexString(),
      deviceId: document.deviceId,
      group: document.group,
      type: document.type,
      ...(document.locked === true ? { locked: true } : {}),
      ...(document.moveRequest == null
        ? {}
        : {
            moveRequest: {
              at: toDate(document.moveRequest.at),
              address: document.moveRequest.address,
              ...(document.moveRequest.from == null ? {} : { from: document.moveRequest.from }),
              ...(document.moveRequest.approved === true ? { approved: true } : {}),
            },
          }),
      ...(document.lastSeenAt == null ? {} : { lastSeenAt: toDate(document.lastSeenAt) }),
      ...(document.firmwareVersion == null ? {} : { firmwareVersion: document.firmwareVersion }),
      ...(document.bootedAt == null ? {} : { bootedAt: toDate(document.bootedAt) }),
      ...(document.onboardings == null
        ? {}
        : {
            onboardings: document.onboardings.map(({ at, address }) => ({ at: toDate(at), address })),
          }),
      ...(document.keyGeneration == null ? {} : { keyGeneration: document.keyGeneration }),
      ...(document.previousKeyGeneration == null
        ? {}
        : { previousKeyGeneration: document.previousKeyGeneration }),
    };
  },
  changedFields(changes: DeviceChanges): Partial<DeviceDocument> {
    return Object.fromEntries(
      Object.entries(changes).filter(([, value]) => value !== undefined),
    ) as Partial<DeviceDocument>;
  },
};

const pendingMapper = {
  toEntity(document: PendingDocument): PendingDevice {
    return {
      boxId: document._id,
      ...(document.mac == null ? {} : { mac: document.mac }),
      firstSeenAt: toDate(document.firstSeenAt),
      lastSeenAt: toDate(document.lastSeenAt),
      ...(document.firmwareVersion == null ? {} : { firmwareVersion: document.firmwareVersion }),
      address: document.address,
      attempts: document.attempts,
      ...(document.wantedBy == null ? {} : { wantedBy: document.wantedBy }),
    };
  },
};

@injectable()
export class MongoDeviceRepository extends MongoRepository<DeviceDocument> implements DeviceRepository {
  private readonly pending;

  constructor(@inject(MONGO_DATABASE) db: MongoDatabase) {
    super(db, deviceCollection, 'device', 'A device with that deviceId exists');
    this.pending = db.collection<PendingDocument>(pendingDeviceCollection.name);
  }

  async create(device: NewDevice): Promise<Device> {
    const document = deviceMapper.toDocument(device);
    await this.run(() => this.collection.insertOne(document));
    return deviceMapper.toEntity(document);
  }

  async delete(group: string, deviceId: string): Promise<boolean> {
    const result = await this.run(() => this.collection.deleteOne({ group, deviceId }));
    return result.deletedCount > 0;
  }

  async deleteByGroup(group: string): Promise<number> {
    return (await this.run(() => this.collection.deleteMany({ group }))).deletedCount;
  }

  async listByGroup(group: string): Promise<Device[]> {
    const documents = await this.run(() => this.collection.find({ group }).sort({ deviceId: 1 }).toArray());
    return documents.map(deviceMapper.toEntity);
  }

  async list(): Promise<Device[]> {
    const documents = await this.run(() =>
      this.collection.find({}).sort({ group: 1, deviceId: 1 }).toArray(),
    );
    return documents.map(deviceMapper.toEntity);
  }

  async find(deviceId: string, mac: string | undefined): Promise<Device | undefined> {
    const ids = [deviceId, ...(mac === undefined ? [] : macSpellings(mac))];
    const documents = await this.run(() => this.collection.find({ deviceId: { $in: ids } }).toArray());
    const document = documents.find((candidate) => candidate.deviceId === deviceId) ?? documents[0];
    return document === undefined ? undefined : deviceMapper.toEntity(document);
  }

  async findByKeyHash(keyHash: string): Promise<{ device: Device; current: boolean } | undefined> {
    const document = await this.run(() =>
      this.collection.findOne({ $or: [{ keyHash }, { previousKeyHash: keyHash }] }),
    );
    if (document === null) return undefined;
    return { device: deviceMapper.toEntity(document), current: document.keyHash === keyHash };
  }

  async update(deviceId: string, changes: DeviceChanges): Promise<Device | undefined> {
    const fields = deviceMapper.changedFields(changes);
    const document = await this.run(() =>
      Object.keys(fields).length === 0
        ? this.collection.findOne({ deviceId })
        : this.collection.findOneAndUpdate({ deviceId }, { $set: fields }, { returnDocument: 'after' }),
    );
    return document === null ? undefined : deviceMapper.toEntity(document);
  }

  async setKeys(deviceId: string, keys: DeviceKeys): Promise<boolean> {
    const current = { keyGeneration: keys.generation, keyHash: keys.currentHash };
    const update =
      keys.previous === undefined
        ? { $set: current, $unset: { previousKeyGeneration: '', previousKeyHash: '' } as const }
        : {
            $set: {
              ...current,
              previousKeyGeneration: keys.previous.generation,
              previousKeyHash: keys.previous.hash,
            },
          };
    const result = await this.run(() => this.collection.updateOne({ deviceId }, update));
    return result.matchedCount > 0;
  }

  /**
   * Read, then written whole: FerretDB does not apply $slice in $push. Two onboardings of one device at the
   * same instant may keep one of them only, which the list (the last ten) can bear.
   */
  async recordOnboarding(deviceId: string, onboarding: Onboarding, changes: DeviceChanges): Promise<void> {
    await this.run(async () => {
      const stored = await this.collection.findOne({ deviceId }, { projection: { onboardings: 1 } });
      if (stored === null) return;
      const onboardings = [
        { at: onboarding.at, address: onboarding.address },
        ...(stored.onboardings ?? []),
      ].slice(0, MAX_ONBOARDINGS_KEPT);
      await this.collection.updateOne(
        { deviceId },
        { $set: { ...deviceMapper.changedFields(changes), lastSeenAt: onboarding.at, onboardings } },
      );
    }, 2);
  }

  /**
   * The count, the eviction and the upsert are separate commands: racing sightings of new boxes may pass
   * the cap by a few until the next one.
   */
  async recordPending(sighting: PendingSighting, cap: number): Promise<boolean> {
    return this.run(async () => {
      const known = await this.pending.findOne({ _id: sighting.boxId }, { projection: { _id: 1 } });
      if (known === null) {
        if (cap <= 0) return false;
        const held = await this.pending.countDocuments({});
        if (held >= cap) {
          // The least recently seen give way, so that a real new box always shows.
          const oldest = await this.pending
            .find({}, { projection: { _id: 1 } })
            .sort({ lastSeenAt: 1, _id: 1 })
            .limit(held - cap + 1)
            .toArray();
          await this.pending.deleteMany({ _id: { $in: oldest.map(({ _id }) => _id) } });
        }
      }
      await this.pending.updateOne(
        { _id: sighting.boxId },
        {
          $set: {
            lastSeenAt: sighting.at,
            address: sighting.address,
            ...(sighting.mac === undefined ? {} : { mac: sighting.mac }),
            ...(sighting.firmwareVersion === undefined ? {} : { firmwareVersion: sighting.firmwareVersion }),
            ...(sighting.wantedBy === undefined ? {} : { wantedBy: sighting.wantedBy }),
          },
          $setOnInsert: { firstSeenAt: sighting.at },
          $inc: { attempts: 1 },
        },
        { upsert: true },
      );
      return true;
    }, 2);
  }

  async listCopies(): Promise<DeviceCopy[]> {
    const documents = await this.run(() =>
      this.collection.find({}).sort({ group: 1, deviceId: 1 }).toArray(),
    );
    return documents.map((document) => ({
      ...deviceMapper.toEntity(document),
      ...(document.keyHash == null ? {} : { keyHash: document.keyHash }),
      ...(document.previousKeyHash == null ? {} : { previousKeyHash: document.previousKeyHash }),
    }));
  }

  /** A device with that deviceId under another id (a forced copy) gives way to this one. */
  async restore(device: DeviceCopy): Promise<void> {
    const _id = copiedObjectId(device.id);
    const document: Omit<DeviceDocument, '_id'> = {
      deviceId: device.deviceId,
      group: device.group,
      type: device.type,
      ...(device.locked === undefined ? {} : { locked: device.locked }),
      ...(device.moveRequest === undefined ? {} : { moveRequest: { ...device.moveRequest } }),
      ...(device.lastSeenAt === undefined ? {} : { lastSeenAt: device.lastSeenAt }),
      ...(device.firmwareVersion === undefined ? {} : { firmwareVersion: device.firmwareVersion }),
      ...(device.bootedAt === undefined ? {} : { bootedAt: device.bootedAt }),
      ...(device.onboardings === undefined
        ? {}
        : { onboardings: device.onboardings.map(({ at, address }) => ({ at, address })) }),
      ...(device.keyGeneration === undefined ? {} : { keyGeneration: device.keyGeneration }),
      ...(device.keyHash === undefined ? {} : { keyHash: device.keyHash }),
      ...(device.previousKeyGeneration === undefined
        ? {}
        : { previousKeyGeneration: device.previousKeyGeneration }),
      ...(device.previousKeyHash === undefined ? {} : { previousKeyHash: device.previousKeyHash }),
    };
    await this.run(() => this.collection.deleteMany({ deviceId: device.deviceId, _id: { $ne: _id } }));
    await this.run(() => this.collection.replaceOne({ _id }, document, { upsert: true }));
  }

  async listPending(): Promise<PendingDevice[]> {
    const documents = await this.run(() => this.pending.find({}).sort({ lastSeenAt: -1, _id: 1 }).toArray());
    return documents.map(pendingMapper.toEntity);
  }

  async removePending(boxId: string): Promise<boolean> {
    const result = await this.run(() => this.pending.deleteOne({ _id: boxId }));
    return result.deletedCount > 0;
  }

  async removePendingSeenBefore(before: Date): Promise<number> {
    const result = await this.run(() => this.pending.deleteMany({ lastSeenAt: { $lt: before } }));
    return result.deletedCount;
  }

  async restorePending(box: PendingDevice): Promise<void> {
    const document: Omit<PendingDocument, '_id'> = {
      ...(box.mac === undefined ? {} : { mac: box.mac }),
      firstSeenAt: new Date(box.firstSeenAt.getTime()),
      lastSeenAt: new Date(box.lastSeenAt.getTime()),
      ...(box.firmwareVersion === undefined ? {} : { firmwareVersion: box.firmwareVersion }),
      address: box.address,
      attempts: box.attempts,
      ...(box.wantedBy === undefined ? {} : { wantedBy: box.wantedBy }),
    };
    await this.run(() => this.pending.replaceOne({ _id: box.boxId }, document, { upsert: true }), 2);
  }
}
