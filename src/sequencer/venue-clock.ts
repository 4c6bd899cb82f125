/**
 * @module venue-clock — the venue's time at start: the wall clock, or under `--clock=manual` one
 * that moves only when advanced (manual-clock.ts), from where the journal left off. Rate limits,
 * reqTime checks and timeouts stay on the wall clock whatever this says. What the operator is told:
 * where a manual clock stands, and when the journal's last time is ahead of the wall clock.
 */
import type { Log } from '../domain/log.ts';
import { ManualClock, type ClockAdvance, type ClockedVenue } from './manual-clock.ts';

/** How far ahead of the wall clock the journal's last time may be before it is worth a warning (ms). */
const AHEAD_WARNING_MS = 60_000;

export interface VenueClock {
  /** The venue's time (ms). */
  readonly now: () => number;
  /** The manual clock, under `--clock=manual`. */
  readonly manual: ManualClock | undefined;
}

/** The clock for `mode`, starting from `lastTime` (the journal's last command's time); logs where it stands. */
export function venueClock(mode: 'real' | 'manual', lastTime: number | undefined, log: Log): VenueClock {
  if (mode === 'manual') {
    const manual = new ManualClock(lastTime ?? Date.now());
    const at = new Date(manual.now()).toISOString();
    log.info({ at }, `clock: manual, standing at ${at}; it moves only with bourse clock advance <duration>`);
    return { now: manual.now, manual };
  }
  if (lastTime !== undefined && lastTime > Date.now() + AHEAD_WARNING_MS) {
    const last = new Date(lastTime).toISOString();
    log.warn(
      { lastTime: last },
      `clock: the journal's last time ${last} is ahead of the wall clock ` +
        '(a manual clock was advanced): new commands carry that time until the wall clock passes it',
    );
  }
  return { now: Date.now, manual: undefined };
}

/** The clock as the admin API's sandbox routes drive it (`bourse clock`): a wall clock cannot be advanced. */
export function sandboxClock(
  clock: VenueClock,
  venue: ClockedVenue,
): { manual: boolean; now: () => number; advance: (ms: number) => Promise<ClockAdvance> } {
  const manual = clock.manual;
  return {
    manual: manual !== undefined,
    now: clock.now,
    advance: (ms) =>
      manual === undefined ? Promise.reject(new Error('the wall clock')) : manual.advance(ms, venue),
  };
}
