import { acknowledge, alertsOf, get, type Notification, optionalGet, q } from '../api.js';
import { mayOperate, type Session } from '../session.js';
import { Problem, Status, topicLabel, useLoad, usePress, when } from '../util.js';

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

type Settings = readonly Record<string, unknown>[];

/** GET /api/alerts: ranges per topic and no-data deadlines per box, when the server has it. */
interface AlertSettings {
  readonly topics: readonly Record<string, unknown>[];
  readonly boxes: readonly Record<string, unknown>[];
}

async function loadAlerts(group: string) {
  const listed = await alertsOf(group);
  const alertSettings = await optionalGet<AlertSettings>(`/api/alerts?${q({ group })}`).catch(
    () => undefined,
  );
  // Without the alert settings' route: the group settings, where the ranges are kept.
  const settings: Settings =
    alertSettings !== undefined
      ? [...alertSettings.topics, ...alertSettings.boxes].map((entry) => {
          const { topic, deviceId, ...rest } = entry as { topic?: string; deviceId?: string };
          return { [String(topic ?? `box ${String(deviceId)}`)]: rest };
        })
      : await get<Settings>(`/api/group/settings?${q({ groupId: group })}`).catch(() => [] as Settings);
  return {
    open: listed.filter((alert) => alert.acknowledged === undefined),
    acknowledged: listed.filter((alert) => alert.acknowledged !== undefined),
    settings,
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
            {data.settings.length === 0 ? (
              <p>No ranges set (hortus group set-settings).</p>
            ) : (
              <table>
                <thead>
                  <tr>
                    <th scope="col">Setting</th>
                    <th scope="col">Value</th>
                  </tr>
                </thead>
                <tbody>
                  {data.settings.flatMap((entry) =>
                    Object.entries(entry).map(([name, value]) => (
                      <tr key={name}>
                        <th scope="row">{topicLabel(name)}</th>
                        <td>{typeof value === 'object' ? JSON.stringify(value) : String(value)}</td>
                      </tr>
                    )),
                  )}
                </tbody>
              </table>
            )}
          </>
        )}
      </Status>
    </>
  );
}
