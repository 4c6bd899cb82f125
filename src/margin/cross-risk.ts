/**
 * @module cross-risk — the risk side of cross margin accounts (issue 15): the bound that keeps a
 * price move from re-valuing every cross account (`CrossBound`), the notice flag's rule on an
 * exact risk rate (`crossState`), and the order a cross liquidation sends next (`crossNextOrder`).
 * Pure and deterministic; the engine's glue is src/engine/risk-cross.ts.
 *
 * ## Why a bound, not an unwind price
 * A cross account's risk rate depends on the marks of every market on the valuation paths of the
 * coins it holds or owes (`valuation-path.ts`), so it has no single price at which it crosses a
 * line. A coin's price is a product of at most two legs, so if the marks of the account's n
 * markets moved by Δⱼ = |ln(mark′ⱼ ÷ markⱼ)| since it was valued, with Σ Δⱼ ≤ Δ, each coin's price
 * moved by a factor within [e^−Δ, e^Δ], its assets by at least e^−Δ, its debt by at most e^Δ, and
 * its risk rate R by a factor within [e^−2Δ, e^2Δ]. So the account cannot have reached a line L
 * below R before Δ ≥ ln(R ÷ L) ÷ 2 (nor one above R before ln(L ÷ R) ÷ 2). `tolerance` gives T,
 * the nearest of its lines' (the notice line 1.13 when unflagged; the liquidation line 1.08 and
 * the flag's clearing line 1.15 when flagged), shrunk by a relative 10⁻⁹ and 10⁻¹² so that the
 * doubles' rounding can only make it re-value earlier. `CrossBound` gives the account, in each of
 * its n markets, the interval mark × e^(±T/n); a move of a market pops only the accounts whose
 * interval it left, and they are re-valued **exactly** (rationals of bigints) and placed again.
 * The bound decides only *which* accounts are re-valued, never a flag or a liquidation, so the
 * outcome is the one an exact re-valuation of every account after every move would give (and a
 * replay from a snapshot, whose bound starts afresh, agrees).
 *
 * ## Cost
 * A move costs O(k log n), k the accounts whose interval it left: those it may have brought to a
 * line. Prices wavering inside the intervals pop nothing (the intervals are around the mark at the
 * account's last valuation, not a running sum of moves). The bound is loose by a factor 2 in the
 * exponent and splits T evenly between the account's markets, which only costs re-valuations.
 *
 * ## Liquidation order (`crossNextOrder`)
 * Debts in name order; for the first coin D still owed beyond what the account holds, the surplus
 * coins S (held beyond what is owed of them) in name order: through the market S/D, a sell of all
 * of S's surplus (as an isolated long); failing that D/S, a buy of D with S's surplus (as an
 * isolated short). When no surplus coin has a market with D, the first surplus coin with a market
 * S/V to the valuation coin V sells for V (which then buys D at the next order). Each order is
 * an isolated liquidation's order on that pair (`Liquidations.nextOrder`: band, lots, rounding).
 */
import type { PriceTicks } from '../domain/money.ts';
import type { CoinPosition, Ratio } from './lines.ts';
import type { LiquidationMarket, LiquidationOrder, Liquidations } from './liquidation.ts';
import { NOTICE_HYSTERESIS_BP } from './liquidation-index.ts';
import type { Units } from './movement.ts';
import { BP, type MarginSettings } from './settings.ts';

/** What an exact risk rate means for a cross account. */
export interface CrossState {
  readonly flagged: boolean;
  readonly liquidate: boolean;
}

/**
 * The notice flag and the liquidation line on an exact risk rate `rate` (undefined: no debt):
 * flagged at or below noticeLine, cleared above noticeLine + hysteresis, liquidated at or below
 * forceRepayLine (as isolated accounts, `liquidation-index.ts`).
 */
export function crossState(rate: Ratio | undefined, wasFlagged: boolean, s: MarginSettings): CrossState {
  if (rate === undefined) return { flagged: false, liquidate: false };
  const atOrBelow = (lineBp: number): boolean => rate.num * BigInt(BP) <= rate.den * BigInt(lineBp);
  const liquidate = atOrBelow(s.forceRepayLineBp);
  const flagged = wasFlagged ? atOrBelow(s.noticeLineBp + NOTICE_HYSTERESIS_BP) : atOrBelow(s.noticeLineBp);
  return { flagged: flagged || liquidate, liquidate };
}

const SCALE = 10n ** 12n;

/**
 * How much drift the account can take before it may reach one of its lines (see the module
 * comment); 0 when it must be re-valued at the next move (no valuation, or on a line).
 */
export function tolerance(rate: Ratio | undefined, flagged: boolean, s: MarginSettings): number {
  if (rate === undefined) return Number.POSITIVE_INFINITY;
  if (rate.den === 0n) return 0;
  const low = Number((rate.num * SCALE) / rate.den) / 1e12;
  return toleranceWithin(low, low + 2e-12, flagged, s);
}

/** Relative error allowed of a risk rate computed in doubles (`fastDecision`). */
const FAST_REL = 1e-10;

/**
 * The state and tolerance from a risk rate computed in doubles (relative error below 10⁻¹⁰, far
 * more than the few roundings of a valuation), or `undefined` when the rate is within 10⁻⁹ of a
 * line or at or below the liquidation line: then the caller values the account exactly. So the
 * decision, when there is one, is the exact rate's.
 */
export function fastDecision(
  rate: number,
  wasFlagged: boolean,
  s: MarginSettings,
): { state: CrossState; tol: number } | undefined {
  const liq = s.forceRepayLineBp / BP;
  const notice = s.noticeLineBp / BP;
  const clear = (s.noticeLineBp + NOTICE_HYSTERESIS_BP) / BP;
  if (!Number.isFinite(rate) || !(rate > liq * (1 + 1e-9))) return undefined;
  for (const L of [notice, clear]) if (Math.abs(rate - L) <= L * 1e-9) return undefined;
  const flagged = wasFlagged ? rate < clear : rate < notice;
  return {
    state: { flagged, liquidate: false },
    tol: toleranceWithin(rate * (1 - FAST_REL), rate * (1 + FAST_REL), flagged, s),
  };
}

/** The tolerance of a rate known to lie within [low, high]. */
function toleranceWithin(low: number, high: number, flagged: boolean, s: MarginSettings): number {
  const ln = (x: number): number => (x > 0 ? Math.log(x) : Number.NEGATIVE_INFINITY);
  const t = flagged
    ? Math.min(ln(low / (s.forceRepayLineBp / BP)), ln((s.noticeLineBp + NOTICE_HYSTERESIS_BP) / BP / high)) /
      2
    : ln(low / (s.noticeLineBp / BP)) / 2;
  const safe = t * (1 - 1e-9) - 1e-12;
  return safe > 0 ? safe : 0;
}

type Entry = [key: number, userId: number, generation: number];

/**
 * An account's interval: its generation, the tolerance placed, and the marks it is around; `live`
 * while it is the account's interval now.
 */
export interface Watch {
  readonly g: number;
  readonly tol: number;
  readonly marks: readonly (readonly [number, number])[];
  live: boolean;
}

/**
 * Where a caller keeps an account's interval, for `CrossBound.set` to find it without a lookup:
 * every `set` that places an interval for the account must pass it.
 */
export interface WatchHolder {
  watch: Watch | undefined;
}

/**
 * The share of an account's tolerance its interval leaves unused, so that a later valuation
 * whose tolerance is a little smaller, or whose marks moved a little, still contains it (`covers`).
 * It only makes the account due a little sooner.
 */
const INTERVAL_SLACK = 1 / 8;

/**
 * Whether the interval `w` lies inside the one tolerance `tol` gives around `marks` (same markets,
 * same order): with n markets, each mark moved by Δ = |ln(mark ÷ w's mark)| since, w's interval
 * e^(±w.tol/n) around the old mark lies inside e^(±tol/n) around the new one when w.tol/n + Δ ≤
 * tol/n. Then every mark inside w's interval is one at which the new valuation reaches no line
 * either, and keeping w is exact (a narrower interval only re-values sooner). Margin 10⁻⁹ for the
 * logarithms' rounding.
 */
function covers(w: Watch, tol: number, marks: readonly (readonly [number, number])[]): boolean {
  const n = marks.length;
  if (n !== w.marks.length) return false;
  // No market: never due, either way. An infinite interval is inside only another one.
  if (n === 0) return true;
  if (w.tol === Number.POSITIVE_INFINITY) return tol === Number.POSITIVE_INFINITY;
  if (!(tol >= w.tol)) return false;
  const room = (tol - w.tol) / n;
  for (let k = 0; k < n; k++) {
    const [i, mark] = marks[k] as readonly [number, number];
    const [j, before] = w.marks[k] as readonly [number, number];
    if (i !== j) return false;
    // An unmoved mark (the usual case: a fill between moves) moved Δ = 0, without a logarithm.
    const moved = mark === before ? 0 : Math.abs(Math.log(mark / before));
    if (moved + 1e-9 > room) return false;
  }
  return true;
}

/** Versions of the bounds' markets, unique across bounds. */
let nextBoundVersion = 1;

/** A min-heap of entries with lazy deletion (an entry whose generation is not its account's is stale). */
class LazyHeap {
  readonly items: Entry[] = [];

  push(e: Entry): void {
    const h = this.items;
    h.push(e);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if ((h[p] as Entry)[0] <= e[0]) break;
      h[i] = h[p] as Entry;
      i = p;
    }
    h[i] = e;
  }

  pop(): Entry {
    const h = this.items;
    const top = h[0] as Entry;
    const last = h.pop() as Entry;
    if (h.length === 0) return top;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= h.length) break;
      const r = l + 1;
      const c = r < h.length && (h[r] as Entry)[0] < (h[l] as Entry)[0] ? r : l;
      if ((h[c] as Entry)[0] >= last[0]) break;
      h[i] = h[c] as Entry;
      i = c;
    }
    h[i] = last;
    return top;
  }

  /** Drops stale entries (rebuilds the heap) once they are most of it. */
  compact(live: (e: Entry) => boolean, liveCount: number): void {
    if (this.items.length <= 4 * liveCount + 64) return;
    const keep = this.items.filter(live);
    this.items.length = 0;
    for (const e of keep) this.push(e);
  }
}

/**
 * The cross accounts' bound (see the module comment), by user id. An account valued with
 * tolerance T while it depends on n marked markets gets, in each of them, the interval
 * [mark × e^(−T/n), mark × e^(T/n)]: while every mark stays inside its interval, Σ |ln(mark′ ÷
 * mark)| < T, so no line can have been reached. A market's move pops the accounts whose interval
 * it left (two heaps per market: lows as a max-heap, highs as a min-heap).
 */
export class CrossBound {
  /** By market index: [lows (negated, a max-heap), highs]. */
  readonly #heaps: [LazyHeap, LazyHeap][] = [];
  /** By market index: changes at every change of its heaps (unique across bounds). */
  readonly #versions: number[] = [];
  /** The watched accounts' intervals now, by user id (an entry of another generation is stale). */
  readonly #watch = new Map<number, Watch>();
  #nextGen = 1;
  readonly #live = (e: Entry): boolean => this.#watch.get(e[1])?.g === e[2];

  /** The accounts watched. */
  get size(): number {
    return this.#watch.size;
  }

  has(userId: number): boolean {
    return this.#watch.has(userId);
  }

  /**
   * (Re-)places an account with tolerance `tol` around the marks of the markets it depends on
   * (`marks`: [market index, mark]); `undefined` removes it. With tolerance 0 it is due at any move
   * of those markets. The interval placed uses `tol × (1 − INTERVAL_SLACK)`, and an account whose
   * interval lies inside the one the new `tol` and `marks` allow keeps it (`covers`): a fill that
   * changes the account's risk rate little moves no heap.
   */
  set(
    userId: number,
    tol: number | undefined,
    marks: readonly (readonly [number, number])[],
    holder?: WatchHolder,
  ): void {
    // With a holder, the holder is where the account's interval is (every `set` of an account
    // passes its holder, or none does): an account released has none, without a lookup.
    const held = holder === undefined ? this.#watch.get(userId) : holder.watch;
    const w = held?.live === true ? held : undefined;
    if (tol === undefined) {
      this.#drop(userId, w);
      return;
    }
    if (w !== undefined && covers(w, tol, marks)) return;
    const placed = tol * (1 - INTERVAL_SLACK);
    const g = this.#nextGen++;
    if (w !== undefined) w.live = false;
    const now: Watch = { g, tol: placed, marks, live: true };
    this.#watch.set(userId, now);
    if (holder !== undefined) holder.watch = now;
    if (tol === Number.POSITIVE_INFINITY || marks.length === 0) return;
    const f = Math.exp(placed / marks.length);
    for (const [i, mark] of marks) {
      let h = this.#heaps[i];
      if (h === undefined) this.#heaps[i] = h = [new LazyHeap(), new LazyHeap()];
      // Rounding: the interval only shrinks (1e-12 relative), so a mark at its edge is due.
      h[0].push([-(mark / f) * (1 + 1e-12), userId, g]);
      h[1].push([mark * f * (1 - 1e-12), userId, g]);
      this.#versions[i] = nextBoundVersion++;
      if (h[1].items.length > 4 * this.#watch.size + 64) {
        h[0].compact(this.#live, this.#watch.size);
        h[1].compact(this.#live, this.#watch.size);
      }
    }
  }

  /** Changes at every change of market `i`'s intervals. */
  version(i: number): number {
    return this.#versions[i] ?? 0;
  }

  /** A mark of market `i` strictly between `lowEdge(i)` and `highEdge(i)` reaches no account. */
  lowEdge(i: number): number {
    const low = this.#heaps[i]?.[0].items[0];
    return low === undefined ? -Infinity : -low[0];
  }

  highEdge(i: number): number {
    const high = this.#heaps[i]?.[1].items[0];
    return high === undefined ? Infinity : high[0];
  }

  /** Whether a move of market `i` to `mark` reaches any account (nothing allocated). */
  anyDue(i: number, mark: number): boolean {
    const h = this.#heaps[i];
    if (h === undefined) return false;
    const lo = h[0].items[0];
    const hi = h[1].items[0];
    return (lo !== undefined && -lo[0] >= mark) || (hi !== undefined && hi[0] <= mark);
  }

  /** The accounts whose interval in market `i` the mark left, removed from the bound. */
  due(i: number, mark: number, out: Set<number>): void {
    const h = this.#heaps[i];
    if (h === undefined) return;
    const live = this.#live;
    for (const [heap, past] of [
      [h[0], (k: number) => -k >= mark],
      [h[1], (k: number) => k <= mark],
    ] as const) {
      while (heap.items.length > 0 && past((heap.items[0] as Entry)[0])) {
        const e = heap.pop();
        if (live(e)) {
          out.add(e[1]);
          this.#drop(e[1], this.#watch.get(e[1]));
        }
      }
    }
    // Amortized: a rebuild only once the heap has grown to four times the live accounts.
    h[0].compact(live, this.#watch.size);
    h[1].compact(live, this.#watch.size);
    this.#versions[i] = nextBoundVersion++;
  }

  /** Removes an account's interval `w` (its heap entries go stale). */
  #drop(userId: number, w: Watch | undefined): void {
    if (w === undefined) return;
    w.live = false;
    this.#watch.delete(userId);
  }

  /** Every watched account, by user id (a mark appearing where there was none re-values them all). */
  all(): number[] {
    return [...this.#watch.keys()].sort((a, b) => a - b);
  }
}

/** A market as a cross liquidation needs it: the pair, and its mark. */
export interface CrossMarket extends LiquidationMarket {
  readonly mark: PriceTicks | undefined;
}

/** The next order of a cross liquidation, with its market. */
export interface CrossOrder extends LiquidationOrder {
  readonly market: string;
}

const held = (p: CoinPosition): Units => p.available + p.frozen;
const owed = (p: CoinPosition): Units => p.principal + p.interest;

/**
 * The order a cross liquidation sends next (module comment: the order), or `undefined` when
 * nothing more can trade. `positions` by coin name; `market(base, quote)` the venue's market of
 * that pair with a mark, if any; `valuationCoin` V.
 */
export function crossNextOrder(
  liquidations: Liquidations,
  positions: readonly CoinPosition[],
  market: (base: string, quote: string) => CrossMarket | undefined,
  valuationCoin: string,
): CrossOrder | undefined {
  const sorted = [...positions].sort((a, b) => (a.coin < b.coin ? -1 : a.coin > b.coin ? 1 : 0));
  const surplus = sorted.filter((p) => held(p) > owed(p));
  for (const d of sorted) {
    if (owed(d) <= held(d)) continue;
    for (const s of surplus) {
      const direct = market(s.coin, d.coin);
      if (direct?.mark !== undefined) {
        const o = liquidations.nextOrder(direct, s, d, direct.mark);
        if (o !== undefined) return { ...o, market: direct.name };
      }
      const inverse = market(d.coin, s.coin);
      if (inverse?.mark !== undefined) {
        const o = liquidations.nextOrder(inverse, d, s, inverse.mark);
        if (o !== undefined) return { ...o, market: inverse.name };
      }
    }
    if (d.coin === valuationCoin) continue;
    // No surplus coin trades against D: sell one for the valuation coin first.
    const v = sorted.find((p) => p.coin === valuationCoin);
    for (const s of surplus) {
      if (s.coin === valuationCoin) continue;
      const toV = market(s.coin, valuationCoin);
      if (toV?.mark === undefined) continue;
      if (market(valuationCoin, d.coin) === undefined && market(d.coin, valuationCoin) === undefined)
        continue;
      // As if V were owed beyond what is held, so that all of S's surplus sells.
      const quote: CoinPosition = {
        coin: valuationCoin,
        available: v?.available ?? 0,
        frozen: v?.frozen ?? 0,
        principal: (v === undefined ? 0 : held(v)) + 1,
        interest: 0,
      };
      const o = liquidations.nextOrder(toV, s, quote, toV.mark);
      if (o !== undefined) return { ...o, market: toV.name };
    }
  }
  return undefined;
}
