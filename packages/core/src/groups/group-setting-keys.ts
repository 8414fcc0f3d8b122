/**
 * The one list of keys Hortus itself reads or writes in a group's settings (clients may store any other
 * key, which Hortus keeps as it is). A new key joins here first, so two features never take the same
 * name; the feature that uses it imports its name from here.
 */
export const groupSettingKeys = {
  /** IANA time zone of the group's time rules and day boundaries. */
  timeZone: 'timeZone',
  /** IANA time zone the group's boxes stamp their readings in (firmware 1.0.4: Berlin). */
  boxTimeZone: 'boxTimeZone',
  /** Where and whether alert mails go (the original client's keys). */
  email: 'email',
  emailNotification: 'emailNotification',
  /** The original client's alert ranges: temperature and soil moisture. */
  tempMin: 'tempMin',
  tempMax: 'tempMax',
  moistureMin: 'moistureMin',
  moistureMax: 'moistureMax',
  /** Kept when the client writes the settings without them (core/src/groups/update-group-settings.ts). */
  actionLimits: 'actionLimits',
  alertRanges: 'alertRanges',
  boxAlerts: 'boxAlerts',
  /**
   * The derived series a group has on and how they are derived (`{vpd, dewPoint, dli, leafOffset, light,
   * dayStart}`, core/src/readings/metrics-settings.ts); kept like the keys above.
   */
  metrics: 'metrics',
} as const;

export type GroupSettingKey = (typeof groupSettingKeys)[keyof typeof groupSettingKeys];
