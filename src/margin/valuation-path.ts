/**
 * @module valuation-path — how a cross account values every coin in one valuation coin (the
 * venue's quote coin, USDT by default) through the venue's markets, at their mark prices.
 *
 * ## The path of a coin
 * Chosen from the list of markets alone (not from the marks), so it never flips while prices move:
 * 1. the valuation coin itself: 1;
 * 2. one market: `coin/V` (the coin's price) or, failing that, `V/coin` (one over its price);
 * 3. two markets through an intermediate coin X: `coin/X` or `X/coin`, then `X/V` or `V/X`. X is the
 *    first of the preferred intermediates (`DEFAULT_INTERMEDIATES`: usdt, btc, qc, eth) that gives
 *    a path, then any other coin in name order; on each leg the direct market before the inverse;
 * 4. otherwise none.
 *
 * ## No price
 * A coin without a path, or whose path has a market without a mark yet, has no price: it counts 0
 * among a cross account's assets, and a debt in it makes the account unvaluable, so nothing can be
 * borrowed against it or transferred out (`lines.ts`, `valuate`). Deeper paths are not searched: a
 * coin three markets away from the valuation coin is too thin to lend against.
 *
 * ## Exactness
 * Prices are exact rationals: a leg's unit price is ticks × 10^(quoteDecimal − priceScale −
 * baseDecimal) (`unitPrice`), an inverse leg its reciprocal, two legs their product. Nothing rounds
 * until a limit or a rate is shown (`lines.ts`).
 */
import { reduced, unitPrice, type Ratio } from './lines.ts';

export const DEFAULT_INTERMEDIATES: readonly string[] = Object.freeze(['usdt', 'btc', 'qc', 'eth']);

/** A market as the path needs it. */
export interface PathMarket {
  readonly name: string;
  readonly base: string;
  readonly quote: string;
  readonly priceScale: number;
  readonly baseDecimal: number;
  readonly quoteDecimal: number;
}

/** One leg: a market read directly (base → quote) or inverted (quote → base). */
export interface Leg {
  readonly market: string;
  readonly invert: boolean;
}

/** The valuation paths of every coin of a venue's markets. */
export class ValuationPaths {
  readonly #coin: string;
  readonly #markets = new Map<string, PathMarket>();
  /** "base/quote" → market. */
  readonly #pair = new Map<string, PathMarket>();
  readonly #paths = new Map<string, readonly Leg[] | undefined>();
  readonly #preferred: readonly string[];

  constructor(
    markets: readonly PathMarket[],
    valuationCoin: string,
    preferred: readonly string[] = DEFAULT_INTERMEDIATES,
  ) {
    this.#coin = valuationCoin;
    this.#preferred = preferred;
    for (const m of [...markets].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      this.#markets.set(m.name, m);
      if (!this.#pair.has(`${m.base}/${m.quote}`)) this.#pair.set(`${m.base}/${m.quote}`, m);
    }
  }

  get valuationCoin(): string {
    return this.#coin;
  }

  /** The legs from `coin` to the valuation coin ([] for the valuation coin), `undefined`: none. */
  path(coin: string): readonly Leg[] | undefined {
    if (this.#paths.has(coin)) return this.#paths.get(coin);
    const p = this.#find(coin);
    this.#paths.set(coin, p);
    return p;
  }

  /**
   * The value of one unit of `coin` in units of the valuation coin at the marks `markOf` gives (ticks
   * per market, `undefined` before a market's first trade); `undefined` when there is no price.
   */
  price(coin: string, markOf: (market: string) => number | undefined): Ratio | undefined {
    const legs = this.path(coin);
    if (legs === undefined) return undefined;
    let num = 1n;
    let den = 1n;
    for (const leg of legs) {
      const m = this.#markets.get(leg.market) as PathMarket;
      const mark = markOf(m.name);
      if (mark === undefined || mark <= 0) return undefined;
      const u = unitPrice(mark, m.priceScale, m.baseDecimal, m.quoteDecimal);
      if (leg.invert) {
        num *= u.den;
        den *= u.num;
      } else {
        num *= u.num;
        den *= u.den;
      }
    }
    return reduced({ num, den });
  }

  /**
   * `price` in doubles, computed in doubles (a few roundings, each within half an ulp): what a
   * decision that allows a relative error of 10⁻¹⁰ may use (`fastDecision` in cross-risk.ts) where
   * the exact ratio's bigints would cost more than the rest of a fill. `null` when there is no price.
   */
  priceD(coin: string, markOf: (market: string) => number | undefined): number | null {
    const legs = this.path(coin);
    if (legs === undefined) return null;
    let price = 1;
    for (const leg of legs) {
      const m = this.#markets.get(leg.market) as PathMarket;
      const mark = markOf(m.name);
      if (mark === undefined || mark <= 0) return null;
      const e = m.quoteDecimal - m.priceScale - m.baseDecimal;
      const u = e >= 0 ? mark * 10 ** e : mark / 10 ** -e;
      price = leg.invert ? price / u : price * u;
    }
    return price;
  }

  #leg(from: string, to: string): Leg | undefined {
    const direct = this.#pair.get(`${from}/${to}`);
    if (direct !== undefined) return { market: direct.name, invert: false };
    const inverse = this.#pair.get(`${to}/${from}`);
    return inverse === undefined ? undefined : { market: inverse.name, invert: true };
  }

  #find(coin: string): readonly Leg[] | undefined {
    const v = this.#coin;
    if (coin === v) return [];
    const one = this.#leg(coin, v);
    if (one !== undefined) return [one];
    const others = new Set<string>();
    for (const m of this.#markets.values()) for (const c of [m.base, m.quote]) others.add(c);
    const order = [
      ...this.#preferred.filter((c) => others.has(c)),
      ...[...others].filter((c) => !this.#preferred.includes(c)).sort(),
    ];
    for (const x of order) {
      if (x === coin || x === v) continue;
      const a = this.#leg(coin, x);
      const b = a === undefined ? undefined : this.#leg(x, v);
      if (a !== undefined && b !== undefined) return [a, b];
    }
    return undefined;
  }
}
