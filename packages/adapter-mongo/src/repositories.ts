import { type RepositoryClasses } from '@hortus/core';
import { type MongoDatabase } from './database.js';
import { MongoAccessKeyRepository } from './access-key.repository.js';
import { MongoActionRepository } from './action.repository.js';
import { MongoAlertOutboxRepository } from './alert-outbox.repository.js';
import { MongoAutomationLogRepository } from './automation-log.repository.js';
import { MongoActionHistoryRepository } from './action-history.repository.js';
import { MongoDeviceRepository } from './device.repository.js';
import { MongoEngineStateRepository } from './engine-state.repository.js';
import { MongoFirmwareRepository } from './firmware.repository.js';
import { MongoStageRepository } from './stage.repository.js';
import { MongoAuditLog } from './audit-log.repository.js';
import { MongoGroupRepository } from './group.repository.js';
import { MongoHistoryChartRepository } from './history-chart.repository.js';
import { MongoNotificationRepository } from './notification.repository.js';
import { MongoReadingRepository } from './reading.repository.js';
import { MongoServerSecretRepository } from './server-secret.repository.js';
import { MongoUserRepository } from './user.repository.js';
import { MongoChangeFeed } from './change-feed.js';

/**
 * The class of each repository port on this store, each built from its database: the store's container module
 * and its plain repositories are both made from this list.
 */
export const mongoRepositoryClasses: RepositoryClasses<[MongoDatabase]> = {
  readings: MongoReadingRepository,
  actions: MongoActionRepository,
  devices: MongoDeviceRepository,
  notifications: MongoNotificationRepository,
  historyCharts: MongoHistoryChartRepository,
  groups: MongoGroupRepository,
  users: MongoUserRepository,
  engineState: MongoEngineStateRepository,
  automationLog: MongoAutomationLogRepository,
  actionHistory: MongoActionHistoryRepository,
  accessKeys: MongoAccessKeyRepository,
  serverSecrets: MongoServerSecretRepository,
  alertOutbox: MongoAlertOutboxRepository,
  firmware: MongoFirmwareRepository,
  stages: MongoStageRepository,
  auditLog: MongoAuditLog,
  changeFeed: MongoChangeFeed,
};
