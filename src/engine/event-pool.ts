/**
 * @module event-pool — the engine's hot events from reused objects (issue 34): the bills
 * (`BalanceChanged`), `OrderAccepted`, `OrderUpdated` and `TradeExecuted`, which were three
 * quarters of the bytes a command allocated.
 *
 * Off by default: every event is a fresh object, which whoever holds it may keep for good (the
 * tests, the replay tools, a recovery). A feed whose every reader copies what it keeps past the
 * batch it is handed turns the pool on (`enable()`) and calls `recycle()` once every reader is done
 * with the events handed out so far (the sequencer: before it applies the next batch). From then on
 * the same objects are filled in again: a command in steady state makes none of them, and a number
 * written into a reused event goes into the box the field already has instead of a new one.
 *
 * The list a command's events go to (`ApplyResult.events`) is reused the same way.
 *
 * Each kind keeps its objects in one list and a cursor: an event is the next object of its kind's
 * list (made, and kept, the first time the list is that long), `recycle()` sets the cursors back to
 * 0. A reused object has the shape and key order of a fresh one (the state hash test digests events
 * as JSON), so no reader can tell them apart until it is recycled.
 */
import type { AcctType, OrderKind, Side } from '../domain/commands.ts';
import type {
  BalanceChanged,
  BillType,
  CancelReason,
  EngineEvent,
  MarginAccountRef,
  OrderAccepted,
  OrderStatus,
  OrderUpdated,
  TradeExecuted,
} from '../domain/events.ts';
import type { CoinUnits, Lots, PriceTicks } from '../domain/money.ts';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };
export type PooledTrade = Mutable<TradeExecuted>;
export type PooledBill = Mutable<BalanceChanged>;

/** Objects a kind keeps at most: beyond this many events of one kind in a batch, fresh ones. */
const MAX_POOLED = 1 << 16;

/** The order fields an `OrderAccepted` or `OrderUpdated` copies (src/engine/order-book.ts's `Order`). */
interface OrderFields {
  readonly id: number;
  readonly userId: number;
  readonly market: string;
  readonly side: Side;
  readonly kind: OrderKind;
  readonly price: PriceTicks;
  readonly amount: Lots;
  readonly filled: Lots;
  readonly filledValue: CoinUnits;
  readonly fees: CoinUnits;
  readonly platformFees: CoinUnits;
  readonly acctType: AcctType;
  readonly clientOrderId: string;
  readonly usePlatformCoin: boolean;
  readonly lastTradeId: number;
  readonly lastTradePrice: PriceTicks;
  readonly lastTradeAmount: Lots;
  readonly lastTradeTime: number;
}

export class EventPool {
  #on = false;
  readonly #bills: PooledBill[] = [];
  #billsAt = 0;
  /** A margin account's bills: one more field (`account`), so a shape of their own. */
  readonly #marginBills: PooledBill[] = [];
  #marginBillsAt = 0;
  readonly #accepted: Mutable<OrderAccepted>[] = [];
  #acceptedAt = 0;
  readonly #updated: Mutable<OrderUpdated>[] = [];
  #updatedAt = 0;
  readonly #trades: PooledTrade[] = [];
  #tradesAt = 0;
  /** The commands' lists of events (`ApplyResult.events`), emptied when reused. */
  readonly #lists: EngineEvent[][] = [];
  #listsAt = 0;

  /** Whether events are reused after `recycle()`. */
  get enabled(): boolean {
    return this.#on;
  }

  /** From now on, events are reused once recycled: call only where every reader copies what it keeps. */
  enable(): void {
    this.#on = true;
  }

  /** Every event handed out so far may be filled in again: no reader holds one any longer. */
  recycle(): void {
    this.#billsAt = this.#marginBillsAt = this.#acceptedAt = this.#updatedAt = this.#tradesAt = 0;
    this.#listsAt = 0;
  }

  /** A command's list of events: a fresh one, or once enabled the next kept list, emptied. */
  list(): EngineEvent[] {
    if (!this.#on) return [];
    const lists = this.#lists;
    let list = this.#listsAt < lists.length ? lists[this.#listsAt] : undefined;
    if (list === undefined) {
      list = [];
      if (lists.length >= MAX_POOLED) return list;
      lists.push(list);
    } else list.length = 0;
    this.#listsAt++;
    return list;
  }

  /**
   * A bill: `account` set for a margin account's, undefined for a spot account's (no field). The
   * caller writes its numbers (`available`, `frozen`, `deltaAvailable`, `deltaFrozen`, `time`):
   * a double handed through a call is boxed first, written into the object it is not.
   */
  bill(
    userId: number,
    account: MarginAccountRef | undefined,
    coin: string,
    billType: BillType,
    ref: string,
  ): PooledBill {
    if (account !== undefined) {
      const list = this.#marginBills;
      let e = this.#on && this.#marginBillsAt < list.length ? list[this.#marginBillsAt] : undefined;
      if (e === undefined) {
        e = {
          type: 'BalanceChanged',
          userId,
          account,
          coin,
          available: 0,
          frozen: 0,
          deltaAvailable: 0,
          deltaFrozen: 0,
          billType,
          ref,
          time: 0,
        };
        if (this.#on && list.length < MAX_POOLED) list.push(e);
        else return e;
      } else {
        e.userId = userId;
        e.account = account;
        e.coin = coin;
        e.billType = billType;
        e.ref = ref;
      }
      this.#marginBillsAt++;
      return e;
    }
    const list = this.#bills;
    let e = this.#on && this.#billsAt < list.length ? list[this.#billsAt] : undefined;
    if (e === undefined) {
      e = {
        type: 'BalanceChanged',
        userId,
        coin,
        available: 0,
        frozen: 0,
        deltaAvailable: 0,
        deltaFrozen: 0,
        billType,
        ref,
        time: 0,
      };
      if (this.#on && list.length < MAX_POOLED) list.push(e);
      else return e;
    } else {
      e.userId = userId;
      e.coin = coin;
      e.billType = billType;
      e.ref = ref;
    }
    this.#billsAt++;
    return e;
  }

  /** An order taken, as it was given (its id, owner, market, side, kind, price, amount and options). */
  orderAccepted(o: OrderFields, time: number): OrderAccepted {
    const list = this.#accepted;
    let e = this.#on && this.#acceptedAt < list.length ? list[this.#acceptedAt] : undefined;
    if (e === undefined) {
      e = {
        type: 'OrderAccepted',
        orderId: o.id,
        userId: o.userId,
        market: o.market,
        side: o.side,
        kind: o.kind,
        price: o.price,
        amount: o.amount,
        acctType: o.acctType,
        clientOrderId: o.clientOrderId,
        usePlatformCoin: o.usePlatformCoin,
        time,
      };
      if (this.#on && list.length < MAX_POOLED) list.push(e);
      else return e;
    } else {
      e.orderId = o.id;
      e.userId = o.userId;
      e.market = o.market;
      e.side = o.side;
      e.kind = o.kind;
      e.price = o.price;
      e.amount = o.amount;
      e.acctType = o.acctType;
      e.clientOrderId = o.clientOrderId;
      e.usePlatformCoin = o.usePlatformCoin;
      e.time = time;
    }
    this.#acceptedAt++;
    return e;
  }

  /** An order's state after a fill or a cancel. */
  orderUpdated(
    o: OrderFields,
    status: OrderStatus,
    cancelReason: CancelReason | null,
    time: number,
  ): OrderUpdated {
    const list = this.#updated;
    let e = this.#on && this.#updatedAt < list.length ? list[this.#updatedAt] : undefined;
    if (e === undefined) {
      e = {
        type: 'OrderUpdated',
        orderId: o.id,
        userId: o.userId,
        market: o.market,
        status,
        filled: o.filled,
        filledValue: o.filledValue,
        fees: o.fees,
        platformFees: o.platformFees,
        cancelReason,
        lastTradeId: o.lastTradeId,
        lastTradePrice: o.lastTradePrice,
        lastTradeAmount: o.lastTradeAmount,
        lastTradeTime: o.lastTradeTime,
        time,
      };
      if (this.#on && list.length < MAX_POOLED) list.push(e);
      else return e;
    } else {
      e.orderId = o.id;
      e.userId = o.userId;
      e.market = o.market;
      e.status = status;
      e.filled = o.filled;
      e.filledValue = o.filledValue;
      e.fees = o.fees;
      e.platformFees = o.platformFees;
      e.cancelReason = cancelReason;
      e.lastTradeId = o.lastTradeId;
      e.lastTradePrice = o.lastTradePrice;
      e.lastTradeAmount = o.lastTradeAmount;
      e.lastTradeTime = o.lastTradeTime;
      e.time = time;
    }
    this.#updatedAt++;
    return e;
  }

  /** A trade between a taker and a maker, its fees 0 and '' until settlement fills them in. */
  trade(
    tradeId: number,
    market: string,
    price: PriceTicks,
    amount: Lots,
    value: CoinUnits,
    taker: OrderFields,
    maker: OrderFields,
    time: number,
  ): PooledTrade {
    const list = this.#trades;
    let e = this.#on && this.#tradesAt < list.length ? list[this.#tradesAt] : undefined;
    if (e === undefined) {
      e = {
        type: 'TradeExecuted',
        tradeId,
        market,
        price,
        amount,
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
      if (this.#on && list.length < MAX_POOLED) list.push(e);
      else return e;
    } else {
      e.tradeId = tradeId;
      e.market = market;
      e.price = price;
      e.amount = amount;
      e.value = value;
      e.takerSide = taker.side;
      e.takerOrderId = taker.id;
      e.makerOrderId = maker.id;
      e.takerUserId = taker.userId;
      e.makerUserId = maker.userId;
      e.takerFee = 0;
      e.takerFeeCoin = '';
      e.makerFee = 0;
      e.makerFeeCoin = '';
      e.time = time;
    }
    this.#tradesAt++;
    return e;
  }
}
