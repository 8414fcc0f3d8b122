import {
  actionDetail,
  actionsOf,
  get,
  type HistoryEntry,
  historyOf,
  optionalGet,
  q,
  safetyOf,
} from '../api.js';
import { type Session } from '../session.js';
import { Status, useLoad, when } from '../util.js';
import { limitsText, safetyText } from './group.js';

/** GET /api/actions/preview: the switches the time rules and limits will make (docs/automations.md). */
interface PreviewEntry {
  readonly object: string;
  readonly value: string;
  readonly at: string;
  readonly local?: string;
  readonly trigger?: string;
  readonly rule?: string;
}
interface Preview {
  readonly timeZone?: string;
  readonly switches: readonly PreviewEntry[];
}

/** GET /api/actions/lockouts: each action's lockouts, in words, and whether each blocks it now. */
interface ActionLockouts {
  readonly object: string;
  readonly lockouts: readonly {
    readonly id: number;
    readonly text: string;
    readonly active: boolean;
    readonly reason?: string;
  }[];
}

async function loadAutomations(group: string) {
  const [actions, safety] = await Promise.all([actionsOf(group), safetyOf(group)]);
  const details = await Promise.all(
    actions.map((action) => actionDetail(group, action.object).catch(() => undefined)),
  );
  const histories = await Promise.all(actions.map((action) => historyOf(group, action.object, 20)));
  const lockouts = await optionalGet<{ message: ActionLockouts[] }>(
    `/api/actions/lockouts?${q({ group })}`,
  ).catch(() => undefined);
  const preview = await optionalGet<{ message: Preview }>(
    `/api/actions/preview?${q({ group, hours: 24 })}`,
  ).catch(() => undefined);
  const log = await get<{ message: HistoryEntry[] }>(
    `/api/actions/automation_log?${q({ group, count: 50 })}`,
  );
  return {
    actions,
    safety,
    details,
    histories,
    lockouts: lockouts?.message.flatMap((action) =>
      action.lockouts.map((lockout) => ({ object: action.object, ...lockout })),
    ),
    preview: preview?.message.switches,
    log: log.message,
  };
}

function rulesOf(action: Awaited<ReturnType<typeof actionsOf>>[number]): string[] {
  return (action.automations ?? []).flatMap((automation) => [
    ...(automation.timeAutomations ?? []).map((rule) => `${rule.action} at ${rule.time}, ${rule.frequency}`),
    ...(automation.sensorAutomations ?? []).map(
      (rule) => `${rule.action} when ${rule.sensor} is ${rule.condition} ${rule.value}`,
    ),
  ]);
}

export function AutomationsPage(props: { session: Session; group: string }) {
  const loaded = useLoad(() => loadAutomations(props.group), [props.group], 30_000);
  return (
    <>
      <h1>Automations of {props.group}</h1>
      <Status loaded={loaded}>
        {(data) => (
          <>
            {data.actions.map((action, index) => {
              const rules = rulesOf(action);
              const history = data.histories[index] ?? [];
              return (
                <section class="card" key={action.object} aria-labelledby={`action-${action.object}`}>
                  <h2 id={`action-${action.object}`}>
                    {action.object}: {action.value}
                  </h2>
                  <p>Rules: {rules.length === 0 ? 'none' : rules.join('; ')}</p>
                  <p>Limits: {limitsText(data.details[index])}</p>
                  <p>Safety: {safetyText(data.safety.find((entry) => entry.object === action.object))}</p>
                  <h3>History</h3>
                  {history.length === 0 ? (
                    <p>No changes recorded.</p>
                  ) : (
                    <ul>
                      {history.map((entry) => (
                        <li key={entry.at}>
                          {when(entry.at)}: {entry.value}
                          {entry.actor === undefined
                            ? ''
                            : ` by ${entry.actor.kind}${entry.actor.id === undefined ? '' : ` ${entry.actor.id}`}`}
                        </li>
                      ))}
                    </ul>
                  )}
                </section>
              );
            })}
            <h2>Lockouts</h2>
            {data.lockouts === undefined ? (
              <p class="muted">This server has no lockouts.</p>
            ) : data.lockouts.length === 0 ? (
              <p>None.</p>
            ) : (
              <ul>
                {data.lockouts.map((entry) => (
                  <li key={`${entry.object}-${entry.id}`} class={entry.active ? 'bad' : ''}>
                    {entry.object}: {entry.text}
                    {entry.active
                      ? ` (blocking now${entry.reason === undefined ? '' : `: ${entry.reason}`})`
                      : ''}
                  </li>
                ))}
              </ul>
            )}
            <h2>Next 24 hours</h2>
            {data.preview === undefined ? (
              <p class="muted">This server does not preview automations yet.</p>
            ) : data.preview.length === 0 ? (
              <p>Nothing planned.</p>
            ) : (
              <ul>
                {data.preview.map((entry) => (
                  <li key={`${entry.object}-${entry.at}`}>
                    {when(entry.at)}: {entry.object} {entry.value}
                    {entry.rule === undefined ? '' : ` (${entry.rule})`}
                  </li>
                ))}
              </ul>
            )}
            <h2>Automation log</h2>
            {data.log.length === 0 ? (
              <p>No automation has switched anything yet.</p>
            ) : (
              <ul>
                {data.log.map((entry) => (
                  <li key={`${entry.object}-${entry.at}`}>
                    {when(entry.at)}: {entry.object} {entry.value}
                    {entry.trigger === undefined ? '' : ` (${entry.trigger})`}
                  </li>
                ))}
              </ul>
            )}
          </>
        )}
      </Status>
    </>
  );
}
