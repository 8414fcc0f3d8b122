import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import {
  actionsOf,
  alertsOf,
  type Bucket,
  get,
  historyOf,
  type HistoryEntry,
  latestOf,
  type Notification,
  q,
  seriesPath,
} from '../api.js';
import { type Session } from '../session.js';
import { Status, topicLabel, useLoad } from '../util.js';

const RANGES: readonly [string, number][] = [
  ['1 hour', 3600],
  ['6 hours', 6 * 3600],
  ['24 hours', 86400],
  ['7 days', 7 * 86400],
  ['30 days', 30 * 86400],
  ['1 year', 365 * 86400],
];
/** About one bucket per two pixels of a wide chart: the server summarises, whatever the range. */
const POINTS = 600;
const COLOURS = ['#1b6e3a', '#1f5fa8', '#a8461f', '#7a3ea8', '#8a7a00', '#008080'];

interface ChartData {
  readonly topics: readonly string[];
  readonly series: readonly Bucket[][];
  readonly bands: readonly { object: string; from: number; to: number }[];
  readonly alerts: readonly Notification[];
  readonly from: number;
  readonly to: number;
}

/** On-periods of an action from its history (newest first), cut to the window. */
function onPeriods(object: string, history: readonly HistoryEntry[], from: number, to: number) {
  const bands: { object: string; from: number; to: number }[] = [];
  let end = to;
  for (const entry of history) {
    const at = Date.parse(entry.at) / 1000;
    if (entry.value === 'on' && end > from) bands.push({ object, from: Math.max(at, from), to: end });
    end = at;
    if (at < from) break;
  }
  return bands;
}

async function loadChart(
  group: string,
  topics: readonly string[],
  seconds: number,
  objects: readonly string[],
) {
  const to = Math.floor(Date.now() / 1000);
  const from = to - seconds;
  const range = {
    groupId: group,
    startDate: new Date(from * 1000).toISOString(),
    endDate: new Date(to * 1000).toISOString(),
  };
  const series = await Promise.all(
    topics.map((topic) => get<Bucket[]>(`${seriesPath(topic)}?${q({ ...range, points: POINTS })}`)),
  );
  const histories = await Promise.all(objects.map((object) => historyOf(group, object, 1000)));
  const bands = objects.flatMap((object, index) => onPeriods(object, histories[index] ?? [], from, to));
  const alerts = (await alertsOf(group)).filter((alert) => Date.parse(alert.time) / 1000 >= from);
  return { topics, series, bands, alerts, from, to } satisfies ChartData;
}

function csvOf(data: ChartData): string {
  const lines = ['topic,time,min,max,avg,count'];
  data.topics.forEach((topic, index) => {
    for (const bucket of [...(data.series[index] ?? [])].reverse()) {
      lines.push([topic, bucket.time, bucket.min, bucket.max, bucket.avg, bucket.count].join(','));
    }
  });
  return `${lines.join('\n')}\n`;
}

function download(name: string, text: string): void {
  const url = URL.createObjectURL(new Blob([text], { type: 'text/csv' }));
  const anchor = document.createElement('a');
  anchor.href = url;
  anchor.download = name;
  anchor.click();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

function Chart(props: { data: ChartData }) {
  const holder = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = holder.current;
    if (element === null) return undefined;
    const { data } = props;
    const times = [
      ...new Set(data.series.flatMap((buckets) => buckets.map((bucket) => Date.parse(bucket.time) / 1000))),
    ].sort((a, b) => a - b);
    const columns = data.series.map((buckets) => {
      const byTime = new Map(buckets.map((bucket) => [Date.parse(bucket.time) / 1000, bucket.avg]));
      return times.map((time) => byTime.get(time) ?? null);
    });
    const drawExtras = (plot: uPlot): void => {
      const { ctx, bbox } = plot;
      ctx.save();
      data.bands.forEach((band) => {
        const left = plot.valToPos(band.from, 'x', true);
        const right = plot.valToPos(band.to, 'x', true);
        ctx.fillStyle = 'rgba(31, 95, 168, 0.12)';
        ctx.fillRect(left, bbox.top, Math.max(1, right - left), bbox.height);
      });
      ctx.strokeStyle = '#b00020';
      ctx.lineWidth = 2;
      for (const alert of data.alerts) {
        const x = plot.valToPos(Date.parse(alert.time) / 1000, 'x', true);
        ctx.beginPath();
        ctx.moveTo(x, bbox.top);
        ctx.lineTo(x, bbox.top + bbox.height);
        ctx.stroke();
      }
      ctx.restore();
    };
    const plot = new uPlot(
      {
        width: Math.max(300, element.clientWidth),
        height: 320,
        scales: { x: { time: true, range: [data.from, data.to] } },
        series: [
          {},
          ...data.topics.map((topic, index) => ({
            label: topicLabel(topic),
            stroke: COLOURS[index % COLOURS.length] ?? '#000',
            spanGaps: false,
          })),
        ],
        hooks: { draw: [drawExtras] },
      },
      [times, ...columns] as uPlot.AlignedData,
      element,
    );
    const resized = (): void => plot.setSize({ width: Math.max(300, element.clientWidth), height: 320 });
    addEventListener('resize', resized);
    return () => {
      removeEventListener('resize', resized);
      plot.destroy();
    };
  }, [props.data]);
  return (
    <div
      ref={holder}
      class="chart"
      role="img"
      aria-label={`Chart of ${props.data.topics.map(topicLabel).join(', ')}`}
    />
  );
}

function ChartView(props: {
  group: string;
  topics: readonly string[];
  seconds: number;
  objects: readonly string[];
}) {
  const loaded = useLoad(
    () => loadChart(props.group, props.topics, props.seconds, props.objects),
    [props.group, props.topics.join(','), props.seconds, props.objects.join(',')],
  );
  return (
    <Status loaded={loaded}>
      {(data) => (
        <>
          <Chart data={data} />
          <p class="legend">
            Shaded: periods an action was on ({props.objects.join(', ') || 'none'}). Red lines: alerts.{' '}
            {data.series.reduce((sum, buckets) => sum + buckets.length, 0)} points.
          </p>
          <button type="button" onClick={() => download(`${props.group}-chart.csv`, csvOf(data))}>
            Export CSV
          </button>
        </>
      )}
    </Status>
  );
}

export function ChartsPage(props: { session: Session; group: string }) {
  const { group } = props;
  const options = useLoad(
    async () => ({ latest: await latestOf(group), actions: await actionsOf(group) }),
    [group],
  );
  const [chosen, setChosen] = useState<string[] | undefined>(undefined);
  const [seconds, setSeconds] = useState(86400);
  return (
    <>
      <h1>Charts of {group}</h1>
      <Status loaded={options}>
        {(data) => {
          const topics = data.latest.map((reading) => reading.topic);
          const selected = chosen ?? topics.filter((topic) => /temperature|humidity/u.test(topic));
          return (
            <>
              <fieldset>
                <legend>Topics</legend>
                {topics.map((topic) => (
                  <label key={topic} class="check">
                    <input
                      type="checkbox"
                      checked={selected.includes(topic)}
                      onChange={(event) =>
                        setChosen(
                          event.currentTarget.checked
                            ? [...selected, topic]
                            : selected.filter((other) => other !== topic),
                        )
                      }
                    />{' '}
                    {topicLabel(topic)}
                  </label>
                ))}
              </fieldset>
              <label for="range">Range</label>{' '}
              <select
                id="range"
                value={seconds}
                onChange={(event) => setSeconds(Number(event.currentTarget.value))}
              >
                {RANGES.map(([name, value]) => (
                  <option key={value} value={value}>
                    {name}
                  </option>
                ))}
              </select>
              {selected.length === 0 ? (
                <p>Choose a topic.</p>
              ) : (
                <ChartView
                  group={group}
                  topics={selected}
                  seconds={seconds}
                  objects={data.actions.map((action) => action.object)}
                />
              )}
            </>
          );
        }}
      </Status>
    </>
  );
}
