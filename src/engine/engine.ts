/**
 * @module engine — the deterministic exchange state machine: `apply(command) → result + events`.
 *
 * Pure and synchronous: no I/O, no clock, no randomness. Time and sequence arrive in the command.
 * Replaying the same commands gives the same state, which `stateHash()` proves. Money rules are
 * in src/domain/money.ts; the order of events for each command is in src/domain/events.ts.
 *
 * Business outcomes are result names (src/domain/result-codes.ts). A thrown exception means a
 * broken invariant: the caller must stop taking commands and recover from snapshot + journal.
 */
import { createHash } from 'node:crypto';
import {
  ACCESS_KEY,
  BUY,
  CLIENT_ORDER_ID,
  MAX_KEY_IPS,
  SELL,
  type CreateApiKey,
  type DeleteApiKey,
  type KeyPermissions,
  type CancelAllOrdersAfter,
  type CancelOrder,
  type PlaceOrder,
  type PlaceOrderBatch,
  type RegisterUser,
  type SequencedCommand,
  type SetFeePreference,
  type SetMarketStatus,
  type Side,
  type UpsertCoin,
  type UpsertMarket,
} from '../domain/commands.ts';
import {
  ORDER_CANCELLED,
  ORDER_DONE,
  ORDER_PARTIAL,
  ORDER_PENDING,
  type BillType,
  type CancelReason,
  type EngineEvent,
  type OrderStatus,
} from '../domain/events.ts';
import {
  convertFeeToZb,
  feeFloor,
  formatUnitsTrim,
  safeMul,
  type CoinUnits,
  type PriceLeg,
} from '../domain/money.ts';
import type { ResultName } from '../domain/result-codes.ts';
import { validateCoinFunds } from '../domain/chains.ts';
import {
  baseUnitsPerLot,
  quoteUnitsPerTickLot,
  validateCoin,
  validateMarket,
  type CoinSpec,
  type MarketSpec,
  type VenueConfig,
  type VenueSettings,
} from '../domain/specs.ts';
import { Demo, isDemoCommand, type DemoView } from './demo-state.ts';
import { Funds, isFundsCommand, type FundsLedger, type FundsView } from './funds.ts';
import { Order, OrderBook, OrderIndex, OwnerOrders } from './order-book.ts';
import { SNAPSHOT_VERSION, type EngineSnapshot, type SnapshotOrder } from './snapshot.ts';

/** The most orders one batch (orderMoreV2) may carry. */
export const MAX_BATCH_ORDERS = 20;
const MAX_NAME_LENGTH = 64;

/** What one command did. `events` is empty when the command was refused. */
export interface ApplyResult {
  readonly result: ResultName;
  /** Detail for a refusal: which parameter or limit. */
  readonly message?: string;
  readonly events: EngineEvent[];
  readonly orderId?: number;
  readonly orderIds?: number[];
  readonly userId?: number;
  /** The command repeated a business id already applied: nothing changed. */
  readonly duplicate?: boolean;
  /** The order a cancel acted on, in its final state, for the cancelOrder reply. */
  readonly order?: CancelledOrder;
  readonly deadline?: number;
  /** The withdrawal a RequestWithdrawal created. */
  readonly withdrawalId?: string;
}

/** What a cancel answers about the order it cancelled (the order itself: it no longer changes). */
export type CancelledOrder = Readonly<Pick<Order, 'id' | 'price' | 'amount' | 'filled' | 'filledValue'>>;

/** A read-only view of an order the engine holds. */
export interface OrderView {
  readonly id: number;
  readonly userId: number;
  readonly market: string;
  readonly side: Side;
  readonly kind: Order['kind'];
  readonly price: number;
  readonly amount: number;
  readonly filled: number;
  readonly filledValue: number;
  readonly fees: number;
  readonly platformFees: number;
  readonly status: OrderStatus;
  readonly time: number;
  readonly clientOrderId: string;
  readonly acctType: Order['acctType'];
  readonly usePlatformCoin: boolean;
}

interface CoinState {
  spec: CoinSpec;
  readonly index: number;
}

interface MarketState {
  spec: MarketSpec;
  readonly index: number;
  readonly base: CoinState;
  readonly quote: CoinState;
  baseUnitsPerLot: number;
  quoteUnitsPerTickLot: number;
  readonly book: OrderBook;
  /** Price of the latest trade (0 before the first). */
  lastPrice: number;
}

interface Account {
  readonly userId: number;
  readonly name: string;
  readonly available: number[];
  readonly frozen: number[];
  usePlatformCoin: boolean;
  /** The user's resting orders, oldest first. */
  readonly openOrders: OwnerOrders;
}

/** An API key as the engine keeps it (the secret sealed). */
export interface ApiKeyRecord {
  readonly userId: number;
  readonly accessKey: string;
  readonly sealedSecret: string;
  readonly permissions: KeyPermissions;
  readonly ips: readonly string[];
  /** Strict mode: only when the command said `true` (so keys without it hash as before). */
  readonly replayProtection?: true;
}

interface Deadline {
  readonly userId: number;
  readonly market: string;
  deadline: number;
}

const refused = (result: ResultName, message?: string): ApplyResult =>
  message === undefined ? { result, events: [] } : { result, message, events: [] };

export class Engine {
  #settings: VenueSettings;
  readonly #coins: CoinState[] = [];
  readonly #coinByName = new Map<string, CoinState>();
  readonly #markets: MarketState[] = [];
  readonly #marketByName = new Map<string, MarketState>();
  readonly #accounts = new Map<number, Account>();
  readonly #userByName = new Map<string, number>();
  /** Lower-cased name → the first user registered with a name that lower-cases to it. */
  readonly #userByFoldedName = new Map<string, number>();
  /** Resting orders by id. */
  readonly #orders = new OrderIndex();
  /** `${userId}:${market}:${clientOrderId}` → the latest order id with it. */
  readonly #clientIds = new Map<string, number>();
  /** `${userId}:${market}` → dead-man deadline. */
  readonly #deadlines = new Map<string, Deadline>();
  readonly #apiKeys = new Map<string, ApiKeyRecord>();
  readonly #feeIncome: number[] = [];
  /** Deposits, addresses, fund passwords and withdrawals (src/engine/funds.ts). */
  readonly #funds: Funds;
  /** The demo market: demo users, the faucet, whether the bots were stopped (src/engine/demo-state.ts). */
  readonly #demo: Demo;
  #nextUserId = 1;
  #nextOrderId = 1;
  #nextTradeId = 1;
  /** Sequence number of the last command applied (0 before any). */
  #lastSeq = 0;

  // Per-command scratch: the events being collected and the command's time.
  #events: EngineEvent[] = [];
  #time = 0;
  #ctxAccount: Account | undefined;
  #ctxMarket: MarketState | undefined;
  /** What the latest `#chargeFee` charged, and in which coin. */
  #feeAmount = 0;
  #feeCoin = '';

  /** A fresh engine with the given coins, markets and settings. Throws on an invalid config. */
  constructor(config: VenueConfig) {
    this.#settings = { ...config.settings };
    for (const coin of config.coins) {
      const problems = validateCoin(coin);
      if (problems.length > 0 || this.#coinByName.has(coin.name)) {
        throw new Error(`invalid coin ${coin.name}: ${problems.join('; ') || 'duplicate'}`);
      }
      this.#addCoin(coin);
    }
    for (const market of config.markets) {
      const problems = validateMarket(market, this.#coinSpecs());
      if (problems.length > 0 || this.#marketByName.has(market.name)) {
        throw new Error(`invalid market ${market.name}: ${problems.join('; ') || 'duplicate'}`);
      }
      this.#addMarket(market);
    }
    for (const f of config.funds ?? []) {
      const problems = validateCoinFunds(f, this.#coinSpecs());
      if (problems.length > 0 || (config.funds ?? []).filter((g) => g.coin === f.coin).length > 1) {
        throw new Error(`invalid funds of ${f.coin}: ${problems.join('; ') || 'duplicate'}`);
      }
    }
    const ledger: FundsLedger = {
      hasUser: (userId) => this.#accounts.has(userId),
      coin: (name) => this.#coinByName.get(name),
      available: (userId, coin) => this.#accounts.get(userId)?.available[coin.index] ?? 0,
      change: (userId, coin, deltaAvailable, deltaFrozen, bill, ref) =>
        this.#change(
          this.#accounts.get(userId) as Account,
          coin as CoinState,
          deltaAvailable,
          deltaFrozen,
          bill,
          ref,
        ),
      addFeeIncome: (coin, amount) => {
        this.#feeIncome[coin.index] = (this.#feeIncome[coin.index] ?? 0) + amount;
      },
    };
    this.#funds = new Funds(config.funds ?? [], ledger);
    this.#demo = new Demo({ ...ledger, credit: (cmd) => this.#funds.apply(cmd, this.#time, this.#events) });
  }

  // ───────────────────────────── commands ─────────────────────────────

  /**
   * Applies one sequenced command. Commands must arrive in sequence order; the result's events
   * describe every state change, in order. A refused command changes nothing.
   */
  apply(cmd: SequencedCommand): ApplyResult {
    if (cmd.seq <= this.#lastSeq)
      throw new Error(`command seq ${cmd.seq} after ${this.#lastSeq}: out of order`);
    this.#lastSeq = cmd.seq;
    this.#time = cmd.time;
    this.#events = [];
    switch (cmd.type) {
      case 'PlaceOrder':
        return this.#placeOrder(cmd);
      case 'PlaceOrderBatch':
        return this.#placeOrderBatch(cmd);
      case 'CancelOrder':
        return this.#cancelOrder(cmd);
      case 'CancelAllOrdersAfter':
        return this.#cancelAllOrdersAfter(cmd);
      case 'FireTimers':
        return this.#fireTimers();
      case 'RegisterUser':
        return this.#registerUser(cmd);
      case 'SetFeePreference':
        return this.#setFeePreference(cmd);
      case 'UpsertCoin':
        return this.#upsertCoin(cmd);
      case 'UpsertMarket':
        return this.#upsertMarket(cmd);
      case 'SetMarketStatus':
        return this.#setMarketStatus(cmd);
      case 'CreateApiKey':
        return this.#createApiKey(cmd);
      case 'DeleteApiKey':
        return this.#deleteApiKey(cmd);
      default:
        // The funds and demo modules take their own commands (src/domain/commands.ts lists them).
        if (isFundsCommand(cmd)) return this.#funds.apply(cmd, this.#time, this.#events);
        if (isDemoCommand(cmd)) return this.#demo.apply(cmd, this.#time, this.#events);
        return refused('INVALID_PARAMETER', `unknown command type ${(cmd as { type: unknown }).type}`);
    }
  }

  #done(extra?: Omit<ApplyResult, 'result' | 'events'>): ApplyResult {
    // The spread is a slow path; the hot commands (place, cancel) build their result directly.
    return extra === undefined
      ? { result: 'OK', events: this.#events }
      : { result: 'OK', events: this.#events, ...extra };
  }

  /**
   * The checks shared by single and batch placement: who, where, and whether trading is open.
   * Returns the refusal, or `undefined` with the account and market left in `#ctxAccount` and
   * `#ctxMarket` (scratch fields: a returned pair was an allocation on every placement).
   */
  #orderContext(userId: number, marketName: string, acctType: number): ApplyResult | undefined {
    const account = this.#accounts.get(userId);
    if (account === undefined) return refused('USER_NOT_FOUND');
    const market = this.#marketByName.get(marketName);
    if (market === undefined) return refused('UNKNOWN_MARKET', `unknown market '${marketName}'`);
    if (acctType === 1 || acctType === 2) {
      return refused(
        'ACCOUNT_TYPE_NOT_SUPPORTED',
        `acctType ${acctType} (margin) is not open yet; use 0 (spot)`,
      );
    }
    if (acctType !== 0) return refused('INVALID_PARAMETER', 'acctType must be 0, 1 or 2');
    if (market.spec.status !== 'trading') return refused('MARKET_HALTED', `market ${marketName} is halted`);
    this.#ctxAccount = account;
    this.#ctxMarket = market;
    return undefined;
  }

  /**
   * Checks one order's numbers against the market and returns what it must freeze, or a refusal.
   * Order: price, amount, minAmount, value range, minSize.
   */
  #orderCost(market: MarketState, side: Side, price: number, amount: number): number | ApplyResult {
    if (!Number.isSafeInteger(price) || price <= 0) return refused('INVALID_PRICE', 'price must be positive');
    if (!Number.isSafeInteger(amount) || amount <= 0)
      return refused('INVALID_AMOUNT', 'amount must be positive');
    if (amount < market.spec.minAmount) {
      const lots = (n: number): string =>
        `${formatUnitsTrim(n, market.spec.amountScale)} ${market.base.spec.name}`;
      return refused(
        'BELOW_MIN_AMOUNT',
        `amount ${lots(amount)} is below the market's minimum amount of ${lots(market.spec.minAmount)}`,
      );
    }
    const lotsValue = safeMul(price, amount);
    const value = lotsValue === undefined ? undefined : safeMul(lotsValue, market.quoteUnitsPerTickLot);
    if (value === undefined) return refused('VALUE_OUT_OF_RANGE', 'price × amount is too large');
    if (value < market.spec.minSize) {
      return refused(
        'BELOW_MIN_SIZE',
        `order total ${coinText(market.quote, value)} is below the market's minimum total of ${coinText(market.quote, market.spec.minSize)}`,
      );
    }
    if (side === BUY) return value;
    const base = safeMul(amount, market.baseUnitsPerLot);
    return base === undefined ? refused('VALUE_OUT_OF_RANGE', 'amount is too large') : base;
  }

  /**
   * PlaceOrder. Results: OK with `orderId`; USER_NOT_FOUND, UNKNOWN_MARKET, MARKET_HALTED,
   * ACCOUNT_TYPE_NOT_SUPPORTED, INVALID_PARAMETER, INVALID_PRICE, INVALID_AMOUNT, BELOW_MIN_AMOUNT,
   * BELOW_MIN_SIZE, VALUE_OUT_OF_RANGE, INSUFFICIENT_BALANCE, POST_ONLY_WOULD_TAKE.
   */
  #placeOrder(cmd: PlaceOrder): ApplyResult {
    const refusal = this.#orderContext(cmd.userId, cmd.market, cmd.acctType);
    if (refusal !== undefined) return refusal;
    if (cmd.side !== BUY && cmd.side !== SELL)
      return refused('INVALID_PARAMETER', 'tradeType must be 1 (buy) or 0 (sell)');
    if (cmd.kind !== 'limit' && cmd.kind !== 'postOnly' && cmd.kind !== 'ioc') {
      return refused('INVALID_PARAMETER', 'unknown order type');
    }
    if (cmd.clientOrderId !== '' && !CLIENT_ORDER_ID.test(cmd.clientOrderId)) {
      return refused('INVALID_PARAMETER', 'customerOrderId must be 4 to 36 letters or digits');
    }
    const account = this.#ctxAccount as Account;
    const market = this.#ctxMarket as MarketState;
    const cost = this.#orderCost(market, cmd.side, cmd.price, cmd.amount);
    if (typeof cost !== 'number') return cost;
    const pay = cmd.side === BUY ? market.quote.index : market.base.index;
    if ((account.available[pay] ?? 0) < cost) return this.#shortBalance(account, market, cmd.side, cost);
    if (cmd.kind === 'postOnly' && this.#wouldTake(market, cmd.side, cmd.price))
      return refused('POST_ONLY_WOULD_TAKE');
    const order = this.#submit(
      account,
      market,
      cmd.side,
      cmd.kind,
      cmd.price,
      cmd.amount,
      cost,
      cmd.acctType,
      cmd.clientOrderId,
    );
    return { result: 'OK', events: this.#events, orderId: order.id };
  }

  /**
   * PlaceOrderBatch (orderMoreV2): every order is checked, and the sum of what they freeze
   * against the available balance, before any is placed; one refusal refuses the whole batch
   * (its message names the order's index). The batch's total cost is frozen at once (one
   * BalanceChanged), then the orders are placed in the given order, each matching as a limit
   * order. Results: as PlaceOrder, with `orderIds`.
   */
  #placeOrderBatch(cmd: PlaceOrderBatch): ApplyResult {
    const refusal = this.#orderContext(cmd.userId, cmd.market, cmd.acctType);
    if (refusal !== undefined) return refusal;
    if (cmd.side !== BUY && cmd.side !== SELL)
      return refused('INVALID_PARAMETER', 'tradeType must be 1 (buy) or 0 (sell)');
    if (!Array.isArray(cmd.orders) || cmd.orders.length === 0 || cmd.orders.length > MAX_BATCH_ORDERS) {
      return refused('INVALID_PARAMETER', `tradeParams must hold 1 to ${MAX_BATCH_ORDERS} orders`);
    }
    const account = this.#ctxAccount as Account;
    const market = this.#ctxMarket as MarketState;
    const costs: number[] = [];
    let total = 0;
    for (let i = 0; i < cmd.orders.length; i++) {
      const o = cmd.orders[i] as PlaceOrderBatch['orders'][number];
      const cost = this.#orderCost(market, cmd.side, o.price, o.amount);
      if (typeof cost !== 'number') {
        return refused(cost.result, `order ${i + 1} of the batch: ${cost.message ?? cost.result}`);
      }
      costs.push(cost);
      total += cost;
    }
    const pay = cmd.side === BUY ? market.quote.index : market.base.index;
    if (!Number.isSafeInteger(total) || (account.available[pay] ?? 0) < total)
      return this.#shortBalance(account, market, cmd.side, total);
    // Freeze the whole batch first: a platform-coin fee charged on an early order's fill must
    // not spend what a later order of the same batch was checked to have.
    const payCoin = cmd.side === BUY ? market.quote : market.base;
    this.#change(account, payCoin, -total, total, 'freeze', String(this.#nextOrderId));
    const orderIds: number[] = [];
    for (let i = 0; i < cmd.orders.length; i++) {
      const o = cmd.orders[i] as PlaceOrderBatch['orders'][number];
      orderIds.push(
        this.#submit(account, market, cmd.side, 'limit', o.price, o.amount, costs[i] as number, 0, '', true)
          .id,
      );
    }
    return this.#done({ orderIds });
  }

  /** INSUFFICIENT_BALANCE saying what the order needs of the coin it pays with and what is available. */
  #shortBalance(account: Account, market: MarketState, side: Side, required: number): ApplyResult {
    const coin = side === BUY ? market.quote : market.base;
    const available = account.available[coin.index] ?? 0;
    const need = Number.isSafeInteger(required)
      ? coinText(coin, required)
      : `more than ${coinText(coin, Number.MAX_SAFE_INTEGER)}`;
    return refused(
      'INSUFFICIENT_BALANCE',
      `insufficient balance: available ${coinText(coin, available)}, required ${need}`,
    );
  }

  #wouldTake(market: MarketState, side: Side, price: number): boolean {
    const best = market.book.oppositeOf(side).best();
    return best !== undefined && (side === BUY ? price >= best.price : price <= best.price);
  }

  /** Creates the order, freezes its cost, matches it and rests or cancels what remains. */
  #submit(
    account: Account,
    market: MarketState,
    side: Side,
    kind: Order['kind'],
    price: number,
    amount: number,
    cost: number,
    acctType: Order['acctType'],
    clientOrderId: string,
    prefrozen = false,
  ): Order {
    const time = this.#time;
    const order = new Order(
      this.#nextOrderId++,
      account.userId,
      market.spec.name,
      side,
      kind,
      price,
      amount,
      cost,
      time,
      clientOrderId,
      acctType,
      account.usePlatformCoin,
    );
    this.#events.push({
      type: 'OrderAccepted',
      orderId: order.id,
      userId: account.userId,
      market: order.market,
      side,
      kind,
      price,
      amount,
      acctType,
      clientOrderId,
      usePlatformCoin: order.usePlatformCoin,
      time,
    });
    if (!prefrozen)
      this.#change(account, side === BUY ? market.quote : market.base, -cost, cost, 'freeze', order.ref);
    if (clientOrderId !== '')
      this.#clientIds.set(`${account.userId}:${order.market}:${clientOrderId}`, order.id);

    const selfTrade = this.#match(account, market, order);
    if (order.remaining === 0) {
      this.#orderUpdated(order, ORDER_DONE, null);
    } else if (selfTrade || kind === 'ioc') {
      this.#releaseRemainder(account, market, order);
      this.#orderUpdated(
        order,
        order.filled > 0 ? ORDER_DONE : ORDER_CANCELLED,
        selfTrade ? 'selfTrade' : 'ioc',
      );
    } else {
      market.book.add(order);
      this.#orders.add(order);
      account.openOrders.add(order);
      if (order.filled > 0) this.#orderUpdated(order, ORDER_PARTIAL, null);
    }
    return order;
  }

  /**
   * Matches `taker` against the opposite side in price-time priority, at each resting order's
   * price. Self-trade prevention: when the next resting order in priority belongs to the taker's
   * own user, matching stops and the taker's remainder is cancelled (returns true); the resting
   * order is untouched.
   */
  #match(takerAccount: Account, market: MarketState, taker: Order): boolean {
    const book = market.book;
    const opposite = book.oppositeOf(taker.side);
    const isBuy = taker.side === BUY;
    while (taker.remaining > 0) {
      const level = opposite.best();
      if (level === undefined || (isBuy ? level.price > taker.price : level.price < taker.price))
        return false;
      let maker = level.head;
      while (maker !== null && taker.remaining > 0) {
        if (maker.userId === taker.userId) return true;
        const next = maker.next;
        const lots = maker.remaining < taker.remaining ? maker.remaining : taker.remaining;
        const makerAccount = this.#accounts.get(maker.userId) as Account;
        this.#fill(market, taker, takerAccount, maker, makerAccount, level.price, lots);
        if (maker.remaining === 0) {
          this.#removeResting(makerAccount, market, maker);
          this.#orderUpdated(maker, ORDER_DONE, null);
        } else {
          this.#orderUpdated(maker, ORDER_PARTIAL, null);
        }
        maker = next;
      }
    }
    return false;
  }

  /** Settles one fill of `lots` at `price` between taker and maker (see money.ts, "Fill"). */
  #fill(
    market: MarketState,
    taker: Order,
    takerAccount: Account,
    maker: Order,
    makerAccount: Account,
    price: number,
    lots: number,
  ): void {
    const time = this.#time;
    const value = price * lots * market.quoteUnitsPerTickLot;
    const baseUnits = lots * market.baseUnitsPerLot;
    const tradeId = this.#nextTradeId++;
    const takerIsBuyer = taker.side === BUY;
    const buyer = takerIsBuyer ? taker : maker;
    const seller = takerIsBuyer ? maker : taker;
    const buyerAccount = takerIsBuyer ? takerAccount : makerAccount;
    const sellerAccount = takerIsBuyer ? makerAccount : takerAccount;
    const spec = market.spec;
    const buyerRate = takerIsBuyer ? spec.takerFee : spec.makerFee;
    const sellerRate = takerIsBuyer ? spec.makerFee : spec.takerFee;

    market.book.reduce(maker, lots);
    taker.remaining -= lots;
    const trade = {
      type: 'TradeExecuted' as const,
      tradeId,
      market: spec.name,
      price,
      amount: lots,
      value,
      takerSide: taker.side,
      takerOrderId: taker.id,
      makerOrderId: maker.id,
      takerUserId: taker.userId,
      makerUserId: maker.userId,
      takerFee: 0,
      takerFeeCoin: '',
      makerFee: 0,
      makerFeeCoin: '',
      time,
    };
    this.#events.push(trade);

    const buyerRef = buyer.ref;
    const sellerRef = seller.ref;

    // Buyer: frozen quote at its own limit price leaves; the improvement returns to available.
    const buyerHeld = buyer.price * lots * market.quoteUnitsPerTickLot;
    buyer.frozen -= buyerHeld;
    this.#change(buyerAccount, market.quote, buyerHeld - value, -buyerHeld, 'buy', buyerRef);
    this.#change(buyerAccount, market.base, baseUnits, 0, 'buy', buyerRef);
    this.#chargeFee(buyerAccount, buyer, buyerRef, market.base, baseUnits, buyerRate, 'buyFee');
    const buyerFee = this.#feeAmount;
    const buyerFeeCoin = this.#feeCoin;

    // Seller: frozen base leaves; the quote value arrives.
    seller.frozen -= baseUnits;
    this.#change(sellerAccount, market.base, 0, -baseUnits, 'sell', sellerRef);
    this.#change(sellerAccount, market.quote, value, 0, 'sell', sellerRef);
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
  }

  /**
   * Charges the fee on `received` units of `coin` just credited to `account` for `order`: in the
   * platform coin at a discount when the order opted in and a price path and balance allow it,
   * else in the received coin. Leaves what was charged in `#feeAmount` and `#feeCoin` (a returned
   * pair was two allocations per fill). `ref` is the order's id as text.
   */
  #chargeFee(
    account: Account,
    order: Order,
    ref: string,
    coin: CoinState,
    received: number,
    rate: number,
    bill: BillType,
  ): void {
    const fee = feeFloor(received, rate);
    this.#feeAmount = fee;
    this.#feeCoin = coin.spec.name;
    if (fee === 0) return;
    if (order.usePlatformCoin) {
      const platform = this.#coinByName.get(this.#settings.platformCoin);
      if (platform !== undefined) {
        const legs = this.#priceLegs(coin, platform);
        const platformFee =
          legs === undefined ? undefined : convertFeeToZb(fee, legs, this.#settings.platformFeeDiscount);
        if (platformFee !== undefined && (account.available[platform.index] ?? 0) >= platformFee) {
          if (platformFee > 0) {
            this.#change(account, platform, -platformFee, 0, bill, ref);
            this.#feeIncome[platform.index] = (this.#feeIncome[platform.index] ?? 0) + platformFee;
            order.platformFees += platformFee;
          }
          this.#feeAmount = platformFee;
          this.#feeCoin = platform.spec.name;
          return;
        }
      }
    }
    this.#change(account, coin, -fee, 0, bill, ref);
    this.#feeIncome[coin.index] = (this.#feeIncome[coin.index] ?? 0) + fee;
    order.fees += fee;
  }

  /**
   * Price legs to convert `from` into `to` at last trade prices: none when they are the same
   * coin; one leg through a market between them; else two legs through the first coin X (in
   * market order) with markets from→X and X→to both priced. `undefined` when there is no path.
   */
  #priceLegs(from: CoinState, to: CoinState): PriceLeg[] | undefined {
    if (from === to) return [];
    const direct = this.#leg(from, to);
    if (direct !== undefined) return [direct];
    for (const m of this.#markets) {
      const via = m.base === from ? m.quote : m.quote === from ? m.base : undefined;
      if (via === undefined || via === to) continue;
      const first = this.#leg(from, via);
      const second = first && this.#leg(via, to);
      if (first !== undefined && second !== undefined) return [first, second];
    }
    return undefined;
  }

  #leg(from: CoinState, to: CoinState): PriceLeg | undefined {
    const forward = this.#marketByName.get(`${from.spec.name}_${to.spec.name}`);
    if (forward !== undefined && forward.lastPrice > 0) {
      return {
        multiply: true,
        priceTicks: forward.lastPrice,
        priceScale: forward.spec.priceScale,
        fromDecimal: from.spec.unitDecimal,
        toDecimal: to.spec.unitDecimal,
      };
    }
    const backward = this.#marketByName.get(`${to.spec.name}_${from.spec.name}`);
    if (backward !== undefined && backward.lastPrice > 0) {
      return {
        multiply: false,
        priceTicks: backward.lastPrice,
        priceScale: backward.spec.priceScale,
        fromDecimal: from.spec.unitDecimal,
        toDecimal: to.spec.unitDecimal,
      };
    }
    return undefined;
  }

  #removeResting(account: Account, market: MarketState, order: Order): void {
    market.book.remove(order);
    this.#orders.delete(order.id);
    account.openOrders.remove(order);
  }

  /** Releases whatever the order still holds frozen. */
  #releaseRemainder(account: Account, market: MarketState, order: Order): void {
    const held = order.frozen;
    if (held === 0) return;
    order.frozen = 0;
    this.#change(
      account,
      order.side === BUY ? market.quote : market.base,
      held,
      -held,
      'unfreeze',
      order.ref,
    );
  }

  /** Cancels a resting order: out of the book, its frozen funds back to available. */
  #cancelResting(account: Account, market: MarketState, order: Order, reason: CancelReason): void {
    this.#removeResting(account, market, order);
    this.#releaseRemainder(account, market, order);
    this.#orderUpdated(order, order.filled > 0 ? ORDER_DONE : ORDER_CANCELLED, reason);
  }

  /**
   * CancelOrder by id or by client order id (the latest order of this user and market with it).
   * Results: OK with `order`; USER_NOT_FOUND, UNKNOWN_MARKET, INVALID_PARAMETER, ORDER_NOT_FOUND.
   * Allowed while the market is halted.
   */
  #cancelOrder(cmd: CancelOrder): ApplyResult {
    const account = this.#accounts.get(cmd.userId);
    if (account === undefined) return refused('USER_NOT_FOUND');
    const market = this.#marketByName.get(cmd.market);
    if (market === undefined) return refused('UNKNOWN_MARKET', `unknown market '${cmd.market}'`);
    const byId = cmd.orderId > 0;
    if (byId === (cmd.clientOrderId !== '')) {
      return refused('INVALID_PARAMETER', 'give exactly one of id and customerOrderId');
    }
    const id = byId ? cmd.orderId : this.#clientIds.get(`${cmd.userId}:${cmd.market}:${cmd.clientOrderId}`);
    const order = id === undefined ? undefined : this.#orders.get(id);
    if (order === undefined || order.userId !== cmd.userId || order.market !== cmd.market) {
      return refused('ORDER_NOT_FOUND');
    }
    this.#cancelResting(account, market, order, 'user');
    return { result: 'OK', events: this.#events, order };
  }

  /** Arms or refreshes the dead-man switch. Results: OK with `deadline`; USER_NOT_FOUND, UNKNOWN_MARKET. */
  #cancelAllOrdersAfter(cmd: CancelAllOrdersAfter): ApplyResult {
    if (!this.#accounts.has(cmd.userId)) return refused('USER_NOT_FOUND');
    if (!this.#marketByName.has(cmd.market))
      return refused('UNKNOWN_MARKET', `unknown market '${cmd.market}'`);
    const deadline = this.#time + this.#settings.cancelAllAfterMs;
    const key = `${cmd.userId}:${cmd.market}`;
    const existing = this.#deadlines.get(key);
    if (existing !== undefined) existing.deadline = deadline;
    else this.#deadlines.set(key, { userId: cmd.userId, market: cmd.market, deadline });
    this.#events.push({ type: 'DeadmanArmed', userId: cmd.userId, market: cmd.market, deadline });
    return this.#done({ deadline });
  }

  /**
   * Fires every dead-man deadline at or before the command's time, earliest first (then by user
   * and market): the user's open orders in that market are cancelled, oldest first.
   */
  #fireTimers(): ApplyResult {
    const due = [...this.#deadlines.values()]
      .filter((d) => d.deadline <= this.#time)
      .sort((a, b) => a.deadline - b.deadline || a.userId - b.userId || (a.market < b.market ? -1 : 1));
    for (const d of due) {
      this.#deadlines.delete(`${d.userId}:${d.market}`);
      const account = this.#accounts.get(d.userId) as Account;
      const market = this.#marketByName.get(d.market) as MarketState;
      const victims = [...account.openOrders].filter((o) => o.market === d.market);
      for (const order of victims) this.#cancelResting(account, market, order, 'deadman');
      this.#events.push({
        type: 'DeadmanFired',
        userId: d.userId,
        market: d.market,
        cancelled: victims.length,
        time: this.#time,
      });
    }
    return this.#done();
  }

  /** RegisterUser: a new user with empty balances. Results: OK with `userId`; INVALID_PARAMETER. */
  #registerUser(cmd: RegisterUser): ApplyResult {
    const name = cmd.name;
    if (
      typeof name !== 'string' ||
      name.length === 0 ||
      name.length > MAX_NAME_LENGTH ||
      !/^[\w.@-]+$/.test(name)
    ) {
      return refused(
        'INVALID_PARAMETER',
        `user name must be 1 to ${MAX_NAME_LENGTH} letters, digits, or . _ @ -`,
      );
    }
    if (this.#userByName.has(name)) return refused('INVALID_PARAMETER', `user name '${name}' is taken`);
    const sameIgnoringCase = this.#userByFoldedName.get(name.toLowerCase());
    if (cmd.uniqueIgnoringCase === true && sameIgnoringCase !== undefined) {
      const taken = this.#accounts.get(sameIgnoringCase)?.name ?? name;
      return refused(
        'INVALID_PARAMETER',
        `user name '${name}' is taken: '${taken}' exists, and names are unique regardless of case`,
      );
    }
    const userId = this.#nextUserId++;
    this.#addAccount(userId, name, false);
    this.#events.push({ type: 'UserRegistered', userId, name, time: this.#time });
    return this.#done({ userId });
  }

  #setFeePreference(cmd: SetFeePreference): ApplyResult {
    const account = this.#accounts.get(cmd.userId);
    if (account === undefined) return refused('USER_NOT_FOUND');
    account.usePlatformCoin = cmd.usePlatformCoin === true;
    this.#events.push({
      type: 'FeePreferenceSet',
      userId: cmd.userId,
      usePlatformCoin: account.usePlatformCoin,
    });
    return this.#done();
  }

  /** UpsertCoin: adds a coin or changes its names and switches; unitDecimal is fixed once set. */
  #upsertCoin(cmd: UpsertCoin): ApplyResult {
    const problems = validateCoin(cmd.coin);
    if (problems.length > 0) return refused('INVALID_PARAMETER', problems.join('; '));
    const existing = this.#coinByName.get(cmd.coin.name);
    if (existing === undefined) this.#addCoin(cmd.coin);
    else if (existing.spec.unitDecimal !== cmd.coin.unitDecimal) {
      return refused('INVALID_STATE', `unitDecimal of ${cmd.coin.name} cannot change`);
    } else existing.spec = { ...cmd.coin };
    this.#events.push({ type: 'CoinUpserted', coin: { ...cmd.coin } });
    return this.#done();
  }

  /**
   * UpsertMarket: adds a market or changes its limits, fees and status. Its coins and scales are
   * fixed once created: history keeps integer ticks and lots, which a new scale would misread.
   */
  #upsertMarket(cmd: UpsertMarket): ApplyResult {
    const problems = validateMarket(cmd.market, this.#coinSpecs());
    if (problems.length > 0) return refused('INVALID_PARAMETER', problems.join('; '));
    const existing = this.#marketByName.get(cmd.market.name);
    if (existing === undefined) this.#addMarket(cmd.market);
    else if (
      existing.spec.priceScale !== cmd.market.priceScale ||
      existing.spec.amountScale !== cmd.market.amountScale
    ) {
      return refused('INVALID_STATE', `the scales of market ${cmd.market.name} cannot change`);
    } else existing.spec = { ...cmd.market };
    this.#events.push({ type: 'MarketUpserted', market: { ...cmd.market } });
    return this.#done();
  }

  #setMarketStatus(cmd: SetMarketStatus): ApplyResult {
    const market = this.#marketByName.get(cmd.market);
    if (market === undefined) return refused('UNKNOWN_MARKET', `unknown market '${cmd.market}'`);
    if (cmd.status !== 'trading' && cmd.status !== 'halted')
      return refused('INVALID_PARAMETER', 'unknown status');
    market.spec = { ...market.spec, status: cmd.status };
    this.#events.push({ type: 'MarketStatusSet', market: cmd.market, status: cmd.status });
    return this.#done();
  }

  /** CreateApiKey. Results: OK; USER_NOT_FOUND; INVALID_PARAMETER (shape, duplicate key). */
  #createApiKey(cmd: CreateApiKey): ApplyResult {
    if (!this.#accounts.has(cmd.userId)) return refused('USER_NOT_FOUND');
    if (typeof cmd.accessKey !== 'string' || !ACCESS_KEY.test(cmd.accessKey)) {
      return refused('INVALID_PARAMETER', 'access key must be 8 to 64 letters, digits or dashes');
    }
    if (this.#apiKeys.has(cmd.accessKey)) return refused('INVALID_PARAMETER', 'access key already exists');
    const sealed = cmd.sealedSecret;
    if (typeof sealed !== 'string' || sealed.length === 0 || sealed.length > 1024)
      return refused('INVALID_PARAMETER', 'sealed secret missing');
    const p = cmd.permissions;
    if (
      p === null ||
      typeof p !== 'object' ||
      ![p.asset, p.entrust, p.money, p.lever].every((x) => typeof x === 'boolean')
    ) {
      return refused('INVALID_PARAMETER', 'permissions must be four booleans');
    }
    if (
      !Array.isArray(cmd.ips) ||
      cmd.ips.length > MAX_KEY_IPS ||
      !cmd.ips.every((ip) => typeof ip === 'string' && /^[0-9a-fA-F.:]{2,45}$/.test(ip))
    ) {
      return refused('INVALID_PARAMETER', `ips must be at most ${MAX_KEY_IPS} IP addresses`);
    }
    this.#apiKeys.set(cmd.accessKey, {
      userId: cmd.userId,
      accessKey: cmd.accessKey,
      sealedSecret: cmd.sealedSecret,
      permissions: { asset: p.asset, entrust: p.entrust, money: p.money, lever: p.lever },
      ips: [...cmd.ips],
      ...(cmd.replayProtection === true && { replayProtection: true }),
    });
    this.#events.push({
      type: 'ApiKeyCreated',
      userId: cmd.userId,
      accessKey: cmd.accessKey,
      time: this.#time,
    });
    return this.#done();
  }

  #deleteApiKey(cmd: DeleteApiKey): ApplyResult {
    const key = this.#apiKeys.get(cmd.accessKey);
    if (key === undefined) return refused('UNKNOWN_REFERENCE', 'no such access key');
    this.#apiKeys.delete(cmd.accessKey);
    this.#events.push({
      type: 'ApiKeyDeleted',
      userId: key.userId,
      accessKey: cmd.accessKey,
      time: this.#time,
    });
    return this.#done();
  }

  // ───────────────────────────── internals ─────────────────────────────

  /** Moves a balance and records the change. Callers have checked that nothing goes negative. */
  #change(
    account: Account,
    coin: CoinState,
    deltaAvailable: CoinUnits,
    deltaFrozen: CoinUnits,
    billType: BillType,
    ref: string,
  ): void {
    const i = coin.index;
    const available = (account.available[i] ?? 0) + deltaAvailable;
    const frozen = (account.frozen[i] ?? 0) + deltaFrozen;
    if (available < 0 || frozen < 0) {
      throw new Error(
        `invariant broken: user ${account.userId} ${coin.spec.name} would go negative (${billType} ${ref})`,
      );
    }
    account.available[i] = available;
    account.frozen[i] = frozen;
    this.#events.push({
      type: 'BalanceChanged',
      userId: account.userId,
      coin: coin.spec.name,
      available,
      frozen,
      deltaAvailable,
      deltaFrozen,
      billType,
      ref,
      time: this.#time,
    });
  }

  #orderUpdated(order: Order, status: OrderStatus, cancelReason: CancelReason | null): void {
    this.#events.push({
      type: 'OrderUpdated',
      orderId: order.id,
      userId: order.userId,
      market: order.market,
      status,
      filled: order.filled,
      filledValue: order.filledValue,
      fees: order.fees,
      platformFees: order.platformFees,
      cancelReason,
      lastTradeId: order.lastTradeId,
      lastTradePrice: order.lastTradePrice,
      lastTradeAmount: order.lastTradeAmount,
      lastTradeTime: order.lastTradeTime,
      time: this.#time,
    });
  }

  #coinSpecs(): Map<string, CoinSpec> {
    return new Map(this.#coins.map((c) => [c.spec.name, c.spec]));
  }

  #addCoin(spec: CoinSpec): CoinState {
    const state = { spec: { ...spec }, index: this.#coins.length };
    this.#coins.push(state);
    this.#coinByName.set(spec.name, state);
    this.#feeIncome.push(0);
    return state;
  }

  #addMarket(spec: MarketSpec): MarketState {
    const base = this.#coinByName.get(spec.base) as CoinState;
    const quote = this.#coinByName.get(spec.quote) as CoinState;
    const state: MarketState = {
      spec: { ...spec },
      index: this.#markets.length,
      base,
      quote,
      baseUnitsPerLot: baseUnitsPerLot(spec, base.spec),
      quoteUnitsPerTickLot: quoteUnitsPerTickLot(spec, quote.spec),
      book: new OrderBook(),
      lastPrice: 0,
    };
    this.#markets.push(state);
    this.#marketByName.set(spec.name, state);
    return state;
  }

  #addAccount(userId: number, name: string, usePlatformCoin: boolean): Account {
    const account: Account = {
      userId,
      name,
      available: [],
      frozen: [],
      usePlatformCoin,
      openOrders: new OwnerOrders(),
    };
    this.#accounts.set(userId, account);
    this.#userByName.set(name, userId);
    const folded = name.toLowerCase();
    if (!this.#userByFoldedName.has(folded)) this.#userByFoldedName.set(folded, userId);
    return account;
  }

  // ───────────────────────────── reads ─────────────────────────────

  get lastSeq(): number {
    return this.#lastSeq;
  }

  get settings(): VenueSettings {
    return this.#settings;
  }

  /** Deposits, deposit and withdrawal addresses, fund passwords and withdrawals, read-only. */
  get funds(): FundsView {
    return this.#funds;
  }

  get demo(): DemoView {
    return this.#demo;
  }

  coins(): CoinSpec[] {
    return this.#coins.map((c) => c.spec);
  }

  coin(name: string): CoinSpec | undefined {
    return this.#coinByName.get(name)?.spec;
  }

  markets(): MarketSpec[] {
    return this.#markets.map((m) => m.spec);
  }

  market(name: string): MarketSpec | undefined {
    return this.#marketByName.get(name)?.spec;
  }

  /** Last trade price of a market in ticks (0 before its first trade). */
  lastPrice(market: string): number {
    return this.#marketByName.get(market)?.lastPrice ?? 0;
  }

  /**
   * The user with this name, ignoring case: the exact name first (a history from before names
   * were unique regardless of case may hold `alice` and `Alice`), else the first user registered
   * with a name equal to it ignoring case.
   */
  userId(name: string): number | undefined {
    return this.#userByName.get(name) ?? this.#userByFoldedName.get(name.toLowerCase());
  }

  userName(userId: number): string | undefined {
    return this.#accounts.get(userId)?.name;
  }

  /** A user's balance of one coin, or `undefined` for an unknown user or coin. */
  balance(userId: number, coin: string): { available: number; frozen: number } | undefined {
    const account = this.#accounts.get(userId);
    const c = this.#coinByName.get(coin);
    if (account === undefined || c === undefined) return undefined;
    return { available: account.available[c.index] ?? 0, frozen: account.frozen[c.index] ?? 0 };
  }

  /** An API key by its access key. */
  apiKey(accessKey: string): ApiKeyRecord | undefined {
    return this.#apiKeys.get(accessKey);
  }

  /** The keys of one user. */
  apiKeysOf(userId: number): ApiKeyRecord[] {
    return [...this.#apiKeys.values()].filter((k) => k.userId === userId);
  }

  usesPlatformCoin(userId: number): boolean {
    return this.#accounts.get(userId)?.usePlatformCoin ?? false;
  }

  feeIncome(coin: string): number {
    const c = this.#coinByName.get(coin);
    return c === undefined ? 0 : (this.#feeIncome[c.index] ?? 0);
  }

  /** A resting order by id. */
  openOrder(orderId: number): OrderView | undefined {
    const o = this.#orders.get(orderId);
    return o === undefined ? undefined : view(o, o.filled > 0 ? ORDER_PARTIAL : ORDER_PENDING);
  }

  /** The user's resting orders (in one market, or all), oldest first. */
  openOrders(userId: number, market?: string): OrderView[] {
    const account = this.#accounts.get(userId);
    if (account === undefined) return [];
    const out: OrderView[] = [];
    for (const o of account.openOrders) {
      if (market === undefined || o.market === market)
        out.push(view(o, o.filled > 0 ? ORDER_PARTIAL : ORDER_PENDING));
    }
    return out;
  }

  /** The latest order id a user gave a client order id in a market, open or not. */
  orderIdForClientId(userId: number, market: string, clientOrderId: string): number | undefined {
    return this.#clientIds.get(`${userId}:${market}:${clientOrderId}`);
  }

  /** Aggregated depth: `[price, lots]` per level, best first. */
  depth(market: string, limit: number): { bids: [number, number][]; asks: [number, number][] } | undefined {
    const m = this.#marketByName.get(market);
    if (m === undefined) return undefined;
    return { bids: m.book.depth(BUY, limit), asks: m.book.depth(SELL, limit) };
  }

  /** Number of resting orders over all markets. */
  get openOrderCount(): number {
    return this.#orders.size;
  }

  /** The earliest armed dead-man deadline, or `undefined`. The scheduler fires timers then. */
  nextDeadline(): number | undefined {
    let next: number | undefined;
    for (const d of this.#deadlines.values()) if (next === undefined || d.deadline < next) next = d.deadline;
    return next;
  }

  // ───────────────────────────── snapshots and checks ─────────────────────────────

  /**
   * The whole state as plain data in a canonical order (ids, names and keys sorted), so that two
   * engines in the same state give identical snapshots however they got there.
   */
  snapshot(): EngineSnapshot {
    const orders: SnapshotOrder[] = [...this.#orders.values()].map((o) => [
      o.id,
      o.userId,
      o.market,
      o.side,
      o.kind,
      o.price,
      o.amount,
      o.remaining,
      o.filled,
      o.filledValue,
      o.fees,
      o.platformFees,
      o.frozen,
      o.time,
      o.clientOrderId,
      o.acctType,
      o.usePlatformCoin,
      o.lastTradeId,
      o.lastTradePrice,
      o.lastTradeAmount,
      o.lastTradeTime,
    ]);
    const byKey = <T>(entries: Iterable<[string, T]>): [string, T][] =>
      [...entries].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    const n = this.#coins.length;
    const full = (xs: number[]): number[] => Array.from({ length: n }, (_, i) => xs[i] ?? 0);
    return {
      version: SNAPSHOT_VERSION,
      lastSeq: this.#lastSeq,
      settings: { ...this.#settings },
      coins: this.#coins.map((c) => ({ ...c.spec })),
      markets: this.#markets.map((m) => ({ spec: { ...m.spec }, lastPrice: m.lastPrice })),
      nextUserId: this.#nextUserId,
      nextOrderId: this.#nextOrderId,
      nextTradeId: this.#nextTradeId,
      users: [...this.#accounts.values()]
        .sort((a, b) => a.userId - b.userId)
        .map((a) => [a.userId, a.name, a.usePlatformCoin, full(a.available), full(a.frozen)]),
      orders,
      clientIds: byKey(this.#clientIds),
      deadlines: byKey([...this.#deadlines].map(([k, d]) => [k, d.deadline] as [string, number])),
      apiKeys: byKey(
        [...this.#apiKeys].map(([k, v]) => [k, { ...v, ips: [...v.ips] }] as [string, ApiKeyRecord]),
      ),
      feeIncome: full(this.#feeIncome),
      funds: this.#funds.snapshot(),
      demo: this.#demo.snapshot(),
    };
  }

  /** Rebuilds an engine from a snapshot. Throws if the snapshot is inconsistent. */
  static restore(s: EngineSnapshot): Engine {
    if (s.version !== SNAPSHOT_VERSION)
      throw new Error(`snapshot version ${s.version} is not ${SNAPSHOT_VERSION}`);
    const engine = new Engine({
      settings: s.settings,
      coins: s.coins,
      markets: s.markets.map((m) => m.spec),
      funds: s.funds.config,
    });
    engine.#lastSeq = s.lastSeq;
    s.markets.forEach((m, i) => ((engine.#markets[i] as MarketState).lastPrice = m.lastPrice));
    engine.#nextUserId = s.nextUserId;
    engine.#nextOrderId = s.nextOrderId;
    engine.#nextTradeId = s.nextTradeId;
    for (const [userId, name, usePlatformCoin, available, frozen] of s.users) {
      const account = engine.#addAccount(userId, name, usePlatformCoin);
      account.available.push(...available);
      account.frozen.push(...frozen);
    }
    for (const r of s.orders) {
      const [
        id,
        userId,
        market,
        side,
        kind,
        price,
        amount,
        remaining,
        filled,
        filledValue,
        fees,
        platformFees,
      ] = r;
      const [, , , , , , , , , , , , frozen, time, clientOrderId, acctType, usePlatformCoin] = r;
      const [, , , , , , , , , , , , , , , , , lastTradeId, lastTradePrice, lastTradeAmount, lastTradeTime] =
        r;
      const m = engine.#marketByName.get(market);
      const account = engine.#accounts.get(userId);
      if (m === undefined || account === undefined)
        throw new Error(`snapshot order ${id}: unknown market or user`);
      const o = new Order(
        id,
        userId,
        market,
        side,
        kind,
        price,
        amount,
        frozen,
        time,
        clientOrderId,
        acctType,
        usePlatformCoin,
      );
      o.remaining = remaining;
      o.filled = filled;
      o.filledValue = filledValue;
      o.fees = fees;
      o.platformFees = platformFees;
      o.lastTradeId = lastTradeId;
      o.lastTradePrice = lastTradePrice;
      o.lastTradeAmount = lastTradeAmount;
      o.lastTradeTime = lastTradeTime;
      m.book.add(o);
      engine.#orders.add(o);
      account.openOrders.add(o);
    }
    for (const [k, id] of s.clientIds) engine.#clientIds.set(k, id);
    for (const [k, deadline] of s.deadlines) {
      const i = k.indexOf(':');
      engine.#deadlines.set(k, { userId: Number(k.slice(0, i)), market: k.slice(i + 1), deadline });
    }
    for (const [k, v] of s.apiKeys) engine.#apiKeys.set(k, v);
    s.feeIncome.forEach((v, i) => (engine.#feeIncome[i] = v));
    engine.#funds.load(s.funds);
    if (s.demo !== undefined) engine.#demo.load(s.demo);
    engine.assertInvariants();
    return engine;
  }

  /**
   * SHA-256 (hex) of the canonical snapshot: equal states, equal hashes. Pass a snapshot just
   * taken of this engine to avoid building it twice.
   */
  stateHash(snapshot: EngineSnapshot = this.snapshot()): string {
    return createHash('sha256').update(JSON.stringify(snapshot)).digest('hex');
  }

  /**
   * Checks every invariant and throws on the first broken one:
   * no negative or unsafe balance; each user's frozen balance of a coin equals what their open
   * orders and pending withdrawals hold; each order holds exactly price × remaining (buy) or
   * remaining (sell); the books are consistent and uncrossed and match the order index;
   * conservation: Σ (available + frozen) + fee income = credits − settled withdrawals, per coin;
   * and the funds state's own rules (`Funds.assertInvariants`).
   */
  assertInvariants(): void {
    const n = this.#coins.length;
    const expectedFrozen = new Map<number, number[]>();
    const holds = (userId: number): number[] => {
      let xs = expectedFrozen.get(userId);
      if (xs === undefined) expectedFrozen.set(userId, (xs = new Array<number>(n).fill(0)));
      return xs;
    };
    let resting = 0;
    for (const m of this.#markets) {
      m.book.validate();
      resting += m.book.size;
      for (const o of m.book.orders()) {
        if (this.#orders.get(o.id) !== o) throw new Error(`order ${o.id} in the book but not in the index`);
        const expected =
          o.side === BUY ? o.price * o.remaining * m.quoteUnitsPerTickLot : o.remaining * m.baseUnitsPerLot;
        if (o.frozen !== expected) throw new Error(`order ${o.id} holds ${o.frozen}, expected ${expected}`);
        if (o.filled + o.remaining !== o.amount)
          throw new Error(`order ${o.id}: filled + remaining ≠ amount`);
        const xs = holds(o.userId);
        const pay = o.side === BUY ? m.quote.index : m.base.index;
        xs[pay] = (xs[pay] ?? 0) + o.frozen;
      }
    }
    if (resting !== this.#orders.size)
      throw new Error(`${this.#orders.size} indexed orders but ${resting} resting`);
    this.#funds.forEachHold((userId, coin, units) => {
      const xs = holds(userId);
      const i = (this.#coinByName.get(coin) as CoinState).index;
      xs[i] = (xs[i] ?? 0) + units;
    });
    const totals = new Array<bigint>(n).fill(0n);
    let openListed = 0;
    for (const a of this.#accounts.values()) {
      let listed = 0;
      let lastId = 0;
      for (const o of a.openOrders) {
        if (o.userId !== a.userId || this.#orders.get(o.id) !== o || o.id <= lastId)
          throw new Error(`user ${a.userId} lists order ${o.id} wrongly`);
        lastId = o.id;
        listed++;
      }
      if (listed !== a.openOrders.size) throw new Error(`user ${a.userId}: open order count mismatch`);
      openListed += listed;
      const xs = expectedFrozen.get(a.userId);
      for (let i = 0; i < n; i++) {
        const available = a.available[i] ?? 0;
        const frozen = a.frozen[i] ?? 0;
        const coin = (this.#coins[i] as CoinState).spec.name;
        if (!Number.isSafeInteger(available) || available < 0)
          throw new Error(`user ${a.userId} ${coin} available ${available}`);
        if (!Number.isSafeInteger(frozen) || frozen < 0)
          throw new Error(`user ${a.userId} ${coin} frozen ${frozen}`);
        const expected = xs?.[i] ?? 0;
        if (frozen !== expected)
          throw new Error(`user ${a.userId} ${coin} frozen ${frozen}, holds ${expected}`);
        totals[i] = (totals[i] as bigint) + BigInt(available) + BigInt(frozen);
      }
    }
    if (openListed !== this.#orders.size)
      throw new Error(`accounts list ${openListed} orders, index has ${this.#orders.size}`);
    for (let i = 0; i < n; i++) {
      const held = (totals[i] as bigint) + BigInt(this.#feeIncome[i] ?? 0);
      const coin = (this.#coins[i] as CoinState).spec.name;
      const net = this.#funds.credited(coin) - this.#funds.withdrawn(coin);
      if (held !== net) throw new Error(`conservation broken for ${coin}: held ${held}, net credits ${net}`);
    }
    this.#funds.assertInvariants();
    this.#demo.assertInvariants();
  }

  /** Per coin: Σ users' available + frozen, fee income, credits and settled withdrawals. */
  totals(
    coin: string,
  ): { users: bigint; feeIncome: number; credited: bigint; withdrawn: bigint } | undefined {
    const c = this.#coinByName.get(coin);
    if (c === undefined) return undefined;
    let users = 0n;
    for (const a of this.#accounts.values()) {
      users += BigInt(a.available[c.index] ?? 0) + BigInt(a.frozen[c.index] ?? 0);
    }
    return {
      users,
      feeIncome: this.#feeIncome[c.index] ?? 0,
      credited: this.#funds.credited(coin),
      withdrawn: this.#funds.withdrawn(coin),
    };
  }
}

/** Units of a coin as the API shows amounts: decimal text and the coin's name ("0.5 btc"). */
function coinText(coin: CoinState, units: number): string {
  return `${formatUnitsTrim(units, coin.spec.unitDecimal)} ${coin.spec.name}`;
}

/** Adds one fill to an order's totals and makes it the order's latest trade. */
function recordFill(
  o: Order,
  tradeId: number,
  price: number,
  lots: number,
  value: number,
  time: number,
): void {
  o.filled += lots;
  o.filledValue += value;
  o.lastTradeId = tradeId;
  o.lastTradePrice = price;
  o.lastTradeAmount = lots;
  o.lastTradeTime = time;
}

function view(o: Order, status: OrderStatus): OrderView {
  return {
    id: o.id,
    userId: o.userId,
    market: o.market,
    side: o.side,
    kind: o.kind,
    price: o.price,
    amount: o.amount,
    filled: o.filled,
    filledValue: o.filledValue,
    fees: o.fees,
    platformFees: o.platformFees,
    status,
    time: o.time,
    clientOrderId: o.clientOrderId,
    acctType: o.acctType,
    usePlatformCoin: o.usePlatformCoin,
  };
}
