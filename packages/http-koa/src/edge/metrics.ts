import {
  type DeadlineKind,
  type DeliveryRound,
  type OutboxPending,
  type RecordReadings,
  type TickResult,
} from '@hortus/core';
import { type Context, type Middleware } from 'koa';
import { type Histogram, histogramLines, labels, newHistogram, observe } from './prometheus-text.js';
import { ServiceSeries } from './service-series.js';

export { latencyBuckets } from './prometheus-text.js';

const knownMethods = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH']);
/** The route label of requests no route answered (unknown paths, 401, 429, preflights). */
export const UNMATCHED_ROUTE = 'unmatched';

interface Counter {
  readonly labels: string;
  value: number;
}

/** The series of one method and route: its histogram, and its request counters by status. */
interface RouteSeries {
  readonly labels: Record<string, string>;
  readonly histogram: Histogram;
  readonly byStatus: Map<number, Counter>;
}

export type IngestSource = 'http' | 'mqtt';

/** What the MQTT bridge did not store as sent, as counted by the bridge since start. */
export interface MqttDrops {
  /** Messages over MQTT_MAX_PAYLOAD_BYTES, not parsed. */
  readonly oversized: number;
  /** Messages in no known format. */
  readonly malformed: number;
  /** Readings refused by validation. */
  readonly rejected: number;
  /** Readings lost because the store failed or the queue was full. */
  readonly failed: number;
  /** Readings stored under their box's group instead of the one their payload named. */
  readonly regrouped: number;
  /** `.../set` commands by result, when the bridge takes commands (MQTT_COMMANDS). */
  readonly commands?: {
    readonly applied: number;
    readonly unknownAction: number;
    readonly badValue: number;
    readonly retained: number;
    readonly failed: number;
    /** Refused by the permission model (its credential), or without the credential required. */
    readonly refused?: number;
  };
}

/** The shared request limit (RATE_LIMIT_REDIS_URL) as it stands, read at each scrape. */
export interface SharedRateLimitHealth {
  /** Whether this server counts alone right now (Redis down, failing or silent). */
  readonly degraded: boolean;
  /** Requests counted in this process instead of Redis since start: past the deadline, or Redis unavailable. */
  readonly fallbacks: { readonly deadline: number; readonly unavailable: number };
}

/**
 * The server's counters in the Prometheus text format (0.0.4). Labels come from the route pattern (never
 * the raw path) and a fixed set of methods, so the number of series stays bounded whatever clients send.
 */
export class HttpMetrics {
  private readonly requests = new Map<string, Counter>();
  private readonly latency = new Map<string, RouteSeries>();
  /** method label -> route -> series: label texts are built once per series, not per request. */
  private readonly series = new Map<string, Map<string, RouteSeries>>();
  private readonly ingested: Record<IngestSource, number> = { http: 0, mqtt: 0 };
  private mqttAccepted: (() => number) | undefined;
  private mqttDrops: (() => MqttDrops) | undefined;
  private automationsFired = 0;
  private alertsRaised = 0;
  private actionsInSafeMode = 0;
  private laneAnswers = 0;
  private boxLaneAnswers = 0;
  private sharedRateLimit: (() => SharedRateLimitHealth) | undefined;
  private backupAge: (() => number) | undefined;
  private readonly service = new ServiceSeries();

  observeRequest(method: string, route: string, status: number, seconds: number): void {
    const methodLabel = knownMethods.has(method) ? method : 'OTHER';
    let routes = this.series.get(methodLabel);
    if (routes === undefined) {
      routes = new Map();
      this.series.set(methodLabel, routes);
    }
    let entry = routes.get(route);
    if (entry === undefined) {
      const latencyKey = `${methodLabel} ${route}`;
      entry = this.latency.get(latencyKey);
      if (entry === undefined) {
        entry = {
          labels: { method: methodLabel, route },
          histogram: newHistogram(),
          byStatus: new Map(),
        };
        this.latency.set(latencyKey, entry);
      }
      routes.set(route, entry);
    }
    let counted = entry.byStatus.get(status);
    if (counted === undefined) {
      const requestLabels = labels({ method: methodLabel, route, status: String(status) });
      // Another route text may escape to the same labels: the counter is shared then, as before.
      counted = this.requests.get(requestLabels);
      if (counted === undefined) {
        counted = { labels: requestLabels, value: 0 };
        this.requests.set(requestLabels, counted);
      }
      entry.byStatus.set(status, counted);
    }
    counted.value += 1;

    observe(entry.histogram, seconds);
  }

  /** One answer written by the poll lane (it is counted in http_requests_total as well). */
  pollLaneAnswered(): void {
    this.laneAnswers += 1;
  }

  /** One answer written by the box lane (it is counted in http_requests_total as well). */
  boxLaneAnswered(): void {
    this.boxLaneAnswers += 1;
  }

  readingsIngested(source: IngestSource, count: number): void {
    this.ingested[source] += count;
  }

  /** The MQTT bridge keeps its own count of accepted readings; it is read at each scrape. */
  countMqttReadingsFrom(accepted: () => number): void {
    this.mqttAccepted = accepted;
  }

  /** Read at each scrape, like the accepted count. */
  countMqttDropsFrom(drops: () => MqttDrops): void {
    this.mqttDrops = drops;
  }

  /** One scheduled tick of the engine, and how long it took (seconds), when timed. */
  automationTick({ switched, alerts, evaluated, inSafeMode }: TickResult, seconds?: number): void {
    this.automationsFired += switched.length;
    this.actionsInSafeMode = inSafeMode;
    this.alertsRaised += alerts.length;
    if (seconds !== undefined) this.service.engineTicked(seconds, evaluated.length);
  }

  /** The alert delivery worker's round: its failures are counted. */
  deliveryRound(round: DeliveryRound): void {
    this.service.deliveryRound(round);
  }

  /** Scheduled backups: seconds since the newest one (Infinity for none), read at each scrape. */
  watchBackups(newestAgeSeconds: () => number): void {
    this.backupAge = newestAgeSeconds;
  }

  /** The MQTT bridge's connection to its broker, read at each scrape; never set while MQTT is off. */
  watchMqttConnection(connected: () => boolean): void {
    this.service.mqttConnected = connected;
  }

  /** The shared request limit's state, read at each scrape; never set without RATE_LIMIT_REDIS_URL. */
  watchSharedRateLimit(health: () => SharedRateLimitHealth): void {
    this.sharedRateLimit = health;
  }

  /** The outbox's pending messages, counted in the store at each scrape. */
  countOutboxFrom(pending: () => Promise<OutboxPending>): void {
    this.service.outboxPending = pending;
  }

  /** A request answered 503 because a deadline ran out (see StoreDeadlineError). */
  storeDeadlineHit(deadline: DeadlineKind, route: string): void {
    this.service.deadlineHit(deadline, route);
  }

  /**
   * Every series: the request counters (render) and those read at the scrape, the outbox's from the store.
   * A store that does not answer leaves the outbox's series out rather than failing the scrape.
   */
  async scrape(): Promise<string> {
    return `${this.render()}${await this.service.render()}`;
  }

  render(): string {
    const lines: string[] = [];
    lines.push('# HELP http_requests_total HTTP requests answered, by method, route pattern and status.');
    lines.push('# TYPE http_requests_total counter');
    for (const { labels: requestLabels, value } of this.requests.values()) {
      lines.push(`http_requests_total${requestLabels} ${value}`);
    }
    lines.push(
      '# HELP http_request_duration_seconds Time to answer HTTP requests, by method and route pattern.',
    );
    lines.push('# TYPE http_request_duration_seconds histogram');
    for (const { labels: pairs, histogram } of this.latency.values()) {
      lines.push(...histogramLines('http_request_duration_seconds', pairs, histogram));
    }
    lines.push('# HELP hortus_readings_ingested_total Readings accepted, by how they arrived.');
    lines.push('# TYPE hortus_readings_ingested_total counter');
    lines.push(`hortus_readings_ingested_total{source="http"} ${this.ingested.http}`);
    const mqtt = this.ingested.mqtt + (this.mqttAccepted?.() ?? 0);
    lines.push(`hortus_readings_ingested_total{source="mqtt"} ${mqtt}`);
    const drops = this.mqttDrops?.();
    if (drops !== undefined) lines.push(...mqttDropLines(drops));
    lines.push('# HELP hortus_automations_fired_total Actions the automation engine switched.');
    lines.push('# TYPE hortus_automations_fired_total counter');
    lines.push(`hortus_automations_fired_total ${this.automationsFired}`);
    lines.push('# HELP hortus_alerts_raised_total Alert notifications the automation engine raised.');
    lines.push('# TYPE hortus_alerts_raised_total counter');
    lines.push(`hortus_alerts_raised_total ${this.alertsRaised}`);
    lines.push(
      '# HELP hortus_actions_in_safe_mode Actions in safe mode (every input stale), as this server last saw them.',
    );
    lines.push('# TYPE hortus_actions_in_safe_mode gauge');
    lines.push(`hortus_actions_in_safe_mode ${this.actionsInSafeMode}`);
    lines.push(
      '# HELP hortus_poll_lane_answers_total Polls answered by the poll lane, without the middleware chain.',
    );
    lines.push('# TYPE hortus_poll_lane_answers_total counter');
    lines.push(`hortus_poll_lane_answers_total ${this.laneAnswers}`);
    lines.push(
      '# HELP hortus_box_lane_answers_total Box endpoint requests answered by the box lane, without the middleware chain.',
    );
    lines.push('# TYPE hortus_box_lane_answers_total counter');
    lines.push(`hortus_box_lane_answers_total ${this.boxLaneAnswers}`);
    const shared = this.sharedRateLimit?.();
    if (shared !== undefined) lines.push(...sharedRateLimitLines(shared));
    const backupAge = this.backupAge?.();
    if (backupAge !== undefined) {
      lines.push(
        '# HELP hortus_backup_newest_age_seconds Seconds since the newest scheduled backup in BACKUP_DIR (+Inf: none).',
      );
      lines.push('# TYPE hortus_backup_newest_age_seconds gauge');
      lines.push(
        `hortus_backup_newest_age_seconds ${Number.isFinite(backupAge) ? Math.round(backupAge) : '+Inf'}`,
      );
    }
    return `${lines.join('\n')}\n`;
  }
}

export const HTTP_METRICS = Symbol.for('hortus.http.Metrics');

/** The route label of a request: the pattern the router matched, or the one an earlier handler named. */
export function routeOf(ctx: Context): string {
  const named = (ctx.state as { metricsRoute?: string }).metricsRoute;
  if (named !== undefined) return named;
  const matched = (ctx as unknown as { _matchedRoute?: unknown })._matchedRoute;
  return typeof matched === 'string' ? matched : UNMATCHED_ROUTE;
}

/** Counts and times every request; runs outside the error middleware so it sees the final status. */
export function metricsMiddleware(metrics: HttpMetrics): Middleware {
  return async (ctx, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      metrics.observeRequest(ctx.method, routeOf(ctx), ctx.status, (performance.now() - started) / 1000);
    }
  };
}

/**
 * The HTTP ingest use case, counting what it accepts: the count comes from the use case's own answer, so
 * the route needs no knowledge of metrics.
 */
export function countingIngest(recordReadings: RecordReadings, metrics: HttpMetrics): RecordReadings {
  const counted = Object.create(recordReadings) as RecordReadings;
  counted.execute = async (items) => {
    const result = await recordReadings.execute(items);
    metrics.readingsIngested('http', result.accepted);
    return result;
  };
  return counted;
}

function sharedRateLimitLines({ degraded, fallbacks }: SharedRateLimitHealth): string[] {
  return [
    '# HELP hortus_rate_limit_shared_degraded 1 while this server counts the request limit alone because Redis does not answer.',
    '# TYPE hortus_rate_limit_shared_degraded gauge',
    `hortus_rate_limit_shared_degraded ${degraded ? 1 : 0}`,
    '# HELP hortus_rate_limit_fallbacks_total Requests counted in this process instead of Redis, by reason.',
    '# TYPE hortus_rate_limit_fallbacks_total counter',
    `hortus_rate_limit_fallbacks_total{reason="deadline"} ${fallbacks.deadline}`,
    `hortus_rate_limit_fallbacks_total{reason="unavailable"} ${fallbacks.unavailable}`,
  ];
}

function mqttDropLines(drops: MqttDrops): string[] {
  return [
    '# HELP hortus_mqtt_messages_dropped_total MQTT messages not read, by reason.',
    '# TYPE hortus_mqtt_messages_dropped_total counter',
    `hortus_mqtt_messages_dropped_total{reason="oversized"} ${drops.oversized}`,
    `hortus_mqtt_messages_dropped_total{reason="malformed"} ${drops.malformed}`,
    '# HELP hortus_mqtt_readings_dropped_total Readings of MQTT messages not stored, by reason.',
    '# TYPE hortus_mqtt_readings_dropped_total counter',
    `hortus_mqtt_readings_dropped_total{reason="rejected"} ${drops.rejected}`,
    `hortus_mqtt_readings_dropped_total{reason="failed"} ${drops.failed}`,
    "# HELP hortus_mqtt_readings_regrouped_total Readings stored under their box's group, not the one their payload named.",
    '# TYPE hortus_mqtt_readings_regrouped_total counter',
    `hortus_mqtt_readings_regrouped_total ${drops.regrouped}`,
    ...mqttCommandLines(drops.commands),
  ];
}

function mqttCommandLines(commands: MqttDrops['commands']): string[] {
  if (commands === undefined) return [];
  return [
    '# HELP hortus_mqtt_commands_total MQTT `.../set` commands received, by result (all but applied are ignored).',
    '# TYPE hortus_mqtt_commands_total counter',
    `hortus_mqtt_commands_total{result="applied"} ${commands.applied}`,
    `hortus_mqtt_commands_total{result="unknown_action"} ${commands.unknownAction}`,
    `hortus_mqtt_commands_total{result="bad_value"} ${commands.badValue}`,
    `hortus_mqtt_commands_total{result="retained"} ${commands.retained}`,
    `hortus_mqtt_commands_total{result="failed"} ${commands.failed}`,
    `hortus_mqtt_commands_total{result="refused"} ${commands.refused ?? 0}`,
  ];
}
