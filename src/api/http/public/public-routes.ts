/**
 * @module public-routes — the unsigned endpoints: /data/v1/{markets, allTicker, ticker, depth,
 * trades, kline, getGroupMarkets}, the unsigned /api/getFeeInfo and the contract market list
 * ccxt's loadMarkets needs. Wire shapes follow zb-api-facts §5 exactly (docs/market-data.md).
 *
 * Live data (markets, tickers, depth, recent trades) comes pre-serialized from MarketData; history
 * (trades after an old `since`, klines) from the history store.
 */
import { formatUnits, parseDecimal } from '../../../domain/money.ts';
import { checkCoinName, type MarketSpec } from '../../../domain/specs.ts';
import {
  KLINE_INTERVAL_MS,
  MAX_KLINE_SIZE,
  type KlineInterval,
  type KlineRow,
} from '../../../store/history-store.ts';
import {
  MAX_DEPTH_SIZE,
  MERGED_DEPTH_LEVELS,
  TRADES_PAGE_SIZE,
  tradesJson,
  type MarketData,
  type PublicTrade,
} from '../../market-data/market-data.ts';
import { resultReply } from '../reply.ts';
import { param, type ApiReply, type ApiRequest, type Route, type VenuePort } from '../types.ts';
import { feeInfoResult } from './fee-info.ts';
import { IntervalLimiter } from './interval-limiter.ts';
import { checkInteger, checkMarket } from './validate.ts';

/** The candlestick endpoint allows one request per this many ms per IP (interface, Limits). */
export const KLINE_MIN_INTERVAL_MS = 1_000;
/** The interval used when `type` is absent (the interface names none). */
export const DEFAULT_KLINE_TYPE: KlineInterval = '1day';

export interface PublicRouteDeps {
  readonly venue: Pick<VenuePort, 'engine' | 'history' | 'now'>;
  readonly marketData: MarketData;
  /** Per-IP spacing of kline requests (default KLINE_MIN_INTERVAL_MS; 0 switches it off). */
  readonly klineMinIntervalMs?: number;
}

/** The contract (fapi) market list: empty, so that ccxt loads spot markets only (facts §11.1). */
const CONTRACT_MARKET_LIST = Buffer.from(JSON.stringify({ code: 10000, data: [], desc: '操作成功' }));

/** The routes, each at its exact path. */
export function publicRoutes(deps: PublicRouteDeps): Route[] {
  const { venue, marketData: md } = deps;
  const engine = venue.engine;
  const klineInterval = deps.klineMinIntervalMs ?? KLINE_MIN_INTERVAL_MS;
  const klineLimiter = klineInterval > 0 ? new IntervalLimiter(klineInterval) : undefined;
  let feeInfoCache: { version: number; bytes: Buffer } | undefined;

  const ticker = (request: ApiRequest): ApiReply => {
    const market = checkMarket(engine, request);
    if (!market.ok) return market.reply;
    return { body: md.tickerBody(market.value.name) as Buffer };
  };

  const depth = (request: ApiRequest): ApiReply => {
    const market = checkMarket(engine, request);
    if (!market.ok) return market.reply;
    const spec = market.value;
    const size = checkInteger(request, 'size', 1, MAX_DEPTH_SIZE, MAX_DEPTH_SIZE);
    if (!size.ok) return size.reply;
    const merge = param(request, 'merge');
    if (merge === undefined || merge === '') return { body: md.depthBody(spec.name, size.value) as Buffer };
    const step = parseDecimal(merge, spec.priceScale);
    if (step === undefined || step === 0) {
      const tick = formatUnits(1, spec.priceScale);
      return resultReply(
        'INVALID_PARAMETER',
        `invalid parameter 'merge': '${merge.slice(0, 40)}' is not a positive multiple of the price step ${tick} of ${spec.name}`,
      );
    }
    const levels = Math.min(size.value, MERGED_DEPTH_LEVELS);
    return { body: md.mergedDepthBody(spec.name, step, levels) as Buffer };
  };

  // Synchronous unless the store must answer: a cached reply skips the promise machinery.
  const trades = (request: ApiRequest): ApiReply | Promise<ApiReply> => {
    const market = checkMarket(engine, request);
    if (!market.ok) return market.reply;
    const spec = market.value;
    const since = checkInteger(request, 'since', 0, Number.MAX_SAFE_INTEGER, undefined);
    if (!since.ok) return since.reply;
    if (since.value === undefined) return { body: md.latestTradesBody(spec.name) as Buffer };
    const recent = md.tradesAfter(spec.name, since.value, TRADES_PAGE_SIZE);
    if (recent !== undefined) return { text: tradesJson(spec, recent) };
    return storedTrades(spec, since.value);
  };

  const storedTrades = async (spec: MarketSpec, since: number): Promise<ApiReply> => {
    const rows: PublicTrade[] = await venue.history.trades(spec.name, {
      sinceTradeId: since,
      limit: TRADES_PAGE_SIZE,
    });
    if (rows.length < TRADES_PAGE_SIZE) {
      // The store is a projection a few batches behind the engine: finish the page from memory.
      const after = rows[rows.length - 1]?.id ?? since;
      const more = md.tradesAfter(spec.name, after, TRADES_PAGE_SIZE - rows.length) ?? [];
      return { text: tradesJson(spec, more.length === 0 ? rows : [...rows, ...more]) };
    }
    return { text: tradesJson(spec, rows) };
  };

  const kline = async (request: ApiRequest): Promise<ApiReply> => {
    if (klineLimiter !== undefined) {
      const now = venue.now();
      const wait = klineLimiter.take(request.ip, now);
      if (wait > 0) {
        return resultReply(
          'RATE_LIMITED',
          `kline allows 1 request per ${klineInterval} ms per IP: retry in ${wait} ms (at ${now + wait})`,
        );
      }
    }
    const market = checkMarket(engine, request);
    if (!market.ok) return market.reply;
    const spec = market.value;
    const typeText = param(request, 'type');
    let type = DEFAULT_KLINE_TYPE;
    if (typeText !== undefined && typeText !== '') {
      if (!Object.hasOwn(KLINE_INTERVAL_MS, typeText)) {
        return resultReply(
          'INVALID_PARAMETER',
          `invalid parameter 'type': '${typeText.slice(0, 40)}' is not one of ${Object.keys(KLINE_INTERVAL_MS).join(', ')}`,
        );
      }
      type = typeText as KlineInterval;
    }
    const since = checkInteger(request, 'since', 0, Number.MAX_SAFE_INTEGER, undefined);
    if (!since.ok) return since.reply;
    // "never more than 1000 (the latest 1000 at most)": a larger size is capped, not refused.
    const size = checkInteger(request, 'size', 1, Number.MAX_SAFE_INTEGER, MAX_KLINE_SIZE);
    if (!size.ok) return size.reply;
    const rows = await venue.history.klines(spec.name, type, {
      since: since.value,
      size: Math.min(size.value, MAX_KLINE_SIZE),
    });
    return { text: klineJson(spec, rows) };
  };

  const feeInfo = (request: ApiRequest): ApiReply => {
    const fundsOf = (coin: string) => engine.funds.coinFunds(coin);
    const currency = param(request, 'currency');
    if (currency === undefined || currency === '') {
      if (feeInfoCache === undefined || feeInfoCache.version !== md.configVersion) {
        const body = { code: 1000, message: 'success', result: feeInfoResult(engine.coins(), fundsOf) };
        feeInfoCache = { version: md.configVersion, bytes: Buffer.from(JSON.stringify(body)) };
      }
      return { body: feeInfoCache.bytes };
    }
    // Coin names in any letter case, as on the other funds endpoints.
    const name = currency.toLowerCase();
    const check = checkCoinName(name);
    if (!check.ok) return resultReply(check.result, `parameter 'currency': ${check.message}`);
    const coin = engine.coin(name);
    if (coin === undefined) {
      return resultReply('UNKNOWN_COIN', `unknown coin '${currency}' in parameter 'currency'`);
    }
    return { json: { code: 1000, message: 'success', result: feeInfoResult([coin], fundsOf) } };
  };

  return [
    { path: '/data/v1/markets', handler: () => ({ body: md.marketsBody() }) },
    { path: '/data/v1/allTicker', handler: () => ({ body: md.allTickerBody() }) },
    { path: '/data/v1/ticker', handler: ticker },
    { path: '/data/v1/depth', handler: depth },
    { path: '/data/v1/trades', handler: trades },
    { path: '/data/v1/kline', handler: kline },
    { path: '/data/v1/getGroupMarkets', handler: () => ({ body: md.groupMarketsBody() }) },
    { path: '/api/getFeeInfo', handler: feeInfo },
    { path: '/Server/api/v2/config/marketList', handler: () => ({ body: CONTRACT_MARKET_LIST }) },
  ];
}

/**
 * `{"symbol":"BTC","moneyType":"USDT","data":[[ms,open,high,low,close,volume],…]}`: the base and
 * quote in uppercase, every row value a JSON number at the market's scales.
 */
export function klineJson(spec: MarketSpec, rows: readonly KlineRow[]): string {
  const p = spec.priceScale;
  const parts: string[] = [];
  for (const [start, open, high, low, close, volume] of rows) {
    parts.push(
      `[${start},${formatUnits(open, p)},${formatUnits(high, p)},${formatUnits(low, p)},` +
        `${formatUnits(close, p)},${formatUnits(volume, spec.amountScale)}]`,
    );
  }
  return `{"symbol":${JSON.stringify(spec.base.toUpperCase())},"moneyType":${JSON.stringify(
    spec.quote.toUpperCase(),
  )},"data":[${parts.join(',')}]}`;
}
