/**
 * @module settlement — what one fill moves: the coins between buyer and seller, the fees to fee
 * income (in the received coin or, at a discount, in the platform coin), and the trade event.
 * The rules, case by case, are in src/domain/money.ts ("Funds rules").
 */
import { BUY } from '../domain/commands.ts';
import type { BillType } from '../domain/events.ts';
import {
  convertFeeToZb,
  feeFloor,
  type CoinUnits,
  type Lots,
  type PriceLeg,
  type PriceTicks,
  type RatePpm,
} from '../domain/money.ts';
import type { VenueSettings } from '../domain/specs.ts';
import type { CommandContext } from './command-context.ts';
import type { Ledger, LedgerAccount } from './ledger.ts';
import type { Order } from './order-book.ts';
import type { CoinState, MarketState, Registry } from './registry.ts';

export class Settlement {
  /**
   * Set by matching while a forced liquidation's order (src/engine/risk.ts) takes liquidity: its
   * fills pay no trading fee (the liquidation fee replaces it).
   */
  liquidationTaker = false;
  readonly #ctx: CommandContext;
  readonly #ledger: Ledger;
  readonly #registry: Registry;
  readonly #settings: VenueSettings;
  #nextTradeId = 1;
  /** What the latest `#chargeFee` charged, and in which coin (a returned pair was two allocations per fill). */
  /**
   * The price legs of a platform-coin fee, filled in per fee (`#priceLegs`) rather than made:
   * `convertFeeToZb` reads them and keeps nothing.
   */
  readonly #legA: Leg = newLeg();
  readonly #legB: Leg = newLeg();
  readonly #noLegs: readonly PriceLeg[] = [];
  readonly #oneLeg: readonly PriceLeg[] = [this.#legA];
  readonly #twoLegs: readonly PriceLeg[] = [this.#legA, this.#legB];
  #feeAmount: CoinUnits = 0;
  #feeCoin = '';

  constructor(ctx: CommandContext, ledger: Ledger, registry: Registry, settings: VenueSettings) {
    this.#ctx = ctx;
    this.#ledger = ledger;
    this.#registry = registry;
    this.#settings = settings;
  }

  get nextTradeId(): number {
    return this.#nextTradeId;
  }

  set nextTradeId(id: number) {
    this.#nextTradeId = id;
  }

  /**
   * Settles one fill of `lots` at `price` (the maker's) between `taker` and `maker`, whose
   * accounts pay and receive: reduces the maker in the book and the taker's remainder, emits
   * TradeExecuted then the bills (buyer: buy, buy, buyFee; seller: sell, sell, sellFee), and
   * records the fill on both orders and the market's last price.
   */
  fill(
    market: MarketState,
    taker: Order,
    takerAccount: LedgerAccount,
    maker: Order,
    makerAccount: LedgerAccount,
    price: PriceTicks,
    lots: Lots,
  ): void {
    const ledger = this.#ledger;
    const time = this.#ctx.time;
    const value: CoinUnits = price * lots * market.quoteUnitsPerTickLot;
    const baseUnits: CoinUnits = lots * market.baseUnitsPerLot;
    const tradeId = this.#nextTradeId++;
    const takerIsBuyer = taker.side === BUY;
    const buyer = takerIsBuyer ? taker : maker;
    const seller = takerIsBuyer ? maker : taker;
    const buyerAccount = takerIsBuyer ? takerAccount : makerAccount;
    const sellerAccount = takerIsBuyer ? makerAccount : takerAccount;
    const spec = market.spec;
    // A forced liquidation's order (always the taker: it never rests) pays no trading fee.
    const takerRate = this.liquidationTaker ? 0 : spec.takerFee;
    const buyerRate = takerIsBuyer ? takerRate : spec.makerFee;
    const sellerRate = takerIsBuyer ? spec.makerFee : takerRate;

    market.book.reduce(maker, lots);
    taker.remaining -= lots;
    const trade = this.#ctx.pool.trade(tradeId, spec.name, price, lots, value, taker, maker, time);
    this.#ctx.events.push(trade);

    const buyerRef = buyer.ref;
    const sellerRef = seller.ref;

    // Buyer: frozen quote at its own limit price leaves; the improvement returns to available.
    const buyerHeld: CoinUnits = buyer.price * lots * market.quoteUnitsPerTickLot;
    buyer.frozen -= buyerHeld;
    ledger.change(buyerAccount, market.quote, buyerHeld - value, -buyerHeld, 'buy', buyerRef);
    ledger.change(buyerAccount, market.base, baseUnits, 0, 'buy', buyerRef);
    this.#chargeFee(buyerAccount, buyer, buyerRef, market.base, baseUnits, buyerRate, 'buyFee');
    const buyerFee = this.#feeAmount;
    const buyerFeeCoin = this.#feeCoin;

    // Seller: frozen base leaves; the quote value arrives.
    seller.frozen -= baseUnits;
    ledger.change(sellerAccount, market.base, 0, -baseUnits, 'sell', sellerRef);
    ledger.change(sellerAccount, market.quote, value, 0, 'sell', sellerRef);
    this.#chargeFee(sellerAccount, seller, sellerRef, market.quote, value, sellerRate, 'sellFee');
    const sellerFee = this.#feeAmount;
    const sellerFeeCoin = this.#feeCoin;

    trade.takerFee = takerIsBuyer ? buyerFee : sellerFee;
    trade.takerFeeCoin = takerIsBuyer ? buyerFeeCoin : sellerFeeCoin;
    trade.makerFee = takerIsBuyer ? sellerFee : buyerFee;
    trade.makerFeeCoin = takerIsBuyer ? sellerFeeCoin : buyerFeeCoin;

    recordFill(taker, tradeId, price, lots, value, time);
    recordFill(maker, tradeId, price, lots, value, time);
    market.lastPrice = price;
    const st = market.stepTrades;
    if (st !== undefined) st.add(price, lots, time);
    else market.idleMark?.take(price, lots);
  }

  /**
   * Charges the fee on `received` units of `coin` just credited to `account` for `order`: in the
   * platform coin at a discount when the order opted in and a price path and balance allow it,
   * else in the received coin. Leaves what was charged in `#feeAmount` and `#feeCoin`. `ref` is
   * the order's id as text.
   */
  #chargeFee(
    account: LedgerAccount,
    order: Order,
    ref: string,
    coin: CoinState,
    received: CoinUnits,
    rate: RatePpm,
    bill: BillType,
  ): void {
    if (rate < 0) {
      this.#payRebate(account, order, ref, coin, received, rate, bill);
      return;
    }
    const fee = feeFloor(received, rate);
    this.#feeAmount = fee;
    this.#feeCoin = coin.spec.name;
    if (fee === 0) return;
    const ledger = this.#ledger;
    if (order.usePlatformCoin) {
      const platform = this.#registry.coin(this.#settings.platformCoin);
      if (platform !== undefined) {
        const legs = this.#priceLegs(coin, platform);
        const platformFee =
          legs === undefined ? undefined : convertFeeToZb(fee, legs, this.#settings.platformFeeDiscount);
        if (platformFee !== undefined && account.available(platform.index) >= platformFee) {
          if (platformFee > 0) {
            ledger.change(account, platform, -platformFee, 0, bill, ref);
            ledger.addFeeIncome(platform, platformFee);
            order.platformFees += platformFee;
          }
          this.#feeAmount = platformFee;
          this.#feeCoin = platform.spec.name;
          return;
        }
      }
    }
    ledger.change(account, coin, -fee, 0, bill, ref);
    ledger.addFeeIncome(coin, fee);
    order.fees += fee;
  }

  /**
   * A maker rebate (a negative rate): floor(received × −rate) of the received coin, paid out of fee
   * income in that coin and never beyond it, so no coin is created (a rebate fee income cannot
   * cover is paid in part, or not at all). Always in the received coin, whatever the order's
   * platform-coin choice. The bill is the fee bill with a positive change; the order's fees and
   * the trade's fee go negative by what was paid.
   */
  #payRebate(
    account: LedgerAccount,
    order: Order,
    ref: string,
    coin: CoinState,
    received: CoinUnits,
    rate: RatePpm,
    bill: BillType,
  ): void {
    const rebate = Math.min(feeFloor(received, -rate), this.#ledger.feeIncome(coin));
    this.#feeAmount = -rebate;
    this.#feeCoin = coin.spec.name;
    if (rebate === 0) return;
    this.#ledger.addFeeIncome(coin, -rebate);
    this.#ledger.change(account, coin, rebate, 0, bill, ref);
    order.fees -= rebate;
  }

  /**
   * Price legs to convert `from` into `to` at last trade prices: none when they are the same
   * coin; one leg through a market between them; else two legs through the first coin X (in
   * market order) with markets from→X and X→to both priced. `undefined` when there is no path.
   */
  #priceLegs(from: CoinState, to: CoinState): readonly PriceLeg[] | undefined {
    if (from === to) return this.#noLegs;
    if (this.#leg(from, to, this.#legA)) return this.#oneLeg;
    for (const m of this.#registry.marketStates()) {
      const via = m.base === from ? m.quote : m.quote === from ? m.base : undefined;
      if (via === undefined || via === to) continue;
      if (this.#leg(from, via, this.#legA) && this.#leg(via, to, this.#legB)) return this.#twoLegs;
    }
    return undefined;
  }

  /** Fills `into` with the leg from `from` to `to` through a priced market; false when there is none. */
  #leg(from: CoinState, to: CoinState, into: Leg): boolean {
    const forward = this.#registry.market(`${from.spec.name}_${to.spec.name}`);
    const market =
      forward !== undefined && forward.lastPrice > 0
        ? forward
        : this.#registry.market(`${to.spec.name}_${from.spec.name}`);
    if (market === undefined || !(market.lastPrice > 0)) return false;
    into.multiply = market === forward;
    into.priceTicks = market.lastPrice;
    into.priceScale = market.spec.priceScale;
    into.fromDecimal = from.spec.unitDecimal;
    into.toDecimal = to.spec.unitDecimal;
    return true;
  }
}

/** A price leg Settlement fills in again for each fee. */
type Leg = { -readonly [K in keyof PriceLeg]: PriceLeg[K] };

const newLeg = (): Leg => ({ multiply: false, priceTicks: 0, priceScale: 0, fromDecimal: 0, toDecimal: 0 });

/** Adds one fill to an order's totals and makes it the order's latest trade. */
function recordFill(
  o: Order,
  tradeId: number,
  price: PriceTicks,
  lots: Lots,
  value: CoinUnits,
  time: number,
): void {
  o.filled += lots;
  o.filledValue += value;
  o.lastTradeId = tradeId;
  o.lastTradePrice = price;
  o.lastTradeAmount = lots;
  o.lastTradeTime = time;
}
