/**
 * @module order-book — one market's resting orders in price-time priority.
 *
 * Each side is a sorted array of price levels with the best level last (bids ascending, asks
 * descending), so taking or emptying the best level is a pop. A level holds its orders in an
 * intrusive doubly linked list (arrival order) and their total; a map from price to level gives
 * O(1) access for inserts and cancels. Orders are flat objects so that a large book stays cheap
 * for the garbage collector.
 */
import { BUY, type AcctType, type OrderKind, type Side } from '../domain/commands.ts';
import type { CoinUnits, Lots, PriceTicks } from '../domain/money.ts';

/** An order the engine holds: resting in a book, or being matched as the taker. */
export class Order {
  id: number;
  userId: number;
  market: string;
  side: Side;
  kind: OrderKind;
  price: PriceTicks;
  amount: Lots;
  remaining: Lots;
  filled: Lots = 0;
  filledValue: CoinUnits = 0;
  fees: CoinUnits = 0;
  platformFees: CoinUnits = 0;
  /** What the order still holds frozen in the coin it pays with. */
  frozen: CoinUnits;
  time: number;
  clientOrderId: string;
  acctType: AcctType;
  usePlatformCoin: boolean;
  lastTradeId = 0;
  lastTradePrice: PriceTicks = 0;
  lastTradeAmount: Lots = 0;
  lastTradeTime = 0;
  prev: Order | null = null;
  next: Order | null = null;
  level: Level | null = null;

  constructor(
    id: number,
    userId: number,
    market: string,
    side: Side,
    kind: OrderKind,
    price: PriceTicks,
    amount: Lots,
    frozen: CoinUnits,
    time: number,
    clientOrderId: string,
    acctType: AcctType,
    usePlatformCoin: boolean,
  ) {
    this.id = id;
    this.userId = userId;
    this.market = market;
    this.side = side;
    this.kind = kind;
    this.price = price;
    this.amount = amount;
    this.remaining = amount;
    this.frozen = frozen;
    this.time = time;
    this.clientOrderId = clientOrderId;
    this.acctType = acctType;
    this.usePlatformCoin = usePlatformCoin;
  }
}

/** All resting orders at one price on one side, oldest first. */
export class Level {
  readonly price: PriceTicks;
  total: Lots = 0;
  count = 0;
  head: Order | null = null;
  tail: Order | null = null;
  constructor(price: PriceTicks) {
    this.price = price;
  }
}

/** One side of a book: levels sorted so that the best is last. */
class BookSide {
  readonly levels: Level[] = [];
  readonly byPrice = new Map<PriceTicks, Level>();
  /** true for bids (best = highest), false for asks (best = lowest). */
  readonly isBid: boolean;
  constructor(isBid: boolean) {
    this.isBid = isBid;
  }

  best(): Level | undefined {
    return this.levels[this.levels.length - 1];
  }

  /** Index where a level with `price` belongs (levels before it are worse). */
  #position(price: PriceTicks): number {
    const levels = this.levels;
    let lo = 0;
    let hi = levels.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const p = (levels[mid] as Level).price;
      // bids ascending, asks descending: "worse" sorts first.
      if (this.isBid ? p < price : p > price) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  levelFor(price: PriceTicks): Level {
    let level = this.byPrice.get(price);
    if (level !== undefined) return level;
    level = new Level(price);
    this.byPrice.set(price, level);
    const levels = this.levels;
    const last = levels[levels.length - 1];
    // Most new levels sit at or near the top of the book: append without searching when best.
    if (last === undefined || (this.isBid ? price > last.price : price < last.price)) levels.push(level);
    else levels.splice(this.#position(price), 0, level);
    return level;
  }

  dropLevel(level: Level): void {
    this.byPrice.delete(level.price);
    const levels = this.levels;
    if (levels[levels.length - 1] === level) {
      levels.pop();
      return;
    }
    const i = this.#position(level.price);
    if (levels[i] !== level) throw new Error(`book corrupt: level ${level.price} not at its position`);
    levels.splice(i, 1);
  }
}

/** A market's book. Holds resting orders only; the engine owns balances and events. */
export class OrderBook {
  readonly bids = new BookSide(true);
  readonly asks = new BookSide(false);
  /** Number of resting orders. */
  size = 0;

  /** The side an order of `side` rests on. */
  sideOf(side: Side): BookSide {
    return side === BUY ? this.bids : this.asks;
  }

  /** The side an order of `side` takes from. */
  oppositeOf(side: Side): BookSide {
    return side === BUY ? this.asks : this.bids;
  }

  /** Appends an order at the back of its price level. */
  add(order: Order): void {
    const level = this.sideOf(order.side).levelFor(order.price);
    order.level = level;
    order.prev = level.tail;
    order.next = null;
    if (level.tail === null) level.head = order;
    else level.tail.next = order;
    level.tail = order;
    level.count++;
    level.total += order.remaining;
    this.size++;
  }

  /** Unlinks an order (its `remaining` must still be what the level counts for it). */
  remove(order: Order): void {
    const level = order.level;
    if (level === null) throw new Error(`book corrupt: order ${order.id} is not resting`);
    if (order.prev === null) level.head = order.next;
    else order.prev.next = order.next;
    if (order.next === null) level.tail = order.prev;
    else order.next.prev = order.prev;
    level.count--;
    level.total -= order.remaining;
    order.prev = order.next = null;
    order.level = null;
    this.size--;
    if (level.count === 0) this.sideOf(order.side).dropLevel(level);
  }

  /** Lowers a resting order's remaining amount by `lots` after a fill. */
  reduce(order: Order, lots: Lots): void {
    (order.level as Level).total -= lots;
    order.remaining -= lots;
  }

  /** Best levels first: `[price, total]` pairs, at most `limit` per side. */
  depth(side: Side, limit: number): [PriceTicks, Lots][] {
    const levels = this.sideOf(side).levels;
    const out: [PriceTicks, Lots][] = [];
    for (let i = levels.length - 1; i >= 0 && out.length < limit; i--) {
      const level = levels[i] as Level;
      out.push([level.price, level.total]);
    }
    return out;
  }

  /** Every resting order, bids then asks, best level first, oldest first within a level. */
  *orders(): Generator<Order> {
    for (const side of [this.bids, this.asks]) {
      for (let i = side.levels.length - 1; i >= 0; i--) {
        for (let o = (side.levels[i] as Level).head; o !== null; o = o.next) yield o;
      }
    }
  }

  /**
   * Checks the book's structure: levels strictly sorted and indexed, each level's list linked
   * both ways with the right count and total, and the book not crossed. Throws on the first fault.
   */
  validate(): void {
    let count = 0;
    for (const side of [this.bids, this.asks]) {
      const name = side.isBid ? 'bid' : 'ask';
      if (side.byPrice.size !== side.levels.length) throw new Error(`${name} level index size mismatch`);
      for (let i = 0; i < side.levels.length; i++) {
        const level = side.levels[i] as Level;
        const prev = side.levels[i - 1];
        if (prev !== undefined && (side.isBid ? prev.price >= level.price : prev.price <= level.price)) {
          throw new Error(`${name} levels out of order at ${level.price}`);
        }
        if (side.byPrice.get(level.price) !== level)
          throw new Error(`${name} level ${level.price} not indexed`);
        let n = 0;
        let total = 0;
        let before: Order | null = null;
        for (let o = level.head; o !== null; o = o.next) {
          if (o.prev !== before) throw new Error(`order ${o.id}: broken back link`);
          if (o.level !== level || o.price !== level.price) throw new Error(`order ${o.id}: wrong level`);
          if (o.side !== (side.isBid ? BUY : 0)) throw new Error(`order ${o.id}: on the wrong side`);
          if (o.remaining <= 0) throw new Error(`order ${o.id}: resting with nothing remaining`);
          n++;
          total += o.remaining;
          before = o;
        }
        if (before !== level.tail) throw new Error(`${name} level ${level.price}: tail mismatch`);
        if (n === 0 || n !== level.count || total !== level.total) {
          throw new Error(`${name} level ${level.price}: count/total mismatch`);
        }
        count += n;
      }
    }
    if (count !== this.size) throw new Error(`book size ${this.size} but ${count} orders linked`);
    const bid = this.bids.best();
    const ask = this.asks.best();
    if (bid !== undefined && ask !== undefined && bid.price >= ask.price) {
      throw new Error(`book crossed: bid ${bid.price} ≥ ask ${ask.price}`);
    }
  }
}
