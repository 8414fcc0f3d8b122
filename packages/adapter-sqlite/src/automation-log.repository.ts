import { inject, injectable } from 'inversify';
import {
  type AutomationEvent,
  type AutomationLogRepository,
  type AutomationTrigger,
  type NewAutomationEvent,
} from '@hortus/core';
import { fromJson, newId, SQLITE_CONNECTION, type SqliteConnection, SqliteRepository } from './support.js';

interface AutomationEventRow {
  id: string;
  grp: string;
  object: string;
  value: string;
  previous_value: string;
  at: number;
  trigger: string;
  rule: string;
  /** JSON `{ topic, value, time }` with time in milliseconds. */
  reading: string | null;
  slot: number | null;
  late: number | null;
}

const automationEventMapper = {
  toRow(event: NewAutomationEvent, id: string = newId()): AutomationEventRow {
    return {
      id,
      grp: event.group,
      object: event.object,
      value: event.value,
      previous_value: event.previousValue,
      at: event.at.getTime(),
      trigger: event.trigger,
      rule: event.rule,
      reading:
        event.reading === undefined
          ? null
          : JSON.stringify({
              topic: event.reading.topic,
              value: event.reading.value,
              time: event.reading.time.getTime(),
            }),
      slot: event.slot?.getTime() ?? null,
      late: event.late === true ? 1 : null,
    };
  },
  toEntity(row: AutomationEventRow): AutomationEvent {
    const reading = fromJson(row.reading) as { topic: string; value: number; time: number } | undefined;
    return {
      id: row.id,
      group: row.grp,
      object: row.object,
      value: row.value,
      previousValue: row.previous_value,
      at: new Date(row.at),
      trigger: row.trigger as AutomationTrigger,
      rule: row.rule,
      ...(reading === undefined || reading === null
        ? {}
        : {
            reading: {
              topic: String(reading.topic),
              value: Number(reading.value),
              time: new Date(reading.time),
            },
          }),
      ...(row.slot === null ? {} : { slot: new Date(row.slot) }),
      ...(row.late === 1 ? { late: true as const } : {}),
    };
  },
};

const columns = 'id, grp, object, value, previous_value, at, trigger, rule, reading, slot, late';
const values = '(@id, @grp, @object, @value, @previous_value, @at, @trigger, @rule, @reading, @slot, @late)';

@injectable()
export class SqliteAutomationLogRepository extends SqliteRepository implements AutomationLogRepository {
  constructor(@inject(SQLITE_CONNECTION) connection: SqliteConnection) {
    super(connection, 'action', 'That automation event is already stored');
  }

  async record(event: NewAutomationEvent): Promise<AutomationEvent> {
    const row = automationEventMapper.toRow(event);
    this.run(() =>
      this.connection.prepare(`INSERT INTO automation_events (${columns}) VALUES ${values}`).run(row),
    );
    return automationEventMapper.toEntity(row);
  }

  async listCopies(after: string | undefined, limit: number): Promise<AutomationEvent[]> {
    if (!(limit > 0)) return [];
    // In seq order, the order recorded; an `after` that is gone (its group deleted) starts over.
    const rows = this.run(
      () =>
        this.connection
          .prepare(
            `SELECT ${columns} FROM automation_events
             WHERE seq > coalesce((SELECT seq FROM automation_events WHERE id = ?), 0) ORDER BY seq LIMIT ?`,
          )
          .all(after ?? null, Math.floor(limit)) as AutomationEventRow[],
    );
    return rows.map(automationEventMapper.toEntity);
  }

  async restore(events: readonly AutomationEvent[]): Promise<number> {
    // One transaction per page: a commit per event would wait for the disk thousands of times.
    return this.run(() =>
      this.connection.write(() => {
        const insert = this.connection.prepare(
          `INSERT INTO automation_events (${columns}) VALUES ${values} ON CONFLICT (id) DO NOTHING`,
        );
        let added = 0;
        for (const { id, ...fields } of events) {
          added += insert.run(automationEventMapper.toRow(fields, id)).changes;
        }
        return added;
      }),
    );
  }

  async deleteByGroup(group: string): Promise<number> {
    return this.run(() =>
      this.connection.write(
        () => this.connection.prepare('DELETE FROM automation_events WHERE grp = ?').run(group).changes,
      ),
    );
  }

  async listByGroup(group: string, limit: number): Promise<AutomationEvent[]> {
    if (!(limit > 0)) return [];
    const rows = this.run(
      () =>
        this.connection
          .prepare(`SELECT ${columns} FROM automation_events WHERE grp = ? ORDER BY seq DESC LIMIT ?`)
          .all(group, Math.floor(limit)) as AutomationEventRow[],
    );
    return rows.map(automationEventMapper.toEntity);
  }
}
