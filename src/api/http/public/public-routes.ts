/**
 * @module public-routes — the unsigned endpoints: /data/v1/{markets, allTicker, ticker, depth,
 * trades, kline, getGroupMarkets}, the unsigned /api/getFeeInfo and the contract market list
 * ccxt's loadMarkets needs. Wire shapes follow zb-api-facts §5 exactly (docs/market-data.md).
 *
 * Live data (markets, tickers, depth, recent trades) comes pre-serialized from MarketData; history
 * (trades after an old `since`, klines) from the history store.
 */
import { formatUnits, parseDecimal } from '../../../domain/money.ts';
import type { MarketSpec } from '../../../domain/specs.ts';
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
import { readArgs, type Args, type Params } from '../../edge/endpoint.ts';
import { ANY_CASE_COIN, choice, integer, MARKET, optional, TEXT, withDefault } from '../../edge/readers.ts';
import { quoted, Refusal, refuse, successBody } from '../../edge/refusal.ts';
import { resultReply } from '../reply.ts';
import { paramText, type ApiReply, type ApiRequest, type Route, type VenuePort } from '../types.ts';
import { feeInfoResult } from './fee-info.ts';
import { IntervalLimiter } from './interval-limiter.ts';

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

/**
 * One public endpoint, declared once: its exact path, its parameters with their readers
 * (edge/readers.ts, read in this order) and its handler, which gets their values as `args`.
 */
export interface PublicEndpoint<P extends Params = Params> {
  readonly path: string;
  readonly params: P;
  handler(args: Args<P>, request: ApiRequest): ApiReply | Promise<ApiReply>;
}

/** A public endpoint's declaration, its `args` typed from its `params`. */
export function publicEndpoint<P extends Params>(endpoint: PublicEndpoint<P>): PublicEndpoint {
  return endpoint as unknown as PublicEndpoint;
}

/** The route serving `endpoint`: its parameters read, a Refusal answered as its error body. */
export function publicRoute(endpoint: PublicEndpoint, engine: VenuePort['engine']): Route {
  const { params, path } = endpoint;
  const none = Object.keys(params).length === 0;
  return {
    path,
    handler: (request) => {
      try {
        const reply = endpoint.handler(
          none ? NO_ARGS : readArgs(params, engine, request, paramText),
          request,
        );
        return reply instanceof Promise ? reply.catch(refusalReply) : reply;
      } catch (error) {
        return refusalReply(error);
      }
    },
  };
}

const NO_ARGS = Object.freeze({});

function refusalReply(error: unknown): ApiReply {
  if (error instanceof Refusal) return resultReply(error.result, error.message);
  throw error;
}

/** `since` of trades and klines: a trade id or a time in ms, any safe integer. */
const SINCE = optional(integer(0, Number.MAX_SAFE_INTEGER));
const KLINE_TYPES = Object.keys(KLINE_INTERVAL_MS) as KlineInterval[];

/** The endpoints, each at its exact path. */
export function publicEndpoints(deps: PublicRouteDeps): PublicEndpoint[] {
  const { venue, marketData: md } = deps;
  const engine = venue.engine;
  const klineInterval = deps.klineMinIntervalMs ?? KLINE_MIN_INTERVAL_MS;
  const klineLimiter = klineInterval > 0 ? new IntervalLimiter(klineInterval) : undefined;
  let feeInfoCache: { version: number; bytes: Buffer } | undefined;

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

  const klineRows = async (
    spec: MarketSpec,
    type: KlineInterval,
    since: number | undefined,
    size: number,
  ): Promise<ApiReply> => {
    // "never more than 1000 (the latest 1000 at most)": a larger size is capped, not refused.
    const rows = await venue.history.klines(spec.name, type, { since, size: Math.min(size, MAX_KLINE_SIZE) });
    return { text: klineJson(spec, rows) };
  };

  return [
    publicEndpoint({ path: '/data/v1/markets', params: {}, handler: () => ({ body: md.marketsBody() }) }),
    publicEndpoint({ path: '/data/v1/allTicker', params: {}, handler: () => ({ body: md.allTickerBody() }) }),
    publicEndpoint({
      path: '/data/v1/ticker',
      params: { market: MARKET },
      handler: ({ market }) => ({ body: md.tickerBody(market.name) as Buffer }),
    }),
    publicEndpoint({
      path: '/data/v1/depth',
      params: {
        market: MARKET,
        size: withDefault(integer(1, MAX_DEPTH_SIZE), MAX_DEPTH_SIZE),
        merge: optional(TEXT),
      },
      handler: ({ market, size, merge }) => {
        if (merge === undefined) return { body: md.depthBody(market.name, size) as Buffer };
        const step = parseDecimal(merge, market.priceScale);
        if (step === undefined || step === 0) {
          const tick = formatUnits(1, market.priceScale);
          refuse(
            'INVALID_PARAMETER',
            `merge ${quoted(merge)} must be a positive multiple of the price step ${tick} of ${market.name}`,
          );
        }
        return { body: md.mergedDepthBody(market.name, step, Math.min(size, MERGED_DEPTH_LEVELS)) as Buffer };
      },
    }),
    publicEndpoint({
      path: '/data/v1/trades',
      params: { market: MARKET, since: SINCE },
      // Synchronous unless the store must answer: a cached reply skips the promise machinery.
      handler: ({ market, since }) => {
        if (since === undefined) return { body: md.latestTradesBody(market.name) as Buffer };
        const recent = md.tradesAfter(market.name, since, TRADES_PAGE_SIZE);
        if (recent !== undefined) return { text: tradesJson(market, recent) };
        return storedTrades(market, since);
      },
    }),
    publicEndpoint({
      path: '/data/v1/kline',
      params: {
        market: MARKET,
        type: withDefault(choice(KLINE_TYPES), DEFAULT_KLINE_TYPE),
        since: SINCE,
        size: withDefault(integer(1, Number.MAX_SAFE_INTEGER), MAX_KLINE_SIZE),
      },
      handler: ({ market, type, since, size }, request) => {
        if (klineLimiter !== undefined) {
          const now = venue.now();
          const wait = klineLimiter.take(request.ip, now);
          if (wait > 0) {
            refuse(
              'RATE_LIMITED',
              `kline allows 1 request per ${klineInterval} ms per IP: retry in ${wait} ms (at ${now + wait})`,
            );
          }
        }
        return klineRows(market, type, since, size);
      },
    }),
    publicEndpoint({
      path: '/data/v1/getGroupMarkets',
      params: {},
      handler: () => ({ body: md.groupMarketsBody() }),
    }),
    publicEndpoint({
      path: '/api/getFeeInfo',
      // Coin names in any letter case, as on the other funds endpoints.
      params: { currency: optional(ANY_CASE_COIN) },
      handler: ({ currency }) => {
        const fundsOf = (coin: string) => engine.funds.coinFunds(coin);
        if (currency !== undefined) {
          return { json: successBody({ result: feeInfoResult([currency], fundsOf) }) };
        }
        if (feeInfoCache === undefined || feeInfoCache.version !== md.configVersion) {
          const body = successBody({ result: feeInfoResult(engine.coins(), fundsOf) });
          feeInfoCache = { version: md.configVersion, bytes: Buffer.from(JSON.stringify(body)) };
        }
        return { body: feeInfoCache.bytes };
      },
    }),
    publicEndpoint({
      path: '/Server/api/v2/config/marketList',
      params: {},
      handler: () => ({ body: CONTRACT_MARKET_LIST }),
    }),
  ];
}

/** The routes, each at its exact path. */
export function publicRoutes(deps: PublicRouteDeps): Route[] {
  return publicEndpoints(deps).map((endpoint) => publicRoute(endpoint, deps.venue.engine));
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
