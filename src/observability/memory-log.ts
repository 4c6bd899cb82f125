/**
 * @module memory-log — a real pino logger that keeps its lines in memory, for tests that check what
 * was logged (and a silent one for tests that do not care).
 */
import { Writable } from 'node:stream';
import type { Log, LogLevel } from '../domain/log.ts';
import { createLogger } from './logger.ts';

export interface MemoryLog {
  readonly log: Log;
  /** Every line written so far, parsed. */
  entries(): Record<string, unknown>[];
  /** The `msg` of every line so far. */
  messages(): string[];
}

/** A logger writing JSON lines of `level` and above into memory. */
export function memoryLog(level: LogLevel = 'trace'): MemoryLog {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  const { log } = createLogger({ level, format: 'json', stream });
  const entries = (): Record<string, unknown>[] =>
    lines
      .flatMap((l) => l.split('\n').filter((s) => s !== ''))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { log, entries, messages: () => entries().map((e) => String(e['msg'])) };
}

/** A logger that writes nothing. */
export const SILENT_LOG: Log = createLogger({ level: 'silent', format: 'json', stream: new Writable() }).log;
