import { inject, injectable } from 'inversify';
import {
  type Device,
  type DeviceCopy,
  type DeviceChanges,
  type DeviceKeys,
  type DeviceRepository,
  MAX_ONBOARDINGS_KEPT,
  macSpellings,
  type MoveRequest,
  type NewDevice,
  type Onboarding,
  type PendingDevice,
  type PendingSighting,
} from '@hortus/core';
import { newId, SQLITE_CONNECTION, type SqliteConnection, SqliteRepository } from './support.js';

interface DeviceRow {
  id: string;
  device_id: string;
  grp: string;
  type: string;
  locked: number | null;
  move_request: string | null;
  last_seen_at: number | null;
  firmware_version: string | null;
  booted_at: number | null;
  onboardings: string | null;
  key_generation: number | null;
  previous_key_generation: number | null;
}

interface PendingRow {
  box_id: string;
  mac: string | null;
  first_seen_at: number;
  last_seen_at: number;
  firmware_version: string | null;
  address: string;
  attempts: number;
  wanted_by: string | null;
}

const deviceColumns =
  'id, device_id, grp, type, locked, move_request, last_seen_at, firmware_version, booted_at, onboardings, key_generation, previous_key_generation';

function readOnboardings(text: string | null): Onboarding[] | undefined {
  if (text === null) return undefined;
  const parsed = JSON.parse(text) as { at: number; address: string }[];
  return parsed.map(({ at, address }) => ({ at: new Date(at), address }));
}

function readMove(text: string | null): MoveRequest | undefined {
  if (text === null) return undefined;
  const { at, address, from, approved } = JSON.parse(text) as {
    at: number;
    address: string;
    from?: string;
    approved?: boolean;
  };
  return {
    at: new Date(at),
    address,
    ...(from === undefined ? {} : { from }),
    ...(approved === true ? { approved } : {}),
  };
}

function writeMove(move: MoveRequest | undefined): string | null {
  return move === undefined ? null : JSON.stringify({ ...move, at: move.at.getTime() });
}

const deviceMapper = {
  toEntity(row: DeviceRow): Device {
    const onboardings = readOnboardings(row.onboardings);
    return {
      id: row.id,
      deviceId: row.device_id,
      group: row.grp,
      type: row.type,
      ...(row.locked === 1 ? { locked: true } : {}),
      ...(row.move_request === null ? {} : { moveRequest: readMove(row.move_request) as MoveRequest }),
      ...(row.last_seen_at === null ? {} : { lastSeenAt: new Date(row.last_seen_at) }),
      ...(row.firmware_version === null ? {} : { firmwareVersion: row.firmware_version }),
      ...(row.booted_at === null ? {} : { bootedAt: new Date(row.booted_at) }),
      ...(onboardings === undefined ? {} : { onboardings }),
      ...(row.key_generation === null ? {} : { keyGeneration: row.key_generation }),
      ...(row.previous_key_generation === null ? {} : { previousKeyGeneration: row.previous_key_generation }),
    };
  },
  /** The columns a change writes, by name; absent changes are left out. */
  changedColumns(changes: DeviceChanges): Record<string, string | number | null> {
    const columns: Record<string, string | number | null> = {};
    if (changes.moveRequest !== undefined)
      columns['move_request'] = writeMove(changes.moveRequest ?? undefined);
    if (changes.group !== undefined) columns['grp'] = changes.group;
    if (changes.locked !== undefined) columns['locked'] = changes.locked ? 1 : 0;
    if (changes.lastSeenAt !== undefined) columns['last_seen_at'] = changes.lastSeenAt.getTime();
    if (changes.firmwareVersion !== undefined) columns['firmware_version'] = changes.firmwareVersion;
    if (changes.bootedAt !== undefined) columns['booted_at'] = changes.bootedAt.getTime();
    return columns;
  },
};

const pendingMapper = {
  toEntity(row: PendingRow): PendingDevice {
    return {
      boxId: row.box_id,
      ...(row.mac === null ? {} : { mac: row.mac }),
      firstSeenAt: new Date(row.first_seen_at),
      lastSeenAt: new Date(row.last_seen_at),
      ...(row.firmware_version === null ? {} : { firmwareVersion: row.firmware_version }),
      address: row.address,
      attempts: row.attempts,
      ...(row.wanted_by === null ? {} : { wantedBy: row.wanted_by }),
    };
  },
};

@injectable()
export class SqliteDeviceRepository extends SqliteRepository implements DeviceRepository {
  constructor(@inject(SQLITE_CONNECTION) connection: SqliteConnection) {
    super(connection, 'device', 'A device with that deviceId exists');
  }

  async create(device: NewDevice): Promise<Device> {
    const row = { id: newId(), device_id: device.deviceId, grp: device.group, type: device.type };
    this.run(() =>
      this.connection
        .prepare('INSERT INTO devices (id, device_id, grp, type) VALUES (@id, @device_id, @grp, @type)')
        .run(row),
    );
    return { id: row.id, deviceId: row.device_id, group: row.grp, type: row.type };
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
          .prepare(`SELECT ${deviceColumns} FROM devices WHERE grp = ? ORDER BY device_id`)
          .all(group) as DeviceRow[],
    );
    return rows.map(deviceMapper.toEntity);
  }

  async list(): Promise<Device[]> {
    const rows = this.run(
      () =>
        this.connection
          .prepare(`SELECT ${deviceColumns} FROM devices ORDER BY grp, device_id`)
          .all() as DeviceRow[],
    );
    return rows.map(deviceMapper.toEntity);
  }

  async find(deviceId: string, mac: string | undefined): Promise<Device | undefined> {
    const ids = [deviceId, ...(mac === undefined ? [] : macSpellings(mac))];
    const rows = this.run(
      () =>
        this.connection
          .prepare(
            `SELECT ${deviceColumns} FROM devices WHERE device_id IN (${ids.map(() => '?').join(', ')})`,
          )
          .all(...ids) as DeviceRow[],
    );
    const row = rows.find((candidate) => candidate.device_id === deviceId) ?? rows[0];
    return row === undefined ? undefined : deviceMapper.toEntity(row);
  }

  async findByKeyHash(keyHash: string): Promise<{ device: Device; current: boolean } | undefined> {
    const row = this.run(
      () =>
        this.connection
          .prepare(
            `SELECT ${deviceColumns}, key_hash = @hash AS current FROM devices
             WHERE key_hash = @hash OR previous_key_hash = @hash LIMIT 1`,
          )
          .get({ hash: keyHash }) as (DeviceRow & { current: number }) | undefined,
    );
    if (row === undefined) return undefined;
    return { device: deviceMapper.toEntity(row), current: row.current === 1 };
  }

  async update(deviceId: string, changes: DeviceChanges): Promise<Device | undefined> {
    const columns = deviceMapper.changedColumns(changes);
    const names = Object.keys(columns);
    return this.run(() =>
      this.connection.write(() => {
        if (names.length > 0) {
          this.connection
            .prepare(
              `UPDATE devices SET ${names.map((name) => `${name} = @${name}`).join(', ')} WHERE device_id = @deviceId`,
            )
            .run({ ...columns, deviceId });
        }
        const row = this.connection
          .prepare(`SELECT ${deviceColumns} FROM devices WHERE device_id = ?`)
          .get(deviceId) as DeviceRow | undefined;
        return row === undefined ? undefined : deviceMapper.toEntity(row);
      }),
    );
  }

  async setKeys(deviceId: string, keys: DeviceKeys): Promise<boolean> {
    return this.run(
      () =>
        this.connection.write(
          () =>
            this.connection
              .prepare(
                `UPDATE devices SET key_generation = @generation, key_hash = @current,
                   previous_key_generation = @previousGeneration, previous_key_hash = @previousHash
                 WHERE device_id = @deviceId`,
              )
              .run({
                deviceId,
                generation: keys.generation,
                current: keys.currentHash,
                previousGeneration: keys.previous?.generation ?? null,
                previousHash: keys.previous?.hash ?? null,
              }).changes,
        ) > 0,
    );
  }

  async recordOnboarding(deviceId: string, onboarding: Onboarding, changes: DeviceChanges): Promise<void> {
    this.run(() =>
      this.connection.write(() => {
        const row = this.connection
          .prepare('SELECT onboardings FROM devices WHERE device_id = ?')
          .get(deviceId) as { onboardings: string | null } | undefined;
        if (row === undefined) return;
        const kept = (JSON.parse(row.onboardings ?? '[]') as { at: number; address: string }[]).slice(
          0,
          MAX_ONBOARDINGS_KEPT - 1,
        );
        const onboardings = JSON.stringify([
          { at: onboarding.at.getTime(), address: onboarding.address },
          ...kept,
        ]);
        const columns = {
          ...deviceMapper.changedColumns(changes),
          last_seen_at: onboarding.at.getTime(),
          onboardings,
        };
        const names = Object.keys(columns);
        this.connection
          .prepare(
            `UPDATE devices SET ${names.map((name) => `${name} = @${name}`).join(', ')} WHERE device_id = @deviceId`,
          )
          .run({ ...columns, deviceId });
      }),
    );
  }

  async recordPending(sighting: PendingSighting, cap: number): Promise<boolean> {
    return this.run(() =>
      this.connection.write(() => {
        const known = this.connection
          .prepare('SELECT 1 FROM pending_devices WHERE box_id = ?')
          .get(sighting.boxId) as unknown;
        if (known === undefined) {
          if (cap <= 0) return false;
          const { held } = this.connection.prepare('SELECT count(*) AS held FROM pending_devices').get() as {
            held: number;
          };
          // The least recently seen give way, so that a real new box always shows.
          if (held >= cap) {
            this.connection
              .prepare(
                `DELETE FROM pending_devices WHERE box_id IN
                   (SELECT box_id FROM pending_devices ORDER BY last_seen_at, box_id LIMIT ?)`,
              )
              .run(held - cap + 1);
          }
        }
        this.connection
          .prepare(
            `INSERT INTO pending_devices
               (box_id, mac, first_seen_at, last_seen_at, firmware_version, address, attempts, wanted_by)
             VALUES (@boxId, @mac, @at, @at, @firmwareVersion, @address, 1, @wantedBy)
             ON CONFLICT (box_id) DO UPDATE SET
               last_seen_at = excluded.last_seen_at,
               firmware_version = coalesce(excluded.firmware_version, firmware_version),
               address = excluded.address,
               attempts = attempts + 1,
               wanted_by = coalesce(excluded.wanted_by, wanted_by)`,
          )
          .run({
            boxId: sighting.boxId,
            mac: sighting.mac ?? null,
            at: sighting.at.getTime(),
            firmwareVersion: sighting.firmwareVersion ?? null,
            address: sighting.address,
            wantedBy: sighting.wantedBy ?? null,
          });
        return true;
      }),
    );
  }

  async listCopies(): Promise<DeviceCopy[]> {
    const rows = this.run(
      () =>
        this.connection
          .prepare(
            `SELECT ${deviceColumns}, key_hash, previous_key_hash FROM devices ORDER BY grp, device_id`,
          )
          .all() as (DeviceRow & { key_hash: string | null; previous_key_hash: string | null })[],
    );
    return rows.map((row) => ({
      ...deviceMapper.toEntity(row),
      ...(row.key_hash === null ? {} : { keyHash: row.key_hash }),
      ...(row.previous_key_hash === null ? {} : { previousKeyHash: row.previous_key_hash }),
    }));
  }

  /** A device with that deviceId under another id (a forced copy) gives way to this one. */
  async restore(device: DeviceCopy): Promise<void> {
    this.run(() =>
      this.connection.write(() => {
        this.connection
          .prepare('DELETE FROM devices WHERE device_id = ? AND id <> ?')
          .run(device.deviceId, device.id);
        this.connection
          .prepare(
            `INSERT INTO devices (${deviceColumns}, key_hash, previous_key_hash)
             VALUES (@id, @device_id, @grp, @type, @locked, @move_request, @last_seen_at, @firmware_version, @booted_at,
               @onboardings, @key_generation, @previous_key_generation, @key_hash, @previous_key_hash)
             ON CONFLICT (id) DO UPDATE SET device_id = excluded.device_id, grp = excluded.grp,
               type = excluded.type, locked = excluded.locked, move_request = excluded.move_request,
               last_seen_at = excluded.last_seen_at,
               firmware_version = excluded.firmware_version, booted_at = excluded.booted_at,
               onboardings = excluded.onboardings, key_generation = excluded.key_generation,
               previous_key_generation = excluded.previous_key_generation, key_hash = excluded.key_hash,
               previous_key_hash = excluded.previous_key_hash`,
          )
          .run({
            id: device.id,
            device_id: device.deviceId,
            grp: device.group,
            type: device.type,
            locked: device.locked === undefined ? null : device.locked ? 1 : 0,
            move_request: writeMove(device.moveRequest),
            last_seen_at: device.lastSeenAt?.getTime() ?? null,
            firmware_version: device.firmwareVersion ?? null,
            booted_at: device.bootedAt?.getTime() ?? null,
            onboardings:
              device.onboardings === undefined
                ? null
                : JSON.stringify(
                    device.onboardings.map(({ at, address }) => ({ at: at.getTime(), address })),
                  ),
            key_generation: device.keyGeneration ?? null,
            previous_key_generation: device.previousKeyGeneration ?? null,
            key_hash: device.keyHash ?? null,
            previous_key_hash: device.previousKeyHash ?? null,
          });
      }),
    );
  }

  async listPending(): Promise<PendingDevice[]> {
    const rows = this.run(
      () =>
        this.connection
          .prepare('SELECT * FROM pending_devices ORDER BY last_seen_at DESC, box_id')
          .all() as PendingRow[],
    );
    return rows.map(pendingMapper.toEntity);
  }

  async removePending(boxId: string): Promise<boolean> {
    return this.run(
      () =>
        this.connection.write(
          () => this.connection.prepare('DELETE FROM pending_devices WHERE box_id = ?').run(boxId).changes,
        ) > 0,
    );
  }

  async removePendingSeenBefore(before: Date): Promise<number> {
    return this.run(() =>
      this.connection.write(
        () =>
          this.connection.prepare('DELETE FROM pending_devices WHERE last_seen_at < ?').run(before.getTime())
            .changes,
      ),
    );
  }

  async restorePending(box: PendingDevice): Promise<void> {
    const row: PendingRow = {
      box_id: box.boxId,
      mac: box.mac ?? null,
      first_seen_at: box.firstSeenAt.getTime(),
      last_seen_at: box.lastSeenAt.getTime(),
      firmware_version: box.firmwareVersion ?? null,
      address: box.address,
      attempts: box.attempts,
      wanted_by: box.wantedBy ?? null,
    };
    this.run(() =>
      this.connection
        .prepare(
          `INSERT OR REPLACE INTO pending_devices
             (box_id, mac, first_seen_at, last_seen_at, firmware_version, address, attempts, wanted_by)
           VALUES (@box_id, @mac, @first_seen_at, @last_seen_at, @firmware_version, @address, @attempts, @wanted_by)`,
        )
        .run(row),
    );
  }
}
