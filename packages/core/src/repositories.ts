import { type Bind } from 'inversify';
import { SERVER_SECRET_REPOSITORY, type ServerSecretRepository } from './accounts/accounts.port.js';
import { ACCESS_KEY_REPOSITORY, type AccessKeyRepository } from './access-keys/access-key.port.js';
import { ALERT_OUTBOX_REPOSITORY, type AlertOutboxRepository } from './alerts/alert-outbox.port.js';
import { ACTION_REPOSITORY, type ActionRepository } from './actions/action.port.js';
import {
  ACTION_HISTORY_REPOSITORY,
  type ActionHistoryRepository,
} from './action-history/action-history.port.js';
import {
  AUTOMATION_LOG_REPOSITORY,
  type AutomationLogRepository,
} from './automations/automation-log.port.js';
import { ENGINE_STATE_REPOSITORY, type EngineStateRepository } from './automations/engine-state.port.js';
import { DEVICE_REPOSITORY, type DeviceRepository } from './devices/device.port.js';
import { FIRMWARE_REPOSITORY, type FirmwareRepository } from './firmware/firmware.port.js';
import { GROUP_REPOSITORY, type GroupRepository } from './groups/group.port.js';
import {
  HISTORY_CHART_REPOSITORY,
  type HistoryChartRepository,
} from './history-charts/history-chart.port.js';
import { NOTIFICATION_REPOSITORY, type NotificationRepository } from './notifications/notification.port.js';
import { READING_REPOSITORY, type ReadingRepository } from './readings/reading.port.js';
import { CHANGE_FEED, type ChangeFeed } from './revisions/change-feed.port.js';
import { STAGE_REPOSITORY, type StageRepository } from './stages/stage.port.js';
import { USER_REPOSITORY, type UserRepository } from './users/user.port.js';
import { AUDIT_LOG, type AuditLog } from './audit/audit-log.port.js';

/** Every repository port of one store: what each adapter provides and each contract suite draws from. */
export interface Repositories {
  readonly readings: ReadingRepository;
  readonly actions: ActionRepository;
  readonly devices: DeviceRepository;
  readonly notifications: NotificationRepository;
  readonly historyCharts: HistoryChartRepository;
  readonly groups: GroupRepository;
  readonly users: UserRepository;
  readonly engineState: EngineStateRepository;
  readonly automationLog: AutomationLogRepository;
  readonly actionHistory: ActionHistoryRepository;
  readonly accessKeys: AccessKeyRepository;
  readonly serverSecrets: ServerSecretRepository;
  readonly alertOutbox: AlertOutboxRepository;
  readonly firmware: FirmwareRepository;
  /** Each group's recipe and stage. */
  readonly stages: StageRepository;
  /** Every change of configuration, who made it, before and after. */
  readonly auditLog: AuditLog;
  /** Which groups changed since a cursor, read from the revision counters of the four repositories above. */
  readonly changeFeed: ChangeFeed;
}

/** The token of each repository port, by its name in Repositories: the one list every adapter maps. */
export const repositoryTokens = {
  readings: READING_REPOSITORY,
  actions: ACTION_REPOSITORY,
  devices: DEVICE_REPOSITORY,
  notifications: NOTIFICATION_REPOSITORY,
  historyCharts: HISTORY_CHART_REPOSITORY,
  groups: GROUP_REPOSITORY,
  users: USER_REPOSITORY,
  engineState: ENGINE_STATE_REPOSITORY,
  automationLog: AUTOMATION_LOG_REPOSITORY,
  actionHistory: ACTION_HISTORY_REPOSITORY,
  accessKeys: ACCESS_KEY_REPOSITORY,
  serverSecrets: SERVER_SECRET_REPOSITORY,
  alertOutbox: ALERT_OUTBOX_REPOSITORY,
  firmware: FIRMWARE_REPOSITORY,
  stages: STAGE_REPOSITORY,
  auditLog: AUDIT_LOG,
  changeFeed: CHANGE_FEED,
} as const satisfies { readonly [K in keyof Repositories]: symbol };

/**
 * One adapter's class for each repository port, all built from the same arguments (its connection or
 * database, or none): the adapter's one list, from which both its container module and its plain
 * repositories are made.
 */
export type RepositoryClasses<Args extends readonly unknown[]> = {
  readonly [K in keyof Repositories]: new (...args: Args) => Repositories[K];
};

const repositoryNames = Object.keys(repositoryTokens) as (keyof Repositories)[];

/** Binds each port's token to a singleton of the adapter's class; the container injects its arguments. */
export function bindRepositoryClasses<Args extends readonly unknown[]>(
  bind: Bind,
  classes: RepositoryClasses<Args>,
): void {
  for (const name of repositoryNames) {
    bind<Repositories[typeof name]>(repositoryTokens[name]).to(classes[name]).inSingletonScope();
  }
}

/** Every repository of the adapter at once, without a container (tests and tools). */
export function newRepositories<Args extends readonly unknown[]>(
  classes: RepositoryClasses<Args>,
  ...args: Args
): Repositories {
  return Object.fromEntries(
    repositoryNames.map((name) => [name, new classes[name](...args)]),
  ) as unknown as Repositories;
}
