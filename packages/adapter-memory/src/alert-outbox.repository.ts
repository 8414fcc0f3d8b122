import { injectable } from 'inversify';
import {
  type AlertOutboxRepository,
  type Channel,
  type GroupNotifySettings,
  type NewOutboxMessage,
  type OutboxMessage,
  type OutboxPending,
} from '@hortus/core';
import { newId } from './ids.js';

/** A message that will not be sent (again) keeps no webhook secret. */
function withoutSecret(channel: Channel): Channel {
  return channel.type === 'webhook' ? { ...channel, secret: '' } : channel;
}

@injectable()
export class InMemoryAlertOutboxRepository implements AlertOutboxRepository {
  private readonly settings = new Map<string, GroupNotifySettings>();
  /** In the order enqueued, so the oldest is first. */
  private readonly messages: OutboxMessage[] = [];

  async getSettings(group: string): Promise<GroupNotifySettings | undefined> {
    const found = this.settings.get(group);
    return found === undefined ? undefined : structuredClone(found);
  }

  async saveSettings(settings: GroupNotifySettings): Promise<void> {
    this.settings.set(settings.group, structuredClone(settings));
  }

  async enqueue(messages: readonly NewOutboxMessage[]): Promise<OutboxMessage[]> {
    const stored = messages.map((message): OutboxMessage => ({
      ...structuredClone(message),
      id: newId(),
      status: 'pending',
      attempts: 0,
      nextAttemptAt: new Date(message.createdAt.getTime()),
    }));
    this.messages.push(...stored);
    return stored.map((message) => structuredClone(message));
  }

  async claimDue(now: Date, leaseMs: number, limit: number): Promise<OutboxMessage[]> {
    const claimed: OutboxMessage[] = [];
    for (const [index, message] of this.messages.entries()) {
      if (claimed.length >= limit) break;
      if (message.status !== 'pending' || message.nextAttemptAt > now) continue;
      const leased = {
        ...message,
        attempts: message.attempts + 1,
        nextAttemptAt: new Date(now.getTime() + leaseMs),
      };
      this.messages[index] = leased;
      claimed.push(structuredClone(leased));
    }
    return claimed;
  }

  async markDelivered(id: string, at: Date): Promise<void> {
    this.updatePending(id, (message) => {
      const delivered = {
        ...message,
        channel: withoutSecret(message.channel),
        status: 'delivered' as const,
        deliveredAt: new Date(at.getTime()),
      };
      delete (delivered as { lastError?: string }).lastError;
      return delivered;
    });
  }

  async markFailed(id: string, error: string, retryAt: Date | undefined): Promise<void> {
    this.updatePending(id, (message) => ({
      ...message,
      status: retryAt === undefined ? 'failed' : 'pending',
      channel: retryAt === undefined ? withoutSecret(message.channel) : message.channel,
      lastError: error,
      ...(retryAt === undefined ? {} : { nextAttemptAt: new Date(retryAt.getTime()) }),
    }));
  }

  async cancelWebhook(group: string, url: string, reason: string): Promise<number> {
    return this.cancel(group, reason, (channel) => channel.type === 'webhook' && channel.url === url);
  }

  async forgetGroup(group: string, reason: string): Promise<number> {
    this.settings.delete(group);
    return this.cancel(group, reason, () => true);
  }

  private cancel(group: string, reason: string, matches: (channel: Channel) => boolean): number {
    let cancelled = 0;
    for (const [index, message] of this.messages.entries()) {
      const { channel } = message;
      if (message.group !== group || message.status !== 'pending' || !matches(channel)) continue;
      this.messages[index] = {
        ...message,
        status: 'cancelled',
        lastError: reason,
        channel: withoutSecret(channel),
      };
      cancelled += 1;
    }
    return cancelled;
  }

  async countPending(now: Date): Promise<OutboxPending> {
    let due = 0;
    let deferred = 0;
    for (const message of this.messages) {
      if (message.status !== 'pending') continue;
      if (message.nextAttemptAt > now) deferred += 1;
      else due += 1;
    }
    return { due, deferred };
  }

  async list(group: string, limit: number): Promise<OutboxMessage[]> {
    if (!(limit > 0)) return [];
    return this.messages
      .filter((message) => message.group === group)
      .slice(-limit)
      .reverse()
      .map((message) => structuredClone(message));
  }

  async listCopies(after: string | undefined, limit: number): Promise<OutboxMessage[]> {
    if (!(limit > 0)) return [];
    const start = after === undefined ? 0 : this.messages.findIndex((message) => message.id === after) + 1;
    return this.messages.slice(start, start + limit).map((message) => structuredClone(message));
  }

  async restore(messages: readonly OutboxMessage[]): Promise<void> {
    for (const message of messages) {
      const index = this.messages.findIndex((held) => held.id === message.id);
      if (index === -1) this.messages.push(structuredClone(message));
      else this.messages[index] = structuredClone(message);
    }
  }

  private updatePending(id: string, change: (message: OutboxMessage) => OutboxMessage): void {
    const index = this.messages.findIndex((message) => message.id === id);
    const message = this.messages[index];
    if (message?.status === 'pending') this.messages[index] = change(message);
  }
}
