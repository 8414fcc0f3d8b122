import { ContainerModule } from 'inversify';
import {
  ACCESS_KEY_REPOSITORY,
  type AccessKeyRepository,
  ALERT_OUTBOX_REPOSITORY,
  type AlertOutboxRepository,
  ACTION_REPOSITORY,
  type ActionRepository,
  AUTOMATION_LOG_REPOSITORY,
  type AutomationLogRepository,
  ENGINE_STATE_REPOSITORY,
  type EngineStateRepository,
  DEVICE_REPOSITORY,
  type DeviceRepository,
  GROUP_REPOSITORY,
  type GroupRepository,
  HISTORY_CHART_REPOSITORY,
  type HistoryChartRepository,
  NOTIFICATION_REPOSITORY,
  type NotificationRepository,
  READING_REPOSITORY,
  type ReadingRepository,
  USER_REPOSITORY,
  type UserRepository,
  type Repositories,
  SERVER_SECRET_REPOSITORY,
  FIRMWARE_REPOSITORY,
  type FirmwareRepository,
  type ServerSecretRepository,
  STORE_LIFECYCLE,
  type StoreLifecycle,
  CHANGE_FEED,
  type ChangeFeed,
} from '@hortus/core';
import { InMemoryChangeFeed } from './change-feed.js';
import { InMemoryAlertOutboxRepository } from './alert-outbox.repository.js';
import { InMemoryAccessKeyRepository } from './access-key.repository.js';
import { InMemoryActionRepository } from './action.repository.js';
import { InMemoryAutomationLogRepository } from './automation-log.repository.js';
import { InMemoryDeviceRepository } from './device.repository.js';
import { InMemoryEngineStateRepository } from './engine-state.repository.js';
import { InMemoryGroupRepository } from './group.repository.js';
import { InMemoryHistoryChartRepository } from './history-chart.repository.js';
import { InMemoryNotificationRepository } from './notification.repository.js';
import { InMemoryReadingRepository } from './reading.repository.js';
import { InMemoryServerSecretRepository } from './server-secret.repository.js';
import { InMemoryFirmwareRepository } from './firmware.repository.js';
import { InMemoryUserRepository } from './user.repository.js';

/** Every repository of one store, for callers that work without a container (tests, tools). */
export interface MemoryStore extends Repositories {
  /** Nothing to release; present so a memory store can stand wherever a closable store is expected. */
  close(): Promise<void>;
}

/** A fresh, empty store. */
export function createMemoryStore(): MemoryStore {
  const readings = new InMemoryReadingRepository();
  const actions = new InMemoryActionRepository();
  const notifications = new InMemoryNotificationRepository();
  const groups = new InMemoryGroupRepository();
  return {
    readings,
    actions,
    devices: new InMemoryDeviceRepository(),
    notifications,
    historyCharts: new InMemoryHistoryChartRepository(),
    groups,
    users: new InMemoryUserRepository(),
    engineState: new InMemoryEngineStateRepository(),
    automationLog: new InMemoryAutomationLogRepository(),
    accessKeys: new InMemoryAccessKeyRepository(),
    serverSecrets: new InMemoryServerSecretRepository(),
    alertOutbox: new InMemoryAlertOutboxRepository(),
    firmware: new InMemoryFirmwareRepository(),
    changeFeed: new InMemoryChangeFeed(readings, actions, groups, notifications),
    close: async () => {},
  };
}

/** Nothing to connect, prepare or release: the store lives as long as its container. */
const inMemoryLifecycle: StoreLifecycle = {
  start: async () => {},
  close: async () => {},
  ping: async () => true,
};

/**
 * Binds every repository port to a singleton of its in-memory class, and a lifecycle with nothing to do. Singletons live per container, so
 * each container that loads this module gets its own fresh store.
 */
export function memoryStoreModule(): ContainerModule {
  return new ContainerModule(({ bind }) => {
    bind<ReadingRepository>(READING_REPOSITORY).to(InMemoryReadingRepository).inSingletonScope();
    bind<ActionRepository>(ACTION_REPOSITORY).to(InMemoryActionRepository).inSingletonScope();
    bind<DeviceRepository>(DEVICE_REPOSITORY).to(InMemoryDeviceRepository).inSingletonScope();
    bind<NotificationRepository>(NOTIFICATION_REPOSITORY)
      .to(InMemoryNotificationRepository)
      .inSingletonScope();
    bind<HistoryChartRepository>(HISTORY_CHART_REPOSITORY)
      .to(InMemoryHistoryChartRepository)
      .inSingletonScope();
    bind<GroupRepository>(GROUP_REPOSITORY).to(InMemoryGroupRepository).inSingletonScope();
    bind<UserRepository>(USER_REPOSITORY).to(InMemoryUserRepository).inSingletonScope();
    bind<EngineStateRepository>(ENGINE_STATE_REPOSITORY).to(InMemoryEngineStateRepository).inSingletonScope();
    bind<AutomationLogRepository>(AUTOMATION_LOG_REPOSITORY)
      .to(InMemoryAutomationLogRepository)
      .inSingletonScope();
    bind<AccessKeyRepository>(ACCESS_KEY_REPOSITORY).to(InMemoryAccessKeyRepository).inSingletonScope();
    bind<ServerSecretRepository>(SERVER_SECRET_REPOSITORY)
      .to(InMemoryServerSecretRepository)
      .inSingletonScope();
    bind<AlertOutboxRepository>(ALERT_OUTBOX_REPOSITORY).to(InMemoryAlertOutboxRepository).inSingletonScope();
    bind<FirmwareRepository>(FIRMWARE_REPOSITORY).to(InMemoryFirmwareRepository).inSingletonScope();
    bind<ChangeFeed>(CHANGE_FEED).to(InMemoryChangeFeed).inSingletonScope();
    bind<StoreLifecycle>(STORE_LIFECYCLE).toConstantValue(inMemoryLifecycle);
  });
}
