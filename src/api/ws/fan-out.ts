/**
 * @module fan-out — turns applied batches into pushes: marks what each batch changed, and once per
 * tick serializes each changed channel's message once and queues the same frame for every
 * subscriber, then writes each connection's frames of the tick together.
 *
 * Topics. Every channel a client can subscribe to is a topic: per market (ticker, depth, quick
 * depth 5 and 10, trades, each kline type) or per user (order records per market, assets,
 * changed assets, cross assets). A topic exists while it has subscribers.
 *
 * Durability. `apply` takes the sequencer's applied batches, and the sequencer applies only
 * journaled, durable commands; messages are built from those batches' events and from the
 * engine's and market data's state, which are as of the same batches. So no push shows anything
 * a crash could lose.
 *
 * Snapshots and order. A new subscription waits for the next tick, where it gets its topic's
 * snapshot (the state after every batch applied so far) and from then on the topic's updates, so
 * nothing is missed or shown twice between the two. Within a tick a connection's frames are
 * queued market topics first, then users', each user's order records in engine order; the
 * user's balance messages are the state at the end of the tick. Ticks run in order and each
 * connection's frames go out in one write, so one user's pushes arrive in engine order.
 *
 * Risk. A margin account's notice flag or liquidation lock can change with no event of its owner
 * (other people's trades move the mark, a timer tick ages it): while anyone watches their margin
 * pushes, every applied batch schedules a tick, and the tick asks `RiskWatch` which watched
 * accounts changed; those are pushed as changed accounts (issue 15).
 *
 * Ticks. The first change after a quiet spell is flushed on the next event-loop turn
 * (setImmediate); under load flushes are at least `minFlushIntervalMs` apart, and at least as
 * far apart as the last flush took, so that flushing takes at most half the event loop's time:
 * the cost of a tick (a frame per changed topic, a write per connection) is paid less often and
 * carries more frames as load grows, rather than starving everything else.
 */
import {
  ORDER_CANCELLED,
  ORDER_DONE,
  type EngineEvent,
  type OrderAccepted,
  type OrderUpdated,
} from '../../domain/events.ts';
import type { VenueState } from '../../sequencer/venue-ports.ts';
import { klineBucketStart, type KlineInterval } from '../../store/history-store.ts';
import type { LiveKlines } from '../market-data/live-klines.ts';
import {
  tradesJson,
  type AppliedItem,
  type MarketData,
  type PublicTrade,
} from '../market-data/market-data.ts';
import {
  RECORD_MARKET_SUFFIX,
  type Channel,
  type PrivateChannel,
  type PublicChannel,
  type WireMarket,
} from './channels.ts';
import { textFrame } from './frame.ts';
import { RiskWatch, type RiskChange } from './risk-watch.ts';
import { depthMessage, klineMessage, quickDepthMessage, tickerMessage, tradesMessage } from './payloads.ts';
import {
  assetMessage,
  CROSS_KEY,
  crossAssetMessage,
  ISOLATED_PREFIX,
  marginAssetMessage,
  incrRecordMessage,
  recordArray,
  recordSnapshotMessage,
  unfilled,
  type OrderFacts,
} from './private-payloads.ts';

/**
 * Default least time between two flushes under load (ms). 5 rather than 10: with 20 subscribers
 * and 10,000 orders/s it took trade-to-push p50 from 8.3 to 5.1–5.4 ms; with 1,000 the flush's
 * own duration sets the spacing and the figures did not move beyond noise (bench/README.md).
 */
export const DEFAULT_MIN_FLUSH_INTERVAL_MS = 5;
/** Connections written to per event-loop turn (about 1 ms of socket writes on the benchmark VM). */
export const WRITE_SLICE_CONNECTIONS = 128;

/**
 * The frames a connection gets in the current tick: a node of the tick's trie of frame runs (a
 * run: one topic's messages, `first` to `end` in the tick's frames), shared by every connection
 * that got the same runs in the same order. Connections with the same subscriptions walk the same
 * path, so a tick costs a pointer step per subscriber and topic, and one joined buffer per path,
 * whatever the number of connections (bench/fan-out.bench.ts).
 */
export class QueuedFrames {
  readonly parent: QueuedFrames | undefined;
  readonly first: number;
  readonly end: number;
  /** Frames from the root to here. */
  readonly count: number;
  readonly #next = new Map<number, QueuedFrames>();
  #bytes: Buffer | undefined;

  constructor(parent: QueuedFrames | undefined, first: number, end: number) {
    this.parent = parent;
    this.first = first;
    this.end = end;
    this.count = (parent?.count ?? 0) + end - first;
  }

  /** This path followed by the run `first`…`end` (runs of one tick never overlap: `first` names it). */
  followedBy(first: number, end: number): QueuedFrames {
    let next = this.#next.get(first);
    if (next === undefined) this.#next.set(first, (next = new QueuedFrames(this, first, end)));
    return next;
  }

  /** The path's frames joined (built once per tick for all the connections on it). */
  bytes(frames: readonly Buffer[]): Buffer {
    if (this.#bytes !== undefined) return this.#bytes;
    const runs: QueuedFrames[] = [this];
    for (let at = this.parent; at?.parent !== undefined; at = at.parent) runs.push(at);
    const first = runs.length === 1 ? (runs[0] as QueuedFrames) : undefined;
    if (first !== undefined && first.end - first.first === 1) {
      this.#bytes = frames[first.first] as Buffer;
    } else {
      const parts: Buffer[] = [];
      for (let r = runs.length - 1; r >= 0; r--) {
        const run = runs[r] as QueuedFrames;
        for (let i = run.first; i < run.end; i++) parts.push(frames[i] as Buffer);
      }
      this.#bytes = Buffer.concat(parts);
    }
    return this.#bytes;
  }
}

/** A connection, as the fan-out sees it. */
export interface Sink {
  /** The tick's frames queued for it (the fan-out sets it, and clears it once written). */
  queued: QueuedFrames | undefined;
  /** Writes one tick's frames, joined. */
  write(bytes: Buffer): void;
  /** The fan-out ended `subscription` (its API key was deleted): tell the client `message`. */
  ended(subscription: Subscription, message: string): void;
}

/** Who a private subscription is for. */
export interface Grant {
  readonly userId: number;
  readonly accessKey: string;
}

export interface Subscription {
  readonly sink: Sink;
  readonly channel: Channel;
  readonly grant: Grant | undefined;
}

/** What a topic needs to build its messages. */
interface Sources {
  readonly engine: VenueState;
  readonly marketData: MarketData;
  readonly klines: LiveKlines;
  readonly now: () => number;
}

/** One market's changes in the current tick. */
class MarketChanges {
  readonly name: string;
  readonly topics = new Map<string, Topic>();
  book = false;
  readonly trades: PublicTrade[] = [];
  /** Time of the tick's first trade (−1: none): the kline candles from its bucket on changed. */
  firstTradeTime = -1;

  constructor(name: string) {
    this.name = name;
  }

  reset(): void {
    this.book = false;
    this.trades.length = 0;
    this.firstTradeTime = -1;
  }
}

/** One user's changes in the current tick. */
class UserChanges {
  readonly userId: number;
  readonly topics = new Map<string, Topic>();
  /** Record topics by market name. */
  readonly records = new Map<string, RecordTopic>();
  readonly coins = new Set<string>();
  /** Margin accounts changed in the tick (`isolated:<market>` or `cross`), with their changed coins. */
  readonly margin = new Map<string, Set<string>>();

  constructor(userId: number) {
    this.userId = userId;
  }
}

abstract class Topic {
  readonly key: string;
  readonly ready = new Set<Subscription>();
  readonly pending = new Set<Subscription>();

  constructor(key: string) {
    this.key = key;
  }

  get size(): number {
    return this.ready.size + this.pending.size;
  }

  /** The messages a new subscriber gets first: the whole current state. */
  abstract snapshot(s: Sources): string[];
  /** The messages of this tick's changes for subscribers that have their snapshot (may be none). */
  abstract update(s: Sources): string[];
  /** The last ready subscriber left. */
  unwatched(): void {}
}

/** Ticker, depth and quick depth: every message is the whole state, sent when the book or trades changed. */
class StateTopic extends Topic {
  readonly #channel: PublicChannel;
  readonly #changes: MarketChanges;

  constructor(channel: PublicChannel, changes: MarketChanges) {
    super(topicKey(channel, undefined));
    this.#channel = channel;
    this.#changes = changes;
  }

  snapshot(s: Sources): string[] {
    const c = this.#channel;
    const { spec, wireId } = c.market;
    switch (c.kind) {
      case 'ticker':
        return [tickerMessage(s.marketData, spec.name, c.name)];
      case 'depth':
        return [depthMessage(s.marketData, spec.name, c.name)];
      case 'quick_depth':
        return [
          quickDepthMessage(s.marketData, s.engine, current(s, c.market), wireId, c.length, c.name, s.now()),
        ];
      default:
        return [];
    }
  }

  update(s: Sources): string[] {
    return this.#changes.book ? this.snapshot(s) : [];
  }
}

class TradesTopic extends Topic {
  readonly #channel: PublicChannel;
  readonly #changes: MarketChanges;

  constructor(channel: PublicChannel, changes: MarketChanges) {
    super(topicKey(channel, undefined));
    this.#channel = channel;
    this.#changes = changes;
  }

  /** The latest 50 trades, as /data/v1/trades gives them. */
  snapshot(s: Sources): string[] {
    const body = s.marketData.latestTradesBody(this.#channel.market.spec.name) as Buffer;
    return [tradesMessage(body.toString('latin1'), this.#channel.name)];
  }

  /** The tick's trades, oldest first. */
  update(s: Sources): string[] {
    const trades = this.#changes.trades;
    if (trades.length === 0) return [];
    return [tradesMessage(tradesJson(current(s, this.#channel.market), trades), this.#channel.name)];
  }
}

class KlineTopic extends Topic {
  readonly #channel: PublicChannel & { readonly interval: KlineInterval };
  readonly #changes: MarketChanges;

  constructor(channel: PublicChannel & { readonly interval: KlineInterval }, changes: MarketChanges) {
    super(topicKey(channel, undefined));
    this.#channel = channel;
    this.#changes = changes;
  }

  /** The latest candles (LIVE_KLINE_CANDLES at most). */
  snapshot(s: Sources): string[] {
    const { market, interval, name } = this.#channel;
    return [klineMessage(current(s, market), s.klines.latest(market.spec.name, interval), name)];
  }

  /** The candles the tick's trades touched: the current one, and the one before if a bucket closed. */
  update(s: Sources): string[] {
    const first = this.#changes.firstTradeTime;
    if (first < 0) return [];
    const { market, interval, name } = this.#channel;
    const rows = s.klines.from(market.spec.name, interval, klineBucketStart(interval, first));
    return [klineMessage(current(s, market), rows, name)];
  }
}

/** `push_user_incr_record` of one user and market: one message per order change, in engine order. */
class RecordTopic extends Topic {
  readonly #userId: number;
  readonly #market: WireMarket;
  readonly #marketParam: string;
  /** The user's open orders in the market, while someone has the snapshot. */
  readonly #orders = new Map<number, OrderFacts>();
  #watching = false;
  readonly queued: string[] = [];

  constructor(key: string, userId: number, market: WireMarket) {
    super(key);
    this.#userId = userId;
    this.#market = market;
    this.#marketParam = `${market.wireId}${RECORD_MARKET_SUFFIX}`;
  }

  /** Every open order, oldest first; starts following the orders' changes. */
  snapshot(s: Sources): string[] {
    const spec = current(s, this.#market);
    const records: string[] = [];
    this.#orders.clear();
    for (const o of s.engine.openOrders(this.#userId, spec.name)) {
      this.#orders.set(o.id, o);
      records.push(
        recordArray(s.engine, spec, o, {
          ...unfilled(o.time),
          status: o.status,
          filled: o.filled,
          filledValue: o.filledValue,
          fees: o.fees,
          platformFees: o.platformFees,
        }),
      );
    }
    this.#watching = true;
    return [recordSnapshotMessage(this.#marketParam, records)];
  }

  update(): string[] {
    return this.queued.splice(0);
  }

  override unwatched(): void {
    this.#watching = false;
    this.#orders.clear();
    this.queued.length = 0;
  }

  accepted(s: Sources, e: OrderAccepted): void {
    if (!this.#watching) return;
    this.#orders.set(e.orderId, { ...e, id: e.orderId });
    const facts = this.#orders.get(e.orderId) as OrderFacts;
    this.queued.push(
      incrRecordMessage(
        this.#marketParam,
        recordArray(s.engine, current(s, this.#market), facts, unfilled(e.time)),
      ),
    );
  }

  updated(s: Sources, e: OrderUpdated): void {
    if (!this.#watching) return;
    const facts = this.#orders.get(e.orderId);
    if (facts === undefined) return;
    if (e.status === ORDER_DONE || e.status === ORDER_CANCELLED) this.#orders.delete(e.orderId);
    this.queued.push(
      incrRecordMessage(this.#marketParam, recordArray(s.engine, current(s, this.#market), facts, e)),
    );
  }
}

/** `push_user_asset` (every coin) and `push_user_incr_asset` (the tick's changed coins). */
class AssetTopic extends Topic {
  readonly #user: UserChanges;
  readonly #incremental: boolean;

  constructor(key: string, user: UserChanges, incremental: boolean) {
    super(key);
    this.#user = user;
    this.#incremental = incremental;
  }

  snapshot(s: Sources): string[] {
    const channel = this.#incremental ? 'push_user_incr_asset' : 'push_user_asset';
    const dataType = this.#incremental ? 'userIncrAsset' : 'userAsset';
    return [assetMessage(s.engine, this.#user.userId, s.engine.coins(), dataType, channel)];
  }

  /**
   * push_user_asset: the whole spot snapshot when a spot balance changed. push_user_incr_asset:
   * the changed spot coins, then one message per margin account that changed, naming it
   * (`acctType`, `marketName`) with its changed coins (marginAssetMessage).
   */
  update(s: Sources): string[] {
    const changed = this.#user.coins;
    if (!this.#incremental) return changed.size === 0 ? [] : this.snapshot(s);
    const userId = this.#user.userId;
    const messages: string[] = [];
    if (changed.size > 0) {
      const coins = s.engine.coins().filter((c) => changed.has(c.name));
      messages.push(assetMessage(s.engine, userId, coins, 'userIncrAsset', 'push_user_incr_asset'));
    }
    for (const [account, coins] of this.#user.margin) {
      const message = marginAssetMessage(s.engine, userId, account, coins);
      if (message !== undefined) messages.push(message);
    }
    return messages;
  }
}

/** push_user_cross_asset: getCrossAssets' result on subscribe, and again whenever the cross account changes. */
class CrossAssetTopic extends Topic {
  readonly #user: UserChanges;

  constructor(key: string, user: UserChanges) {
    super(key);
    this.#user = user;
  }

  snapshot(s: Sources): string[] {
    return [crossAssetMessage(s.engine, this.#user.userId)];
  }

  update(s: Sources): string[] {
    return this.#user.margin.has(CROSS_KEY) ? this.snapshot(s) : [];
  }
}

/** The market's current spec (an UpsertMarket may have changed its scales). */
function current(s: Sources, market: WireMarket): WireMarket['spec'] {
  return s.engine.market(market.spec.name) ?? market.spec;
}

/** The topic a channel subscribes to: the channel name, and the user and parameters that set it apart. */
function topicKey(channel: Channel, grant: Grant | undefined): string {
  switch (channel.kind) {
    case 'quick_depth':
      return `${channel.name}:${channel.length}`;
    case 'push_user_incr_record':
      return `${channel.name}:${grant?.userId}:${channel.market.spec.name}`;
    case 'push_user_asset':
    case 'push_user_incr_asset':
    case 'push_user_cross_asset':
      return `${channel.name}:${grant?.userId}`;
    default:
      return channel.name;
  }
}

export interface FanOutOptions {
  /** Default DEFAULT_MIN_FLUSH_INTERVAL_MS. */
  readonly minFlushIntervalMs?: number;
  /** Where failures while building a message are reported. */
  readonly log: (message: string) => void;
}

/** See the module comment. */
export class FanOut {
  readonly #sources: Sources;
  readonly #interval: number;
  readonly #log: (message: string) => void;
  readonly #markets = new Map<string, MarketChanges>();
  readonly #users = new Map<number, UserChanges>();
  readonly #byKey = new Map<string, Set<Subscription>>();
  readonly #dirtyMarkets = new Set<MarketChanges>();
  readonly #dirtyUsers = new Set<UserChanges>();
  readonly #awaiting = new Set<Topic>();
  /** The connections written to in the current tick (the first `#outgoingCount`; kept, not shrunk, between ticks). */
  readonly #outgoing: (Sink | undefined)[] = [];
  #outgoingCount = 0;
  /** The current tick's frames; queued runs index into it. */
  readonly #frames: Buffer[] = [];
  /** The root of the current tick's queued paths (no frames). */
  #queuedRoot = new QueuedFrames(undefined, 0, 0);
  /** Topic of each subscription. */
  readonly #topicOf = new Map<Subscription, Topic>();
  #scheduled: NodeJS.Timeout | NodeJS.Immediate | undefined;
  /** The earliest time (performance.now) of the next flush. */
  #nextFlushAt = -Infinity;
  /** Time spent in the current flush's own work (building and writing, not the turns between slices). */
  #flushBusy = 0;
  /** The next connection of `#outgoing` to write to, while a flush's writes are in progress. */
  #writeAt = 0;
  #closed = false;
  /** The margin accounts of users who watch their margin pushes, for changes of their risk state. */
  readonly #risk: RiskWatch;
  /** Frames handed to connections since start (a frame is one message to one connection). */
  framesWritten = 0;

  constructor(sources: Sources, options: FanOutOptions) {
    this.#sources = sources;
    this.#risk = new RiskWatch(sources.engine);
    this.#interval = options.minFlushIntervalMs ?? DEFAULT_MIN_FLUSH_INTERVAL_MS;
    this.#log = options.log;
  }

  /** Subscribes `sink` to `channel` (a private one with the grant its signature proved). */
  subscribe(sink: Sink, channel: Channel, grant?: Grant): Subscription {
    const subscription: Subscription = { sink, channel, grant };
    const topic = this.#topic(channel, grant);
    topic.pending.add(subscription);
    this.#topicOf.set(subscription, topic);
    if (grant !== undefined) {
      let set = this.#byKey.get(grant.accessKey);
      if (set === undefined) this.#byKey.set(grant.accessKey, (set = new Set()));
      set.add(subscription);
    }
    this.#awaiting.add(topic);
    this.#schedule();
    return subscription;
  }

  /** Ends a subscription; a topic left without subscribers is dropped. */
  unsubscribe(subscription: Subscription): void {
    const topic = this.#topicOf.get(subscription);
    if (topic === undefined) return;
    this.#topicOf.delete(subscription);
    if (subscription.grant !== undefined) {
      const set = this.#byKey.get(subscription.grant.accessKey);
      set?.delete(subscription);
      if (set?.size === 0) this.#byKey.delete(subscription.grant.accessKey);
    }
    if (topic.ready.delete(subscription) && topic.ready.size === 0) topic.unwatched();
    topic.pending.delete(subscription);
    if (topic.size === 0) this.#drop(topic, subscription.channel, subscription.grant);
  }

  /** Takes one batch of applied commands, in sequence order (an applied-feed listener). */
  readonly apply = (batch: readonly AppliedItem[]): void => {
    let changed = false;
    for (const item of batch) {
      for (const e of item.result.events) changed = this.#event(e) || changed;
    }
    // Any command may move a mark (a timer tick ages its window), and with it a notice flag.
    if (changed || this.#risk.watching) this.#schedule();
  };

  /** Stops flushing. */
  close(): void {
    this.#closed = true;
    if (this.#scheduled !== undefined) {
      clearTimeout(this.#scheduled as NodeJS.Timeout);
      clearImmediate(this.#scheduled as NodeJS.Immediate);
    }
  }

  #event(e: EngineEvent): boolean {
    switch (e.type) {
      case 'TradeExecuted': {
        const m = this.#markets.get(e.market);
        if (m === undefined) return false;
        m.book = true;
        m.trades.push({
          id: e.tradeId,
          time: e.time,
          price: e.price,
          amount: e.amount,
          takerSide: e.takerSide,
        });
        if (m.firstTradeTime < 0) m.firstTradeTime = e.time;
        this.#dirtyMarkets.add(m);
        return true;
      }
      case 'OrderAccepted':
      case 'OrderUpdated': {
        let changed = this.#bookChanged(e.market);
        const record = this.#users.get(e.userId)?.records.get(e.market);
        if (record !== undefined && record.ready.size > 0) {
          if (e.type === 'OrderAccepted') record.accepted(this.#sources, e);
          else record.updated(this.#sources, e);
          this.#dirtyUsers.add(this.#users.get(e.userId) as UserChanges);
          changed = true;
        }
        return changed;
      }
      case 'DeadmanFired':
        return this.#bookChanged(e.market);
      case 'BalanceChanged': {
        const user = this.#users.get(e.userId);
        if (user === undefined) return false;
        if (e.account === undefined) user.coins.add(e.coin);
        else {
          const key = e.account.kind === 'cross' ? CROSS_KEY : `${ISOLATED_PREFIX}${e.account.market}`;
          const coins = user.margin.get(key) ?? new Set<string>();
          user.margin.set(key, coins.add(e.coin));
        }
        this.#dirtyUsers.add(user);
        return true;
      }
      case 'MarketUpserted':
      case 'MarketStatusSet':
      case 'CoinUpserted':
      case 'SandboxRestored':
        for (const m of this.#markets.values()) {
          m.book = true;
          this.#dirtyMarkets.add(m);
        }
        return this.#markets.size > 0;
      case 'ApiKeyDeleted':
        for (const subscription of [...(this.#byKey.get(e.accessKey) ?? [])]) {
          this.unsubscribe(subscription);
          subscription.sink.ended(subscription, 'the API key of this subscription was deleted');
        }
        return false;
      default:
        return false;
    }
  }

  /** Accounts whose notice flag or lock changed without a balance change of theirs: pushed as changed. */
  #riskChanges(): void {
    let changes: RiskChange[];
    try {
      changes = this.#risk.changes();
    } catch (error) {
      this.#log(`ws: reading risk states failed: ${(error as Error).stack ?? String(error)}`);
      return;
    }
    for (const c of changes) {
      const user = this.#users.get(c.userId);
      if (user === undefined) continue;
      const coins = user.margin.get(c.account) ?? new Set<string>();
      for (const coin of c.coins) coins.add(coin);
      user.margin.set(c.account, coins);
      this.#dirtyUsers.add(user);
    }
  }

  #bookChanged(market: string): boolean {
    const m = this.#markets.get(market);
    if (m === undefined) return false;
    m.book = true;
    this.#dirtyMarkets.add(m);
    return true;
  }

  #schedule(): void {
    if (this.#scheduled !== undefined || this.#closed) return;
    const wait = this.#nextFlushAt - performance.now();
    this.#scheduled = wait > 0 ? setTimeout(this.#flush, wait) : setImmediate(this.#flush);
  }

  readonly #flush = (): void => {
    this.#scheduled = undefined;
    const started = performance.now();
    this.#flushBusy = 0;
    for (const m of this.#dirtyMarkets) {
      for (const topic of m.topics.values()) this.#deliver(topic, false);
      m.reset();
    }
    this.#dirtyMarkets.clear();
    this.#riskChanges();
    for (const user of this.#dirtyUsers) {
      for (const topic of user.topics.values()) this.#deliver(topic, false);
      user.coins.clear();
      for (const account of user.margin.keys()) this.#risk.shown(user.userId, account);
      user.margin.clear();
    }
    this.#dirtyUsers.clear();
    for (const topic of this.#awaiting) this.#deliver(topic, true);
    this.#awaiting.clear();
    this.#flushBusy += performance.now() - started;
    this.#writeSlice();
  };

  /**
   * One write per connection, WRITE_SLICE_CONNECTIONS connections per event-loop turn, so that
   * requests and journal completions run between slices instead of waiting for a thousand
   * writes. Connections with the same subscriptions get the same frames in the same order (the
   * same QueuedFrames path): those joined bytes are built once and written to each of them.
   */
  readonly #writeSlice = (): void => {
    const started = performance.now();
    const outgoing = this.#outgoing;
    const frames = this.#frames;
    const count = this.#outgoingCount;
    const end = Math.min(count, this.#writeAt + WRITE_SLICE_CONNECTIONS);
    for (let i = this.#writeAt; i < end; i++) {
      const sink = outgoing[i] as Sink;
      outgoing[i] = undefined;
      const queued = sink.queued as QueuedFrames;
      sink.queued = undefined;
      this.framesWritten += queued.count;
      try {
        sink.write(queued.bytes(frames));
      } catch (error) {
        this.#log(`ws: write failed: ${(error as Error).stack ?? String(error)}`);
      }
    }
    this.#writeAt = end;
    const ended = performance.now();
    this.#flushBusy += ended - started;
    if (end < count) {
      this.#scheduled = setImmediate(this.#writeSlice);
      return;
    }
    this.#outgoingCount = 0;
    frames.length = 0;
    this.#queuedRoot = new QueuedFrames(undefined, 0, 0);
    this.#writeAt = 0;
    this.#scheduled = undefined;
    // Under load the next flush waits at least as long as this one worked (at most half the time
    // flushing), and at least the minimum interval: more frames go out per write, not more writes.
    this.#nextFlushAt = ended + Math.max(this.#interval, this.#flushBusy);
    if (this.#dirtyMarkets.size > 0 || this.#dirtyUsers.size > 0 || this.#awaiting.size > 0) this.#schedule();
  };

  /** Queues a topic's update for its ready subscribers, or its snapshot for its pending ones. */
  #deliver(topic: Topic, snapshot: boolean): void {
    const receivers = snapshot ? topic.pending : topic.ready;
    if (receivers.size === 0) return;
    let messages: string[];
    try {
      messages = snapshot ? topic.snapshot(this.#sources) : topic.update(this.#sources);
    } catch (error) {
      this.#log(`ws: building ${topic.key} failed: ${(error as Error).stack ?? String(error)}`);
      return;
    }
    const first = this.#frames.length;
    for (const message of messages) this.#frames.push(textFrame(message));
    const end = this.#frames.length;
    if (end > first) {
      const outgoing = this.#outgoing;
      const root = this.#queuedRoot;
      for (const subscription of receivers) {
        const sink = subscription.sink;
        const queued = sink.queued;
        if (queued === undefined) outgoing[this.#outgoingCount++] = sink;
        sink.queued = (queued ?? root).followedBy(first, end);
      }
    }
    if (snapshot) {
      for (const subscription of receivers) topic.ready.add(subscription);
      topic.pending.clear();
    }
  }

  #topic(channel: Channel, grant: Grant | undefined): Topic {
    const key = topicKey(channel, grant);
    if ('market' in channel && grant === undefined) {
      const public_ = channel as PublicChannel;
      let m = this.#markets.get(public_.market.spec.name);
      if (m === undefined)
        this.#markets.set(public_.market.spec.name, (m = new MarketChanges(public_.market.spec.name)));
      let topic = m.topics.get(key);
      if (topic === undefined) {
        topic =
          public_.kind === 'trades'
            ? new TradesTopic(public_, m)
            : public_.kind === 'kline'
              ? new KlineTopic(public_, m)
              : new StateTopic(public_, m);
        m.topics.set(key, topic);
      }
      return topic;
    }
    const g = grant as Grant;
    let user = this.#users.get(g.userId);
    if (user === undefined) this.#users.set(g.userId, (user = new UserChanges(g.userId)));
    let topic = user.topics.get(key);
    if (topic === undefined) {
      const private_ = channel as PrivateChannel;
      switch (private_.kind) {
        case 'push_user_incr_record': {
          const record = new RecordTopic(key, g.userId, private_.market);
          user.records.set(private_.market.spec.name, record);
          topic = record;
          break;
        }
        case 'push_user_cross_asset':
          topic = new CrossAssetTopic(key, user);
          break;
        default:
          topic = new AssetTopic(key, user, private_.kind === 'push_user_incr_asset');
      }
      if (private_.kind === 'push_user_cross_asset' || private_.kind === 'push_user_incr_asset')
        this.#risk.watch(g.userId);
      user.topics.set(key, topic);
    }
    return topic;
  }

  #drop(topic: Topic, channel: Channel, grant: Grant | undefined): void {
    this.#awaiting.delete(topic);
    if (grant === undefined && 'market' in channel) {
      const m = this.#markets.get(channel.market.spec.name);
      m?.topics.delete(topic.key);
      if (m !== undefined && m.topics.size === 0) {
        this.#markets.delete(m.name);
        this.#dirtyMarkets.delete(m);
      }
      return;
    }
    if (grant === undefined) return;
    const user = this.#users.get(grant.userId);
    if (user === undefined) return;
    user.topics.delete(topic.key);
    if (channel.kind === 'push_user_incr_record') user.records.delete(channel.market.spec.name);
    if (channel.kind === 'push_user_cross_asset' || channel.kind === 'push_user_incr_asset')
      this.#risk.unwatch(user.userId);
    if (user.topics.size === 0) {
      this.#users.delete(user.userId);
      this.#dirtyUsers.delete(user);
    }
  }
}
