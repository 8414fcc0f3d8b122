import { type CopiedResource, type CopyProgress } from '@hortus/core';
import { type TextSink } from '../output.js';
import { Progress } from '../progress.js';

/** The copy's progress on the CLI's one display: a phase per resource, with total and ETA where known. */
export class StoreCopyProgress implements CopyProgress {
  private readonly progress: Progress;
  private copied = 0;

  constructor(sink: TextSink, now?: () => number) {
    this.progress = new Progress(sink, {
      event: 'store.copy.progress',
      unit: 'records',
      ...(now === undefined ? {} : { now }),
    });
  }

  begin(resource: CopiedResource, total: number | undefined): void {
    this.copied = 0;
    this.progress.start({ label: resource, ...(total === undefined ? {} : { total }), fields: { resource } });
    this.show(false);
  }

  advance(count: number): void {
    this.copied += count;
    this.show(false);
  }

  end(): void {
    this.show(true);
  }

  private show(final: boolean): void {
    this.progress.update(
      { done: this.copied, text: `${this.copied} copied`, fields: { copied: this.copied } },
      final,
    );
  }
}
