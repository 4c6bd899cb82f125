/**
 * @module order-book — one market's resting orders in price-time priority.
 *
 * Each side keeps its price levels sorted in short chunks with the best level last (bids ascending,
 * asks descending), so taking or emptying the best level is a pop and a level deep in the book is
 * inserted or dropped in bounded time. A level holds its orders in an
 * intrusive doubly linked list (arrival order) and their total; a map from price to level gives
 * O(1) access for inserts and cancels. Orders are flat objects so that a large book stays cheap
 * for the garbage collector.
 */
import { BUY, type AcctType, type OrderKind, type Side } from '../domain/commands.ts';
import type { LedgerAccount } from './ledger.ts';
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
  /** Neighbours in the owner's list of resting orders (`OwnerOrders`). */
  ownerPrev: Order | null = null;
  ownerNext: Order | null = null;
  /** The id as text, made once: balance changes name their order by it. */
  readonly ref: string;
  /**
   * The margin account it pays from and settles in (issue 14), kept at hand so that a fill or a
   * cancel needs no lookup; null for a spot order (its owner's spot account). Private with an
   * accessor, so that it is no part of the order as a reply shows it (JSON).
   */
  #marginAccount: LedgerAccount | null = null;

  get marginAccount(): LedgerAccount | null {
    return this.#marginAccount;
  }

  set marginAccount(account: LedgerAccount | null) {
    this.#marginAccount = account;
  }

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
    this.ref = String(id);
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

/** Ids per page of an `OrderIndex`: a power of two, so an id's page is its high bits. */
const PAGE_BITS = 12;
const PAGE_SIZE = 1 << PAGE_BITS;

/**
 * Resting orders by id. Order ids are assigned in sequence, so the index is an array of pages of
 * 4,096 slots addressed by the id's bits: a lookup is two loads, with no hashing and no rehash
 * (a single Map of 1,000,000 entries rehashed in one command for ~90 ms on the bench machine).
 * A page is freed when its last order leaves (the newest page once it is no longer the newest),
 * so memory follows the live ids. Iteration is in id order.
 */
export class OrderIndex {
  readonly #pages: ((Order | undefined)[] | undefined)[] = [];
  readonly #live: number[] = [];
  #size = 0;

  get size(): number {
    return this.#size;
  }

  get(id: number): Order | undefined {
    return this.#pages[id >>> PAGE_BITS]?.[id & (PAGE_SIZE - 1)];
  }

  /** Adds an order that is not in the index yet. */
  add(order: Order): void {
    const p = order.id >>> PAGE_BITS;
    let page = this.#pages[p];
    if (page === undefined) {
      // The newest page stays while it is the newest (see `delete`); free it once it is not.
      const newest = this.#pages.length - 1;
      if (newest >= 0 && newest < p && this.#live[newest] === 0) this.#pages[newest] = undefined;
      while (this.#pages.length < p) {
        this.#pages.push(undefined);
        this.#live.push(0);
      }
      page = new Array<Order | undefined>(PAGE_SIZE).fill(undefined);
      this.#pages[p] = page;
      this.#live[p] = 0;
    }
    const slot = order.id & (PAGE_SIZE - 1);
    if (page[slot] !== undefined) throw new Error(`order ${order.id} is indexed twice`);
    page[slot] = order;
    this.#live[p] = (this.#live[p] as number) + 1;
    this.#size++;
  }

  delete(id: number): boolean {
    const p = id >>> PAGE_BITS;
    const page = this.#pages[p];
    const slot = id & (PAGE_SIZE - 1);
    if (page === undefined || page[slot] === undefined) return false;
    page[slot] = undefined;
    this.#size--;
    const live = (this.#live[p] as number) - 1;
    this.#live[p] = live;
    // Not the newest page: new ids land there, and freeing it on every fill of a lone resting
    // order would allocate 32 KB per order.
    if (live === 0 && p !== this.#pages.length - 1) this.#pages[p] = undefined;
    return true;
  }

  /** Every indexed order, by id. */
  *values(): Generator<Order> {
    for (const page of this.#pages) {
      if (page === undefined) continue;
      for (const order of page) if (order !== undefined) yield order;
    }
  }
}

/**
 * One account's resting orders, oldest first: an intrusive list through the orders' `ownerPrev`
 * and `ownerNext`, so adding and removing cost a few pointer writes instead of a hash update.
 * Orders are appended as they rest and ids grow, so the list is in id order.
 */
export class OwnerOrders {
  head: Order | null = null;
  tail: Order | null = null;
  size = 0;

  add(order: Order): void {
    order.ownerPrev = this.tail;
    order.ownerNext = null;
    if (this.tail === null) this.head = order;
    else this.tail.ownerNext = order;
    this.tail = order;
    this.size++;
  }

  remove(order: Order): void {
    if (order.ownerPrev === null) this.head = order.ownerNext;
    else order.ownerPrev.ownerNext = order.ownerNext;
    if (order.ownerNext === null) this.tail = order.ownerPrev;
    else order.ownerNext.ownerPrev = order.ownerPrev;
    order.ownerPrev = order.ownerNext = null;
    this.size--;
  }

  *[Symbol.iterator](): Generator<Order> {
    for (let o = this.head; o !== null; o = o.ownerNext) yield o;
  }
}

/**
 * Levels per chunk before it splits in two. Inserting or removing a level shifts at most this many
 * references, whatever the depth: a single sorted array cost 76 µs at p90 per command with ~35,000
 * levels a side (bench/engine.bench.ts), a chunk of 128 a fraction of a microsecond.
 */
const MAX_CHUNK_LEVELS = 128;
/** A chunk this small merges into a neighbour when both fit in half a chunk, so chunks stay full. */
const MIN_CHUNK_LEVELS = 16;

/**
 * One side of a book: its levels in short sorted chunks (a two-level sorted list), worse to better
 * within and across chunks, so the best level is the last of the last chunk.
 */
class BookSide {
  readonly chunks: Level[][] = [];
  readonly byPrice = new Map<PriceTicks, Level>();
  /** true for bids (best = highest), false for asks (best = lowest). */
  readonly isBid: boolean;
  constructor(isBid: boolean) {
    this.isBid = isBid;
  }

  best(): Level | undefined {
    const last = this.chunks[this.chunks.length - 1];
    return last === undefined ? undefined : last[last.length - 1];
  }

  /** Index of the first chunk whose best level is not worse than `price` (chunks.length if none). */
  #chunkIndex(price: PriceTicks): number {
    const chunks = this.chunks;
    let lo = 0;
    let hi = chunks.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const chunk = chunks[mid] as Level[];
      const p = (chunk[chunk.length - 1] as Level).price;
      // bids ascending, asks descending: "worse" sorts first.
      if (this.isBid ? p < price : p > price) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Index in `chunk` where a level with `price` belongs (levels before it are worse). */
  #position(chunk: Level[], price: PriceTicks): number {
    let lo = 0;
    let hi = chunk.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const p = (chunk[mid] as Level).price;
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
    const chunks = this.chunks;
    const c = this.#chunkIndex(price);
    if (c === chunks.length) {
      // A new best level: append, to a fresh chunk when the last is full.
      const last = chunks[c - 1];
      if (last === undefined || last.length >= MAX_CHUNK_LEVELS) chunks.push([level]);
      else last.push(level);
      return level;
    }
    const chunk = chunks[c] as Level[];
    const i = this.#position(chunk, price);
    // Shift by hand: splice would allocate an array of the (no) removed elements.
    chunk.push(level);
    for (let j = chunk.length - 1; j > i; j--) chunk[j] = chunk[j - 1] as Level;
    chunk[i] = level;
    if (chunk.length > MAX_CHUNK_LEVELS) chunks.splice(c + 1, 0, chunk.splice(chunk.length >>> 1));
    return level;
  }

  dropLevel(level: Level): void {
    this.byPrice.delete(level.price);
    const chunks = this.chunks;
    const c = this.#chunkIndex(level.price);
    const chunk = chunks[c];
    const i = chunk === undefined ? -1 : this.#position(chunk, level.price);
    if (chunk === undefined || chunk[i] !== level)
      throw new Error(`book corrupt: level ${level.price} not at its position`);
    for (let j = i + 1; j < chunk.length; j++) chunk[j - 1] = chunk[j] as Level;
    chunk.pop();
    if (chunk.length === 0) {
      chunks.splice(c, 1);
      return;
    }
    if (chunk.length >= MIN_CHUNK_LEVELS) return;
    // Merge a small chunk into a small neighbour, so that deletions cannot fragment the side.
    const below = chunks[c - 1];
    const above = chunks[c + 1];
    if (below !== undefined && below.length + chunk.length <= MAX_CHUNK_LEVELS >>> 1) {
      for (const l of chunk) below.push(l);
      chunks.splice(c, 1);
    } else if (above !== undefined && above.length + chunk.length <= MAX_CHUNK_LEVELS >>> 1) {
      for (const l of above) chunk.push(l);
      chunks.splice(c + 1, 1);
    }
  }

  /** Number of price levels. */
  get levelCount(): number {
    return this.byPrice.size;
  }

  /** Levels best first. */
  *bestFirst(): Generator<Level> {
    for (let c = this.chunks.length - 1; c >= 0; c--) {
      const chunk = this.chunks[c] as Level[];
      for (let i = chunk.length - 1; i >= 0; i--) yield chunk[i] as Level;
    }
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
    const out: [PriceTicks, Lots][] = [];
    for (const level of this.sideOf(side).bestFirst()) {
      if (!(out.length < limit)) break;
      out.push([level.price, level.total]);
    }
    return out;
  }

  /** Every resting order, bids then asks, best level first, oldest first within a level. */
  *orders(): Generator<Order> {
    for (const side of [this.bids, this.asks]) {
      for (const level of side.bestFirst()) {
        for (let o = level.head; o !== null; o = o.next) yield o;
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
      const levels = side.chunks.flat();
      if (side.chunks.some((chunk) => chunk.length === 0 || chunk.length > MAX_CHUNK_LEVELS))
        throw new Error(`${name} level chunk empty or oversized`);
      if (side.byPrice.size !== levels.length) throw new Error(`${name} level index size mismatch`);
      for (let i = 0; i < levels.length; i++) {
        const level = levels[i] as Level;
        const prev = levels[i - 1];
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
