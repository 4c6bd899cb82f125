/**
 * @module matching — orders: the pre-trade checks, price-time matching, resting, and cancels.
 *
 * Commands: PlaceOrder, PlaceOrderBatch, CancelOrder (`apply`), and `cancelAllIn` for the
 * dead-man switch. Each fill is settled by src/engine/settlement.ts; every balance moves through
 * the ledger (src/engine/ledger.ts). The order of events per command is in src/domain/events.ts.
 */
import {
  BUY,
  CLIENT_ORDER_ID,
  SELL,
  type CancelOrder,
  type PlaceOrder,
  type PlaceOrderBatch,
  type Side,
} from '../domain/commands.ts';
import {
  ORDER_CANCELLED,
  ORDER_DONE,
  ORDER_PARTIAL,
  ORDER_PENDING,
  type CancelReason,
  type OrderStatus,
} from '../domain/events.ts';
import { formatUnitsTrim, safeMul, type CoinUnits, type Lots, type PriceTicks } from '../domain/money.ts';
import { refused, type CommandContext } from './command-context.ts';
import type { ApplyResult, CancelledOrder, OrderView } from './results.ts';
import type { Ledger, LedgerAccount } from './ledger.ts';
import type { Margin } from './margin.ts';
import { Order, OrderIndex } from './order-book.ts';
import type { CoinState, MarketState, Registry, User } from './registry.ts';
import type { Settlement } from './settlement.ts';

/** The most orders one batch (orderMoreV2) may carry. */
export const MAX_BATCH_ORDERS = 20;

export type MatchingCommand = PlaceOrder | PlaceOrderBatch | CancelOrder;

export class Matching {
  readonly #ctx: CommandContext;
  readonly #ledger: Ledger;
  readonly #registry: Registry;
  readonly #settlement: Settlement;
  /** Margin orders' accounts, express borrowing and auto-repayment (src/engine/margin.ts). */
  readonly #margin: Margin;
  /** Resting orders by id. */
  readonly #orders = new OrderIndex();
  /** `${userId}:${market}:${clientOrderId}` → the latest order id with it. */
  readonly #clientIds = new Map<string, number>();
  #nextOrderId = 1;
  /** What `#submit` takes, one object filled in by each caller: no allocation per order. */
  readonly #submission: Submission = {
    account: undefined,
    user: undefined,
    market: undefined,
    side: BUY,
    kind: 'limit',
    price: 0,
    amount: 0,
    cost: 0,
    acctType: 0,
    clientOrderId: '',
    prefrozen: false,
  };
  /** The one-order list a single order's loss check takes, reused: no array per order. */
  readonly #oneOrder: [Pick<PlaceOrder, 'price' | 'amount'>] = [{ price: 0, amount: 0 }];
  // Scratch of `#orderContext` (a returned pair was an allocation on every placement).
  #ctxUser: User | undefined;
  #ctxMarket: MarketState | undefined;

  constructor(
    ctx: CommandContext,
    ledger: Ledger,
    registry: Registry,
    settlement: Settlement,
    margin: Margin,
  ) {
    this.#ctx = ctx;
    this.#ledger = ledger;
    this.#registry = registry;
    this.#settlement = settlement;
    this.#margin = margin;
  }

  /** Applies PlaceOrder, PlaceOrderBatch or CancelOrder. */
  apply(cmd: MatchingCommand): ApplyResult {
    switch (cmd.type) {
      case 'PlaceOrder':
        return this.#placeOrder(cmd);
      case 'PlaceOrderBatch':
        return this.#placeOrderBatch(cmd);
      case 'CancelOrder':
        return this.#cancelOrder(cmd);
    }
  }

  /**
   * The checks shared by single and batch placement: who, where, and whether trading is open.
   * Returns the refusal, or `undefined` with the user and market left in `#ctxUser` and
   * `#ctxMarket`.
   */
  #orderContext(userId: number, marketName: string, acctType: number): ApplyResult | undefined {
    const user = this.#registry.user(userId);
    if (user === undefined) return refused('USER_NOT_FOUND');
    if (this.#registry.isFrozen(user)) return refused('ACCOUNT_FROZEN');
    const market = this.#registry.market(marketName);
    if (market === undefined) return refused('UNKNOWN_MARKET', `unknown market '${marketName}'`);
    if (acctType !== 0 && acctType !== 1 && acctType !== 2)
      return refused('INVALID_PARAMETER', 'acctType must be 0, 1 or 2');
    if (market.spec.status !== 'trading')
      return refused('MARKET_HALTED', `market ${marketName} is ${market.spec.status}`);
    this.#ctxUser = user;
    this.#ctxMarket = market;
    return undefined;
  }

  /**
   * Checks one order's numbers against the market and returns what it must freeze, or a refusal.
   * Order: price, amount, minAmount, value range, minSize.
   */
  #orderCost(market: MarketState, side: Side, price: PriceTicks, amount: Lots): CoinUnits | ApplyResult {
    if (!Number.isSafeInteger(price) || price <= 0) return refused('INVALID_PRICE', 'price must be positive');
    if (!Number.isSafeInteger(amount) || amount <= 0)
      return refused('INVALID_AMOUNT', 'amount must be positive');
    if (amount < market.spec.minAmount) {
      return refused(
        'BELOW_MIN_AMOUNT',
        `amount ${lotsText(market, amount)} is below the market's minimum amount of ${lotsText(market, market.spec.minAmount)}`,
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

  /** INSUFFICIENT_BALANCE saying what the order needs of the coin it pays with and what is available. */
  #shortBalance(available: CoinUnits, market: MarketState, side: Side, required: CoinUnits): ApplyResult {
    const coin = side === BUY ? market.quote : market.base;
    const need = Number.isSafeInteger(required)
      ? coinText(coin, required)
      : `more than ${coinText(coin, Number.MAX_SAFE_INTEGER)}`;
    return refused(
      'INSUFFICIENT_BALANCE',
      `insufficient balance: available ${coinText(coin, available)}, required ${need}`,
    );
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
    const user = this.#ctxUser as User;
    const market = this.#ctxMarket as MarketState;
    const cost = this.#orderCost(market, cmd.side, cmd.price, cmd.amount);
    if (typeof cost !== 'number') return cost;
    const acctType = cmd.acctType;
    let account = acctType === 0 ? user.spot : this.#margin.orderAccount(user, market, acctType);
    const payCoin = cmd.side === BUY ? market.quote : market.base;
    const borrow = this.#borrowFor(cmd, account, user, market, payCoin, cost);
    if (typeof borrow !== 'number') return borrow;
    // Issue 29: a margin order priced far from the mark is held to the opening line.
    const one = this.#oneOrder;
    one[0] = cmd;
    const far = this.#margin.orderLossCheck(
      account,
      user,
      market,
      acctType,
      cmd.side === BUY,
      one,
      payCoin,
      borrow,
    );
    if (far !== undefined) return far;
    if (cmd.kind === 'postOnly' && this.#wouldTake(market, cmd.side, cmd.price))
      return refused('POST_ONLY_WOULD_TAKE');
    if (borrow > 0)
      account = this.#margin.expressBorrow(account, user.userId, market, acctType, payCoin, borrow);
    const s = this.#submission;
    s.account = account;
    s.user = user;
    s.market = market;
    s.side = cmd.side;
    s.kind = cmd.kind;
    s.price = cmd.price;
    s.amount = cmd.amount;
    s.cost = cost;
    s.acctType = cmd.acctType;
    s.clientOrderId = cmd.clientOrderId;
    s.prefrozen = false;
    const order = this.#submit(s);
    this.#margin.autoRepay();
    return { result: 'OK', events: this.#ctx.events, orderId: order.id };
  }

  /**
   * What an order (or batch) paying `need` units of `payCoin` from `account` must borrow: 0 when
   * the available balance covers it, else what a margin order may borrow (its `express`, else the
   * account's default). Refusals: INSUFFICIENT_BALANCE when it may not borrow (or `need` is not a
   * safe integer), the borrow's own (over the limit, no offers).
   */
  #borrowFor(
    cmd: Pick<PlaceOrder, 'express' | 'side' | 'acctType'>,
    account: LedgerAccount | undefined,
    user: User,
    market: MarketState,
    payCoin: CoinState,
    need: CoinUnits,
  ): CoinUnits | ApplyResult {
    const available = account?.available(payCoin.index) ?? 0;
    if (!Number.isSafeInteger(need)) return this.#shortBalance(available, market, cmd.side, need);
    if (available >= need) return 0;
    const acctType = cmd.acctType;
    if (acctType === 0 || !(cmd.express ?? this.#margin.expressByDefault(user, market, acctType)))
      return this.#shortBalance(available, market, cmd.side, need);
    return this.#margin.expressCheck(account, user.userId, market, acctType, payCoin, need - available);
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
    const user = this.#ctxUser as User;
    const market = this.#ctxMarket as MarketState;
    const acctType = cmd.acctType;
    let account = acctType === 0 ? user.spot : this.#margin.orderAccount(user, market, acctType);
    const costs: CoinUnits[] = [];
    let total: CoinUnits = 0;
    for (let i = 0; i < cmd.orders.length; i++) {
      const o = cmd.orders[i] as PlaceOrderBatch['orders'][number];
      const cost = this.#orderCost(market, cmd.side, o.price, o.amount);
      if (typeof cost !== 'number') {
        return refused(cost.result, `order ${i + 1} of the batch: ${cost.message ?? cost.result}`);
      }
      costs.push(cost);
      total += cost;
    }
    const payCoin = cmd.side === BUY ? market.quote : market.base;
    const borrow = this.#borrowFor(cmd, account, user, market, payCoin, total);
    if (typeof borrow !== 'number') return borrow;
    const far = this.#margin.orderLossCheck(
      account,
      user,
      market,
      acctType,
      cmd.side === BUY,
      cmd.orders,
      payCoin,
      borrow,
    );
    if (far !== undefined) return far;
    if (borrow > 0)
      account = this.#margin.expressBorrow(account, user.userId, market, acctType, payCoin, borrow);
    // Freeze the whole batch first: a platform-coin fee charged on an early order's fill must
    // not spend what a later order of the same batch was checked to have.
    const acct = account as LedgerAccount;
    this.#ledger.change(acct, payCoin, -total, total, 'freeze', String(this.#nextOrderId));
    const orderIds: number[] = [];
    const s = this.#submission;
    for (let i = 0; i < cmd.orders.length; i++) {
      const o = cmd.orders[i] as PlaceOrderBatch['orders'][number];
      s.account = acct;
      s.user = user;
      s.market = market;
      s.side = cmd.side;
      s.kind = 'limit';
      s.price = o.price;
      s.amount = o.amount;
      s.cost = costs[i] as number;
      s.acctType = acctType;
      s.clientOrderId = '';
      s.prefrozen = true;
      orderIds.push(this.#submit(s).id);
    }
    this.#margin.autoRepay();
    return { result: 'OK', events: this.#ctx.events, orderIds };
  }

  #wouldTake(market: MarketState, side: Side, price: PriceTicks): boolean {
    const best = market.book.oppositeOf(side).best();
    return best !== undefined && (side === BUY ? price >= best.price : price <= best.price);
  }

  /**
   * Creates the order `s` describes, freezes its cost in its account (unless `prefrozen`), matches
   * it and rests or cancels what remains. Reads `s` before anything else, so the caller may fill
   * the same object in again for its next order.
   */
  #submit(s: Submission): Order {
    const account = s.account as LedgerAccount;
    const user = s.user as User;
    const market = s.market as MarketState;
    const { side, kind, price, amount, cost, acctType, clientOrderId, prefrozen } = s;
    const ctx = this.#ctx;
    const time = ctx.time;
    const order = new Order(
      this.#nextOrderId++,
      user.userId,
      market.spec.name,
      side,
      kind,
      price,
      amount,
      cost,
      time,
      clientOrderId,
      acctType,
      user.usePlatformCoin,
    );
    if (acctType !== 0) order.marginAccount = account;
    ctx.events.push(ctx.pool.orderAccepted(order, time));
    if (!prefrozen)
      this.#ledger.change(
        account,
        side === BUY ? market.quote : market.base,
        -cost,
        cost,
        'freeze',
        order.ref,
      );
    if (clientOrderId !== '')
      this.#clientIds.set(`${user.userId}:${order.market}:${clientOrderId}`, order.id);

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
      user.openOrders.add(order);
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
  #match(takerAccount: LedgerAccount, market: MarketState, taker: Order): boolean {
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
        const makerUser = this.#registry.user(maker.userId) as User;
        const makerAccount = maker.marginAccount ?? makerUser.spot;
        this.#settlement.fill(market, taker, takerAccount, maker, makerAccount, level.price, lots);
        if (takerAccount.margin !== undefined || makerAccount.margin !== undefined)
          this.#noteReceived(market, taker, takerAccount, makerAccount, level.price, lots);
        if (maker.remaining === 0) {
          this.#removeResting(makerUser, market, maker);
          this.#orderUpdated(maker, ORDER_DONE, null);
        } else {
          this.#orderUpdated(maker, ORDER_PARTIAL, null);
        }
        maker = next;
      }
    }
    return false;
  }

  /** Tells margin what a fill brought into margin accounts (for auto-repayment). */
  #noteReceived(
    market: MarketState,
    taker: Order,
    takerAccount: LedgerAccount,
    makerAccount: LedgerAccount,
    price: PriceTicks,
    lots: Lots,
  ): void {
    const base = lots * market.baseUnitsPerLot;
    const value = price * lots * market.quoteUnitsPerTickLot;
    const takerBuys = taker.side === BUY;
    if (takerAccount.margin !== undefined)
      this.#margin.noteReceived(
        takerAccount,
        takerBuys ? market.base : market.quote,
        takerBuys ? base : value,
      );
    if (makerAccount.margin !== undefined)
      this.#margin.noteReceived(
        makerAccount,
        takerBuys ? market.quote : market.base,
        takerBuys ? value : base,
      );
  }

  #removeResting(user: User, market: MarketState, order: Order): void {
    market.book.remove(order);
    this.#orders.delete(order.id);
    user.openOrders.remove(order);
  }

  /** Releases whatever the order still holds frozen. */
  #releaseRemainder(account: LedgerAccount, market: MarketState, order: Order): void {
    const held = order.frozen;
    if (held === 0) return;
    order.frozen = 0;
    this.#ledger.change(
      account,
      order.side === BUY ? market.quote : market.base,
      held,
      -held,
      'unfreeze',
      order.ref,
    );
  }

  /** Cancels a resting order: out of the book, its frozen funds back to available. */
  #cancelResting(user: User, market: MarketState, order: Order, reason: CancelReason): void {
    this.#removeResting(user, market, order);
    this.#releaseRemainder(order.marginAccount ?? user.spot, market, order);
    this.#orderUpdated(order, order.filled > 0 ? ORDER_DONE : ORDER_CANCELLED, reason);
  }

  /**
   * CancelOrder by id or by client order id (the latest order of this user and market with it).
   * Results: OK with `order`; USER_NOT_FOUND, UNKNOWN_MARKET, INVALID_PARAMETER, ORDER_NOT_FOUND.
   * Allowed while the market is halted.
   */
  #cancelOrder(cmd: CancelOrder): ApplyResult {
    const user = this.#registry.user(cmd.userId);
    if (user === undefined) return refused('USER_NOT_FOUND');
    const market = this.#registry.market(cmd.market);
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
    this.#cancelResting(user, market, order, 'user');
    return { result: 'OK', events: this.#ctx.events, order: order as CancelledOrder };
  }

  /** Cancels a user's resting orders in one market, oldest first; returns how many. */
  cancelAllIn(userId: number, marketName: string, reason: CancelReason): number {
    const user = this.#registry.user(userId) as User;
    const market = this.#registry.market(marketName) as MarketState;
    const victims = [...user.openOrders].filter((o) => o.market === marketName);
    for (const order of victims) this.#cancelResting(user, market, order, reason);
    return victims.length;
  }

  /** Cancels every resting order held in a margin account (a forced liquidation's first step). */
  cancelAccountOrders(account: LedgerAccount, reason: CancelReason): number {
    const user = this.#registry.user(account.userId) as User;
    const victims = [...user.openOrders].filter((o) => o.marginAccount === account);
    for (const order of victims)
      this.#cancelResting(user, this.#registry.market(order.market) as MarketState, order, reason);
    return victims.length;
  }

  /**
   * A forced liquidation's order (src/engine/risk.ts): immediate-or-cancel from a locked margin
   * account, no trading fee, no minimum amount or total. Returns the lots filled. First the owner's
   * resting orders in the market (of any account) that the order could reach are cancelled (reason
   * `liquidation`, oldest first): self-trade prevention would otherwise stop it at them.
   */
  liquidationOrder(
    account: LedgerAccount,
    market: MarketState,
    side: Side,
    price: PriceTicks,
    lots: Lots,
  ): Lots {
    const user = this.#registry.user(account.userId) as User;
    const reachable = [...user.openOrders].filter(
      (o) =>
        o.market === market.spec.name &&
        o.side !== side &&
        (side === BUY ? o.price <= price : o.price >= price),
    );
    for (const order of reachable) this.#cancelResting(user, market, order, 'liquidation');
    // No minimum amount or total: a liquidation closes whatever is left.
    const cost = side === BUY ? price * lots * market.quoteUnitsPerTickLot : lots * market.baseUnitsPerLot;
    this.#settlement.liquidationTaker = true;
    try {
      const s = this.#submission;
      s.account = account;
      s.user = user;
      s.market = market;
      s.side = side;
      s.kind = 'ioc';
      s.price = price;
      s.amount = lots;
      s.cost = cost;
      s.acctType = 1;
      s.clientOrderId = '';
      s.prefrozen = false;
      return this.#submit(s).filled;
    } finally {
      this.#settlement.liquidationTaker = false;
    }
  }

  #orderUpdated(order: Order, status: OrderStatus, cancelReason: CancelReason | null): void {
    const ctx = this.#ctx;
    ctx.events.push(ctx.pool.orderUpdated(order, status, cancelReason, ctx.time));
  }

  // ───────────────────────────── reads ─────────────────────────────

  get nextOrderId(): number {
    return this.#nextOrderId;
  }

  /** A resting order by id. */
  openOrder(orderId: number): OrderView | undefined {
    const o = this.#orders.get(orderId);
    return o === undefined ? undefined : view(o, o.filled > 0 ? ORDER_PARTIAL : ORDER_PENDING);
  }

  /** The user's resting orders (in one market, or all), oldest first. */
  openOrders(userId: number, market?: string): OrderView[] {
    const user = this.#registry.user(userId);
    if (user === undefined) return [];
    const out: OrderView[] = [];
    for (const o of user.openOrders) {
      if (market === undefined || o.market === market)
        out.push(view(o, o.filled > 0 ? ORDER_PARTIAL : ORDER_PENDING));
    }
    return out;
  }

  /** The latest order id a user gave a client order id in a market, open or not. */
  orderIdForClientId(userId: number, market: string, clientOrderId: string): number | undefined {
    return this.#clientIds.get(`${userId}:${market}:${clientOrderId}`);
  }

  /** Number of resting orders over all markets. */
  get openOrderCount(): number {
    return this.#orders.size;
  }

  /** Resting orders in id order. */
  restingOrders(): Iterable<Order> {
    return this.#orders.values();
  }

  clientIds(): IterableIterator<[string, number]> {
    return this.#clientIds.entries();
  }

  // ───────────────────────────── snapshots and checks ─────────────────────────────

  /** Restores the counters and client ids, and rests an order from a snapshot. */
  load(nextOrderId: number, clientIds: readonly [string, number][]): void {
    this.#nextOrderId = nextOrderId;
    for (const [k, id] of clientIds) this.#clientIds.set(k, id);
  }

  /** Puts a resting order (from a snapshot) into its book, the index and its owner's list. */
  rest(order: Order): void {
    const m = this.#registry.market(order.market);
    const user = this.#registry.user(order.userId);
    if (m === undefined || user === undefined)
      throw new Error(`snapshot order ${order.id}: unknown market or user`);
    if (order.acctType !== 0)
      order.marginAccount = this.#margin.restingAccount(user, order.market, order.acctType);
    m.book.add(order);
    this.#orders.add(order);
    user.openOrders.add(order);
  }

  /**
   * Checks the books and the order lists (consistent, uncrossed, matching the index; each order
   * holding exactly price × remaining (buy) or remaining (sell)) and adds what each order holds
   * to `hold(account, coinIndex, units)`.
   */
  assertInvariants(hold: (account: LedgerAccount, coin: number, units: CoinUnits) => void): void {
    let resting = 0;
    for (const m of this.#registry.marketStates()) {
      m.book.validate();
      resting += m.book.size;
      for (const o of m.book.orders()) {
        if (this.#orders.get(o.id) !== o) throw new Error(`order ${o.id} in the book but not in the index`);
        const expected =
          o.side === BUY ? o.price * o.remaining * m.quoteUnitsPerTickLot : o.remaining * m.baseUnitsPerLot;
        if (o.frozen !== expected) throw new Error(`order ${o.id} holds ${o.frozen}, expected ${expected}`);
        if (o.filled + o.remaining !== o.amount)
          throw new Error(`order ${o.id}: filled + remaining ≠ amount`);
        const user = this.#registry.user(o.userId);
        if (user === undefined) throw new Error(`order ${o.id} of unknown user ${o.userId}`);
        hold(
          this.#margin.restingAccount(user, o.market, o.acctType),
          o.side === BUY ? m.quote.index : m.base.index,
          o.frozen,
        );
      }
    }
    if (resting !== this.#orders.size)
      throw new Error(`${this.#orders.size} indexed orders but ${resting} resting`);
    let openListed = 0;
    for (const u of this.#registry.users()) {
      let listed = 0;
      let lastId = 0;
      for (const o of u.openOrders) {
        if (o.userId !== u.userId || this.#orders.get(o.id) !== o || o.id <= lastId)
          throw new Error(`user ${u.userId} lists order ${o.id} wrongly`);
        lastId = o.id;
        listed++;
      }
      if (listed !== u.openOrders.size) throw new Error(`user ${u.userId}: open order count mismatch`);
      openListed += listed;
    }
    if (openListed !== this.#orders.size)
      throw new Error(`accounts list ${openListed} orders, index has ${this.#orders.size}`);
  }
}

/** Units of a coin as the API shows amounts: decimal text and the coin's name ("0.5 btc"). */
/**
 * One order for `Matching.#submit` (issue 32: it took 11 positional arguments ending in a bare
 * boolean). Matching keeps one and fills it in per order, so no object is made per call.
 */
interface Submission {
  /** The account it pays from and settles in (a margin account, or the user's spot account). */
  account: LedgerAccount | undefined;
  user: User | undefined;
  market: MarketState | undefined;
  side: Side;
  kind: Order['kind'];
  price: PriceTicks;
  amount: Lots;
  /** What it freezes in the coin it pays with. */
  cost: CoinUnits;
  acctType: Order['acctType'];
  clientOrderId: string;
  /** Its cost is already frozen (a batch freezes the whole batch first). */
  prefrozen: boolean;
}

/**
 * An amount of lots as text in the base coin. A module function, not a closure in `#orderCost`:
 * a closure there over `market` made V8 allocate a context on every order (59 B a command).
 */
function lotsText(market: MarketState, lots: Lots): string {
  return `${formatUnitsTrim(lots, market.spec.amountScale)} ${market.base.spec.name}`;
}

function coinText(coin: CoinState, units: CoinUnits): string {
  return `${formatUnitsTrim(units, coin.spec.unitDecimal)} ${coin.spec.name}`;
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
