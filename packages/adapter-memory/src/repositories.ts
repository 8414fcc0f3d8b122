import { type RepositoryClasses } from '@hortus/core';
import { type MemoryChanges } from './revisions.js';
import { InMemoryAccessKeyRepository } from './access-key.repository.js';
import { InMemoryActionRepository } from './action.repository.js';
import { InMemoryActionHistoryRepository } from './action-history.repository.js';
import { InMemoryAlertOutboxRepository } from './alert-outbox.repository.js';
import { InMemoryAutomationLogRepository } from './automation-log.repository.js';
import { InMemoryChangeFeed } from './change-feed.js';
import { InMemoryDeviceRepository } from './device.repository.js';
import { InMemoryEngineStateRepository } from './engine-state.repository.js';
import { InMemoryFirmwareRepository } from './firmware.repository.js';
import { InMemoryStageRepository } from './stage.repository.js';
import { InMemoryAuditLog } from './audit-log.repository.js';
import { InMemoryGroupRepository } from './group.repository.js';
import { InMemoryHistoryChartRepository } from './history-chart.repository.js';
import { InMemoryNotificationRepository } from './notification.repository.js';
import { InMemoryReadingRepository } from './reading.repository.js';
import { InMemoryServerSecretRepository } from './server-secret.repository.js';
import { InMemoryUserRepository } from './user.repository.js';

/**
 * The class of each repository port on this store, each built from the store's change journal (which only
 * the counted repositories and the change feed use): the store's container module and its plain
 * repositories are both made from this list.
 */
export const inMemoryRepositoryClasses: RepositoryClasses<[MemoryChanges]> = {
  readings: InMemoryReadingRepository,
  actions: InMemoryActionRepository,
  devices: InMemoryDeviceRepository,
  notifications: InMemoryNotificationRepository,
  historyCharts: InMemoryHistoryChartRepository,
  groups: InMemoryGroupRepository,
  users: InMemoryUserRepository,
  engineState: InMemoryEngineStateRepository,
  automationLog: InMemoryAutomationLogRepository,
  actionHistory: InMemoryActionHistoryRepository,
  accessKeys: InMemoryAccessKeyRepository,
  serverSecrets: InMemoryServerSecretRepository,
  alertOutbox: InMemoryAlertOutboxRepository,
  firmware: InMemoryFirmwareRepository,
  stages: InMemoryStageRepository,
  auditLog: InMemoryAuditLog,
  changeFeed: InMemoryChangeFeed,
};
