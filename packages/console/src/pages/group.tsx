import {
  type ActionDetail,
  actionDetail,
  actionsOf,
  type ActionState,
  alertsOf,
  latestOf,
  type Safety,
  safetyOf,
  switchAction,
} from '../api.js';
import { mayOperate, type Session } from '../session.js';
import { nameOfTopic, valueText } from '../topics.js';
import { age, duration, link, Problem, Status, useLoad, usePress } from '../util.js';
import { AlertList } from './alerts.js';

export function Switch(props: {
  group: string;
  action: ActionState;
  session: Session;
  onSwitched: () => void;
}) {
  const { action } = props;
  const press = usePress();
  const on = action.value === 'on';
  if (!mayOperate(props.session)) return <span class="state">{action.value}</span>;
  return (
    <>
      <button
        type="button"
        role="switch"
        aria-checked={on}
        class={`switch ${on ? 'on' : 'off'}`}
        aria-disabled={press.busy}
        onClick={() =>
          press.run(() => switchAction(props.group, action.object, on ? 'off' : 'on'), props.onSwitched)
        }
      >
        <span class="visually-hidden">{action.object}</span> {on ? 'on' : 'off'}
      </button>
      <Problem text={press.problem} />
    </>
  );
}

export function limitsText(detail: ActionDetail | undefined): string {
  if (detail === undefined) return '—';
  const parts = [`max on ${duration(detail.maxOnMs)}`];
  if (detail.minOnMs !== undefined) parts.push(`min on ${duration(detail.minOnMs)}`);
  if (detail.minOffMs !== undefined) parts.push(`min off ${duration(detail.minOffMs)}`);
  return parts.join(', ');
}

export function safetyText(safety: Safety | undefined): string {
  if (safety === undefined) return '—';
  const mode = safety.inSafeMode ? `IN SAFE MODE (${safety.safe})` : `normal; safe state ${safety.safe}`;
  return safety.staleAfterMs === undefined ? mode : `${mode}, stale after ${duration(safety.staleAfterMs)}`;
}

async function loadGroup(group: string) {
  const [latest, actions, safety, alerts] = await Promise.all([
    latestOf(group),
    actionsOf(group),
    safetyOf(group),
    alertsOf(group),
  ]);
  const details = await Promise.all(
    actions.map((action) => actionDetail(group, action.object).catch(() => undefined)),
  );
  return { latest, actions, safety, alerts, details };
}

export function GroupPage(props: { session: Session; group: string }) {
  const { group } = props;
  const loaded = useLoad(() => loadGroup(group), [group], 15_000);
  return (
    <>
      <h1>Group {group}</h1>
      <p>
        <a href={link('charts', group)}>Charts</a> · <a href={link('automations', group)}>Automations</a> ·{' '}
        <a href={link('boxes', group)}>Boxes</a>
      </p>
      <Status loaded={loaded}>
        {(data) => (
          <>
            <h2>Latest readings</h2>
            <table>
              <thead>
                <tr>
                  <th scope="col">Measure</th>
                  <th scope="col">Value</th>
                  <th scope="col">Age</th>
                </tr>
              </thead>
              <tbody>
                {data.latest.map((reading) => (
                  <tr key={reading.topic}>
                    <th scope="row">
                      {nameOfTopic(reading.topic)}
                      {/* The topic as boxes and the API name it, for those who look it up. */}
                      {nameOfTopic(reading.topic) !== reading.topic && (
                        <small class="topic">{reading.topic}</small>
                      )}
                    </th>
                    <td>{valueText(reading.value, reading.topic)}</td>
                    <td>{age(reading.time)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            <h2>Actions</h2>
            <table>
              <thead>
                <tr>
                  <th scope="col">Action</th>
                  <th scope="col">State</th>
                  <th scope="col">Limits</th>
                  <th scope="col">Safe mode</th>
                </tr>
              </thead>
              <tbody>
                {data.actions.map((action, index) => (
                  <tr key={action.object}>
                    <th scope="row">{action.object}</th>
                    <td>
                      <Switch
                        group={group}
                        action={action}
                        session={props.session}
                        onSwitched={loaded.reload}
                      />
                    </td>
                    <td>{limitsText(data.details[index])}</td>
                    <td>{safetyText(data.safety.find((entry) => entry.object === action.object))}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            <h2>Open alerts</h2>
            <AlertList alerts={data.alerts} session={props.session} onChanged={loaded.reload} />
          </>
        )}
      </Status>
    </>
  );
}
