/**
 * @module interval-limiter — a tiny in-memory limiter allowing one request per key (an IP) per
 * interval, for the candlestick endpoint's "1 request per second" limit.
 */

/** How often (ms) keys whose interval has passed are forgotten, bounding memory. */
const SWEEP_EVERY_MS = 10_000;

/**
 * One request per `intervalMs` per key. A refused request does not move the key's window, so a
 * client retrying too early is told the same retry time again. Memory holds the keys seen in the
 * last ~SWEEP_EVERY_MS.
 */
export class IntervalLimiter {
  readonly #intervalMs: number;
  readonly #last = new Map<string, number>();
  #sweptAt = 0;

  constructor(intervalMs: number) {
    this.#intervalMs = intervalMs;
  }

  /** 0 when `key` may go ahead at `now` (recorded), else the ms to wait until it may. */
  take(key: string, now: number): number {
    if (now - this.#sweptAt >= SWEEP_EVERY_MS) this.#sweep(now);
    const last = this.#last.get(key);
    if (last !== undefined) {
      const elapsed = now - last;
      if (elapsed >= 0 && elapsed < this.#intervalMs) return this.#intervalMs - elapsed;
    }
    this.#last.set(key, now);
    return 0;
  }

  /** Keys currently remembered (for tests). */
  get size(): number {
    return this.#last.size;
  }

  #sweep(now: number): void {
    this.#sweptAt = now;
    for (const [key, last] of this.#last) if (now - last >= this.#intervalMs) this.#last.delete(key);
  }
}
