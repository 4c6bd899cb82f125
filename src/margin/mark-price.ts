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
  #trades: [number, number][] = [];
  #sum = 0;
  #mark: number | undefined;

  constructor(settings: MarkPriceSettings = DEFAULT_MARK_PRICE_SETTINGS, snapshot?: MarkPriceSnapshot) {
    this.#s = settings;
    if (snapshot !== undefined) {
      this.#last = snapshot.last;
      this.#trades = snapshot.trades.map(([t, p]) => [t, p]);
      this.#sum = this.#trades.reduce((s, [, p]) => s + p, 0);
      this.#mark = snapshot.mark;
    }
  }

  /** The mark after the last step, `undefined` before the market's first trade. */
  get mark(): number | undefined {
    return this.#mark;
  }

  /** Takes one step and returns the new mark. Steps come in time order (not checked twice). */
  step(st: MarketStep): number | undefined {
    for (const p of st.trades) {
      if (!Number.isSafeInteger(p) || p <= 0) throw new Error(`mark price: bad trade price ${p}`);
      this.#last = p;
      this.#trades.push([st.timeMs, p]);
      this.#sum += p;
    }
    const from = st.timeMs - this.#s.windowMs;
    let drop = 0;
    while (
      drop < this.#trades.length &&
      ((this.#trades[drop] as [number, number])[0] <= from || this.#trades.length - drop > this.#s.maxTrades)
    ) {
      this.#sum -= (this.#trades[drop] as [number, number])[1];
      drop++;
    }
    if (drop > 0) this.#trades.splice(0, drop);
    const last = this.#last;
    if (last === undefined) return (this.#mark = undefined);
    const avg = this.#trades.length === 0 ? last : Math.floor(this.#sum / this.#trades.length);
    let mid = avg;
    if (st.bestBid !== undefined && st.bestAsk !== undefined) {
      // bigint: avg × (BP + band) may leave the safe range.
      const a = BigInt(avg);
      const lo = Number((a * BigInt(BP - this.#s.bandBp) + BigInt(BP - 1)) / BigInt(BP));
      const hi = Number((a * BigInt(BP + this.#s.bandBp)) / BigInt(BP));
      mid = Math.min(hi, Math.max(lo, Math.floor((st.bestBid + st.bestAsk) / 2)));
    }
    return (this.#mark = median3(last, avg, mid));
  }

  snapshot(): MarkPriceSnapshot {
    return { last: this.#last, trades: this.#trades.map(([t, p]) => [t, p] as const), mark: this.#mark };
  }
}

/** The median of three integers. */
export function median3(a: number, b: number, c: number): number {
  return Math.max(Math.min(a, b), Math.min(Math.max(a, b), c));
}
