/**
 * @module payloads — the public channels' message texts (zb-api-facts §10.3–§10.6, and Bourse's
 * kline channel), built from the same caches and formatters as the REST endpoints so that a push
 * and a REST reply of the same moment agree field for field (docs/websocket.md).
 *
 * Every message is the REST body with `dataType` and `channel` added: the ticker is
 * /data/v1/ticker's `{"date","ticker"}`, the depth /data/v1/depth's (50 levels), trades the
 * /data/v1/trades elements under `data`, a kline the /data/v1/kline body with only the candles
 * the message carries. The quick depth has its own shape (§10.5).
 */
import { formatUnits } from '../../domain/money.ts';
import type { MarketSpec } from '../../domain/specs.ts';
import type { VenueState } from '../../sequencer/venue-ports.ts';
import type { KlineRow } from '../../store/history-store.ts';
import { klineJson } from '../http/public/public-routes.ts';
import { MAX_DEPTH_SIZE, type MarketData } from '../market-data/market-data.ts';

/** Levels a side in a `_depth` message (the REST maximum; the real channel's sample shows 50). */
export const DEPTH_CHANNEL_LEVELS = MAX_DEPTH_SIZE;

/** `{…}` with `"dataType":…,"channel":…` added as its last fields. */
export function tagged(objectJson: string, dataType: string, channel: string): string {
  return `${objectJson.slice(0, -1)},"dataType":"${dataType}","channel":${JSON.stringify(channel)}}`;
}

/** `{"date":"<ms>","ticker":{…},"dataType":"ticker","channel":"btcusdt_ticker"}`. */
export function tickerMessage(md: MarketData, market: string, channel: string): string {
  return tagged((md.tickerBody(market) as Buffer).toString('latin1'), 'ticker', channel);
}

/** `{"asks":[…],"bids":[…],"timestamp":<s>,"dataType":"depth","channel":"btcusdt_depth"}`. */
export function depthMessage(md: MarketData, market: string, channel: string): string {
  return tagged((md.depthBody(market, DEPTH_CHANNEL_LEVELS) as Buffer).toString('latin1'), 'depth', channel);
}

/** `{"data":[<REST trade>,…],"dataType":"trades","channel":"btcusdt_trades"}` from a trades JSON array. */
export function tradesMessage(tradesJsonArray: string, channel: string): string {
  return `{"data":${tradesJsonArray},"dataType":"trades","channel":${JSON.stringify(channel)}}`;
}

/** `{"symbol":"BTC","moneyType":"USDT","data":[[ms,o,h,l,c,v],…],"dataType":"kline","channel":…}`. */
export function klineMessage(spec: MarketSpec, rows: readonly KlineRow[], channel: string): string {
  return tagged(klineJson(spec, rows), 'kline', channel);
}

/**
 * The quick depth of §10.5: `listUp` the best `length` asks ascending, `listDown` the best bids
 * descending, `[price, amount]` as numbers; the 24 h figures of the ticker (`high`, `low`, `rate`
 * the change in percent as text, `dayNumber` and `totalBtc` the base volume), `currentPrice` the
 * last price, `currentIsBuy` whether the latest trade's taker bought; `lastTime` in ms.
 */
export function quickDepthMessage(
  md: MarketData,
  engine: VenueState,
  spec: MarketSpec,
  wireId: string,
  length: number,
  channel: string,
  now: number,
): string {
  const book = engine.depth(spec.name, length) ?? { bids: [], asks: [] };
  const figures = md.tickerFigures(spec.name);
  const side = (levels: readonly (readonly [number, number])[]): string => {
    let text = '[';
    for (let i = 0; i < levels.length; i++) {
      const [price, lots] = levels[i] as readonly [number, number];
      text += `${i === 0 ? '' : ','}[${formatUnits(price, spec.priceScale)},${formatUnits(lots, spec.amountScale)}]`;
    }
    return `${text}]`;
  };
  const id = JSON.stringify(wireId);
  return (
    `{"lastTime":${now},"dataType":"quickDepth","channel":${JSON.stringify(channel)},` +
    `"currentPrice":${figures?.last ?? 0},"listDown":${side(book.bids)},"market":${id},` +
    `"listUp":${side(book.asks)},"high":${figures?.high ?? 0},"rate":"${figures?.riseRate ?? '0.00'}",` +
    `"low":${figures?.low ?? 0},"currentIsBuy":${md.lastTrade(spec.name)?.takerSide === 1},` +
    `"dayNumber":${figures?.vol ?? 0},"totalBtc":${figures?.vol ?? 0},"showMarket":${id}}`
  );
}
