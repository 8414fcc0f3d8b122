import { type TextSink } from '../output.js';

/**
 * A bar per collection, redrawn in place when stderr is a terminal; otherwise JSON lines: one when a
 * collection starts, at most one a second while it runs, and one when it ends.
 */
export class MigrationProgress {
  private collection = '';
  private total = 0;
  private startedAt = 0;
  private lastShown = 0;

  constructor(
    private readonly sink: TextSink,
    private readonly now: () => number = Date.now,
  ) {}

  start(collection: string, total: number): void {
    this.collection = collection;
    this.total = total;
    this.startedAt = this.now();
    this.lastShown = 0;
    this.show(0, false);
  }

  update(read: number, final = false): void {
    const interval = this.sink.isTTY === true ? 100 : 1000;
    if (final || this.now() - this.lastShown >= interval) this.show(read, final);
  }

  private show(read: number, final: boolean): void {
    this.lastShown = this.now();
    const seconds = (this.now() - this.startedAt) / 1000;
    const perSecond = seconds > 0 ? Math.round(read / seconds) : 0;
    const total = Math.max(this.total, read);
    const percent = total === 0 ? 100 : Math.min(100, Math.floor((read / total) * 100));
    if (this.sink.isTTY === true) {
      const width = 30;
      const filled = Math.round((percent / 100) * width);
      this.sink.write(
        `\r${this.collection.padEnd(13)} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ` +
          `${String(percent).padStart(3)}%  ${read}/${total}  ${perSecond}/s${final ? '\n' : ''}`,
      );
      return;
    }
    this.sink.write(
      `${JSON.stringify({
        event: 'migrate.progress',
        collection: this.collection,
        read,
        total,
        percent,
        perSecond,
        ...(final ? { done: true } : {}),
      })}\n`,
    );
  }
}
