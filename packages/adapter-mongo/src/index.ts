export * from './access-key.repository.js';
export * from './action.repository.js';
export * from './automation-log.repository.js';
export * from './action-history.repository.js';
export * from './device.repository.js';
export * from './engine-state.repository.js';
export * from './group.repository.js';
export * from './history-chart.repository.js';
export * from './notification.repository.js';
export * from './reading.repository.js';
export * from './user.repository.js';
export * from './server-secret.repository.js';
export * from './settings.js';
export * from './mongo-store.js';
export * from './migrations.js';
export {
  MONGO_DATABASE,
  isDuplicateKeyError,
  isUnavailableError,
  toDomainError,
  withDeadline,
} from './support.js';
export { RevisionMirror } from './revisions.js';
export { MongoDatabase } from './database.js';
export * from './firmware.repository.js';
export * from './change-feed.js';
export { attemptCollection, MongoAttemptCounter } from './attempt-counter.js';
