/**
 * @module rolling-window — one market's 24-hour trade statistics (open, high, low, volume,
 * turnover) kept in 1440 per-minute buckets, updated per trade in O(1) and re-scanned at most once
 * per minute.
 */
import type { CoinUnits, Lots, PriceTicks } from '../../domain/money.ts';

export const MINUTE_MS = 60_000;
/** The window is the current minute and the 1439 before it: 24 hours of minute buckets. */
export const WINDOW_MINUTES = 1440;

interface MinuteBucket {
  minute: number;
  open: PriceTicks;
  high: PriceTicks;
  low: PriceTicks;
  close: PriceTicks;
  volume: Lots;
  /** Σ price × amount in quote coin units (exact for live trades, estimated for seeded minutes). */
  value: CoinUnits;
}

/** Statistics over the window. `open`/`high`/`low` are 0 and `empty` is true when no trade fell in it. */
export interface WindowStats {
  readonly empty: boolean;
  readonly open: PriceTicks;
  readonly high: PriceTicks;
  readonly low: PriceTicks;
  readonly volume: Lots;
  /** A bigint: a busy market's 24 h turnover can pass 2^53 quote units. */
  readonly value: bigint;
}

interface MutableStats {
  empty: boolean;
  open: PriceTicks;
  high: PriceTicks;
  low: PriceTicks;
  volume: Lots;
  value: bigint;
}

const minuteOf = (time: number): number => Math.floor(time / MINUTE_MS);

/**
 * The window's buckets live in a ring indexed by minute mod 1440; a slot holding an older minute
 * is stale and is reset when a newer minute lands on it. Trades must arrive in non-decreasing
 * time order (the sequencer stamps them so); one older than a slot's minute is ignored.
 */
export class RollingWindow {
  readonly #slots: (MinuteBucket | undefined)[] = new Array<MinuteBucket | undefined>(WINDOW_MINUTES);
  /** The minute the statistics were computed for (−1: recompute on the next read). */
  #statsMinute = -1;
  readonly #stats: MutableStats = { empty: true, open: 0, high: 0, low: 0, volume: 0, value: 0n };

  /** Records one trade. */
  add(time: number, price: PriceTicks, amount: Lots, value: CoinUnits): void {
    this.addBucket(time, price, price, price, price, amount, value);
  }

  /**
   * Merges a bucket (a whole minute's OHLCV, e.g. a 1min kline read at start-up) into the minute
   * holding `time`. Buckets of one minute must be added in time order.
   */
  addBucket(
    time: number,
    open: PriceTicks,
    high: PriceTicks,
    low: PriceTicks,
    close: PriceTicks,
    volume: Lots,
    value: CoinUnits,
  ): void {
    const minute = minuteOf(time);
    const index = minute % WINDOW_MINUTES;
    const slot = this.#slots[index];
    if (slot === undefined || slot.minute < minute) {
      this.#slots[index] = { minute, open, high, low, close, volume, value };
    } else if (slot.minute === minute) {
      if (high > slot.high) slot.high = high;
      if (low < slot.low) slot.low = low;
      slot.close = close;
      slot.volume += volume;
      slot.value += value;
    } else {
      return; // older than the data already held: outside the window
    }
    // Keep the statistics current without a scan when the bucket falls inside their window.
    const s = this.#stats;
    const at = this.#statsMinute;
    if (at === -1) return;
    if (minute > at || minute <= at - WINDOW_MINUTES) {
      this.#statsMinute = -1;
      return;
    }
    if (s.empty) {
      s.empty = false;
      s.open = open;
      s.high = high;
      s.low = low;
    } else {
      if (high > s.high) s.high = high;
      if (low < s.low) s.low = low;
    }
    s.volume += volume;
    s.value += BigInt(value);
  }

  /** The statistics of the 24 hours ending in the minute of `now`. */
  stats(now: number): WindowStats {
    const minute = minuteOf(now);
    if (minute !== this.#statsMinute) this.#scan(minute);
    return this.#stats;
  }

  #scan(minute: number): void {
    const s = this.#stats;
    s.empty = true;
    s.open = 0;
    s.high = 0;
    s.low = 0;
    s.volume = 0;
    s.value = 0n;
    let openMinute = Infinity;
    const oldest = minute - WINDOW_MINUTES;
    for (const slot of this.#slots) {
      if (slot === undefined || slot.minute <= oldest || slot.minute > minute) continue;
      if (s.empty) {
        s.empty = false;
        s.high = slot.high;
        s.low = slot.low;
      } else {
        if (slot.high > s.high) s.high = slot.high;
        if (slot.low < s.low) s.low = slot.low;
      }
      if (slot.minute < openMinute) {
        openMinute = slot.minute;
        s.open = slot.open;
      }
      s.volume += slot.volume;
      s.value += BigInt(slot.value);
    }
    this.#statsMinute = minute;
  }
}
