import { type TextSink } from './output.js';

/** How far a long command is, as its own code counts it. */
export interface ProgressReport {
  /** Work done, in the unit of the phase's total (bytes of a file, documents of a collection). */
  readonly done: number;
  /** What the rate counts, when not `done` (lines per second while `done` counts bytes). */
  readonly count?: number;
  /** For people, after the bar: "3000 lines, 0 rejected". */
  readonly text: string;
  /** For scripts: the JSON line's own fields. */
  readonly fields: Readonly<Record<string, unknown>>;
}

export interface ProgressOptions {
  /** The JSON line's `event`, e.g. `readings.import.progress`. */
  readonly event: string;
  /** Unit of the rate, for people: "lines", "readings". */
  readonly unit: string;
  readonly now?: () => number;
}

const BAR_WIDTH = 30;
const TERMINAL_EVERY_MS = 100;
const JSON_EVERY_MS = 1000;

function duration(seconds: number): string {
  const whole = Math.max(0, Math.round(seconds));
  const h = Math.floor(whole / 3600);
  const m = Math.floor((whole % 3600) / 60);
  const s = whole % 60;
  return h > 0
    ? `${h}h${String(m).padStart(2, '0')}m`
    : m > 0
      ? `${m}m${String(s).padStart(2, '0')}s`
      : `${s}s`;
}

/**
 * The one progress display of the long CLI commands (readings import and export, migrate, store copy): count,
 * rate, and where the total is known a bar, percent and ETA. On a terminal one line is redrawn in place at most
 * ten times a second; otherwise (a log, a pipe) a JSON line at the start of each phase, at most one a second
 * while it runs, and one with `"done": true` at its end.
 */
export class Progress {
  private label: string | undefined;
  private total: number | undefined;
  private phaseFields: Readonly<Record<string, unknown>> = {};
  private startedAt: number;
  private lastShown = Number.NEGATIVE_INFINITY;
  private readonly now: () => number;

  constructor(
    private readonly sink: TextSink,
    private readonly options: ProgressOptions,
  ) {
    this.now = options.now ?? Date.now;
    this.startedAt = this.now();
  }

  /** Starts a phase (a collection, a file): its label for people, its total when known, its JSON fields. */
  start(phase: { label?: string; total?: number; fields?: Readonly<Record<string, unknown>> } = {}): void {
    this.label = phase.label;
    this.total = phase.total;
    this.phaseFields = phase.fields ?? {};
    this.startedAt = this.now();
    this.lastShown = Number.NEGATIVE_INFINITY;
  }

  update(report: ProgressReport, final = false): void {
    const now = this.now();
    const every = this.sink.isTTY === true ? TERMINAL_EVERY_MS : JSON_EVERY_MS;
    if (!final && now - this.lastShown < every) return;
    this.lastShown = now;
    const seconds = Math.max((now - this.startedAt) / 1000, 0.001);
    const perSecond = Math.round((report.count ?? report.done) / seconds);
    const total = this.total === undefined ? undefined : Math.max(this.total, report.done);
    const percent =
      total === undefined
        ? undefined
        : total === 0
          ? 100
          : Math.min(100, Math.floor((report.done / total) * 100));
    const etaSeconds =
      total === undefined || final || report.done === 0
        ? undefined
        : Math.round((seconds * (total - report.done)) / report.done);
    if (this.sink.isTTY === true) {
      const filled = Math.round(((percent ?? 0) / 100) * BAR_WIDTH);
      const bar =
        percent === undefined
          ? ''
          : `[${'#'.repeat(filled)}${'.'.repeat(BAR_WIDTH - filled)}] ${String(percent).padStart(3)}%  `;
      this.sink.write(
        `\r\u001b[K${this.label === undefined ? '' : `${this.label.padEnd(13)} `}${bar}${report.text}, ` +
          `${perSecond} ${this.options.unit}/s${etaSeconds === undefined ? '' : `, ETA ${duration(etaSeconds)}`}` +
          (final ? ', done\n' : ''),
      );
      return;
    }
    this.sink.write(
      `${JSON.stringify({
        event: this.options.event,
        ...this.phaseFields,
        ...report.fields,
        ...(total === undefined ? {} : { total, percent }),
        perSecond,
        ...(etaSeconds === undefined ? {} : { etaSeconds }),
        ...(final ? { done: true } : {}),
      })}\n`,
    );
  }
}
