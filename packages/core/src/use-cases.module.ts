import { ContainerModule } from 'inversify';
import { DeleteUser } from './accounts/delete-user.js';
import { GetProfile } from './accounts/get-profile.js';
import { InviteUser } from './accounts/invite-user.js';
import { LogIn } from './accounts/log-in.js';
import { LoginThrottle } from './accounts/login-throttle.js';
import { SignUpThrottle } from './accounts/signup-throttle.js';
import { RequestPasswordReset } from './accounts/request-password-reset.js';
import { ResetPassword } from './accounts/reset-password.js';
import { RevokeSessions } from './accounts/revoke-sessions.js';
import { LogOut } from './accounts/log-out.js';
import { SetPassword } from './accounts/set-password.js';
import { SignUp } from './accounts/sign-up.js';
import { VerifySession } from './accounts/verify-session.js';
import { Authenticate } from './access-keys/authenticate.js';
import { CreateAccessKey } from './access-keys/create-access-key.js';
import { ListAccessKeys } from './access-keys/list-access-keys.js';
import { RevokeAccessKey } from './access-keys/revoke-access-key.js';
import { ActionChanges } from './actions/action-changes.js';
import { CreateAction } from './actions/create-action.js';
import { DeleteAction } from './actions/delete-action.js';
import { ConfigureGroupNotify } from './alerts/configure-group-notify.js';
import { SetTopicAlert } from './alerts/set-topic-alert.js';
import { AdvanceStages } from './stages/advance-stages.js';
import { AssignStage } from './stages/assign-stage.js';
import { ClearStage } from './stages/clear-stage.js';
import { GetStage } from './stages/get-stage.js';
import { StartStage } from './stages/start-stage.js';
import { SetBoxAlert } from './alerts/set-box-alert.js';
import { SetActionLimit } from './actions/set-action-limit.js';
import { DeliverAlertMessages } from './alerts/deliver-alert-messages.js';
import { QueueAlertMessages } from './alerts/queue-alert-messages.js';
import { AcknowledgeNotification } from './notifications/acknowledge-notification.js';
import { NameActor } from './shared/name-actor.js';
import { RecordAudit } from './audit/record-audit.js';
import { ListAuditTrail } from './audit/list-audit-trail.js';
import { EvaluateAlerts } from './alerts/evaluate-alerts.js';
import { CheckBoxesSilentSinceStart } from './alerts/boxes-silent-since-start.js';
import { SERVER_START, type ServerStart } from './shared/server-start.js';
import { AutomationEngine } from './automations/automation-engine.js';
import {
  AUTOMATION_SETTINGS,
  type AutomationSettings,
  defaultAutomationSettings,
} from './automations/automation-settings.js';
import { ListAutomationEvents } from './automations/list-automation-events.js';
import { ListActionHistory } from './action-history/list-action-history.js';
import { RunAutomations } from './automations/run-automations.js';
import { SafeMode } from './automations/safe-mode.js';
import { Lockouts } from './automations/lockouts.js';
import { PreviewAutomations } from './automations/preview-automations.js';
import { BacktestAutomations } from './automations/backtest-automations.js';
import { ListActionSafety, SetActionSafety } from './actions/action-safety.js';
import { AddActionLockout } from './actions/add-action-lockout.js';
import { ListActionLockouts } from './actions/list-action-lockouts.js';
import { RemoveActionLockout } from './actions/remove-action-lockout.js';
import { GetAction } from './actions/get-action.js';
import { ListChangedActions } from './actions/list-changed-actions.js';
import { GetActionsOfGroup } from './actions/get-actions-of-group.js';
import { ReplaceAutomations } from './actions/replace-automations.js';
import { SetActionValue } from './actions/set-action-value.js';
import { GetRecentCommits } from './commits/get-recent-commits.js';
import { SeedDemo } from './demo/seed-demo.js';
import { CreateDevice } from './devices/create-device.js';
import { DeleteDevice } from './devices/delete-device.js';
import { FindDevice } from './devices/find-device.js';
import { InstallationValues } from './shared/installation-values.js';
import { ListDevices } from './devices/list-devices.js';
import { AuthenticateBox } from './devices/authenticate-box.js';
import { BoxSightings } from './devices/box-sightings.js';
import { FindBoxActions } from './devices/box-actions.js';
import { BoxKeys } from './devices/box-keys.js';
import { RecordBoxReadings } from './devices/box-readings.js';
import { BOX_SETTINGS, type BoxSettings, defaultBoxSettings } from './devices/box-settings.js';
import { ClaimDevice } from './devices/claim-device.js';
import { ListDeviceViews } from './devices/list-device-views.js';
import { ListPendingDevices } from './devices/list-pending-devices.js';
import { ClearPendingDevices } from './devices/clear-pending-devices.js';
import { ApproveDeviceMove } from './devices/approve-device-move.js';
import { RotateDeviceKey } from './devices/rotate-device-key.js';
import { SetDeviceLock } from './devices/set-device-lock.js';
import { OnboardBox } from './devices/onboard-box.js';
import { ListFirmware } from './firmware/list-firmware.js';
import { OfferFirmware } from './firmware/offer-firmware.js';
import { PublishFirmware } from './firmware/publish-firmware.js';
import { ReadFirmwareImage } from './firmware/read-firmware-image.js';
import { WithdrawFirmware } from './firmware/withdraw-firmware.js';
import { CheckGroup } from './groups/check-group.js';
import { CreateGroup } from './groups/create-group.js';
import { DeleteGroup } from './groups/delete-group.js';
import { GetGroup } from './groups/get-group.js';
import { ListGroups } from './groups/list-groups.js';
import { CopyLegacyRecords, MigrationCheckpoints, RecordCutOver } from './migration/copy-legacy-records.js';
import { UpdateGroupSettings } from './groups/update-group-settings.js';
import { AddChart } from './history-charts/add-chart.js';
import { ChangeChart } from './history-charts/change-chart.js';
import { DeleteChart } from './history-charts/delete-chart.js';
import { GetChartSettings } from './history-charts/get-chart-settings.js';
import { GetHistoryCharts } from './history-charts/get-history-charts.js';
import { CreateNotification } from './notifications/create-notification.js';
import { IgnoreNotifications } from './notifications/ignore-notifications.js';
import { ListOpenNotifications } from './notifications/list-open-notifications.js';
import { GetLatestReading } from './readings/get-latest-reading.js';
import { GetLatestReadingsOfGroup } from './readings/get-latest-readings-of-group.js';
import { GetTodayHourlyReadings } from './readings/get-today-hourly-readings.js';
import { AggregateReadings } from './readings/aggregate-readings.js';
import { DeleteReadings } from './readings/delete-readings.js';
import { ExportReadings } from './readings/export-readings.js';
import {
  ApplyRetention,
  defaultRetentionSettings,
  RETENTION_SETTINGS,
  type RetentionSettings,
  SetGroupRetention,
} from './readings/apply-retention.js';
import { QueryReadings } from './readings/query-readings.js';
import { RecordReadings } from './readings/record-readings.js';
import { DeriveMetrics } from './readings/derive-metrics.js';
import { SetGroupMetrics } from './readings/set-group-metrics.js';
import { BackfillMetrics } from './readings/backfill-metrics.js';
import { GetRevision } from './revisions/get-revision.js';
import { CLOCK, type Clock, SystemClock } from './shared/clock.port.js';
import {
  CORE_LIMITS,
  CORE_SETTINGS,
  type CoreLimits,
  type CoreSettings,
  coreLimitsOf,
} from './shared/settings.js';
import { assertTimeZone } from './shared/time-zone.js';
import { ChangeUserEmail } from './users/change-user-email.js';
import { CreateUser } from './users/create-user.js';
import { ListUsers } from './users/list-users.js';
import { SetUserRole } from './users/set-user-role.js';
import { AuthorizeCredential } from './access-keys/authorize-credential.js';
import { DescribeCaller } from './accounts/describe-caller.js';

export const useCases = [
  CreateAction,
  GetAction,
  GetActionsOfGroup,
  ListChangedActions,
  ReplaceAutomations,
  SetActionValue,
  GetRecentCommits,
  CreateDevice,
  ListDevices,
  FindDevice,
  InstallationValues,
  BoxKeys,
  BoxSightings,
  OnboardBox,
  AuthenticateBox,
  RecordBoxReadings,
  FindBoxActions,
  ListDeviceViews,
  ListPendingDevices,
  ClearPendingDevices,
  ApproveDeviceMove,
  ClaimDevice,
  SetDeviceLock,
  RotateDeviceKey,
  PublishFirmware,
  ListFirmware,
  WithdrawFirmware,
  OfferFirmware,
  ReadFirmwareImage,
  CheckGroup,
  CreateGroup,
  DeleteGroup,
  DeleteDevice,
  DeleteAction,
  GetGroup,
  ListGroups,
  UpdateGroupSettings,
  AddChart,
  ChangeChart,
  DeleteChart,
  GetChartSettings,
  GetHistoryCharts,
  CreateNotification,
  IgnoreNotifications,
  ListOpenNotifications,
  AcknowledgeNotification,
  NameActor,
  RecordAudit,
  ListAuditTrail,
  GetLatestReading,
  GetLatestReadingsOfGroup,
  GetTodayHourlyReadings,
  QueryReadings,
  AggregateReadings,
  DeleteReadings,
  ExportReadings,
  ApplyRetention,
  SetGroupRetention,
  GetRevision,
  RecordReadings,
  DeriveMetrics,
  SetGroupMetrics,
  BackfillMetrics,
  ChangeUserEmail,
  CreateUser,
  ListUsers,
  SetUserRole,
  DescribeCaller,
  AuthorizeCredential,
  SeedDemo,
  ActionChanges,
  RunAutomations,
  SafeMode,
  Lockouts,
  ListActionSafety,
  SetActionSafety,
  AddActionLockout,
  RemoveActionLockout,
  ListActionLockouts,
  EvaluateAlerts,
  CheckBoxesSilentSinceStart,
  QueueAlertMessages,
  DeliverAlertMessages,
  ConfigureGroupNotify,
  SetTopicAlert,
  StartStage,
  AssignStage,
  GetStage,
  ClearStage,
  AdvanceStages,
  SetBoxAlert,
  SetActionLimit,
  AutomationEngine,
  ListAutomationEvents,
  PreviewAutomations,
  BacktestAutomations,
  ListActionHistory,
  CreateAccessKey,
  RevokeAccessKey,
  ListAccessKeys,
  Authenticate,
  SignUp,
  LogIn,
  LogOut,
  LoginThrottle,
  SignUpThrottle,
  GetProfile,
  RequestPasswordReset,
  ResetPassword,
  SetPassword,
  RevokeSessions,
  VerifySession,
  InviteUser,
  DeleteUser,
  CopyLegacyRecords,
  MigrationCheckpoints,
  RecordCutOver,
] as const;

/**
 * Binds every use case (singletons: they are stateless but for the commit cache, the change fan-out and the delivery lanes),
 * the settings and the clock. A store module binds the repository ports; a transport module binds the
 * commit feed and, where the automation engine runs, the scheduler; the identity and mail modules bind the
 * account ports and settings.
 */
export function createCoreModule(
  settings: CoreSettings & {
    /** How boxes of the HTTP generation are treated (BOX_TIME_ZONE, ...); defaults when absent. */
    readonly boxes?: Partial<BoxSettings>;
  },
  clock: Clock = new SystemClock(),
): ContainerModule {
  assertTimeZone(settings.timeZone);
  if (settings.boxes?.timeZone !== undefined) assertTimeZone(settings.boxes.timeZone);
  return new ContainerModule(({ bind }) => {
    bind<CoreSettings>(CORE_SETTINGS).toConstantValue(settings);
    bind<Clock>(CLOCK).toConstantValue(clock);
    bind<ServerStart>(SERVER_START).toConstantValue({ at: clock.now() });
    bind<AutomationSettings>(AUTOMATION_SETTINGS).toConstantValue({
      ...defaultAutomationSettings,
      ...settings.automation,
    });
    bind<CoreLimits>(CORE_LIMITS).toConstantValue(coreLimitsOf(settings));
    bind<BoxSettings>(BOX_SETTINGS).toConstantValue({ ...defaultBoxSettings, ...settings.boxes });
    bind<RetentionSettings>(RETENTION_SETTINGS).toConstantValue({
      ...defaultRetentionSettings,
      ...settings.retention,
    });
    for (const useCase of useCases) bind<object>(useCase).toSelf().inSingletonScope();
  });
}
