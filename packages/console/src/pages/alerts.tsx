import { acknowledge, alertsOf, type Notification, optionalGet, q } from '../api.js';
import { mayOperate, type Session } from '../session.js';
import { nameOfTopic, withUnit } from '../topics.js';
import { duration, Problem, Status, useLoad, usePress, when } from '../util.js';

function AcknowledgeButton(props: { alert: Notification; onDone: () => void }) {
  const press = usePress();
  return (
    <>
      <button
        type="button"
        aria-disabled={press.busy}
        onClick={() => press.run(() => acknowledge(props.alert), props.onDone)}
      >
        Acknowledge
      </button>
      <Problem text={press.problem} />
    </>
  );
}

/** Alerts as a list; open ones get an Acknowledge button for those who may. */
export function AlertList(props: {
  alerts: readonly Notification[];
  session: Session;
  onChanged: () => void;
}) {
  if (props.alerts.length === 0) return <p>No open alerts.</p>;
  return (
    <ul class="alerts">
      {props.alerts.map((alert) => {
        const open = alert.ignore !== 'true' && alert.acknowledged === undefined;
        return (
          <li key={alert._id} class={open ? 'bad' : ''}>
            <span class="when">{when(alert.time)}</span>{' '}
            {alert.severity === undefined ? '' : `[${alert.severity}] `}
            {alert.message}
            {alert.acknowledged !== undefined && (
              <span class="muted">
                {' '}
                acknowledged by{' '}
                {alert.acknowledged.by.name ?? alert.acknowledged.by.id ?? alert.acknowledged.by.kind} at{' '}
                {when(alert.acknowledged.at)}
              </span>
            )}{' '}
            {open && mayOperate(props.session) && (
              <AcknowledgeButton alert={alert} onDone={props.onChanged} />
            )}
          </li>
        );
      })}
    </ul>
  );
}

/** GET /api/alerts (packages/http-koa/src/routes/alert-settings.ts): what the group's alerts watch. */
interface TopicSetting {
  readonly topic: string;
  readonly min?: number;
  readonly max?: number;
  readonly hysteresis?: number;
  readonly delayMs?: number;
  readonly noDataMs?: number;
  readonly severity?: string;
  readonly source?: string;
}

interface BoxSetting {
  readonly deviceId: string;
  readonly noDataMs?: number;
  readonly severity?: string;
}

interface AlertSettings {
  readonly topics: readonly TopicSetting[];
  readonly boxes: readonly BoxSetting[];
}

const loudness = (severity: string | undefined): string =>
  severity === 'critical' ? 'is critical' : 'is a warning';

/** Where a range comes from, as the group's settings name it. */
const sourceText = (source: string | undefined): string | undefined =>
  source === undefined
    ? undefined
    : source === 'alertRanges'
      ? "this topic's own range"
      : `from the group's ${source}`;

/** A topic's range in words: "above 900 hPa is critical", "15 – 30 °C for 2 min or no data for 15 min is a warning". */
export function topicSettingText(setting: TopicSetting): string {
  const { topic, min, max } = setting;
  const bounds =
    min !== undefined && max !== undefined
      ? `outside ${withUnit(min, undefined)} – ${withUnit(max, topic)}`
      : max !== undefined
        ? `above ${withUnit(max, topic)}`
        : min !== undefined
          ? `below ${withUnit(min, topic)}`
          : undefined;
  const conditions = [
    bounds === undefined
      ? undefined
      : setting.delayMs === undefined
        ? bounds
        : `${bounds} for ${duration(setting.delayMs)}`,
    setting.noDataMs === undefined ? undefined : `no data for ${duration(setting.noDataMs)}`,
  ].filter((part) => part !== undefined);
  return [
    conditions.length === 0 ? 'no bounds' : `${conditions.join(' or ')} ${loudness(setting.severity)}`,
    setting.hysteresis === undefined ? undefined : `ends ${withUnit(setting.hysteresis, topic)} back inside`,
    sourceText(setting.source),
  ]
    .filter((part) => part !== undefined)
    .join(' · ');
}

/** A box's deadline in words: "no data for 15 min is a warning". */
export const boxSettingText = (setting: BoxSetting): string =>
  setting.noDataMs === undefined
    ? 'no deadline'
    : `no data for ${duration(setting.noDataMs)} ${loudness(setting.severity)}`;

const boxName = (deviceId: string): string =>
  deviceId === '*' ? 'Every box without its own deadline' : `Box ${deviceId}`;

async function loadAlerts(group: string) {
  const listed = await alertsOf(group);
  const settings = await optionalGet<AlertSettings>(`/api/alerts?${q({ group })}`);
  return {
    open: listed.filter((alert) => alert.acknowledged === undefined),
    acknowledged: listed.filter((alert) => alert.acknowledged !== undefined),
    topics: settings?.topics ?? [],
    boxes: settings?.boxes ?? [],
  };
}

export function AlertsPage(props: { session: Session; group: string }) {
  const loaded = useLoad(() => loadAlerts(props.group), [props.group], 15_000);
  return (
    <>
      <h1>Alerts of {props.group}</h1>
      <Status loaded={loaded}>
        {(data) => (
          <>
            <h2>Open</h2>
            <AlertList alerts={data.open} session={props.session} onChanged={loaded.reload} />
            <h2>Acknowledged</h2>
            {data.acknowledged.length === 0 ? (
              <p>None.</p>
            ) : (
              <AlertList alerts={data.acknowledged} session={props.session} onChanged={loaded.reload} />
            )}
            <h2>Ranges and no-data settings</h2>
            {data.topics.length + data.boxes.length === 0 ? (
              <p>No ranges set (hortus group alert).</p>
            ) : (
              <table>
                <thead>
                  <tr>
                    <th scope="col">Watched</th>
                    <th scope="col">Alert when</th>
                  </tr>
                </thead>
                <tbody>
                  {data.topics.map((setting) => (
                    <tr key={`topic ${setting.topic}`}>
                      <th scope="row">
                        {nameOfTopic(setting.topic)}
                        {nameOfTopic(setting.topic) !== setting.topic && (
                          <small class="topic">{setting.topic}</small>
                        )}
                      </th>
                      <td>{topicSettingText(setting)}</td>
                    </tr>
                  ))}
                  {data.boxes.map((setting) => (
                    <tr key={`box ${setting.deviceId}`}>
                      <th scope="row">{boxName(setting.deviceId)}</th>
                      <td>{boxSettingText(setting)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          </>
        )}
      </Status>
    </>
  );
}
