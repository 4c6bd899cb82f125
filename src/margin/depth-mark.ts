/**
 * @module depth-mark — issue 29's mark price of one market: the price margin accounts are valued at,
 * which a lone small trade or a brief thin-book print cannot move and which follows a real move
 * as fast as real volume trades through the book. Fed only with the market's trades in execution
 * order (price and lots, from journaled commands), so a replay computes the same marks, exactly.
 *
 * ## The rule (issue 29)
 * The mark is **T, the volume-weighted average price of the newest trades that hold at least the
 * market's depth D of value** (`depth`, in tick·lots: price ticks × lots, the quote value up to
 * the market's constant), rounded down to a tick, where each trade counts:
 * - **at its price clamped to T ± `stepBp`** (T the mark just before it: the low edge
 *   ⌈T × (BP − step) ÷ BP⌉, the high ⌊T × (BP + step) ÷ BP⌋) — an outlier counts at the edge;
 * - **with its lots, but never more than a full window's worth** (lots ≤ ⌈D ÷ clamped price⌉),
 *   and a trade below the low edge with the value it traded: ⌊lots × price ÷ edge⌋ lots — so a
 *   sale at a give-away price between two accomplices, which moves next to no value, moves the
 *   mark by next to nothing.
 * After each trade the oldest value leaves while the newer still holds D: whole trades, then
 * whole lots of the oldest left, so the window holds D up to less than one lot. When more than
 * `maxSlots` trades are held, the two oldest merge into one (their lots, at the floor of their
 * average price), so no number of tiny trades flushes the window.
 *
 * A market starts (`seed`) from its last trade price counted as a full window (⌈D ÷ price⌉ lots
 * at that price): until D of value has traded, the old price keeps its weight.
 *
 * What it costs to move: a trade worth v at the mark moves it by at most about step × v ÷ D (its
 * price counts at most `stepBp` away, with its share of the window), and trades worth V ≤ D in
 * all, at any prices and in any order, move it by at most 2 × step × V ÷ D, and a tick
 * (`depth-mark.test.ts` checks that bound with fast-check). A real move is followed as value trades
 * at the new level: a move of less than one step per window's worth of trading at once, a 10 % gap
 * after about eleven windows' worth (11 trades of 0.4 btc, some 120,000 USDT, with D = 10,000 USDT
 * and a 1 % step; `depth-mark.test.ts`).
 *
 * Why no book and no clock: a quote can be shown and withdrawn within one command, so any weight
 * given to the book lets a liquidation be triggered by an order no one could trade against; and a
 * time window hands a lone trade after a quiet spell the whole weight. Value traded is the one
 * thing a manipulator must pay for (fees on a wash, the spread on a sweep).
 *
 * A market without any trade yet has no mark (`undefined`): nothing is valued against it.
 *
 * ## In the engine
 * The venue setting `markRule: 'depth'` selects this rule (src/engine/risk.ts): settlement hands it
 * each trade's lots beside its price, the engine seeds it where it starts a mark, and the deferral
 * of quiet steps checks `within` (the contract of mark-price.ts's). The default venue sets it; a
 * genesis without the setting (written before issue 29) keeps mark-price.ts's median, so its
 * journal replays as it ran (docs/margin.md).
 */
import { BP } from './settings.ts';

export interface DepthMarkSettings {
  /** The value the window holds at least, in tick·lots (price ticks × lots); at least 1. */
  readonly depth: number;
  /** How far from the mark a trade counts, in BP of the mark; a trade beyond counts at the edge. */
  readonly stepBp: number;
  /** The most slots kept: beyond, the two oldest merge. */
  readonly maxSlots: number;
}

/** How far from the mark a trade counts: 1 %. */
export const DEFAULT_MARK_STEP_BP = 100;
/** The window's value, as a multiple of the market's minimum order value (5 USDT → 10,000 USDT). */
export const MARK_DEPTH_MIN_SIZES = 2_000;

/** The default settings with the market's depth in tick·lots. */
export function depthMarkSettings(depth: number): DepthMarkSettings {
  return { depth: Math.max(1, Math.ceil(depth)), stepBp: DEFAULT_MARK_STEP_BP, maxSlots: 256 };
}

/**
 * The window's value in tick·lots of a market whose minimum order value is `minSize` quote units
 * and whose tick·lot is worth `unitsPerTickLot` quote units: ⌈MARK_DEPTH_MIN_SIZES × minSize ÷
 * unitsPerTickLot⌉, at least 1 (a market without a minimum order value: every trade is a window).
 */
export function depthTickLots(minSize: number, unitsPerTickLot: number): number {
  if (!(unitsPerTickLot > 0) || !(minSize > 0)) return 1;
  const units = BigInt(MARK_DEPTH_MIN_SIZES) * BigInt(minSize);
  const per = BigInt(unitsPerTickLot);
  const d = (units + per - 1n) / per;
  return Number(d < 1n ? 1n : d > 2n ** 48n ? 2n ** 48n : d);
}

export interface DepthMarkSnapshot {
  /** The last trade price taken (as traded, not clamped). */
  readonly last: number | undefined;
  /** [price in ticks, lots] of the window's slots, oldest first. */
  readonly slots?: readonly (readonly [number, number])[];
  /** mark-price.ts's [timeMs, price] window (before issue 29): restored as a seed at `mark`. */
  readonly trades?: readonly (readonly [number, number])[];
  readonly mark: number | undefined;
}

/** The mark price of one market. See the module comment for the rule. */
export class DepthMark {
  readonly #s: DepthMarkSettings;
  #last: number | undefined;
  /** The window: a ring of [price, lots] slots, `#count` of them from `#head` (oldest). */
  readonly #prices: Float64Array;
  readonly #lots: Float64Array;
  #head = 0;
  #count = 0;
  #sumLots = 0;
  /** Σ price × lots of the slots, in tick·lots: exact (kept below 2^53). */
  #sumValue = 0;
  #mark: number | undefined;
  /** The clamp around the mark `#bandOf`, kept: it changes only with the mark. */
  #bandOf = -1;
  #lo = 0;
  #hi = 0;

  constructor(settings: DepthMarkSettings = depthMarkSettings(1), snapshot?: DepthMarkSnapshot) {
    if (!(Number.isSafeInteger(settings.depth) && settings.depth >= 1))
      throw new Error(`mark price: bad depth ${settings.depth}`);
    this.#s = settings;
    const cap = Math.max(2, settings.maxSlots, snapshot?.slots?.length ?? 0);
    this.#prices = new Float64Array(cap);
    this.#lots = new Float64Array(cap);
    if (snapshot !== undefined) {
      this.#last = snapshot.last;
      if (snapshot.slots !== undefined) {
        for (const [price, lots] of snapshot.slots) this.#push(price, lots);
        this.#mark = this.#count === 0 ? undefined : Math.floor(this.#sumValue / this.#sumLots);
      } else if (snapshot.mark !== undefined) this.#seedAt(snapshot.mark);
    }
  }

  get settings(): DepthMarkSettings {
    return this.#s;
  }

  /** The mark, `undefined` before the market's first trade. */
  get mark(): number | undefined {
    return this.#mark;
  }

  /**
   * The mark again, under mark-price.ts's name for the window's average: the engine's lazy step
   * tests that every mark a step can make lies between `last` and `average` (here it is the mark,
   * which lies between them trivially).
   */
  get average(): number | undefined {
    return this.#mark;
  }

  /** The last trade price taken, as traded; `undefined` before the first. */
  get last(): number | undefined {
    return this.#last;
  }

  /** The window's value in tick·lots: the depth, up to less than one lot of its oldest slot. */
  get value(): number {
    return this.#sumValue;
  }

  /** Starts the mark at `price`: one slot of ⌈D ÷ price⌉ lots at that price (a full window). */
  seed(price: number): void {
    if (!Number.isSafeInteger(price) || price <= 0) throw new Error(`mark price: bad seed ${price}`);
    this.#head = 0;
    this.#count = 0;
    this.#sumLots = 0;
    this.#sumValue = 0;
    this.#last = price;
    this.#seedAt(price);
  }

  #seedAt(price: number): void {
    this.#push(price, Math.ceil(this.#s.depth / price));
    this.#mark = price;
  }

  /**
   * Takes the first `count` trades (`prices` in ticks, `lots`), in execution order; returns whether
   * the mark changed. The first trade of a market without a mark seeds it (a full window).
   */
  advance(prices: readonly number[], lots: readonly number[], count: number): boolean {
    if (count === 0) return false;
    const before = this.#mark;
    for (let i = 0; i < count; i++) this.take(prices[i] as number, lots[i] as number);
    return this.#mark !== before;
  }

  /** Takes one trade; returns the new mark. */
  take(price: number, lots: number): number {
    if (!Number.isSafeInteger(price) || price <= 0) throw new Error(`mark price: bad trade price ${price}`);
    if (!Number.isSafeInteger(lots) || lots <= 0) throw new Error(`mark price: bad trade lots ${lots}`);
    this.#last = price;
    const mark = this.#mark;
    if (mark === undefined) {
      this.#seedAt(price);
      return price;
    }
    if (mark !== this.#bandOf) this.#band(mark);
    const p = price < this.#lo ? this.#lo : price > this.#hi ? this.#hi : price;
    const depth = this.#s.depth;
    // A trade below the edge counts with the value it traded: ⌊lots × price ÷ edge⌋ lots (a sale
    // at a give-away price between two accomplices moves value, and so the mark, by next to nothing).
    const counted = price >= p ? lots : lotsAt(lots, price, p);
    const q = Math.min(counted, Math.ceil(depth / p));
    if (q === 0) return mark;
    if (this.#count === this.#prices.length) this.#mergeOldest();
    this.#push(p, q);
    this.#trim();
    const next = Math.floor(this.#sumValue / this.#sumLots);
    this.#mark = next;
    return next;
  }

  /**
   * The oldest value leaves while the rest holds the depth: whole slots, then whole lots of the
   * oldest left, so the window holds D up to less than one lot of its oldest slot.
   */
  #trim(): void {
    const depth = this.#s.depth;
    while (this.#count > 1) {
      const h = this.#head;
      const p = this.#prices[h] as number;
      const l = this.#lots[h] as number;
      const excess = this.#sumValue - depth;
      if (excess >= p * l) {
        this.#drop();
        continue;
      }
      const k = Math.floor(excess / p);
      if (k > 0) {
        this.#lots[h] = l - k;
        this.#sumLots -= k;
        this.#sumValue -= k * p;
      }
      return;
    }
  }

  /**
   * Whether the mark and every slot's price lie strictly between `lo` and `hi`. Then every mark that
   * more trades strictly between the two make does too: a trade counts at a price between its own
   * and the mark, a merge's price lies between its two, and the mark is the floor of an average of
   * integers above `lo`.
   */
  within(lo: number, hi: number): boolean {
    const mark = this.#mark;
    if (mark === undefined || !(lo < mark && mark < hi)) return false;
    const cap = this.#prices.length;
    for (let k = 0, i = this.#head; k < this.#count; k++) {
      const p = this.#prices[i] as number;
      if (!(lo < p && p < hi)) return false;
      if (++i === cap) i = 0;
    }
    return true;
  }

  #push(price: number, lots: number): void {
    const cap = this.#prices.length;
    let i = this.#head + this.#count;
    if (i >= cap) i -= cap;
    this.#prices[i] = price;
    this.#lots[i] = lots;
    this.#count++;
    this.#sumLots += lots;
    this.#sumValue += price * lots;
    if (!Number.isSafeInteger(this.#sumValue)) throw new Error('mark price: window value beyond 2^53');
  }

  #drop(): void {
    const h = this.#head;
    const l = this.#lots[h] as number;
    this.#sumLots -= l;
    this.#sumValue -= (this.#prices[h] as number) * l;
    if (++this.#head === this.#prices.length) this.#head = 0;
    this.#count--;
  }

  /**
   * The two oldest slots become one in the second oldest's place: their lots, at the floor of
   * their average price (between the two; the window's value drops by less than one tick·lot per
   * lot).
   */
  #mergeOldest(): void {
    const h = this.#head;
    const n = h + 1 === this.#prices.length ? 0 : h + 1;
    const lh = this.#lots[h] as number;
    const ln = this.#lots[n] as number;
    const vh = (this.#prices[h] as number) * lh;
    const vn = (this.#prices[n] as number) * ln;
    const p = Math.floor((vh + vn) / (lh + ln));
    this.#prices[n] = p;
    this.#lots[n] = lh + ln;
    this.#sumValue += p * (lh + ln) - vh - vn;
    this.#head = n;
    this.#count--;
  }

  /** lo = ⌈mark × (BP − step) ÷ BP⌉ (at least 1), hi = ⌊mark × (BP + step) ÷ BP⌋, exact. */
  #band(mark: number): void {
    const up = BP + this.#s.stepBp;
    const down = Math.max(0, BP - this.#s.stepBp);
    if (mark * up <= 2 ** 40) {
      // Small products: exact in doubles, and the quotient (< 2^40 ÷ BP) far from rounding to the
      // next integer (the error of a double division is below 2^-53 of it).
      this.#lo = Math.max(1, Math.floor((mark * down + BP - 1) / BP));
      this.#hi = Math.floor((mark * up) / BP);
    } else {
      const a = BigInt(mark);
      this.#lo = Math.max(1, Number((a * BigInt(down) + BigInt(BP - 1)) / BigInt(BP)));
      this.#hi = Number((a * BigInt(up)) / BigInt(BP));
    }
    this.#bandOf = mark;
  }

  snapshot(): DepthMarkSnapshot {
    const slots: (readonly [number, number])[] = [];
    const cap = this.#prices.length;
    for (let k = 0; k < this.#count; k++) {
      const i = (this.#head + k) % cap;
      slots.push([this.#prices[i] as number, this.#lots[i] as number]);
    }
    return { last: this.#last, slots, mark: this.#mark };
  }
}

/** ⌊lots × price ÷ edge⌋, exact (bigint when the product leaves the doubles' exact range). */
function lotsAt(lots: number, price: number, edge: number): number {
  const v = lots * price;
  if (v <= Number.MAX_SAFE_INTEGER) return Math.floor(v / edge);
  return Number((BigInt(lots) * BigInt(price)) / BigInt(edge));
}
