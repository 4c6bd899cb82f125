/**
 * @module fatal-stop — a running venue whose journal, engine or history follower failed for good:
 * said once, whichever part failed first (not ready, not alive), with the disk's advice or the
 * bug's stack (disk-failure.ts), then the venue is closed and the process exits 1; a restart
 * recovers from the journal.
 */
import type { Log } from '../domain/log.ts';
import { diskAdvice, diskFailure } from './disk-failure.ts';
import type { Health } from './health.ts';

export interface FatalStopParts {
  readonly health: Health;
  readonly log: Log;
  readonly dataDir: string;
  /** The engine's last applied seq, for the line. */
  readonly seq: () => number;
  /** Closes the venue and exits (src/config/stop-signals.ts, `exitAfterClose`). */
  readonly stop: () => void;
}

/** The listener for every part's `onFatal`. */
export function fatalStop(parts: FatalStopParts): (error: Error) => void {
  return (error) => {
    if (parts.health.phase === 'failed') return;
    parts.health.failed(error.message);
    const disk = diskFailure(error.message) !== undefined;
    parts.log.fatal(
      { ...(disk ? {} : { err: error }), reason: error.message, seq: parts.seq() },
      `stopping: ${error.message}${diskAdvice(error.message, parts.dataDir)}; a restart recovers from the journal`,
    );
    process.exitCode = 1;
    parts.stop();
  };
}
