/**
 * @module log — the structured log every part writes to: a port whose one adapter is pino
 * (src/observability/logger.ts; memory-log.ts in tests). A leaf type, importable from every layer.
 */
/** The levels of `Log`, least to most severe. */
export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal';

/**
 * One level's method: a message, or fields merged into the line and a message. The message is
 * written as given (no printf-style formatting).
 */
export interface LogFn {
  (message: string): void;
  (fields: object, message: string): void;
}

/**
 * Structured, levelled diagnostics (src/observability/logger.ts makes them; pino's Logger is one).
 * A child carries fixed fields (e.g. `{ component: 'journal' }`) into every line it writes.
 */
export interface Log {
  readonly trace: LogFn;
  readonly debug: LogFn;
  readonly info: LogFn;
  readonly warn: LogFn;
  readonly error: LogFn;
  readonly fatal: LogFn;
  child(bindings: Record<string, unknown>): Log;
  /** True when a line of `level` would be written (to skip building costly fields). */
  isLevelEnabled(level: LogLevel): boolean;
}
