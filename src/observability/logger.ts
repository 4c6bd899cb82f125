/**
 * @module logger — the venue's structured log: pino writing one JSON object a line (or a short
 * human-readable line on a terminal), with a child logger per component. docs/operations.md,
 * "Logs", lists every field and level.
 *
 * Lines go to standard output through an asynchronous destination (pino's sonic-boom): a line is
 * queued in memory and written by the event loop, so that logging never waits for the disk or a
 * slow pipe. `flushSync()` writes whatever is queued before a fatal exit.
 */
import { Writable } from 'node:stream';
import { inspect } from 'node:util';
import pino, { type DestinationStream } from 'pino';
import type { Log, LogLevel } from '../domain/log.ts';

/** `auto`: `pretty` when standard output is a terminal, `json` otherwise. */
export type LogFormat = 'json' | 'pretty' | 'auto';

export const LOG_LEVELS: readonly (LogLevel | 'silent')[] = [
  'trace',
  'debug',
  'info',
  'warn',
  'error',
  'fatal',
  'silent',
];
export const LOG_FORMATS: readonly LogFormat[] = ['auto', 'json', 'pretty'];

/** The components that log, each a child logger with `component` set (docs/operations.md, "Logs"). */
export type Component =
  | 'main'
  | 'sequencer'
  | 'recovery'
  | 'journal'
  | 'snapshots'
  | 'history'
  | 'http'
  | 'ws'
  | 'chain'
  | 'admin'
  | 'auth'
  | 'clock'
  | 'demo'
  | 'replay';

export interface LoggerOptions {
  readonly level: LogLevel | 'silent';
  readonly format: LogFormat;
  /** Where lines go; default standard output (file descriptor 1). */
  readonly stream?: NodeJS.WritableStream & { isTTY?: boolean };
}

export interface VenueLogger {
  /** The root logger (no component). */
  readonly log: Log;
  /** A child logger for a component. */
  component(name: Component): Log;
  /** Writes every queued line now (before `process.exit`). */
  flushSync(): void;
}

/** Level names as pino writes them; lines carry the name, not pino's number. */
const formatters = { level: (label: string) => ({ level: label }) };

/** Creates the venue's logger (see the module comment). */
export function createLogger(options: LoggerOptions): VenueLogger {
  const out = options.stream ?? process.stdout;
  const pretty =
    options.format === 'pretty' || (options.format === 'auto' && (out as { isTTY?: boolean }).isTTY === true);
  let destination: DestinationStream;
  let flushSync: () => void;
  if (pretty) {
    // A person reads this: each line is formatted and written at once.
    destination = prettyStream(out, colours(out));
    flushSync = () => undefined;
  } else if (options.stream === undefined) {
    const boom = pino.destination({ dest: 1, sync: false });
    destination = boom;
    flushSync = () => {
      try {
        boom.flushSync();
      } catch {
        // Nothing queued, or the pipe is gone: nothing more can be written anyway.
      }
    };
  } else {
    destination = out as unknown as DestinationStream;
    flushSync = () => undefined;
  }
  const root = pino(
    {
      level: options.level,
      formatters,
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination,
  );
  return {
    log: root,
    component: (name) => root.child({ component: name }),
    flushSync,
  };
}

const LEVEL_COLOURS: Record<string, string> = {
  trace: '\x1b[90m',
  debug: '\x1b[36m',
  info: '\x1b[32m',
  warn: '\x1b[33m',
  error: '\x1b[31m',
  fatal: '\x1b[41m\x1b[37m',
};
const RESET = '\x1b[0m';
/** Fields every line has, shown in the line's head or not at all. */
const HEAD_FIELDS = new Set(['time', 'level', 'pid', 'hostname', 'component', 'msg']);

function colours(out: NodeJS.WritableStream): boolean {
  return (out as { isTTY?: boolean }).isTTY === true && process.env['NO_COLOR'] === undefined;
}

/**
 * The terminal form of one JSON line: `12:00:00.123 INFO  journal: message  key=value …`, an
 * error's stack on the lines after it.
 */
export function prettyLine(json: string, colour = false): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json.endsWith('\n') ? json : `${json}\n`;
  }
  const time = typeof entry['time'] === 'string' ? entry['time'].slice(11, 23) : '';
  const level = String(entry['level'] ?? '');
  const tag = level.toUpperCase().padEnd(5);
  const shownLevel = colour ? `${LEVEL_COLOURS[level] ?? ''}${tag}${RESET}` : tag;
  const component = entry['component'] === undefined ? '' : `${String(entry['component'])}: `;
  let stack = '';
  const fields: string[] = [];
  for (const [key, value] of Object.entries(entry)) {
    if (HEAD_FIELDS.has(key)) continue;
    if (key === 'err' && typeof value === 'object' && value !== null && 'stack' in value) {
      stack = `\n    ${String((value as { stack: unknown }).stack).replaceAll('\n', '\n    ')}`;
      continue;
    }
    fields.push(
      `${key}=${typeof value === 'string' ? (/[\s"=]/.test(value) ? JSON.stringify(value) : value) : inspect(value, { breakLength: Infinity, depth: 4 })}`,
    );
  }
  const tail = fields.length === 0 ? '' : `  ${fields.join(' ')}`;
  return `${time} ${shownLevel} ${component}${String(entry['msg'] ?? '')}${tail}${stack}\n`;
}

function prettyStream(out: NodeJS.WritableStream, colour: boolean): DestinationStream {
  return new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      out.write(prettyLine(chunk.toString().trimEnd(), colour));
      done();
    },
  }) as unknown as DestinationStream;
}
