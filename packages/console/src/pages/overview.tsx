import { useState } from 'preact/hooks';
import { alertsOf, devicesOf, latestOf, type Reading, safetyOf } from '../api.js';
import { openGroups, type Session, setOpenGroups } from '../session.js';
import { derivedTopics, nameOfTopic, withUnit } from '../topics.js';
import { age, HUMIDITY, link, Status, TEMPERATURE, useLoad, vpd } from '../util.js';

interface GroupSummary {
  readonly group: string;
  readonly online: number;
  readonly silent: number;
  readonly locked: number;
  readonly alerts: number;
  readonly actions: number;
  readonly safeMode: readonly string[];
  readonly latest: readonly Reading[];
}

async function summarise(group: string): Promise<GroupSummary> {
  // Four requests a group (the safety list names every action, so no current_state).
  const [devices, alerts, safety, latest] = await Promise.all([
    devicesOf(group),
    alertsOf(group),
    safetyOf(group),
    latestOf(group),
  ]);
  return {
    group,
    online: devices.filter((device) => device.silent !== true).length,
    silent: devices.filter((device) => device.silent === true).length,
    locked: devices.filter((device) => device.locked === true).length,
    alerts: alerts.length,
    actions: safety.length,
    safeMode: safety.filter((entry) => entry.inSafeMode).map((entry) => entry.object),
    latest,
  };
}

/** One measure of the card: its name and unit from core's list of topics (`topic`), the value rounded. */
function Measure(props: { topic: string; reading: Reading | undefined; digits: number }) {
  const { reading } = props;
  return (
    <div class="measure">
      <dt>{nameOfTopic(props.topic)}</dt>
      <dd>
        {reading === undefined ? (
          '—'
        ) : (
          <>
            <strong>
              {typeof reading.value === 'number'
                ? withUnit(Number(reading.value.toFixed(props.digits)), props.topic)
                : reading.value}
            </strong>{' '}
            <span class="age">{age(reading.time)}</span>
          </>
        )}
      </dd>
    </div>
  );
}

function GroupCard(props: { summary: GroupSummary }) {
  const { summary } = props;
  const temperature = summary.latest.find((reading) => reading.topic === TEMPERATURE);
  const humidity = summary.latest.find((reading) => reading.topic === HUMIDITY);
  // A VPD topic of the server's own (the grower measures) wins over the one computed here.
  const vpdTopic = summary.latest.find((reading) => /vpd/iu.test(reading.topic));
  const computed =
    temperature !== undefined && humidity !== undefined
      ? {
          topic: derivedTopics.vpd,
          value: vpd(Number(temperature.value), Number(humidity.value)),
          time: temperature.time < humidity.time ? temperature.time : humidity.time,
        }
      : undefined;
  return (
    <section class="card" aria-labelledby={`group-${summary.group}`}>
      <h2 id={`group-${summary.group}`}>
        <a href={link('group', summary.group)}>{summary.group}</a>
      </h2>
      <dl class="measures">
        <Measure topic={TEMPERATURE} reading={temperature} digits={1} />
        <Measure topic={HUMIDITY} reading={humidity} digits={1} />
        <Measure topic={derivedTopics.vpd} reading={vpdTopic ?? computed} digits={2} />
      </dl>
      <ul class="facts">
        <li>
          <a href={link('boxes', summary.group)}>Boxes</a>: {summary.online} online, {summary.silent} silent
          {summary.locked > 0 ? `, ${summary.locked} locked` : ''}
        </li>
        <li class={summary.alerts > 0 ? 'bad' : ''}>
          <a href={link('alerts', summary.group)}>Open alerts</a>: {summary.alerts}
        </li>
        <li class={summary.safeMode.length > 0 ? 'bad' : ''}>
          Actions in safe mode: {summary.safeMode.length === 0 ? 'none' : summary.safeMode.join(', ')} (of{' '}
          {summary.actions})
        </li>
      </ul>
    </section>
  );
}

function OpenGroupsForm(props: { onChanged: () => void }) {
  const [text, setText] = useState(openGroups().join(', '));
  return (
    <form
      class="inline"
      onSubmit={(event) => {
        event.preventDefault();
        setOpenGroups(text.split(','));
        props.onChanged();
      }}
    >
      <label for="groups">Groups to show (comma-separated)</label>
      <input id="groups" value={text} onInput={(event) => setText(event.currentTarget.value)} />
      <button type="submit">Show</button>
    </form>
  );
}

export function Overview(props: { session: Session; onGroupsChanged: () => void }) {
  const { groups } = props.session;
  const loaded = useLoad(
    () => Promise.all(groups.map(summarise)),
    [groups.join(',')],
    // Four requests a group: many groups poll seldom, within the rate limit per address (600 a minute).
    groups.length > 10 ? 120_000 : 15_000,
  );
  return (
    <>
      <h1>Overview</h1>
      {!props.session.signedIn && <OpenGroupsForm onChanged={props.onGroupsChanged} />}
      {groups.length === 0 ? (
        <p>No group to show.</p>
      ) : (
        <Status loaded={loaded}>
          {(summaries) => (
            <div class="cards">
              {summaries.map((summary) => (
                <GroupCard key={summary.group} summary={summary} />
              ))}
            </div>
          )}
        </Status>
      )}
    </>
  );
}
