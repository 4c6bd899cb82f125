/**
 * @module progress — how far a long piece of offline work is (a replay, a verification, a history
 * rebuild): a line redrawn in place on a terminal (done / total, rate, ETA), periodic plain lines
 * otherwise (a log, a pipe), so that a file or a log collector is not flooded with redraws.
 */
import type { Log } from '../domain/log.ts';

/** Least time between two redraws on a terminal (ms). */
const TTY_REDRAW_MS = 100;
/** Least time between two plain lines (ms). */
export const PROGRESS_LINE_EVERY_MS = 5_000;

export interface ProgressFigures {
  readonly done: number;
  readonly total: number;
  /** Units a second since the start. */
  readonly perSecond: number;
  /** Seconds left at that rate (undefined until there is a rate). */
  readonly etaSeconds: number | undefined;
  readonly percent: number;
}

export interface ProgressOptions {
  /** Names the work, e.g. `replay`. */
  readonly label: string;
  /** What is counted, e.g. `commands`. */
  readonly unit: string;
  /** A terminal to redraw one line on (e.g. process.stderr when it is a TTY); none: plain lines. */
  readonly tty?: { write(text: string): unknown } | undefined;
  /** Receives each plain line (without a terminal), at most every `everyMs`, and the last one. */
  readonly line?: (text: string, figures: ProgressFigures) => void;
  /** Default PROGRESS_LINE_EVERY_MS. */
  readonly everyMs?: number;
  /** Monotonic clock, ms (default performance.now). */
  readonly now?: () => number;
}

/** `done / total (pct%), rate unit/s, ETA …` for the figures. */
export function describeProgress(label: string, unit: string, f: ProgressFigures): string {
  const eta =
    f.done >= f.total ? 'done' : f.etaSeconds === undefined ? 'ETA …' : `ETA ${formatSeconds(f.etaSeconds)}`;
  return `${label} ${f.done}/${f.total} (${f.percent}%), ${f.perSecond} ${unit}/s, ${eta}`;
}

function formatSeconds(seconds: number): string {
  if (seconds < 60) return `${seconds < 10 ? seconds.toFixed(1) : Math.round(seconds)} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ${Math.round(seconds % 60)} s`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/**
 * A progress reporter: call it with (done, total) as often as convenient; it draws or writes
 * only when due, and always once when done reaches total.
 */
export function progressReporter(options: ProgressOptions): (done: number, total: number) => void {
  const now = options.now ?? (() => performance.now());
  const started = now();
  const every = options.tty === undefined ? (options.everyMs ?? PROGRESS_LINE_EVERY_MS) : TTY_REDRAW_MS;
  let last = started;
  let finished = false;
  return (done, total) => {
    if (finished) return;
    const t = now();
    const complete = done >= total;
    if (!complete && t - last < every) return;
    last = t;
    const seconds = (t - started) / 1000;
    const perSecond = seconds > 0 ? Math.round(done / seconds) : 0;
    const figures: ProgressFigures = {
      done,
      total,
      perSecond,
      etaSeconds: perSecond > 0 ? (total - done) / perSecond : undefined,
      percent: total === 0 ? 100 : Math.floor((done * 100) / total),
    };
    const text = describeProgress(options.label, options.unit, figures);
    if (options.tty !== undefined) {
      // \x1b[K clears what a longer previous line left at the end.
      options.tty.write(`\r${text}\x1b[K${complete ? '\n' : ''}`);
    } else {
      options.line?.(text, figures);
    }
    finished = complete;
  };
}

/** The start-up replay's progress: redrawn on a terminal, else lines at info on `log`. */
export function replayReporter(log: Log): (done: number, total: number) => void {
  return progressReporter({
    label: 'replay',
    unit: 'commands',
    tty: process.stderr.isTTY === true ? process.stderr : undefined,
    line: (text, figures) => log.info({ ...figures }, text),
  });
}
