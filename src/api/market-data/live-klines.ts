/**
 * @module live-klines — each market's latest candlesticks for all 13 kline intervals, kept in
 * memory and current to the last applied batch, for the WebSocket kline channels.
 *
 * The history store holds every candle (and serves /data/v1/kline), but it is a projection
 * written after the engine, a few batches behind; a push must show the candle as of the batch
 * just applied. So this module keeps the latest `kept` candles per market and interval: seeded
 * from the store at start-up (when the store has caught up with the journal), then updated by
 * every TradeExecuted, with the store's own merge rule (history-projection's KlineDelta): the
 * first trade of a bucket opens it, high is the max, low the min, close the latest price, volume
 * the sum. Buckets without trades have no candle, as in the store. Everything held comes from
 * applied batches, so it is durable.
 */
import type { Lots, PriceTicks } from '../../domain/money.ts';
import {
  KLINE_INTERVALS,
  klineBucketStart,
  type HistoryStore,
  type KlineInterval,
  type KlineRow,
} from '../../store/history-store.ts';
import type { AppliedItem } from './market-data.ts';

/** Candles kept per market and interval: the kline channels' snapshot on subscribe. */
export const LIVE_KLINE_CANDLES = 100;

/** A candle being built: the store's row, mutable. */
type Candle = [...KlineRow];

/** One market's candles of one interval, oldest first. */
class CandleSeries {
  readonly interval: KlineInterval;
  readonly candles: Candle[] = [];

  constructor(interval: KlineInterval) {
    this.interval = interval;
  }

  add(time: number, price: PriceTicks, amount: Lots, kept: number): void {
    const start = klineBucketStart(this.interval, time);
    const last = this.candles[this.candles.length - 1];
    if (last !== undefined && last[0] === start) {
      if (price > last[2]) last[2] = price;
      if (price < last[3]) last[3] = price;
      last[4] = price;
      last[5] += amount;
      return;
    }
    if (last !== undefined && last[0] > start) return; // trades arrive in time order: never older
    this.candles.push([start, price, price, price, price, amount]);
    if (this.candles.length > kept) this.candles.shift();
  }
}

export class LiveKlines {
  readonly #kept: number;
  /** By market: one series per interval, in KLINE_INTERVALS order. */
  readonly #markets = new Map<string, CandleSeries[]>();

  constructor(kept = LIVE_KLINE_CANDLES) {
    this.#kept = kept;
  }

  /**
   * Loads the latest candles of every market and interval from the store. Call once at start-up,
   * with the store caught up to the engine, before `apply` receives live batches.
   */
  async seed(history: HistoryStore, markets: readonly string[]): Promise<void> {
    for (const market of markets) {
      const series = this.#series(market);
      for (const s of series) {
        const rows = await history.klines(market, s.interval, { size: this.#kept });
        s.candles.length = 0;
        for (const [start, open, high, low, close, volume] of rows) {
          s.candles.push([start, open, high, low, close, volume]);
        }
      }
    }
  }

  /** Takes one batch of applied commands, in sequence order (an applied-feed listener). */
  readonly apply = (batch: readonly AppliedItem[]): void => {
    for (const item of batch) {
      for (const e of item.result.events) {
        if (e.type !== 'TradeExecuted') continue;
        for (const s of this.#series(e.market)) s.add(e.time, e.price, e.amount, this.#kept);
      }
    }
  };

  /** The latest candles of `market` (at most LIVE_KLINE_CANDLES), oldest first. */
  latest(market: string, interval: KlineInterval): readonly KlineRow[] {
    return this.#find(market, interval)?.candles ?? [];
  }

  /** The candles that start at or after `start`, oldest first: those a trade at `start` or later touched. */
  from(market: string, interval: KlineInterval, start: number): readonly KlineRow[] {
    const candles = this.#find(market, interval)?.candles ?? [];
    let i = candles.length;
    while (i > 0 && (candles[i - 1] as Candle)[0] >= start) i--;
    return candles.slice(i);
  }

  #find(market: string, interval: KlineInterval): CandleSeries | undefined {
    return this.#markets.get(market)?.[KLINE_INTERVALS.indexOf(interval)];
  }

  #series(market: string): CandleSeries[] {
    let series = this.#markets.get(market);
    if (series === undefined) {
      series = KLINE_INTERVALS.map((interval) => new CandleSeries(interval));
      this.#markets.set(market, series);
    }
    return series;
  }
}
