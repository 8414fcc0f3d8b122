import { type CopiedResource, type CopyProgress } from '@hortus/core';
import { type TextSink } from '../output.js';

/**
 * One line per resource, redrawn in place on a terminal; otherwise JSON lines: one when a resource starts,
 * at most one a second while it runs, one when it ends. Count, rate, and total and ETA where known.
 */
export class StoreCopyProgress implements CopyProgress {
  private resource = '';
  private total: number | undefined;
  private copied = 0;
  private startedAt = 0;
  private lastShown = 0;

  constructor(
    private readonly sink: TextSink,
    private readonly now: () => number = Date.now,
  ) {}

  begin(resource: CopiedResource, total: number | undefined): void {
    this.resource = resource;
    this.total = total;
    this.copied = 0;
    this.startedAt = this.now();
    this.show(false);
  }

  advance(count: number): void {
    this.copied += count;
    const interval = this.sink.isTTY === true ? 100 : 1000;
    if (this.now() - this.lastShown >= interval) this.show(false);
  }

  end(): void {
    this.show(true);
  }

  private show(final: boolean): void {
    this.lastShown = this.now();
    const seconds = (this.now() - this.startedAt) / 1000;
    const perSecond = seconds > 0 ? Math.round(this.copied / seconds) : 0;
    const total = this.total === undefined ? undefined : Math.max(this.total, this.copied);
    const etaSeconds =
      total === undefined || perSecond === 0 ? undefined : Math.ceil((total - this.copied) / perSecond);
    if (this.sink.isTTY === true) {
      const of = total === undefined ? '' : `/${total}`;
      const eta = etaSeconds === undefined || final ? '' : `  ETA ${etaSeconds}s`;
      this.sink.write(
        `\r${this.resource.padEnd(14)} ${this.copied}${of}  ${perSecond}/s${eta}${final ? '\n' : '   '}`,
      );
      return;
    }
    this.sink.write(
      `${JSON.stringify({
        event: 'store.copy.progress',
        resource: this.resource,
        copied: this.copied,
        ...(total === undefined ? {} : { total }),
        perSecond,
        ...(etaSeconds === undefined || final ? {} : { etaSeconds }),
        ...(final ? { done: true } : {}),
      })}\n`,
    );
  }
}
