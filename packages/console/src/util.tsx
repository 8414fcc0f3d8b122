import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { type ComponentChildren } from 'preact';

/** "12 s", "5 min", "3 h", "2 d" ago. */
export function age(time: string | undefined, now = Date.now()): string {
  if (time === undefined) return 'never';
  const seconds = Math.max(0, Math.round((now - Date.parse(time)) / 1000));
  if (seconds < 90) return `${seconds} s ago`;
  if (seconds < 90 * 60) return `${Math.round(seconds / 60)} min ago`;
  if (seconds < 36 * 3600) return `${Math.round(seconds / 3600)} h ago`;
  return `${Math.round(seconds / 86400)} d ago`;
}

export const when = (time: string | undefined): string =>
  time === undefined ? '—' : new Date(time).toLocaleString();

export const duration = (ms: number | undefined): string => {
  if (ms === undefined) return 'none';
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000} h`;
  if (ms % 60_000 === 0) return `${ms / 60_000} min`;
  return `${Math.round(ms / 1000)} s`;
};

export interface Loaded<T> {
  readonly data: T | undefined;
  readonly error: string | undefined;
  readonly reload: () => void;
}

/** Loads on mount and when `keys` change, again every `everyMs` (0: once); the last answer wins. */
export function useLoad<T>(load: () => Promise<T>, keys: readonly unknown[], everyMs = 0): Loaded<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const generation = useRef(0);
  const run = useCallback(() => {
    const mine = ++generation.current;
    load().then(
      (value) => {
        if (mine !== generation.current) return;
        setData(value);
        setError(undefined);
      },
      (failure: unknown) => {
        if (mine !== generation.current) return;
        setError(failure instanceof Error ? failure.message : String(failure));
      },
    );
  }, keys);
  useEffect(() => {
    setData(undefined);
    run();
    if (everyMs <= 0) return undefined;
    const timer = setInterval(run, everyMs);
    return () => clearInterval(timer);
  }, [run, everyMs]);
  return { data, error, reload: run };
}

export function Status<T>(props: {
  loaded: Loaded<T>;
  children: (data: T) => ComponentChildren;
}): ComponentChildren {
  const { data, error } = props.loaded;
  if (error !== undefined && data === undefined)
    return (
      <p role="alert" class="error">
        Could not load: {error}
      </p>
    );
  if (data === undefined) return <p class="muted">Loading…</p>;
  return props.children(data);
}

/** A readable name for a topic: its last parts. */
export const topicLabel = (topic: string): string => topic.replace(/^esp\//u, '');

export const TEMPERATURE = 'esp/air/temperature';
export const HUMIDITY = 'esp/air/humidity';

/** Vapour-pressure deficit in kPa from air temperature (°C) and relative humidity (%), Tetens' formula. */
export function vpd(temperature: number, humidity: number): number {
  const saturation = 0.6108 * Math.exp((17.27 * temperature) / (temperature + 237.3));
  return saturation * (1 - humidity / 100);
}

export const link = (...parts: string[]): string => `#/${parts.map(encodeURIComponent).join('/')}`;

/** What a button's press is doing: busy while its request runs, the problem when it failed. */
export interface Press {
  readonly busy: boolean;
  readonly problem: string | undefined;
  /** Sends the request once; `done` runs when it succeeded, the problem shows when it failed. */
  readonly run: (request: () => Promise<unknown>, done: () => void) => void;
}

export function usePress(): Press {
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string | undefined>(undefined);
  // A busy button is aria-disabled, not disabled: a disabled button drops the keyboard's focus.
  const running = useRef(false);
  const run = (request: () => Promise<unknown>, done: () => void): void => {
    if (running.current) return;
    running.current = true;
    setBusy(true);
    setProblem(undefined);
    request().then(
      () => {
        running.current = false;
        setBusy(false);
        done();
      },
      (error: unknown) => {
        running.current = false;
        setBusy(false);
        setProblem(error instanceof Error ? error.message : String(error));
      },
    );
  };
  return { busy, problem, run };
}

/** A failed press's message, announced to screen readers. */
export function Problem(props: { text: string | undefined }) {
  return props.text === undefined ? null : (
    <span role="alert" class="error">
      {props.text}
    </span>
  );
}
