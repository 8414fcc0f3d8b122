export * from './shared/errors.js';
export * from './shared/validation.js';
export * from './shared/clock.port.js';
export * from './shared/settings.js';
export * from './shared/store-lifecycle.port.js';
export * from './shared/time-zone.js';
export * from './use-cases.module.js';

export * from './readings/reading.js';
export * from './readings/reading.port.js';
export * from './readings/record-readings.js';
export * from './readings/get-latest-reading.js';
export * from './readings/get-latest-readings-of-group.js';
export * from './readings/query-readings.js';
export * from './readings/aggregate-readings.js';
export * from './readings/delete-readings.js';
export * from './readings/export-readings.js';
export * from './revisions/get-revision.js';
export * from './readings/get-today-hourly-readings.js';

export * from './actions/action.js';
export * from './actions/action.port.js';
export * from './actions/create-action.js';
export * from './actions/set-action-value.js';
export * from './actions/get-actions-of-group.js';
export * from './actions/get-action.js';
export * from './actions/replace-automations.js';
export * from './actions/list-changed-actions.js';
export * from './groups/delete-group.js';
export * from './readings/apply-retention.js';

export * from './devices/device.js';
export * from './devices/device.port.js';
export * from './devices/create-device.js';
export * from './devices/list-devices.js';
export * from './firmware/firmware.js';
export * from './firmware/firmware.port.js';
export * from './firmware/publish-firmware.js';
export * from './firmware/list-firmware.js';
export * from './firmware/withdraw-firmware.js';
export * from './firmware/offer-firmware.js';
export * from './firmware/read-firmware-image.js';

export * from './notifications/notification.js';
export * from './notifications/notification.port.js';
export * from './notifications/create-notification.js';
export * from './notifications/list-open-notifications.js';
export * from './notifications/ignore-notifications.js';

export * from './history-charts/history-chart.js';
export * from './history-charts/history-chart.port.js';
export * from './history-charts/get-history-charts.js';
export * from './history-charts/get-chart-settings.js';
export * from './history-charts/add-chart.js';
export * from './history-charts/change-chart.js';
export * from './history-charts/delete-chart.js';

export * from './groups/group.js';
export * from './groups/group.port.js';
export * from './groups/create-group.js';
export * from './groups/check-group.js';
export * from './groups/get-group.js';
export * from './groups/update-group-settings.js';
export * from './groups/list-groups.js';

export * from './users/user.js';
export * from './users/user.port.js';
export * from './users/create-user.js';
export * from './users/change-user-email.js';

export * from './commits/commit-feed.port.js';
export * from './commits/get-recent-commits.js';

export * from './demo/seed-demo.js';

export * from './groups/group-settings.js';
export * from './actions/action-changes.js';
export * from './automations/engine-state.port.js';
export * from './automations/automation-event.js';
export * from './automations/automation-log.port.js';
export * from './automations/automation-settings.js';
export * from './automations/scheduler.port.js';
export * from './automations/rules.js';
export * from './alerts/alert-delivery.js';
export * from './automations/run-automations.js';
export * from './automations/list-automation-events.js';
export * from './automations/automation-engine.js';
export * from './alerts/evaluate-alerts.js';
export * from './readings/ingest-formats.js';
export * from './repositories.js';
export * from './access-keys/access-key.js';
export * from './access-keys/access-key.port.js';
export * from './access-keys/access-key-secrets.port.js';
export * from './access-keys/access-policy.js';
export * from './access-keys/create-access-key.js';
export * from './access-keys/revoke-access-key.js';
export * from './access-keys/list-access-keys.js';
export * from './access-keys/authenticate.js';

export * from './accounts/account.js';
export * from './accounts/accounts.port.js';
export * from './accounts/login-throttle.js';
export * from './accounts/sign-up.js';
export * from './accounts/log-in.js';
export * from './accounts/get-profile.js';
export * from './accounts/request-password-reset.js';
export * from './accounts/reset-password.js';
export * from './accounts/set-password.js';
export * from './accounts/revoke-sessions.js';
export * from './accounts/log-out.js';
export * from './accounts/verify-session.js';
export * from './accounts/invite-user.js';
export * from './accounts/delete-user.js';
export * from './migration/legacy.js';
export * from './migration/copy-legacy-records.js';
