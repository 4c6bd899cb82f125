/**
 * @module market-data — the public market-data caches the engine's events keep current: per market
 * a 24 h ticker, a ring of recent trades, and pre-encoded JSON bytes for markets, ticker, allTicker,
 * depth (each size and merge step) and trades, each rebuilt at most once per change.
 *
 * How it stays current: `apply(batch)` takes each batch the sequencer applied (wire it with
 * `feed.subscribe(from, (batch) => marketData.apply(batch))`) and only bumps version counters and
 * updates the 24 h buckets and the trade ring: O(1) per event. Serialization is lazy: a read
 * compares the versions a cached text was built at with the current ones and rebuilds only when
 * they differ, so a burst of 1,000 orders between two reads costs one rebuild, and 50,000 reads
 * of an unchanged book cost none. Replies are cached as UTF-8 bytes, so a read costs no
 * serialization, encoding or length count. Texts that carry the current time are cached without
 * it and encoded again at most once per unit of that time: depth `timestamp` once a second, the
 * ticker's `date` once a millisecond (allTicker has no time in it).
 *
 * Book levels come from `engine.depth()`; the last price from `engine.lastPrice()`. Both are
 * durable state (the sequencer applies only durable commands), as is everything served here.
 * Wire formats follow zb-api-facts §5 exactly; docs/market-data.md lists them.
 */
import type { Side } from '../../domain/commands.ts';
import type { EngineEvent } from '../../domain/events.ts';
import {
  formatUnits,
  formatUnitsTrim,
  mulDivFloor,
  roundToStep,
  safeMul,
  type Lots,
  type PriceTicks,
} from '../../domain/money.ts';
import { quoteUnitsPerTickLot, type MarketSpec } from '../../domain/specs.ts';
import type { VenueState } from '../../sequencer/venue-ports.ts';
import { klineBucketStart, type HistoryStore } from '../../store/history-store.ts';
import { MINUTE_MS, RollingWindow, WINDOW_MINUTES } from './rolling-window.ts';

/** Trades returned by /data/v1/trades (the latest ones, or the ones after `since`). */
export const TRADES_PAGE_SIZE = 50;
/** Depth sizes 1..MAX_DEPTH_SIZE; the default when `size` is absent. */
export const MAX_DEPTH_SIZE = 50;
/** A merged depth returns at most this many levels a side (interface, Limits). */
export const MERGED_DEPTH_LEVELS = 5;
/** Trades kept in memory per market: more than a page, so that `since` close to now needs no store. */
export const DEFAULT_RECENT_TRADES = 200;
/** Distinct merge steps cached per market; clients choose the step, so the cache is bounded. */
const MAX_MERGED_CACHE_ENTRIES = 64;
/** Raw levels read first when merging; the read grows ×4 until the merged levels are complete. */
const MERGE_FIRST_READ_LEVELS = 64;

/** A public trade: the fields /data/v1/trades shows. A history `TradeRow` is one too. */
export interface PublicTrade {
  readonly id: number;
  readonly time: number;
  readonly price: PriceTicks;
  readonly amount: Lots;
  readonly takerSide: Side;
}

/** What `apply` needs of each applied command (the sequencer's `AppliedCommand` is one). */
export interface AppliedItem {
  readonly result: { readonly events: readonly EngineEvent[] };
}

export interface MarketDataOptions {
  /** Wall clock (ms) for the 24 h window, ticker `date` and depth `timestamp`. */
  readonly now: () => number;
  /** Trades kept in memory per market (default DEFAULT_RECENT_TRADES, at least TRADES_PAGE_SIZE). */
  readonly recentTrades?: number;
}

interface CachedBytes {
  readonly version: number;
  readonly bytes: Buffer;
}

/** A depth text without its timestamp, and its bytes for the second they were finished in. */
interface CachedDepth {
  readonly version: number;
  readonly prefix: string;
  second: number;
  bytes: Buffer;
}

/** A market's 24 h ticker figures as decimal text at the market's scales (the ticker's own values). */
export interface TickerFigures {
  readonly high: string;
  readonly low: string;
  readonly last: string;
  /** Base-coin volume. */
  readonly vol: string;
  /** 24 h change in percent, two decimals. */
  readonly riseRate: string;
}

interface CachedTicker {
  readonly figures: TickerFigures;
  readonly bookVersion: number;
  readonly tradeVersion: number;
  readonly configVersion: number;
  readonly minute: number;
  /** The `{"high":…}` object. */
  readonly text: string;
  /** `{"date":…,"ticker":…}` for the millisecond `ms`. */
  ms: number;
  bytes: Buffer;
}

/** A fixed-capacity ring of the latest trades, oldest first. */
class TradeRing {
  readonly #items: (PublicTrade | undefined)[];
  #next = 0;
  #count = 0;

  constructor(capacity: number) {
    this.#items = new Array<PublicTrade | undefined>(capacity);
  }

  get count(): number {
    return this.#count;
  }

  push(trade: PublicTrade): void {
    this.#items[this.#next] = trade;
    this.#next = (this.#next + 1) % this.#items.length;
    if (this.#count < this.#items.length) this.#count++;
  }

  /** The i-th oldest trade held (0 ≤ i < count). */
  at(i: number): PublicTrade {
    const capacity = this.#items.length;
    return this.#items[(this.#next - this.#count + i + capacity * 2) % capacity] as PublicTrade;
  }
}

class MarketState {
  readonly name: string;
  /** The allTicker key: the market id without its underscore (`btcusdt`). */
  readonly wireKey: string;
  bookVersion = 0;
  tradeVersion = 0;
  readonly window = new RollingWindow();
  readonly trades: TradeRing;
  /** By size (index 1..50). */
  readonly depth: (CachedDepth | undefined)[] = new Array<CachedDepth | undefined>(MAX_DEPTH_SIZE + 1);
  /** By `${step}:${levels}`. */
  readonly merged = new Map<string, CachedDepth>();
  ticker: CachedTicker | undefined;
  latestTrades: CachedBytes | undefined;

  constructor(name: string, recentTrades: number) {
    this.name = name;
    this.wireKey = name.replace('_', '');
    this.trades = new TradeRing(recentTrades);
  }
}

/** See the module comment. */
export class MarketData {
  readonly #engine: VenueState;
  readonly #now: () => number;
  readonly #recentTrades: number;
  readonly #markets = new Map<string, MarketState>();
  /** Bumped by coin and market configuration changes. */
  #configVersion = 0;
  /** Bumped by any change that can alter a ticker (allTicker's version). */
  #tickerEpoch = 0;
  #marketsBytes: CachedBytes | undefined;
  #groupMarkets: CachedBytes | undefined;
  #allTicker: { readonly epoch: number; readonly minute: number; readonly bytes: Buffer } | undefined;

  constructor(engine: VenueState, options: MarketDataOptions) {
    this.#engine = engine;
    this.#now = options.now;
    this.#recentTrades = Math.max(TRADES_PAGE_SIZE, options.recentTrades ?? DEFAULT_RECENT_TRADES);
    for (const m of engine.markets()) this.#markets.set(m.name, new MarketState(m.name, this.#recentTrades));
  }

  /** Bumped whenever a coin (its chains included) or market is added or changed (for caches kept by routes). */
  get configVersion(): number {
    return this.#configVersion;
  }

  /** Takes one batch of applied commands, in sequence order (an applied-feed listener). */
  apply(batch: readonly AppliedItem[]): void {
    for (const item of batch) this.applyEvents(item.result.events);
  }

  /** Takes the events of one applied command, in order. */
  applyEvents(events: readonly EngineEvent[]): void {
    for (const e of events) {
      switch (e.type) {
        case 'TradeExecuted': {
          const s = this.#state(e.market);
          if (s === undefined) break;
          s.window.add(e.time, e.price, e.amount, e.value);
          s.trades.push({
            id: e.tradeId,
            time: e.time,
            price: e.price,
            amount: e.amount,
            takerSide: e.takerSide,
          });
          s.tradeVersion++;
          s.bookVersion++;
          this.#tickerEpoch++;
          break;
        }
        case 'OrderAccepted':
        case 'OrderUpdated':
        case 'DeadmanFired': {
          const s = this.#state(e.market);
          if (s === undefined) break;
          s.bookVersion++;
          this.#tickerEpoch++;
          break;
        }
        case 'SandboxRestored':
          // The whole state was replaced (issue 35): every book and the markets' last prices.
          for (const s of this.#markets.values()) s.bookVersion++;
          this.#configVersion++;
          this.#tickerEpoch++;
          break;
        case 'MarketUpserted':
        case 'MarketStatusSet':
        case 'CoinUpserted':
        case 'CoinFundsSet':
          this.#configVersion++;
          this.#tickerEpoch++;
          break;
        default:
          break;
      }
    }
  }

  /**
   * Seeds the 24 h window from the store's 1min klines and the trade ring from its latest trades,
   * so that a restart keeps the 24 h view. Call it once at start-up, with the store caught up to
   * the engine, before `apply` receives live batches (else a trade could be counted twice).
   *
   * Klines carry no quote value, so a seeded minute's turnover is estimated as volume × the
   * minute's typical price (high + low + close) / 3, rounded down; live trades add exact values.
   */
  async seed(history: HistoryStore): Promise<void> {
    const now = this.#now();
    const from = klineBucketStart('1min', now) - (WINDOW_MINUTES - 1) * MINUTE_MS;
    for (const spec of this.#engine.markets()) {
      const s = this.#state(spec.name);
      if (s === undefined) continue;
      const quote = this.#engine.coin(spec.quote);
      const unitsPerTickLot = quote === undefined ? undefined : quoteUnitsPerTickLot(spec, quote);
      let since = from;
      for (;;) {
        const rows = await history.klines(spec.name, '1min', { since, size: 1000 });
        for (const [start, open, high, low, close, volume] of rows) {
          const tickLots = mulDivFloor(volume, high + low + close, 3);
          const value =
            tickLots === undefined || unitsPerTickLot === undefined
              ? 0
              : (safeMul(tickLots, unitsPerTickLot) ?? 0);
          s.window.addBucket(start, open, high, low, close, volume, value);
        }
        const last = rows[rows.length - 1];
        if (rows.length < 1000 || last === undefined) break;
        since = last[0] + MINUTE_MS;
      }
      for (const t of await history.trades(spec.name, { limit: this.#recentTrades })) {
        s.trades.push({ id: t.id, time: t.time, price: t.price, amount: t.amount, takerSide: t.takerSide });
      }
      s.tradeVersion++;
    }
    this.#tickerEpoch++;
  }

  /** /data/v1/markets: `{"btc_usdt":{"amountScale":4,"minAmount":0.0001,"minSize":5,"priceScale":2},…}`. */
  marketsBody(): Buffer {
    const cached = this.#marketsBytes;
    if (cached !== undefined && cached.version === this.#configVersion) return cached.bytes;
    const parts: string[] = [];
    for (const m of this.#engine.markets()) {
      const quote = this.#engine.coin(m.quote);
      const minSize = formatUnitsTrim(m.minSize, quote?.unitDecimal ?? 0);
      parts.push(
        `${JSON.stringify(m.name)}:{"amountScale":${m.amountScale},` +
          `"minAmount":${formatUnitsTrim(m.minAmount, m.amountScale)},"minSize":${minSize},` +
          `"priceScale":${m.priceScale}}`,
      );
    }
    const bytes = Buffer.from(`{${parts.join(',')}}`);
    this.#marketsBytes = { version: this.#configVersion, bytes };
    return bytes;
  }

  /**
   * /data/v1/getGroupMarkets: `{"zone":["usdt","btc",…],"usdt":["btc_usdt",…],…}`: every value
   * an array of strings (the one client seen decodes it as map[string][]string). `zone` lists the
   * quote coins in order of first appearance; each quote coin's key lists its markets.
   */
  groupMarketsBody(): Buffer {
    const cached = this.#groupMarkets;
    if (cached !== undefined && cached.version === this.#configVersion) return cached.bytes;
    const groups = new Map<string, string[]>();
    for (const m of this.#engine.markets()) {
      const list = groups.get(m.quote);
      if (list === undefined) groups.set(m.quote, [m.name]);
      else list.push(m.name);
    }
    const body: Record<string, string[]> = { zone: [...groups.keys()] };
    for (const [quote, names] of groups) if (quote !== 'zone') body[quote] = names;
    const bytes = Buffer.from(JSON.stringify(body));
    this.#groupMarkets = { version: this.#configVersion, bytes };
    return bytes;
  }

  /** /data/v1/ticker: `{"date":"<ms>","ticker":{…}}`, or undefined for an unknown market. */
  tickerBody(market: string): Buffer | undefined {
    const s = this.#state(market);
    if (s === undefined) return undefined;
    const now = this.#now();
    const ticker = this.#ticker(s, now);
    if (ticker.ms !== now) {
      ticker.ms = now;
      ticker.bytes = Buffer.from(`{"date":"${now}","ticker":${ticker.text}}`);
    }
    return ticker.bytes;
  }

  /** The figures of the market's ticker as `tickerBody` shows them now, or undefined for an unknown market. */
  tickerFigures(market: string): TickerFigures | undefined {
    const s = this.#state(market);
    return s === undefined ? undefined : this.#ticker(s, this.#now()).figures;
  }

  /** The market's latest trade, or undefined before its first (or for an unknown market). */
  lastTrade(market: string): PublicTrade | undefined {
    const ring = this.#state(market)?.trades;
    return ring === undefined || ring.count === 0 ? undefined : ring.at(ring.count - 1);
  }

  /** /data/v1/allTicker: `{"btcusdt":{…},…}` keyed without the underscore, no `date`. */
  allTickerBody(): Buffer {
    const now = this.#now();
    const minute = Math.floor(now / MINUTE_MS);
    const cached = this.#allTicker;
    if (cached !== undefined && cached.epoch === this.#tickerEpoch && cached.minute === minute) {
      return cached.bytes;
    }
    const epoch = this.#tickerEpoch;
    const parts: string[] = [];
    for (const m of this.#engine.markets()) {
      const s = this.#state(m.name);
      if (s !== undefined) parts.push(`${JSON.stringify(s.wireKey)}:${this.#ticker(s, now).text}`);
    }
    const bytes = Buffer.from(`{${parts.join(',')}}`);
    this.#allTicker = { epoch, minute, bytes };
    return bytes;
  }

  /**
   * /data/v1/depth without merge: the best `size` levels a side (1..MAX_DEPTH_SIZE), asks then
   * bids, each listed from the highest price down, `[price, amount]` as numbers, `timestamp` in
   * seconds. Undefined for an unknown market.
   */
  depthBody(market: string, size: number): Buffer | undefined {
    const s = this.#state(market);
    if (s === undefined) return undefined;
    let cached = s.depth[size];
    if (cached === undefined || cached.version !== s.bookVersion) {
      const spec = this.#engine.market(market) as MarketSpec;
      const book = this.#engine.depth(market, size) ?? { bids: [], asks: [] };
      cached = newDepth(s.bookVersion, depthPrefix(book.asks, book.bids, spec));
      s.depth[size] = cached;
    }
    return depthBytes(cached, this.#now());
  }

  /**
   * /data/v1/depth with merge: `levels` (≤ MERGED_DEPTH_LEVELS) merged levels a side, the
   * prices of bids rounded down and of asks rounded up to a multiple of `step` ticks, the amounts
   * at one merged price added up (money.ts, "Merged depth"). Undefined for an unknown market.
   */
  mergedDepthBody(market: string, step: PriceTicks, levels: number): Buffer | undefined {
    const s = this.#state(market);
    if (s === undefined) return undefined;
    const key = `${step}:${levels}`;
    let cached = s.merged.get(key);
    if (cached === undefined || cached.version !== s.bookVersion) {
      const spec = this.#engine.market(market) as MarketSpec;
      const { asks, bids } = this.#merged(market, step, levels);
      cached = newDepth(s.bookVersion, depthPrefix(asks, bids, spec));
      if (s.merged.size >= MAX_MERGED_CACHE_ENTRIES && !s.merged.has(key)) s.merged.clear();
      s.merged.set(key, cached);
    }
    return depthBytes(cached, this.#now());
  }

  /** /data/v1/trades without since: the latest TRADES_PAGE_SIZE trades, oldest first. */
  latestTradesBody(market: string): Buffer | undefined {
    const s = this.#state(market);
    if (s === undefined) return undefined;
    const cached = s.latestTrades;
    if (cached !== undefined && cached.version === s.tradeVersion) return cached.bytes;
    const ring = s.trades;
    const list: PublicTrade[] = [];
    for (let i = Math.max(0, ring.count - TRADES_PAGE_SIZE); i < ring.count; i++) list.push(ring.at(i));
    const bytes = Buffer.from(tradesJson(this.#engine.market(market) as MarketSpec, list));
    s.latestTrades = { version: s.tradeVersion, bytes };
    return bytes;
  }

  /**
   * Up to `limit` trades with an id above `since`, oldest first, when memory holds all of them
   * (`since` is at or after the oldest trade kept); undefined when only the store can answer.
   */
  tradesAfter(market: string, since: number, limit: number): PublicTrade[] | undefined {
    const ring = this.#state(market)?.trades;
    if (ring === undefined || ring.count === 0 || since < ring.at(0).id) return undefined;
    const out: PublicTrade[] = [];
    for (let i = 0; i < ring.count && out.length < limit; i++) {
      const t = ring.at(i);
      if (t.id > since) out.push(t);
    }
    return out;
  }

  #state(market: string): MarketState | undefined {
    const s = this.#markets.get(market);
    if (s !== undefined) return s;
    if (this.#engine.market(market) === undefined) return undefined;
    const created = new MarketState(market, this.#recentTrades);
    this.#markets.set(market, created);
    return created;
  }

  /** The market's ticker object, rebuilt when its book, trades, configuration or minute changed. */
  #ticker(s: MarketState, now: number): CachedTicker {
    const minute = Math.floor(now / MINUTE_MS);
    const c = s.ticker;
    if (
      c !== undefined &&
      c.bookVersion === s.bookVersion &&
      c.tradeVersion === s.tradeVersion &&
      c.configVersion === this.#configVersion &&
      c.minute === minute
    ) {
      return c;
    }
    const spec = this.#engine.market(s.name) as MarketSpec;
    const quoteDecimals = this.#engine.coin(spec.quote)?.unitDecimal ?? 0;
    const stats = s.window.stats(now);
    const last = this.#engine.lastPrice(s.name);
    const top = this.#engine.depth(s.name, 1);
    const buy = top?.bids[0]?.[0] ?? 0;
    const sell = top?.asks[0]?.[0] ?? 0;
    // With no trade in the last 24 h the day is flat at the last price.
    const open = stats.empty ? last : stats.open;
    const high = stats.empty ? last : stats.high;
    const low = stats.empty ? last : stats.low;
    const price = (ticks: PriceTicks): string => formatUnits(ticks, spec.priceScale);
    const figures: TickerFigures = {
      high: price(high),
      low: price(low),
      last: price(last),
      vol: formatUnits(stats.volume, spec.amountScale),
      riseRate: formatUnits(riseRateHundredths(open, last), 2),
    };
    const text = [
      `{"high":"${figures.high}","vol":"${figures.vol}",`,
      `"last":"${figures.last}","low":"${figures.low}","buy":"${price(buy)}","sell":"${price(sell)}",`,
      `"turnover":"${formatBigUnits(stats.value, quoteDecimals)}","open":"${price(open)}",`,
      `"riseRate":"${figures.riseRate}"}`,
    ].join('');
    const ticker: CachedTicker = {
      figures,
      bookVersion: s.bookVersion,
      tradeVersion: s.tradeVersion,
      configVersion: this.#configVersion,
      minute,
      text,
      ms: -1,
      bytes: EMPTY,
    };
    s.ticker = ticker;
    return ticker;
  }

  /** Reads deeper into the book until each side has `levels` complete merged levels or ends. */
  #merged(
    market: string,
    step: PriceTicks,
    levels: number,
  ): { asks: [PriceTicks, Lots][]; bids: [PriceTicks, Lots][] } {
    for (let read = MERGE_FIRST_READ_LEVELS; ; read *= 4) {
      const book = this.#engine.depth(market, read) ?? { bids: [], asks: [] };
      const bids = mergeSide(book.bids, step, false, levels);
      const asks = mergeSide(book.asks, step, true, levels);
      const bidsDone = bids.complete || book.bids.length < read;
      const asksDone = asks.complete || book.asks.length < read;
      if (bidsDone && asksDone) return { asks: asks.levels, bids: bids.levels };
    }
  }
}

/**
 * Merges best-first levels into at most `count` levels at multiples of `step` (rounded up for
 * asks, down for bids). `complete` is true when a level beyond the last merged one was seen, so
 * that the last merged level's amount is known to be whole.
 */
function mergeSide(
  levels: readonly (readonly [PriceTicks, Lots])[],
  step: PriceTicks,
  up: boolean,
  count: number,
): { levels: [PriceTicks, Lots][]; complete: boolean } {
  const out: [PriceTicks, Lots][] = [];
  for (const [price, lots] of levels) {
    const merged = roundToStep(price, step, up);
    const last = out[out.length - 1];
    if (last !== undefined && last[0] === merged) {
      last[1] += lots;
    } else {
      if (out.length === count) return { levels: out, complete: true };
      out.push([merged, lots]);
    }
  }
  return { levels: out, complete: false };
}

/**
 * `{"asks":[…],"bids":[…],"timestamp":` from best-first levels: both sides are written from the
 * highest price down (asks reversed), prices and amounts as JSON numbers at the market's scales.
 */
function depthPrefix(
  asks: readonly (readonly [PriceTicks, Lots])[],
  bids: readonly (readonly [PriceTicks, Lots])[],
  spec: MarketSpec,
): string {
  const ps = spec.priceScale;
  const as = spec.amountScale;
  // Plain `+=` measured ~1.7× faster than template literals joined (20 levels: 2.9 µs vs 5.0 µs).
  let text = '{"asks":[';
  for (let i = asks.length - 1; i >= 0; i--) {
    const [price, lots] = asks[i] as readonly [PriceTicks, Lots];
    text += (i === asks.length - 1 ? '[' : ',[') + formatUnits(price, ps) + ',' + formatUnits(lots, as) + ']';
  }
  text += '],"bids":[';
  for (let i = 0; i < bids.length; i++) {
    const [price, lots] = bids[i] as readonly [PriceTicks, Lots];
    text += (i === 0 ? '[' : ',[') + formatUnits(price, ps) + ',' + formatUnits(lots, as) + ']';
  }
  return text + '],"timestamp":';
}

const EMPTY = Buffer.alloc(0);

function newDepth(version: number, prefix: string): CachedDepth {
  return { version, prefix, second: -1, bytes: EMPTY };
}

/** The depth's bytes with the current second as `timestamp`, encoded at most once a second. */
function depthBytes(cached: CachedDepth, now: number): Buffer {
  const second = Math.floor(now / 1000);
  if (cached.second !== second) {
    cached.second = second;
    cached.bytes = Buffer.from(`${cached.prefix}${second}}`);
  }
  return cached.bytes;
}

/**
 * A JSON array of public trades: `{"date":<s>,"amount":"…","price":"…","trade_type":"bid"|"ask",
 * "type":"buy"|"sell","tid":<n>}`, in the order given. `trade_type`/`type` are the taker's side.
 */
export function tradesJson(spec: MarketSpec, trades: readonly PublicTrade[]): string {
  const parts: string[] = [];
  for (const t of trades) {
    const buy = t.takerSide === 1;
    parts.push(
      `{"date":${Math.floor(t.time / 1000)},"amount":"${formatUnits(t.amount, spec.amountScale)}",` +
        `"price":"${formatUnits(t.price, spec.priceScale)}","trade_type":"${buy ? 'bid' : 'ask'}",` +
        `"type":"${buy ? 'buy' : 'sell'}","tid":${t.id}}`,
    );
  }
  return `[${parts.join(',')}]`;
}

/** The 24 h change in hundredths of a percent, rounded half away from zero (0 without an open). */
export function riseRateHundredths(open: PriceTicks, last: PriceTicks): number {
  if (open <= 0) return 0;
  const num = BigInt(last - open) * 10_000n;
  const den = BigInt(open);
  const magnitude = num < 0n ? -num : num;
  const rounded = (2n * magnitude + den) / (2n * den);
  return Number(num < 0n ? -rounded : rounded);
}

/**
 * Formats a bigint count of 10^-scale units. Beyond 2^53 (a 24 h turnover can get there) the
 * lowest decimals are dropped, rounding down, until the value is exact in money.ts's range.
 */
function formatBigUnits(units: bigint, scale: number): string {
  let value = units;
  let s = scale;
  while (value > BigInt(Number.MAX_SAFE_INTEGER) && s > 0) {
    value /= 10n;
    s--;
  }
  return formatUnits(Number(value), s);
}
