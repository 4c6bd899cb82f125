/**
 * @module stop-signals — what SIGINT and SIGTERM mean to a long-running Bourse process: the first
 * asks for a clean stop; the same request arriving again within `SIGNAL_REPEAT_MS` is that one
 * request (Ctrl-C on `npm start` reaches the server twice: the terminal signals the whole process
 * group and npm forwards its own copy); a signal after that interval ends the process at once.
 */

/** Signals within this long of the first one are the same stop request. */
export const SIGNAL_REPEAT_MS = 1_000;

/** What asked for the stop: a signal's name, or a sentence (`npm … is gone`), and log fields. */
export type StopReason = (why: string, fields: Readonly<Record<string, unknown>>) => void;

export interface StopSignalHandlers {
  /** The first request: stop cleanly (called once). */
  stop: StopReason;
  /** A signal the interval after the first: the operator insists (called at most once). */
  now: StopReason;
  /** A repeat within the interval, taken as the first (for a debug line). */
  repeated?: StopReason;
}

export interface StopSignalOptions {
  readonly repeatMs?: number;
  /** Milliseconds on a monotonic clock (default performance.now). */
  readonly clock?: () => number;
}

/**
 * Decides what each stop request means; returns the function to call with each one (`fields`
 * default to `{ signal: why }`). Holds no process state: `handleStopSignals` wires it to the
 * process's signals.
 */
export function stopSignalReader(
  handlers: StopSignalHandlers,
  { repeatMs = SIGNAL_REPEAT_MS, clock = () => performance.now() }: StopSignalOptions = {},
): (why: string, fields?: Readonly<Record<string, unknown>>) => void {
  let firstAt: number | undefined;
  let insisted = false;
  return (why, fields = { signal: why }) => {
    const at = clock();
    if (firstAt === undefined) {
      firstAt = at;
      handlers.stop(why, fields);
    } else if (at - firstAt < repeatMs) {
      handlers.repeated?.(why, fields);
    } else if (!insisted) {
      insisted = true;
      handlers.now(why, fields);
    }
  };
}

/** Handles SIGINT and SIGTERM on this process with `stopSignalReader`; returns it for other reasons to stop. */
export function handleStopSignals(
  handlers: StopSignalHandlers,
  options?: StopSignalOptions,
): ReturnType<typeof stopSignalReader> {
  const read = stopSignalReader(handlers, options);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => read(signal));
  return read;
}

/** How long a stop after a fatal error may take to close the parts before the process exits anyway (ms). */
export const FATAL_STOP_DEADLINE_MS = 5_000;

/**
 * Ends the process with exit 1 once `close` settles, or after `deadlineMs` if it has not: a part
 * that cannot close on a failed disk (the history store's last write) must not keep the process
 * alive; the journal is what a restart recovers from. `late` is told the deadline passed; `flush`
 * runs before either exit.
 */
export function exitAfterClose(
  close: () => Promise<void>,
  hooks: { readonly late: (ms: number) => void; readonly flush: () => void },
  deadlineMs = FATAL_STOP_DEADLINE_MS,
): void {
  const deadline = setTimeout(() => {
    hooks.late(deadlineMs);
    hooks.flush();
    process.exit(1);
  }, deadlineMs);
  void close().finally(() => {
    clearTimeout(deadline);
    hooks.flush();
    process.exit(1);
  });
}

/** How often a server started by npm checks that npm still runs (ms). */
const PARENT_CHECK_MS = 1_000;

/**
 * Under `npm start` the process a manager signals is npm (the script execs node, so npm's SIGTERM
 * reaches this process). If npm dies without passing a signal on (SIGKILL), `stop` is asked, rather
 * than run on as an orphan that nothing manages. Nothing is watched outside npm.
 */
export function stopWithNpm(stop: (why: string, fields: Readonly<Record<string, unknown>>) => void): void {
  if (process.env['npm_lifecycle_event'] === undefined) return;
  const parent = process.ppid;
  const watch = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(watch);
    stop(`npm (pid ${parent}), which started this server, is gone`, {});
  }, PARENT_CHECK_MS).unref();
}
