/**
 * @module price-path — the demo market's moving reference prices: each coin's dollar price follows
 * a seeded, mean-reverting random walk (an Ornstein–Uhlenbeck process on its logarithm), and a
 * market's reference is the ratio of its two coins' prices, so that eth_btc stays consistent with
 * eth_usdt and btc_usdt. Nothing is downloaded: the starting prices are the table below.
 */
import { seededRandom } from '../domain/random.ts';

/** Dollar prices the walk starts from and reverts to (the default venue's coins); usdt and qc stay put. */
export const START_PRICES_USD: Readonly<Record<string, number>> = {
  usdt: 1,
  qc: 0.14,
  btc: 30_000,
  eth: 2_000,
  zb: 0.25,
  bch: 250,
  bsv: 50,
  hc: 0.5,
  xwc: 0.05,
};

/** Coins whose price does not move: the quote currencies the others are priced in. */
const ANCHORS: ReadonlySet<string> = new Set(['usdt', 'qc']);
/** Volatility of the log price per √second: ~0.4% a minute, ~3% an hour. */
const SIGMA_PER_SQRT_S = 0.0005;
/** Pull back towards the starting price: a deviation halves in about four hours. */
const REVERSION_PER_S = Math.LN2 / (4 * 3_600);

export class PricePath {
  readonly #random: () => number;
  /** Current log dollar price and the log price it reverts to, by coin. */
  readonly #coins = new Map<string, { log: number; mean: number }>();

  /** `start`: each coin's dollar price now (e.g. from the markets' last trades); `seed` fixes the walk. */
  constructor(start: Readonly<Record<string, number>>, seed: number) {
    this.#random = seededRandom(seed);
    for (const [coin, price] of Object.entries(start)) {
      const mean = START_PRICES_USD[coin] ?? price;
      this.#coins.set(coin, { log: Math.log(price), mean: Math.log(mean) });
    }
  }

  /** Moves every coin's price forward by `dtMs` of time. */
  step(dtMs: number): void {
    const dt = dtMs / 1_000;
    for (const [coin, c] of this.#coins) {
      if (ANCHORS.has(coin)) continue;
      c.log += REVERSION_PER_S * (c.mean - c.log) * dt + SIGMA_PER_SQRT_S * Math.sqrt(dt) * this.#normal();
    }
  }

  /** The coin's dollar price, or undefined for a coin the path does not know. */
  usd(coin: string): number | undefined {
    const c = this.#coins.get(coin);
    return c === undefined ? undefined : Math.exp(c.log);
  }

  /** The price of one `base` in `quote`, or undefined when either coin is unknown. */
  price(base: string, quote: string): number | undefined {
    const b = this.usd(base);
    const q = this.usd(quote);
    return b === undefined || q === undefined ? undefined : b / q;
  }

  /** A standard normal sample (Box–Muller). */
  #normal(): number {
    const u = 1 - this.#random();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * this.#random());
  }
}

/**
 * Each coin's dollar price to start from: the start table, except where a market against usdt
 * (then qc) has traded, whose last price continues the walk after a restart.
 */
export function startingPrices(lastPrices: ReadonlyMap<string, number>): Record<string, number> {
  const prices: Record<string, number> = { ...START_PRICES_USD };
  for (const coin of Object.keys(prices)) {
    if (ANCHORS.has(coin)) continue;
    for (const quote of ANCHORS) {
      const last = lastPrices.get(`${coin}_${quote}`);
      if (last !== undefined && last > 0) {
        prices[coin] = last * (START_PRICES_USD[quote] as number);
        break;
      }
    }
  }
  return prices;
}
