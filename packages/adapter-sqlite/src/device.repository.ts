import { inject, injectable } from 'inversify';
import { type Device, type DeviceRepository, type NewDevice } from '@hortus/core';
import { newId, SQLITE_CONNECTION, type SqliteConnection, SqliteRepository } from './support.js';

interface DeviceRow {
  id: string;
  device_id: string;
  grp: string;
  type: string;
}

const deviceMapper = {
  toRow(device: NewDevice): DeviceRow {
    return { id: newId(), device_id: device.deviceId, grp: device.group, type: device.type };
  },
  toEntity(row: DeviceRow): Device {
    return { id: row.id, deviceId: row.device_id, group: row.grp, type: row.type };
  },
};

@injectable()
export class SqliteDeviceRepository extends SqliteRepository implements DeviceRepository {
  constructor(@inject(SQLITE_CONNECTION) connection: SqliteConnection) {
    super(connection, 'device', 'A device with that deviceId exists');
  }

  async create(device: NewDevice): Promise<Device> {
    const row = deviceMapper.toRow(device);
    this.run(() =>
      this.connection
        .prepare('INSERT INTO devices (id, device_id, grp, type) VALUES (@id, @device_id, @grp, @type)')
        .run(row),
    );
    return deviceMapper.toEntity(row);
  }

  async delete(group: string, deviceId: string): Promise<boolean> {
    return this.run(
      () =>
        this.connection.write(
          () =>
            this.connection
              .prepare('DELETE FROM devices WHERE grp = ? AND device_id = ?')
              .run(group, deviceId).changes,
        ) > 0,
    );
  }

  async deleteByGroup(group: string): Promise<number> {
    return this.run(() =>
      this.connection.write(
        () => this.connection.prepare('DELETE FROM devices WHERE grp = ?').run(group).changes,
      ),
    );
  }

  async listByGroup(group: string): Promise<Device[]> {
    const rows = this.run(
      () =>
        this.connection
          .prepare('SELECT id, device_id, grp, type FROM devices WHERE grp = ? ORDER BY device_id')
          .all(group) as DeviceRow[],
    );
    return rows.map(deviceMapper.toEntity);
  }
}
