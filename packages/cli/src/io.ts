import { type Container } from 'inversify';
import { type TextSink } from './output.js';

/** Where `serve` hears SIGTERM and SIGINT: the process, or an emitter in tests. */
export interface SignalSource {
  once(signal: NodeJS.Signals, listener: () => void): unknown;
  off(signal: NodeJS.Signals, listener: () => void): unknown;
}

export interface RunIo {
  readonly stdout: TextSink;
  readonly stderr: TextSink;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** A container with the core and a store module loaded; the caller owns (and closes) it. */
  readonly container?: Container;
  readonly signals?: SignalSource;
  /** Ends the process (`serve` when its stop overruns its deadline); absent in tests run in-process. */
  readonly exit?: (code: number) => void;
  /** Where `--password-stdin` reads from; the process's stdin by default. */
  readonly stdin?: AsyncIterable<string | Buffer>;
}
