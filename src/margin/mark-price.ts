/**
 * @module mark-price — the mark price of one market: the price margin accounts are valued at,
 * which a thin book or a single trade cannot push around. Fed only with what the engine sees in
 * journaled commands (each step's trades with their times, the best bid and ask after the step),
 * so a replay of the journal computes the same marks.
 *
 * ## The rule
 * After every engine step that touches the market (a trade, a book change, a timer tick):
 * - **L**, the last trade price;
 * - **A**, the moving average of the trades of the last `windowMs` (at most `maxTrades` of them,
 *   the newest kept): Σ prices ÷ count, rounded down to a tick; with no trade in the window, L;
 * - **M**, the book's mid ⌊(bid + ask) ÷ 2⌋ clamped to A ± `bandBp` (A × (BP − band) ÷ BP rounded
 *   up, A × (BP + band) ÷ BP rounded down); with a one-sided or empty book, A;
 * - **mark = median(L, A, M)**.
 *
 * Why: one trade moves L only, a sweep of a thin book moves L and, by at most 1 ÷ count of the
 * window, A; a mid pushed by a quote far away is clamped into A's band. Moving the median takes
 * two of the three, i.e. trading at the new price for a good part of the window while the book
 * agrees. The mark still follows a real move within a window (5 minutes by default).
 *
 * A market without any trade yet has no mark (`undefined`): nothing is valued against it.
 */
import { BP } from './settings.ts';
import type { TimeMs } from './movement.ts';

export interface MarkPriceSettings {
  /** How far back the moving average reaches, ms. */
  readonly windowMs: number;
  /** The most trades the average keeps (the newest). */
  readonly maxTrades: number;
  /** How far the mid may stand from the average, in BP of it. */
  readonly bandBp: number;
}

export const DEFAULT_MARK_PRICE_SETTINGS: MarkPriceSettings = Object.freeze({
  windowMs: 5 * 60_000,
  maxTrades: 64,
  bandBp: 200,
});

/** One engine step as the mark price sees it. Prices in ticks of the market. */
export interface MarketStep {
  readonly timeMs: TimeMs;
  /** The step's trades in execution order (prices in ticks). */
  readonly trades: readonly number[];
  /** Best bid and ask after the step, `undefined` for an empty side. */
  readonly bestBid: number | undefined;
  readonly bestAsk: number | undefined;
}

export interface MarkPriceSnapshot {
  readonly last: number | undefined;
  /** [timeMs, priceTicks] of the trades in the window, oldest first. */
  readonly trades: readonly (readonly [number, number])[];
  readonly mark: number | undefined;
}

/** The mark price of one market. See the module comment for the rule. */
export class MarkPrice {
  readonly #s: MarkPriceSettings;
  #last: number | undefined;
  /** The window: a ring of `maxTrades` [time, price] slots, `#count` of them from `#head` (oldest). */
  readonly #times: Float64Array;
  readonly #prices: Float64Array;
  #head = 0;
  #count = 0;
  #sum = 0;
  #mark: number | undefined;
  /** The band around the average `#bandOf`, kept: the average changes only with trades. */
  #bandOf = -1;
  /** The book of the last step (-1: none yet), for the shortcut at the top of `step`. */
  #bid: number | undefined = -1;
  #ask: number | undefined = -1;
  #lo = 0;
  #hi = 0;
  /** A step taken by `advance` whose mark is not computed yet (see `advance`). */
  #pending = false;

  constructor(settings: MarkPriceSettings = DEFAULT_MARK_PRICE_SETTINGS, snapshot?: MarkPriceSnapshot) {
    this.#s = settings;
    const cap = Math.max(1, settings.maxTrades, snapshot?.trades.length ?? 0);
    this.#times = new Float64Array(cap);
    this.#prices = new Float64Array(cap);
    if (snapshot !== undefined) {
      this.#last = snapshot.last;
      for (const [t, p] of snapshot.trades) this.#push(t, p);
      this.#mark = snapshot.mark;
    }
  }

  /** The mark after the last step, `undefined` before the market's first trade. */
  get mark(): number | undefined {
    if (this.#pending) this.#compute();
    return this.#mark;
  }

  /** The last trade price (L), `undefined` before the first. */
  get last(): number | undefined {
    return this.#last;
  }

  /** The window's average (A) after the last step; L with no trade in the window. */
  get average(): number | undefined {
    return this.#count === 0 ? this.#last : Math.floor(this.#sum / this.#count);
  }

  /** Takes one step and returns the new mark. Steps come in time order (not checked twice). */
  step(st: MarketStep): number | undefined {
    return this.stepWith(st.timeMs, st.trades, st.trades.length, st.bestBid, st.bestAsk);
  }

  /**
   * `step` with the step's parts as arguments (the engine's hot path builds no object): the first
   * `tradeCount` of `trades`.
   */
  stepWith(
    timeMs: TimeMs,
    trades: readonly number[],
    tradeCount: number,
    bestBid: number | undefined,
    bestAsk: number | undefined,
  ): number | undefined {
    this.advance(timeMs, trades, undefined, tradeCount, bestBid, bestAsk);
    return this.mark;
  }

  /**
   * Takes one step like `stepWith` but leaves the mark to be computed when it is read (`mark`):
   * the window (L and A) is kept exactly, and the book's best bid and ask are kept for the mark.
   * The median of three lies between any two of them, so the mark after this step lies between L
   * and A (`last`, `average`): the engine skips the rest of a step while no line lies in between.
   * Returns false when the step changed nothing (the same mark). `times`: each trade's own time
   * (trades of earlier commands whose steps were deferred: `StepTrades`), else all at `timeMs`.
   */
  advance(
    timeMs: TimeMs,
    trades: readonly number[],
    times: readonly number[] | undefined,
    tradeCount: number,
    bestBid: number | undefined,
    bestAsk: number | undefined,
  ): boolean {
    const from = timeMs - this.#s.windowMs;
    // Same book, no trade, nothing leaving the window: the same mark (a memo, not state: the
    // first step after a restore always computes).
    if (
      tradeCount === 0 &&
      bestBid === this.#bid &&
      bestAsk === this.#ask &&
      (this.#count === 0 || (this.#times[this.#head] as number) > from)
    )
      return false;
    this.#bid = bestBid;
    this.#ask = bestAsk;
    for (let i = 0; i < tradeCount; i++) {
      const p = trades[i] as number;
      if (!Number.isSafeInteger(p) || p <= 0) throw new Error(`mark price: bad trade price ${p}`);
      this.#last = p;
      this.#push(times === undefined ? timeMs : (times[i] as number), p);
    }
    // The newest `maxTrades` are kept by the ring; trades of `windowMs` ago and older leave.
    while (this.#count > this.#s.maxTrades) this.#drop();
    while (this.#count > 0 && (this.#times[this.#head] as number) <= from) this.#drop();
    this.#pending = true;
    return true;
  }

  /**
   * Whether L and every trade in the window lie strictly between `lo` and `hi`: then so does A
   * (an average of some of them, or L when the window is empty) and so does every mark that more
   * trades strictly between the two and any book can make (the median lies between L and A).
   */
  within(lo: number, hi: number): boolean {
    const last = this.#last;
    if (last === undefined || !(lo < last && last < hi)) return false;
    const cap = this.#times.length;
    for (let k = 0, i = this.#head; k < this.#count; k++) {
      const p = this.#prices[i] as number;
      if (!(lo < p && p < hi)) return false;
      if (++i === cap) i = 0;
    }
    return true;
  }

  /** The mark of the last step: median(L, A, M) with the book that step saw. */
  #compute(): void {
    this.#pending = false;
    const last = this.#last;
    const avg = this.average;
    if (last === undefined || avg === undefined) {
      this.#mark = undefined;
      return;
    }
    const bestBid = this.#bid;
    const bestAsk = this.#ask;
    let mid = avg;
    if (bestBid !== undefined && bestAsk !== undefined) {
      if (avg !== this.#bandOf) this.#band(avg);
      mid = Math.min(this.#hi, Math.max(this.#lo, Math.floor((bestBid + bestAsk) / 2)));
    }
    this.#mark = median3(last, avg, mid);
  }

  /** Appends a trade; a full ring overwrites its oldest. */
  #push(t: number, p: number): void {
    const cap = this.#times.length;
    if (this.#count === cap) this.#drop();
    let i = this.#head + this.#count;
    if (i >= cap) i -= cap;
    this.#times[i] = t;
    this.#prices[i] = p;
    this.#count++;
    this.#sum += p;
  }

  #drop(): void {
    this.#sum -= this.#prices[this.#head] as number;
    if (++this.#head === this.#times.length) this.#head = 0;
    this.#count--;
  }

  /** lo = ⌈avg × (BP − band) ÷ BP⌉, hi = ⌊avg × (BP + band) ÷ BP⌋, exact. */
  #band(avg: number): void {
    const up = BP + this.#s.bandBp;
    const down = BP - this.#s.bandBp;
    if (avg * up <= 2 ** 40) {
      // Small products: exact in doubles, and the quotient (< 2^40 ÷ BP) far from rounding to the
      // next integer (the error of a double division is below 2^-53 of it).
      this.#lo = Math.floor((avg * down + BP - 1) / BP);
      this.#hi = Math.floor((avg * up) / BP);
    } else {
      const a = BigInt(avg);
      this.#lo = Number((a * BigInt(down) + BigInt(BP - 1)) / BigInt(BP));
      this.#hi = Number((a * BigInt(up)) / BigInt(BP));
    }
    this.#bandOf = avg;
  }

  snapshot(): MarkPriceSnapshot {
    const trades: (readonly [number, number])[] = [];
    const cap = this.#times.length;
    for (let k = 0; k < this.#count; k++) {
      const i = (this.#head + k) % cap;
      trades.push([this.#times[i] as number, this.#prices[i] as number]);
    }
    return { last: this.#last, trades, mark: this.mark };
  }
}

/**
 * The trades of one market since its last mark step, collected by settlement for the mark price:
 * price, lots and time (the steps of several commands may be deferred: src/engine/risk.ts), in reused
 * arrays with a count, so that collecting a trade allocates nothing. `lo` and `hi` are the quiet
 * interval the risk step last checked the window against: a trade not strictly inside sets
 * `outside`, and the next step is taken in full.
 */
export class StepTrades {
  readonly prices: number[] = [];
  /** Each trade's lots (depth-mark.ts weighs by them). */
  readonly lots: number[] = [];
  readonly times: number[] = [];
  count = 0;
  lo = 0;
  hi = 0;
  outside = false;

  add(price: number, lots: number, time: number): void {
    const k = this.count++;
    this.prices[k] = price;
    this.lots[k] = lots;
    this.times[k] = time;
    if (!(this.lo < price && price < this.hi)) this.outside = true;
  }

  /** Whether every collected trade lies strictly between `lo` and `hi`. */
  within(lo: number, hi: number): boolean {
    for (let k = 0; k < this.count; k++) {
      const p = this.prices[k] as number;
      if (!(lo < p && p < hi)) return false;
    }
    return true;
  }
}

/** The median of three integers. */
export function median3(a: number, b: number, c: number): number {
  return Math.max(Math.min(a, b), Math.min(Math.max(a, b), c));
}
