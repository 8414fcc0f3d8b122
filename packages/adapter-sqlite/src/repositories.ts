import { type RepositoryClasses } from '@hortus/core';
import { SqliteAccessKeyRepository } from './access-key.repository.js';
import { SqliteActionRepository } from './action.repository.js';
import { SqliteAlertOutboxRepository } from './alert-outbox.repository.js';
import { SqliteAutomationLogRepository } from './automation-log.repository.js';
import { SqliteActionHistoryRepository } from './action-history.repository.js';
import { SqliteDeviceRepository } from './device.repository.js';
import { SqliteEngineStateRepository } from './engine-state.repository.js';
import { SqliteFirmwareRepository } from './firmware.repository.js';
import { SqliteStageRepository } from './stage.repository.js';
import { SqliteAuditLog } from './audit-log.repository.js';
import { SqliteGroupRepository } from './group.repository.js';
import { SqliteHistoryChartRepository } from './history-chart.repository.js';
import { SqliteNotificationRepository } from './notification.repository.js';
import { SqliteReadingRepository } from './reading.repository.js';
import { SqliteServerSecretRepository } from './server-secret.repository.js';
import { SqliteUserRepository } from './user.repository.js';
import { type SqliteConnection } from './support.js';
import { SqliteChangeFeed } from './change-feed.js';

/**
 * The class of each repository port on this store, each built from its one connection: the store's container module
 * and its plain repositories are both made from this list.
 */
export const sqliteRepositoryClasses: RepositoryClasses<[SqliteConnection]> = {
  readings: SqliteReadingRepository,
  actions: SqliteActionRepository,
  devices: SqliteDeviceRepository,
  notifications: SqliteNotificationRepository,
  historyCharts: SqliteHistoryChartRepository,
  groups: SqliteGroupRepository,
  users: SqliteUserRepository,
  engineState: SqliteEngineStateRepository,
  automationLog: SqliteAutomationLogRepository,
  actionHistory: SqliteActionHistoryRepository,
  accessKeys: SqliteAccessKeyRepository,
  serverSecrets: SqliteServerSecretRepository,
  alertOutbox: SqliteAlertOutboxRepository,
  firmware: SqliteFirmwareRepository,
  stages: SqliteStageRepository,
  auditLog: SqliteAuditLog,
  changeFeed: SqliteChangeFeed,
};
