import type Database from 'better-sqlite3';
import { emailKey } from '@hortus/core';

/**
 * Forward migrations, applied in order at start. Each runs with the version bump in one transaction, so a
 * file is always at exactly one version. Never edit a released migration: add the next one.
 */
export const migrations: readonly {
  readonly version: number;
  readonly sql: string;
  /** Data work SQL cannot express, run after `sql` in the same transaction. */
  readonly data?: (db: Database.Database) => void;
}[] = [
  {
    version: 1,
    sql: `
      -- One row per series; readings name their series by its integer id, which keeps them small.
      CREATE TABLE series (
        id INTEGER PRIMARY KEY,
        grp TEXT NOT NULL,
        topic TEXT NOT NULL,
        UNIQUE (grp, topic)
      );
      -- The key (series, time) is the unique (group, topic, time) of a reading, and its order serves
      -- latest (max time), ranges newest or oldest first and latest-per-topic, with no scan.
      CREATE TABLE readings (
        series INTEGER NOT NULL,
        time INTEGER NOT NULL,
        value REAL NOT NULL,
        PRIMARY KEY (series, time)
      ) WITHOUT ROWID;
      -- Change counters behind the revisions (ETags) of one part of a group.
      CREATE TABLE revisions (
        subject TEXT NOT NULL,
        grp TEXT NOT NULL,
        epoch TEXT NOT NULL,
        n INTEGER NOT NULL,
        PRIMARY KEY (subject, grp)
      ) WITHOUT ROWID;
      CREATE TABLE actions (
        seq INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        grp TEXT NOT NULL,
        object TEXT NOT NULL,
        value TEXT NOT NULL,
        automations TEXT NOT NULL,
        UNIQUE (grp, object)
      );
      CREATE TABLE devices (
        seq INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        device_id TEXT NOT NULL UNIQUE,
        grp TEXT NOT NULL,
        type TEXT NOT NULL
      );
      CREATE INDEX devices_grp_device_id ON devices (grp, device_id);
      CREATE TABLE notifications (
        seq INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        grp TEXT NOT NULL,
        time INTEGER NOT NULL,
        message TEXT NOT NULL,
        ignore TEXT NOT NULL,
        topic TEXT,
        value REAL
      );
      CREATE INDEX notifications_open ON notifications (grp, ignore, seq);
      CREATE INDEX notifications_grp_time ON notifications (grp, time);
      CREATE TABLE history_charts (
        seq INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        user_id TEXT NOT NULL UNIQUE,
        charts TEXT NOT NULL
      );
      CREATE TABLE groups (
        seq INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        name TEXT NOT NULL UNIQUE,
        package TEXT NOT NULL,
        employee TEXT NOT NULL,
        settings TEXT
      );
      CREATE TABLE users (
        seq INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        first_name TEXT NOT NULL,
        last_name TEXT NOT NULL,
        email TEXT NOT NULL UNIQUE,
        grp TEXT NOT NULL
      );
      CREATE TABLE engine_state (
        key TEXT PRIMARY KEY,
        version INTEGER NOT NULL,
        value TEXT NOT NULL,
        updated_at INTEGER NOT NULL
      ) WITHOUT ROWID;
      CREATE INDEX engine_state_updated_at ON engine_state (updated_at);
      CREATE TABLE automation_events (
        seq INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        grp TEXT NOT NULL,
        object TEXT NOT NULL,
        value TEXT NOT NULL,
        previous_value TEXT NOT NULL,
        at INTEGER NOT NULL,
        trigger TEXT NOT NULL,
        rule TEXT NOT NULL,
        reading TEXT
      );
      CREATE INDEX automation_events_grp_seq ON automation_events (grp, seq);
      CREATE TABLE access_keys (
        seq INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        name TEXT NOT NULL,
        kind TEXT NOT NULL,
        groups TEXT NOT NULL,
        secret_hash TEXT NOT NULL UNIQUE,
        created_at INTEGER NOT NULL,
        revoked_at INTEGER
      );
      CREATE INDEX access_keys_created_at ON access_keys (created_at, seq);
    `,
  },
  {
    version: 2,
    sql: `
      -- Count, sum, smallest and largest value per series and minute, and per series and hour, kept in
      -- the transaction that adds the readings: summaries over whole minutes or hours read these instead
      -- of every reading. 'start' is the first millisecond of the minute or hour.
      CREATE TABLE rollups_1m (
        series INTEGER NOT NULL,
        start INTEGER NOT NULL,
        n INTEGER NOT NULL,
        s REAL NOT NULL,
        lo REAL NOT NULL,
        hi REAL NOT NULL,
        PRIMARY KEY (series, start)
      ) WITHOUT ROWID;
      CREATE TABLE rollups_1h (
        series INTEGER NOT NULL,
        start INTEGER NOT NULL,
        n INTEGER NOT NULL,
        s REAL NOT NULL,
        lo REAL NOT NULL,
        hi REAL NOT NULL,
        PRIMARY KEY (series, start)
      ) WITHOUT ROWID;
      -- Readings stored before this version, summarised once (floored, negative times too).
      INSERT INTO rollups_1m (series, start, n, s, lo, hi)
        SELECT series, time - ((time % 60000) + 60000) % 60000 AS minute,
               count(*), sum(value), min(value), max(value)
        FROM readings GROUP BY series, minute;
      INSERT INTO rollups_1h (series, start, n, s, lo, hi)
        SELECT series, time - ((time % 3600000) + 3600000) % 3600000 AS hour,
               count(*), sum(value), min(value), max(value)
        FROM readings GROUP BY series, hour;
    `,
  },
  {
    version: 3,
    sql: `
      -- Credentials beside each user: a bcrypt hash (none for users made without a password), the session
      -- version log-in tokens carry, and the pending password reset, kept only as a digest of its token.
      -- email_key is the e-mail in lower case, the unique key e-mails are matched by; it is filled in for
      -- existing users below, before its unique index is made.
      ALTER TABLE users ADD COLUMN email_key TEXT;
      ALTER TABLE users ADD COLUMN password_hash TEXT;
      ALTER TABLE users ADD COLUMN session_version INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE users ADD COLUMN reset_digest TEXT;
      ALTER TABLE users ADD COLUMN reset_expires_at INTEGER;
      -- Secrets the server generates once and every process shares (the log-in token key).
      CREATE TABLE server_secrets (
        name TEXT PRIMARY KEY,
        value TEXT NOT NULL
      ) WITHOUT ROWID;
    `,
    data(db) {
      // SQLite's lower() folds ASCII only, so the key is computed as the application computes it. Older
      // files could hold e-mails differing only in case: the oldest keeps the key, a later one stays
      // without (it cannot log in by e-mail until its address is changed), and the file still opens.
      const users = db.prepare('SELECT seq, email FROM users ORDER BY seq').all() as {
        seq: number;
        email: string;
      }[];
      const taken = new Set<string>();
      const setKey = db.prepare('UPDATE users SET email_key = ? WHERE seq = ?');
      for (const { seq, email } of users) {
        const key = emailKey(email);
        if (taken.has(key)) continue;
        taken.add(key);
        setKey.run(key, seq);
      }
      db.exec('CREATE UNIQUE INDEX users_email_key ON users (email_key)');
    },
  },
  {
    version: 4,
    sql: `
      -- An operator's retention override per group, in days (0: keep forever); NULL follows RETENTION_DAYS.
      ALTER TABLE groups ADD COLUMN retention_days INTEGER;
    `,
  },
  {
    version: 5,
    sql: `
      -- A time rule's switch keeps its slot (milliseconds), and late = 1 when it was caught up after downtime.
      ALTER TABLE automation_events ADD COLUMN slot INTEGER;
      ALTER TABLE automation_events ADD COLUMN late INTEGER;
    `,
  },
  {
    version: 6,
    sql: `
      -- Alert delivery: where each group's alerts go (webhooks, events) and the outbox the worker sends
      -- from, so an alert raised before a restart is still delivered after it.
      CREATE TABLE notify_settings (
        grp TEXT PRIMARY KEY,
        value TEXT NOT NULL
      ) WITHOUT ROWID;
      CREATE TABLE outbox (
        seq INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        grp TEXT NOT NULL,
        event TEXT NOT NULL,
        channel TEXT NOT NULL,
        subject TEXT NOT NULL,
        text TEXT NOT NULL,
        payload TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        status TEXT NOT NULL,
        attempts INTEGER NOT NULL,
        next_attempt_at INTEGER NOT NULL,
        last_error TEXT,
        delivered_at INTEGER
      );
      CREATE INDEX outbox_due ON outbox (status, next_attempt_at, seq);
      CREATE INDEX outbox_grp_seq ON outbox (grp, seq);
    `,
  },
  {
    version: 8,
    sql: `
      -- Firmware images for the boxes' updater: one per version and group ('' for every box), served by
      -- their SHA-256, so several servers on one file serve the same images.
      CREATE TABLE firmware_images (
        version TEXT NOT NULL,
        grp TEXT NOT NULL,
        size INTEGER NOT NULL,
        sha256 TEXT NOT NULL,
        published_at INTEGER NOT NULL,
        data BLOB NOT NULL,
        -- A rowid table: its rows are MiBs, which WITHOUT ROWID tables store badly.
        UNIQUE (version, grp)
      );
      CREATE INDEX firmware_images_sha256 ON firmware_images (sha256);
    `,
  },
  {
    version: 9,
    sql: `
      -- Boxes of the HTTP generation: onboarding and tracking, the digests of each device's keys (current,
      -- and the one before a rotation), and the boxes that asked to onboard without being registered.
      ALTER TABLE devices ADD COLUMN locked INTEGER;
      ALTER TABLE devices ADD COLUMN last_seen_at INTEGER;
      ALTER TABLE devices ADD COLUMN firmware_version TEXT;
      ALTER TABLE devices ADD COLUMN booted_at INTEGER;
      ALTER TABLE devices ADD COLUMN onboardings TEXT;
      ALTER TABLE devices ADD COLUMN key_generation INTEGER;
      ALTER TABLE devices ADD COLUMN key_hash TEXT;
      ALTER TABLE devices ADD COLUMN previous_key_generation INTEGER;
      ALTER TABLE devices ADD COLUMN previous_key_hash TEXT;
      CREATE INDEX devices_key_hash ON devices (key_hash) WHERE key_hash IS NOT NULL;
      CREATE INDEX devices_previous_key_hash ON devices (previous_key_hash) WHERE previous_key_hash IS NOT NULL;
      CREATE TABLE pending_devices (
        box_id TEXT PRIMARY KEY,
        mac TEXT,
        first_seen_at INTEGER NOT NULL,
        last_seen_at INTEGER NOT NULL,
        firmware_version TEXT,
        address TEXT NOT NULL,
        attempts INTEGER NOT NULL,
        wanted_by TEXT
      ) WITHOUT ROWID;
      CREATE INDEX pending_devices_last_seen ON pending_devices (last_seen_at);
    `,
  },
  {
    version: 11,
    sql: `
      -- How and when each account was made, for the review before access control is turned on. NULL for
      -- accounts made before this version: listed as unknown.
      ALTER TABLE users ADD COLUMN created_at INTEGER;
      ALTER TABLE users ADD COLUMN origin TEXT;
      -- Invitations a sign-up has used, by the digest of their code, kept until they expire: each works once.
      CREATE TABLE used_invitations (
        digest TEXT PRIMARY KEY,
        expires_at INTEGER NOT NULL
      ) WITHOUT ROWID;
    `,
  },
  {
    version: 12,
    sql: `
      -- The change feed: each bump takes the next number of the whole table, so "what changed since N" is
      -- one range of this index. Rows from before stay NULL until bumped (a reader starts from now).
      ALTER TABLE revisions ADD COLUMN seq INTEGER;
      CREATE INDEX revisions_seq ON revisions (seq);
    `,
  },
  {
    version: 13,
    sql: `
      -- Who switched which action when. seq orders entries of the same instant; the two indexes serve a
      -- group's history and one action's (newest first) and the per-action trim on every write.
      CREATE TABLE action_history (
        seq INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        grp TEXT NOT NULL,
        object TEXT NOT NULL,
        value TEXT NOT NULL,
        at INTEGER NOT NULL,
        actor_kind TEXT NOT NULL,
        actor_id TEXT
      );
      CREATE INDEX action_history_grp_at ON action_history (grp, at, seq);
      CREATE INDEX action_history_grp_object_at ON action_history (grp, object, at, seq);
    `,
  },
  {
    version: 14,
    sql: `
      -- A locked device's refused onboarding from another address (JSON: at, address, from, approved),
      -- kept until it onboards again so that an administrator sees and may approve the move.
      ALTER TABLE devices ADD COLUMN move_request TEXT;
    `,
  },
  {
    version: 15,
    sql: `
      -- 1 for an image published with --force: offered also to boxes that cannot update over the air.
      ALTER TABLE firmware_images ADD COLUMN forced INTEGER;
    `,
  },
  {
    version: 16,
    sql: `
      -- Each group's recipe (JSON, as assigned) and stage; version arbitrates engines moving it on.
      CREATE TABLE group_stages (
        grp TEXT PRIMARY KEY,
        version INTEGER NOT NULL,
        recipe TEXT NOT NULL,
        stage TEXT NOT NULL,
        started_at INTEGER NOT NULL,
        applied INTEGER NOT NULL,
        applied_at INTEGER
      ) WITHOUT ROWID;
    `,
  },
  {
    version: 17,
    sql: `
      -- An alert's severity (warning, critical; NULL: none given), and who acknowledged it when (ack_by:
      -- the actor as JSON), so that critical alerts are sent again until someone answers them.
      ALTER TABLE notifications ADD COLUMN severity TEXT;
      ALTER TABLE notifications ADD COLUMN ack_at INTEGER;
      ALTER TABLE notifications ADD COLUMN ack_by TEXT;
    `,
  },
  {
    version: 18,
    sql: `
      -- What a user may do: viewer, operator or admin. NULL (every account before) is an operator.
      ALTER TABLE users ADD COLUMN role TEXT;
    `,
  },
  {
    version: 19,
    sql: `
      -- JSON of an action's lockouts (conditions that keep the engine from switching it on); NULL: none.
      ALTER TABLE actions ADD COLUMN lockouts TEXT;
    `,
  },
  {
    version: 20,
    sql: `
      -- The audit trail: every change of configuration, who (the actor as JSON), what, before and after
      -- (JSON), when. Append-only; read newest first, of one group or of all.
      CREATE TABLE audit_log (
        seq INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        at INTEGER NOT NULL,
        actor TEXT NOT NULL,
        action TEXT NOT NULL,
        target TEXT NOT NULL,
        grp TEXT,
        before TEXT,
        after TEXT
      );
      CREATE INDEX audit_log_at ON audit_log (at, seq);
      CREATE INDEX audit_log_grp_at ON audit_log (grp, at, seq);
    `,
  },
];

export const SCHEMA_VERSION = migrations.reduce((highest, { version }) => Math.max(highest, version), 0);

/** Thrown when the file cannot be used as it is; the store turns it into InvalidInputError. */
export class SchemaProblem extends Error {}

/** The file's schema version: undefined when it has no schema_version table (not Hortus's, or new). */
export function schemaVersionOf(db: Database.Database): number | undefined {
  return storedVersion(db);
}

function storedVersion(db: Database.Database): number | undefined {
  const table = db
    .prepare(`SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'schema_version'`)
    .get();
  if (table === undefined) return undefined;
  const row = db.prepare('SELECT max(version) AS version FROM schema_version').get() as
    { version: number | null } | undefined;
  return row?.version ?? 0;
}

/** The migrations applied to the file, oldest first (none for a new file). */
export function appliedMigrations(db: Database.Database): { version: number; appliedAt: Date }[] {
  if (storedVersion(db) === undefined) return [];
  const rows = db
    .prepare('SELECT version, applied_at AS appliedAt FROM schema_version ORDER BY version')
    .all() as { version: number; appliedAt: number }[];
  return rows.map(({ version, appliedAt }) => ({ version, appliedAt: new Date(appliedAt) }));
}

/**
 * Reads, writing nothing, whether the file can be used: throws SchemaProblem when it is not a Hortus store
 * or is newer than this code. Runs before anything (even the switch to WAL) changes the file.
 */
export function checkSchema(db: Database.Database): void {
  const version = storedVersion(db);
  if (version === undefined) {
    const objects = db.prepare('SELECT count(*) AS n FROM sqlite_schema').get() as { n: number };
    if (objects.n > 0) {
      throw new SchemaProblem('holds tables of another application (no schema_version table)');
    }
  } else if (version > SCHEMA_VERSION) {
    throw new SchemaProblem(
      `was written by a newer Hortus (schema version ${version}; this one knows up to ${SCHEMA_VERSION})`,
    );
  }
}

/**
 * Brings the file to SCHEMA_VERSION (or `upTo`): a new, empty file gets every migration. The check and the
 * migrations run under one write lock, so two processes starting together on a new file do not both
 * create the tables; the check is repeated there, as the file may have changed since the first one.
 */
export function migrate(db: Database.Database, upTo: number = SCHEMA_VERSION): number {
  return db
    .transaction(() => {
      checkSchema(db);
      let version = storedVersion(db);
      if (version === undefined) {
        db.exec('CREATE TABLE schema_version (version INTEGER NOT NULL, applied_at INTEGER NOT NULL)');
        version = 0;
      }
      for (const migration of migrations) {
        if (migration.version <= version || migration.version > upTo) continue;
        db.exec(migration.sql);
        migration.data?.(db);
        db.prepare('INSERT INTO schema_version (version, applied_at) VALUES (?, ?)').run(
          migration.version,
          Date.now(),
        );
        version = migration.version;
      }
      return version;
    })
    .immediate();
}
