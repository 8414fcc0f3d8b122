import { inject, injectable } from 'inversify';
import { type Db, ObjectId } from 'mongodb';
import { type Device, type DeviceRepository, type NewDevice } from '@hortus/core';
import { type CollectionSpec, MONGO_DB, MongoRepository } from './support.js';

interface DeviceDocument {
  _id: ObjectId;
  deviceId: string;
  group: string;
  type: string;
}

export const deviceCollection: CollectionSpec = {
  name: 'devices',
  indexes: [
    // One box is one device: its MAC address is unique across all groups, not per group.
    { key: { deviceId: 1 }, name: 'deviceId_unique', unique: true },
    { key: { group: 1, deviceId: 1 }, name: 'group_deviceId' },
  ],
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
    };
  },
};

@injectable()
export class MongoDeviceRepository extends MongoRepository<DeviceDocument> implements DeviceRepository {
  constructor(@inject(MONGO_DB) db: Db) {
    super(db, deviceCollection, 'device', 'A device with that deviceId exists');
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
}
