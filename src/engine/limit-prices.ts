/**
 * @module engine/limit-prices — the prices every margin limit reads (issue 29): the borrowing
 * limit, an order's express borrow and its doubles pre-check, the transfer-out limit, and the
 * limits the margin answers show (`fCanLoanIn`, `couldTransferOut…`, `canTransferOut`).
 *
 * They value an account exactly as the risk step does (src/engine/risk.ts, risk-cross.ts), at the
 * one mark per market that `MarkSource.limitMark` gives (`Risk.limitMark`): the market's mark
 * while it is marked (something is owed there); otherwise, under the depth rule, its running mark
 * that every trade fed, and under the median rule the mark the risk step would start it with now:
 * either is the mark it values the account at once a borrow makes it owe something.
 * Never the last trade price: one trade moves that.
 * - An isolated account values its base at the market's mark; its quote is 1.
 * - A cross account values every coin in the valuation coin through the venue's markets
 *   (`venuePaths`, the risk step's paths: at most two legs), each leg at its mark.
 * A coin without a mark on its path has no price (`valuate`: worth 0 held, a debt in it makes
 * the account unvaluable, so nothing is borrowed or transferred out beyond what needs no value).
 */
import type { SequencedCommand } from '../domain/commands.ts';
import type { PriceTicks } from '../domain/money.ts';
import { ratio, unitPrice, unitPriceD, type Ratio } from '../margin/lines.ts';
import type { ValuationPaths } from '../margin/valuation-path.ts';
import type { CoinState, MarketState, Registry } from './registry.ts';
import { crossValuationCoin, venuePaths } from './risk-cross.ts';

/** Where the marks come from: the risk step (`Risk.limitMark`). */
export interface MarkSource {
  limitMark(m: MarketState): PriceTicks | undefined;
}

/** A margin account's valuation: an isolated market's (its quote is the value coin) or cross (undefined). */
export type ValuedIn = MarketState | undefined;

export class LimitPrices {
  readonly #registry: Registry;
  readonly #marks: MarkSource;
  #paths: { paths: ValuationPaths; markets: number } | undefined;
  readonly #markOf = (name: string): number | undefined => {
    const m = this.#registry.market(name);
    return m === undefined ? undefined : this.#marks.limitMark(m);
  };

  constructor(registry: Registry, marks: MarkSource) {
    this.#registry = registry;
    this.#marks = marks;
  }

  /** The mark of a market the limits read, in ticks; undefined before its first trade. */
  mark(m: MarketState): PriceTicks | undefined {
    return this.#marks.limitMark(m);
  }

  /** The coin an account of `market` is valued in: the isolated market's quote, or cross's. */
  valuationCoin(market: ValuedIn): CoinState | undefined {
    return market?.quote ?? crossValuationCoin(this.#registry);
  }

  /** The value of one unit of `coin` in the account's valuation coin, exact; undefined: no price. */
  price(market: ValuedIn, coin: CoinState): Ratio | undefined {
    if (market !== undefined) {
      if (coin === market.quote) return ratio(1);
      if (coin !== market.base) return undefined;
      const mark = this.#marks.limitMark(market);
      if (mark === undefined || mark <= 0) return undefined;
      const s = market.spec;
      return unitPrice(mark, s.priceScale, market.base.spec.unitDecimal, market.quote.spec.unitDecimal);
    }
    return this.#crossPaths().price(coin.spec.name, this.#markOf);
  }

  /** `price` in doubles (a few roundings: for the pre-check in doubles only); undefined: no price. */
  priceD(market: ValuedIn, coin: CoinState): number | undefined {
    if (market !== undefined) {
      if (coin === market.quote) return 1;
      if (coin !== market.base) return undefined;
      const mark = this.#marks.limitMark(market);
      if (mark === undefined || mark <= 0) return undefined;
      const s = market.spec;
      return unitPriceD(mark, s.priceScale, market.base.spec.unitDecimal, market.quote.spec.unitDecimal);
    }
    return this.#crossPaths().priceD(coin.spec.name, this.#markOf) ?? undefined;
  }

  /** The risk step's paths (rebuilt, as its own, when the number of markets changes). */
  #crossPaths(): ValuationPaths {
    const n = this.#registry.marketStates().length;
    if (this.#paths === undefined || this.#paths.markets !== n)
      this.#paths = { paths: venuePaths(this.#registry), markets: n };
    return this.#paths.paths;
  }
}

/** Whether a command may check a margin limit: a borrow, a transfer, a margin order (express). */
export function checksLimits(cmd: SequencedCommand): boolean {
  switch (cmd.type) {
    case 'Borrow':
    case 'MarginTransfer':
      return true;
    case 'PlaceOrder':
    case 'PlaceOrderBatch':
      return cmd.acctType !== 0;
    default:
      return false;
  }
}
