import { alertOutboxRepositoryContract } from './alert-outbox.contract.js';
import { auditLogContract } from './audit-log.contract.js';
import { accessKeyRepositoryContract } from './access-key.contract.js';
import { changeFeedContract } from './change-feed.contract.js';
import { actionRepositoryContract } from './action.contract.js';
import { actionHistoryRepositoryContract } from './action-history.contract.js';
import { automationLogRepositoryContract } from './automation-log.contract.js';
import { derivedMetricsContract } from './derived-metrics.contract.js';
import { deviceRepositoryContract } from './device.contract.js';
import { engineStateRepositoryContract } from './engine-state.contract.js';
import { firmwareRepositoryContract } from './firmware.contract.js';
import { groupRepositoryContract } from './group.contract.js';
import { historyChartRepositoryContract } from './history-chart.contract.js';
import { notificationRepositoryContract } from './notification.contract.js';
import { readingAggregateContract } from './reading-aggregate.contract.js';
import { readingRepositoryContract } from './reading.contract.js';
import { revisionContract } from './revision.contract.js';
import { serverSecretRepositoryContract } from './server-secret.contract.js';
import { stageRepositoryContract } from './stage.contract.js';
import { storeCopyContract } from './store-copy.contract.js';
import { storeCopyQueuesContract } from './store-copy-queues.contract.js';
import { type StoreFactory } from './store.js';
import { userRepositoryContract } from './user.contract.js';

/** Runs every port's contract against one adapter. */
export function storeContract(name: string, createStore: StoreFactory): void {
  readingRepositoryContract(name, createStore);
  readingAggregateContract(name, createStore);
  revisionContract(name, createStore);
  changeFeedContract(name, createStore);
  actionRepositoryContract(name, createStore);
  deviceRepositoryContract(name, createStore);
  notificationRepositoryContract(name, createStore);
  historyChartRepositoryContract(name, createStore);
  groupRepositoryContract(name, createStore);
  userRepositoryContract(name, createStore);
  engineStateRepositoryContract(name, createStore);
  derivedMetricsContract(name, createStore);
  automationLogRepositoryContract(name, createStore);
  actionHistoryRepositoryContract(name, createStore);
  accessKeyRepositoryContract(name, createStore);
  serverSecretRepositoryContract(name, createStore);
  alertOutboxRepositoryContract(name, createStore);
  firmwareRepositoryContract(name, createStore);
  stageRepositoryContract(name, createStore);
  auditLogContract(name, createStore);
  storeCopyContract(name, createStore);
  storeCopyQueuesContract(name, createStore);
}
