/**
 * @module manual-clock — the sandbox clock (`--clock=manual`): venue time that moves only when the
 * operator advances it. The sequencer stamps commands from it; advancing steps through every
 * engine deadline on the way with a journaled FireTimers at that deadline's time, so timers fire
 * at the times they would have in real time, and replay reproduces it all from the journal.
 */
import type { Command } from '../domain/commands.ts';
import type { ApplyResult } from '../engine/engine.ts';

/** The longest single advance (ms): a year. */
export const MAX_CLOCK_ADVANCE_MS = 366 * 86_400_000;
/** More deadlines than this in one advance means something re-arms itself at the same time. */
const MAX_TIMER_STEPS = 1_000_000;
/** How long to wait before retrying a FireTimers the sequencer answered BUSY (ms). */
const BUSY_RETRY_MS = 10;

/** What an advance needs of the venue: the engine's next deadline, and the sequencer. */
export interface ClockedVenue {
  nextDeadline(): number | undefined;
  submit(command: Command): Promise<ApplyResult>;
}

/** What one advance did. */
export interface ClockAdvance {
  readonly from: number;
  readonly to: number;
  /** FireTimers commands submitted at deadlines on the way (the final one not counted). */
  readonly timerSteps: number;
}

export class ManualClock {
  #time: number;
  #advancing: Promise<unknown> = Promise.resolve();

  /** A clock standing at `start` (ms): the journal's last time, or the wall clock on a fresh venue. */
  constructor(start: number) {
    this.#time = start;
  }

  /** The venue time (ms), for the sequencer and every reader of venue time. */
  readonly now = (): number => this.#time;

  /**
   * Moves time forward by `ms` (a whole number, 1 ms to MAX_CLOCK_ADVANCE_MS; anything else
   * throws a RangeError and moves nothing). For each engine deadline up to the new time, the
   * clock stops at it and a FireTimers is submitted; at the new time one more is submitted, so
   * the journal records that time and a restart resumes from it. Advances run one at a time, in
   * the order called. Rejects if the sequencer does.
   */
  advance(ms: number, venue: ClockedVenue): Promise<ClockAdvance> {
    if (!Number.isSafeInteger(ms) || ms < 1 || ms > MAX_CLOCK_ADVANCE_MS) {
      return Promise.reject(new RangeError(`an advance is 1 ms to ${MAX_CLOCK_ADVANCE_MS} ms, not ${ms}`));
    }
    const run = this.#advancing.then(async () => {
      const from = this.#time;
      const to = from + ms;
      let timerSteps = 0;
      for (let next = venue.nextDeadline(); next !== undefined && next <= to; next = venue.nextDeadline()) {
        if (++timerSteps > MAX_TIMER_STEPS) throw new Error(`more than ${MAX_TIMER_STEPS} timer steps`);
        this.#time = Math.max(this.#time, next);
        await fireTimers(venue);
      }
      this.#time = to;
      await fireTimers(venue);
      return { from, to, timerSteps };
    });
    this.#advancing = run.catch(() => undefined);
    return run;
  }
}

async function fireTimers(venue: ClockedVenue): Promise<void> {
  while ((await venue.submit({ type: 'FireTimers' })).result === 'BUSY') {
    await new Promise((resolve) => setTimeout(resolve, BUSY_RETRY_MS));
  }
}
