/**
 * @module speed-clock — the fast-forward sandbox clock (`--clock=speed:<n>`): venue time that runs
 * `n` times faster than the wall clock, from where it started (the wall clock at start, or the
 * journal's last time if that is later). The sequencer stamps commands from it and arms its timers
 * in wall time divided by the speed, so a dead-man switch set for 60 s fires after 60/n wall
 * seconds, stamped with the venue time it fired at. `bourse clock speed <n>` changes the speed
 * while running: the clock journals a FireTimers at the moment of the change (the time reached, as
 * a manual clock's advance does), so the journal alone gives the same state on recovery.
 */
import { MAX_CLOCK_SPEED, MIN_CLOCK_SPEED } from '../domain/clock-speed.ts';
import type { ClockedVenue } from './manual-clock.ts';

/** How long to wait before retrying a FireTimers the sequencer answered BUSY (ms). */
const BUSY_RETRY_MS = 10;

/** What a speed clock's venue does for a change of speed: the journal's FireTimers, and timers re-armed. */
export interface SpeedClockedVenue extends Pick<ClockedVenue, 'submit'> {
  /** Re-arms the sequencer's timer for the engine's next deadline at the new speed. */
  rearmTimers(): void;
}

/** What one change of speed did. */
export interface SpeedChange {
  readonly from: number;
  readonly to: number;
  /** The venue time at the change (ms), stamped on the journaled FireTimers or earlier. */
  readonly time: number;
}

export class SpeedClock {
  #speed: number;
  /** Venue time and wall elapsed time (monotonic) at the last change of speed. */
  #venueAt: number;
  #wallAt: number;
  #last: number;
  readonly #elapsed: () => number;
  #changing: Promise<unknown> = Promise.resolve();

  /**
   * A clock at `start` (ms) running `speed` times real time. `elapsed` is a monotonic wall
   * clock in ms (default performance.now), injectable for tests.
   */
  constructor(start: number, speed: number, elapsed: () => number = () => performance.now()) {
    if (!(speed >= MIN_CLOCK_SPEED && speed <= MAX_CLOCK_SPEED)) {
      throw new RangeError(`a clock speed is ${MIN_CLOCK_SPEED} to ${MAX_CLOCK_SPEED}, not ${speed}`);
    }
    this.#speed = speed;
    this.#elapsed = elapsed;
    this.#venueAt = start;
    this.#wallAt = elapsed();
    this.#last = start;
  }

  get speed(): number {
    return this.#speed;
  }

  /** The venue time (ms, whole, never decreasing), for the sequencer and every reader of venue time. */
  readonly now = (): number => {
    const t = Math.floor(this.#venueAt + (this.#elapsed() - this.#wallAt) * this.#speed);
    if (t > this.#last) this.#last = t;
    return this.#last;
  };

  /** The wall time (ms) that `venueMs` of venue time takes at the current speed: a timer's delay. */
  readonly wallDelay = (venueMs: number): number => Math.ceil(venueMs / this.#speed);

  /**
   * Changes the speed from now on (RangeError for one outside MIN..MAX, changing nothing). Journals
   * a FireTimers at the venue time of the change and re-arms the timers. Changes run one at a time.
   */
  setSpeed(speed: number, venue: SpeedClockedVenue): Promise<SpeedChange> {
    if (!(speed >= MIN_CLOCK_SPEED && speed <= MAX_CLOCK_SPEED)) {
      return Promise.reject(
        new RangeError(`a clock speed is ${MIN_CLOCK_SPEED} to ${MAX_CLOCK_SPEED}, not ${speed}`),
      );
    }
    const run = this.#changing.then(async () => {
      const from = this.#speed;
      const time = this.now();
      this.#venueAt = time;
      this.#wallAt = this.#elapsed();
      this.#speed = speed;
      while ((await venue.submit({ type: 'FireTimers' })).result === 'BUSY') {
        await new Promise((resolve) => setTimeout(resolve, BUSY_RETRY_MS));
      }
      venue.rearmTimers();
      return { from, to: speed, time };
    });
    this.#changing = run.catch(() => undefined);
    return run;
  }
}
