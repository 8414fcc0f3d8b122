import { type ServerSecretRepository } from './accounts/accounts.port.js';
import { type AccessKeyRepository } from './access-keys/access-key.port.js';
import { type AlertOutboxRepository } from './alerts/alert-outbox.port.js';
import { type ActionRepository } from './actions/action.port.js';
import { type AutomationLogRepository } from './automations/automation-log.port.js';
import { type EngineStateRepository } from './automations/engine-state.port.js';
import { type DeviceRepository } from './devices/device.port.js';
import { type FirmwareRepository } from './firmware/firmware.port.js';
import { type GroupRepository } from './groups/group.port.js';
import { type HistoryChartRepository } from './history-charts/history-chart.port.js';
import { type NotificationRepository } from './notifications/notification.port.js';
import { type ReadingRepository } from './readings/reading.port.js';
import { type ChangeFeed } from './revisions/change-feed.port.js';
import { type UserRepository } from './users/user.port.js';

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
  readonly accessKeys: AccessKeyRepository;
  readonly serverSecrets: ServerSecretRepository;
  readonly alertOutbox: AlertOutboxRepository;
  readonly firmware: FirmwareRepository;
  /** Which groups changed since a cursor, read from the revision counters of the four repositories above. */
  readonly changeFeed: ChangeFeed;
}
