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
 *
 * Every event of a kind, fresh or pooled, comes from one maker (`newBill`, …) with its fields in
 * one order and of the representation they will hold, and the pool's lists are born lists of
 * objects: V8 keeps one hidden class per kind and compiles the code that fills events once. (A
 * field that started as a small integer and then took a double deprecated the class, and a new
 * engine's empty lists were of another elements kind: deoptimizations and recompiles.)
 */
import { BUY, type AcctType, type OrderKind, type Side } from '../domain/commands.ts';
import {
  ORDER_PENDING,
  type BalanceChanged,
  type BillType,
  type CancelReason,
  type EngineEvent,
  type MarginAccountRef,
  type OrderAccepted,
  type OrderStatus,
  type OrderUpdated,
  type TradeExecuted,
} from '../domain/events.ts';
import type { CoinUnits, Lots, PriceTicks } from '../domain/money.ts';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };
export type PooledTrade = Mutable<TradeExecuted>;
export type PooledBill = Mutable<BalanceChanged>;

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

/** Objects a kind keeps at most: beyond this many events of one kind in a batch, fresh ones. */
const MAX_POOLED = 1 << 16;

/**
 * What a number field that holds coin amounts (balances, values, fees) or times starts as: a
 * double that is no small integer, so that V8 gives the field a double's representation (one box
 * of its own, written in place) from the first object on. A field that started as a small integer
 * and later took a double (a fee, a time) is widened, V8 deprecating the hidden class of every
 * object made before: pooled objects are then of another class than the code filling them was
 * compiled for ("wrong map"). Ids, users, sides, statuses, prices (ticks) and amounts (lots) are
 * small integers and start as one: no box, which a fresh event would pay 16 B for.
 */
const DOUBLE = 0.5;

/**
 * An empty list already of the elements kind a list of objects has (V8's PACKED_ELEMENTS). A `[]`
 * starts as a list of small integers and changes kind at its first object, so code compiled while
 * one engine's pool was full would meet the next engine's empty lists in another kind: a
 * deoptimization and a recompile of every function that fills events, once per engine.
 */
function objectList<T>(): T[] {
  const list: (T | null)[] = [null];
  list.pop();
  return list as T[];
}

/*
 * One maker per kind: every event of a kind, fresh or pooled, comes from it, with every field in
 * the same order and of the representation it will hold (texts '', numbers as above), so that they
 * all share one hidden class. The caller writes the real values in.
 */
const newBill = (): PooledBill => ({
  type: 'BalanceChanged',
  userId: 0,
  coin: '',
  available: DOUBLE,
  frozen: DOUBLE,
  deltaAvailable: DOUBLE,
  deltaFrozen: DOUBLE,
  billType: 'deposit',
  ref: '',
  time: DOUBLE,
});

/** A margin account's bill: `account` after `userId`, as a fresh one has it. */
const newMarginBill = (account: MarginAccountRef): PooledBill => ({
  type: 'BalanceChanged',
  userId: 0,
  account,
  coin: '',
  available: DOUBLE,
  frozen: DOUBLE,
  deltaAvailable: DOUBLE,
  deltaFrozen: DOUBLE,
  billType: 'deposit',
  ref: '',
  time: DOUBLE,
});

const newOrderAccepted = (): Mutable<OrderAccepted> => ({
  type: 'OrderAccepted',
  orderId: 0,
  userId: 0,
  market: '',
  side: BUY,
  kind: 'limit',
  price: 0,
  amount: 0,
  acctType: 0,
  clientOrderId: '',
  usePlatformCoin: false,
  time: DOUBLE,
});

const newOrderUpdated = (): Mutable<OrderUpdated> => ({
  type: 'OrderUpdated',
  orderId: 0,
  userId: 0,
  market: '',
  status: ORDER_PENDING,
  filled: 0,
  filledValue: DOUBLE,
  fees: DOUBLE,
  platformFees: DOUBLE,
  cancelReason: null,
  lastTradeId: 0,
  lastTradePrice: 0,
  lastTradeAmount: 0,
  lastTradeTime: DOUBLE,
  time: DOUBLE,
});

const newTrade = (): PooledTrade => ({
  type: 'TradeExecuted',
  tradeId: 0,
  market: '',
  price: 0,
  amount: 0,
  value: DOUBLE,
  takerSide: BUY,
  takerOrderId: 0,
  makerOrderId: 0,
  takerUserId: 0,
  makerUserId: 0,
  takerFee: DOUBLE,
  takerFeeCoin: '',
  makerFee: DOUBLE,
  makerFeeCoin: '',
  time: DOUBLE,
});

export class EventPool {
  #on = false;
  readonly #bills = objectList<PooledBill>();
  #billsAt = 0;
  /** A margin account's bills: one more field (`account`), so a shape of their own. */
  readonly #marginBills = objectList<PooledBill>();
  #marginBillsAt = 0;
  readonly #accepted = objectList<Mutable<OrderAccepted>>();
  #acceptedAt = 0;
  readonly #updated = objectList<Mutable<OrderUpdated>>();
  #updatedAt = 0;
  readonly #trades = objectList<PooledTrade>();
  #tradesAt = 0;
  /** The commands' lists of events (`ApplyResult.events`), emptied when reused. */
  readonly #lists = objectList<EngineEvent[]>();
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
    if (!this.#on) return objectList();
    const lists = this.#lists;
    const at = this.#listsAt;
    if (at < lists.length) {
      const list = lists[at] as EngineEvent[];
      // Emptied by pops, which keep the backing store: `length = 0` drops it (V8), and the
      // command's first push would allocate another.
      while (list.length > 0) list.pop();
      this.#listsAt = at + 1;
      return list;
    }
    const list = objectList<EngineEvent>();
    if (at < MAX_POOLED) {
      lists.push(list);
      this.#listsAt = at + 1;
    }
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
    let e: PooledBill;
    if (account === undefined) e = this.#spotBill();
    else {
      e = this.#marginBill(account);
      e.account = account;
    }
    e.userId = userId;
    e.coin = coin;
    e.billType = billType;
    e.ref = ref;
    return e;
  }

  #spotBill(): PooledBill {
    if (!this.#on) return newBill();
    const list = this.#bills;
    const at = this.#billsAt;
    if (at < list.length) {
      this.#billsAt = at + 1;
      return list[at] as PooledBill;
    }
    const e = newBill();
    if (at < MAX_POOLED) {
      list.push(e);
      this.#billsAt = at + 1;
    }
    return e;
  }

  #marginBill(account: MarginAccountRef): PooledBill {
    if (!this.#on) return newMarginBill(account);
    const list = this.#marginBills;
    const at = this.#marginBillsAt;
    if (at < list.length) {
      this.#marginBillsAt = at + 1;
      return list[at] as PooledBill;
    }
    const e = newMarginBill(account);
    if (at < MAX_POOLED) {
      list.push(e);
      this.#marginBillsAt = at + 1;
    }
    return e;
  }

  /** An order taken, as it was given (its id, owner, market, side, kind, price, amount and options). */
  orderAccepted(o: OrderFields, time: number): OrderAccepted {
    let e: Mutable<OrderAccepted>;
    const list = this.#accepted;
    const at = this.#acceptedAt;
    if (!this.#on) e = newOrderAccepted();
    else if (at < list.length) {
      e = list[at] as Mutable<OrderAccepted>;
      this.#acceptedAt = at + 1;
    } else {
      e = newOrderAccepted();
      if (at < MAX_POOLED) {
        list.push(e);
        this.#acceptedAt = at + 1;
      }
    }
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
    return e;
  }

  /** An order's state after a fill or a cancel. */
  orderUpdated(
    o: OrderFields,
    status: OrderStatus,
    cancelReason: CancelReason | null,
    time: number,
  ): OrderUpdated {
    let e: Mutable<OrderUpdated>;
    const list = this.#updated;
    const at = this.#updatedAt;
    if (!this.#on) e = newOrderUpdated();
    else if (at < list.length) {
      e = list[at] as Mutable<OrderUpdated>;
      this.#updatedAt = at + 1;
    } else {
      e = newOrderUpdated();
      if (at < MAX_POOLED) {
        list.push(e);
        this.#updatedAt = at + 1;
      }
    }
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
    let e: PooledTrade;
    const list = this.#trades;
    const at = this.#tradesAt;
    if (!this.#on) e = newTrade();
    else if (at < list.length) {
      e = list[at] as PooledTrade;
      this.#tradesAt = at + 1;
    } else {
      e = newTrade();
      if (at < MAX_POOLED) {
        list.push(e);
        this.#tradesAt = at + 1;
      }
    }
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
    return e;
  }
}
