import { type DeadlineKind, type DeliveryRound, type OutboxPending } from '@hortus/core';
import { header, histogramLines, labels, newHistogram, observe } from './prometheus-text.js';

type Outcome = 'retrying' | 'given_up';
type ChannelType = 'email' | 'webhook';

/**
 * What the server does beside answering requests: the MQTT bridge's connection, the alert outbox, the
 * automation engine's ticks and the store deadlines that ran out. Counters are kept here as things happen;
 * the connection and the outbox are read at each scrape.
 */
export class ServiceSeries {
  /** Unset while MQTT is off: the series is left out then, so "disconnected" alerts only where it is on. */
  mqttConnected: (() => boolean) | undefined;
  outboxPending: (() => Promise<OutboxPending>) | undefined;
  private readonly tickTime = newHistogram();
  private groupsEvaluated = 0;
  private readonly deliveryFailures: Record<ChannelType, Record<Outcome, number>> = {
    email: { retrying: 0, given_up: 0 },
    webhook: { retrying: 0, given_up: 0 },
  };
  /** deadline + route -> hits; routes are patterns (bounded), as in http_requests_total. */
  private readonly deadlineHits = new Map<string, { readonly labels: string; value: number }>();

  engineTicked(seconds: number, evaluated: number): void {
    observe(this.tickTime, seconds);
    this.groupsEvaluated += evaluated;
  }

  deliveryRound({ retrying, failed }: DeliveryRound): void {
    for (const { message } of retrying) this.deliveryFailures[message.channel.type].retrying += 1;
    for (const { message } of failed) this.deliveryFailures[message.channel.type].given_up += 1;
  }

  deadlineHit(deadline: DeadlineKind, route: string): void {
    const key = `${deadline} ${route}`;
    let hits = this.deadlineHits.get(key);
    if (hits === undefined) {
      hits = { labels: labels({ deadline, route }), value: 0 };
      this.deadlineHits.set(key, hits);
    }
    hits.value += 1;
  }

  async render(): Promise<string> {
    const lines: string[] = [];
    const connected = this.mqttConnected;
    if (connected !== undefined) {
      lines.push(
        ...header(
          'hortus_mqtt_connected',
          'gauge',
          '1 while the MQTT bridge is connected to its broker, else 0.',
        ),
      );
      lines.push(`hortus_mqtt_connected ${connected() ? 1 : 0}`);
    }
    lines.push(...(await this.outboxLines()));
    lines.push(
      ...header(
        'hortus_alert_delivery_failures_total',
        'counter',
        'Alert messages whose delivery failed (or was not tried after an earlier failure to the same destination), by channel and outcome: retrying later or given up.',
      ),
    );
    for (const channel of ['email', 'webhook'] as const) {
      for (const outcome of ['retrying', 'given_up'] as const) {
        const value = this.deliveryFailures[channel][outcome];
        lines.push(`hortus_alert_delivery_failures_total${labels({ channel, outcome })} ${value}`);
      }
    }
    lines.push(
      ...header(
        'hortus_automation_tick_duration_seconds',
        'histogram',
        "Time the automation engine's ticks took (rules, alerts and the outbox for the groups evaluated).",
      ),
      ...histogramLines('hortus_automation_tick_duration_seconds', {}, this.tickTime),
      ...header(
        'hortus_automation_groups_evaluated_total',
        'counter',
        'Groups the automation engine evaluated, summed over its ticks.',
      ),
      `hortus_automation_groups_evaluated_total ${this.groupsEvaluated}`,
      ...header(
        'hortus_store_deadline_hits_total',
        'counter',
        'Requests answered 503 because a deadline ran out, by deadline (store: one store operation, MONGODB_TIMEOUT_MS; answer: the wait for an answer being built, ANSWER_WAIT_MS) and route pattern.',
      ),
    );
    for (const { labels: pairs, value } of this.deadlineHits.values()) {
      lines.push(`hortus_store_deadline_hits_total${pairs} ${value}`);
    }
    return `${lines.join('\n')}\n`;
  }

  private async outboxLines(): Promise<string[]> {
    if (this.outboxPending === undefined) return [];
    let pending: OutboxPending;
    try {
      pending = await this.outboxPending();
    } catch {
      // The store is away: /readyz says so; the scrape still gives every other series.
      return [];
    }
    return [
      ...header(
        'hortus_alert_outbox_messages',
        'gauge',
        'Alert messages waiting in the outbox, by state: due (sent at the next round) or deferred (being sent under a lease, or waiting out the backoff of a retry).',
      ),
      `hortus_alert_outbox_messages{state="due"} ${pending.due}`,
      `hortus_alert_outbox_messages{state="deferred"} ${pending.deferred}`,
    ];
  }
}
