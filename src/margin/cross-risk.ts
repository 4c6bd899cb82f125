/**
 * @module cross-risk — the risk side of cross margin accounts (issue 15): the bound that keeps a
 * price move from re-valuing every cross account (`CrossBound`), the notice flag's rule on an
 * exact risk rate (`crossState`), and the order a cross liquidation sends next (`crossNextOrder`).
 * Pure and deterministic; the engine's glue is src/engine/risk-cross.ts.
 *
 * ## Why a bound, not an unwind price
 * A cross account's risk rate depends on the marks of every market on the valuation paths of the
 * coins it holds or owes (`valuation-path.ts`), so it has no single price at which it crosses a
 * line. Instead the engine keeps the **drift** V = Σ |ln(mark′ ÷ mark)| over every mark move of a
 * market some cross account depends on. A coin's price is a product of at most two legs, so if V
 * grew by Δ since an account was valued, each coin's price moved by a factor within [e^−Δ, e^Δ];
 * its assets by at least e^−Δ, its debt by at most e^Δ, and its risk rate R by a factor within
 * [e^−2Δ, e^2Δ]. So the account cannot have reached a line L below R before Δ ≥ ln(R ÷ L) ÷ 2
 * (nor one above R before ln(L ÷ R) ÷ 2). `CrossBound` keeps each account in a heap keyed by
 * V₀ + that tolerance (the nearest of its lines: the notice line 1.13 when unflagged; the
 * liquidation line 1.08 and the flag's clearing line 1.15 when flagged), shrunk by a relative
 * 10⁻⁹ and 10⁻¹² so that the doubles' rounding can only make it re-value earlier. A move pops
 * only the accounts whose tolerance it used up; they are re-valued **exactly** (rationals of
 * bigints) and pushed back. The heap decides only *which* accounts are re-valued, never a flag or
 * a liquidation, so the outcome is the one an exact re-valuation of every account after every
 * move would give (and a replay from a snapshot, whose heap starts afresh, agrees).
 *
 * ## Cost
 * A move costs O(k log n), k the accounts it pops: those within its drift of a line. Accounts far
 * from their lines are not touched for many moves; the cost is paid where the risk is. The bound
 * is loose in two ways, both only costing re-valuations: the drift adds moves of every market any
 * cross account depends on (not only the account's own), and it takes a coin's worst case.
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
  const high = low + 2e-12;
  const ln = (x: number): number => (x > 0 ? Math.log(x) : Number.NEGATIVE_INFINITY);
  const t = flagged
    ? Math.min(ln(low / (s.forceRepayLineBp / BP)), ln((s.noticeLineBp + NOTICE_HYSTERESIS_BP) / BP / high)) /
      2
    : ln(low / (s.noticeLineBp / BP)) / 2;
  const safe = t * (1 - 1e-9) - 1e-12;
  return safe > 0 ? safe : 0;
}

/** The cross accounts' drift heap (see the module comment). Keys are user ids. */
export class CrossBound {
  #drift = 0;
  /** Min-heap of [key, userId, generation]. */
  readonly #heap: [number, number, number][] = [];
  readonly #gen = new Map<number, number>();

  get drift(): number {
    return this.#drift;
  }

  /** The accounts watched. */
  get size(): number {
    return this.#gen.size;
  }

  has(userId: number): boolean {
    return this.#gen.has(userId);
  }

  /** (Re-)places an account with its tolerance from now; `undefined` removes it. */
  set(userId: number, tol: number | undefined): void {
    const g = (this.#gen.get(userId) ?? 0) + 1;
    if (tol === undefined) {
      this.#gen.delete(userId);
      return;
    }
    this.#gen.set(userId, g);
    if (tol !== Number.POSITIVE_INFINITY) this.#push([this.#drift + tol, userId, g]);
  }

  /** Adds a mark move's drift (`due` then tells the accounts whose tolerance it used up). */
  move(fromTicks: number, toTicks: number): void {
    if (fromTicks > 0 && toTicks > 0) this.#drift += Math.abs(Math.log(toTicks / fromTicks));
  }

  /** The accounts whose key the drift reached (each once), removed from the heap, by user id. */
  due(): number[] {
    const out: number[] = [];
    const heap = this.#heap;
    while (heap.length > 0 && (heap[0] as [number, number, number])[0] <= this.#drift) {
      const [, userId, g] = this.#pop();
      if (this.#gen.get(userId) === g) {
        out.push(userId);
        this.#gen.set(userId, g + 1);
      }
    }
    return out.sort((a, b) => a - b);
  }

  /** Every watched account, by user id (a mark appearing where there was none re-values them all). */
  all(): number[] {
    return [...this.#gen.keys()].sort((a, b) => a - b);
  }

  #push(e: [number, number, number]): void {
    const h = this.#heap;
    h.push(e);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if ((h[p] as [number, number, number])[0] <= e[0]) break;
      h[i] = h[p] as [number, number, number];
      i = p;
    }
    h[i] = e;
  }

  #pop(): [number, number, number] {
    const h = this.#heap;
    const top = h[0] as [number, number, number];
    const last = h.pop() as [number, number, number];
    if (h.length === 0) return top;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= h.length) break;
      const r = l + 1;
      const c =
        r < h.length && (h[r] as [number, number, number])[0] < (h[l] as [number, number, number])[0] ? r : l;
      if ((h[c] as [number, number, number])[0] >= last[0]) break;
      h[i] = h[c] as [number, number, number];
      i = c;
    }
    h[i] = last;
    return top;
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
