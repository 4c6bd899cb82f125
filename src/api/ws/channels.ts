/**
 * @module channels — the WebSocket channel names (zb-api-facts §10.2, §10.8) parsed into what they
 * refer to, and the refusals (code and message) for names and parameters that refer to nothing.
 *
 * Public channels are `<m>_ticker`, `<m>_depth`, `<m>_quick_depth` (with `length` 5 or 10),
 * `<m>_trades` and `<m>_kline_<type>` (one of the 13 REST kline types), where `<m>` is the market
 * id without its underscore, as every WS client sends it (`btcusdt`). Private channels are
 * `push_user_incr_record` (with `market` = `<m>default`), `push_user_asset`,
 * `push_user_incr_asset` and `push_user_cross_asset`. A refusal is the edge's one `Refusal`
 * (edge/refusal.ts), thrown, and a channel's parameters are read by the shared readers.
 */
import type { MarketSpec } from '../../domain/specs.ts';
import type { VenueState } from '../../sequencer/venue-ports.ts';
import { KLINE_INTERVAL_MS, type KlineInterval } from '../../store/history-store.ts';
import { choice, withDefault } from '../edge/readers.ts';
import { quoted, refuse } from '../edge/refusal.ts';

/** The `length` values `_quick_depth` accepts (ccxt's watchOrderBook limits); the first is the default. */
export const QUICK_DEPTH_LENGTHS = [5, 10] as const;
export type QuickDepthLength = (typeof QUICK_DEPTH_LENGTHS)[number];

/** The suffix of the `market` parameter of `push_user_incr_record` (`btcusdtdefault`). */
export const RECORD_MARKET_SUFFIX = 'default';

export const PRIVATE_CHANNELS = [
  'push_user_incr_record',
  'push_user_asset',
  'push_user_incr_asset',
  'push_user_cross_asset',
] as const;
export type PrivateChannelName = (typeof PRIVATE_CHANNELS)[number];

/** A market as channels name it. */
export interface WireMarket {
  readonly spec: MarketSpec;
  /** `btcusdt`. */
  readonly wireId: string;
}

export type PublicChannel =
  | { readonly kind: 'ticker' | 'depth' | 'trades'; readonly name: string; readonly market: WireMarket }
  | {
      readonly kind: 'quick_depth';
      readonly name: string;
      readonly market: WireMarket;
      readonly length: QuickDepthLength;
    }
  | {
      readonly kind: 'kline';
      readonly name: string;
      readonly market: WireMarket;
      readonly interval: KlineInterval;
    };

export type PrivateChannel =
  | { readonly kind: 'push_user_incr_record'; readonly name: string; readonly market: WireMarket }
  | { readonly kind: Exclude<PrivateChannelName, 'push_user_incr_record'>; readonly name: string };

export type Channel = PublicChannel | PrivateChannel;

/**
 * A message field's text for the readers: a string as is (`undefined` when empty), a number as its
 * digits (one client sends `"length": "20"`, another `20`), anything else as its JSON, so a
 * reader refuses it by its text.
 */
export function fieldText(message: Readonly<Record<string, unknown>>, name: string): string | undefined {
  const value = message[name];
  if (value === undefined || value === null || value === '') return undefined;
  return typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value));
}

/**
 * Market ids without the underscore (`btcusdt`) → market. Rebuilt when the engine's market count
 * changes (markets are added, never renamed or removed). Should two markets share an id
 * (`ab_cusdt`, `abc_usdt`), the first listed keeps it.
 */
export class WireMarkets {
  readonly #engine: VenueState;
  #count = -1;
  readonly #byId = new Map<string, string>();

  constructor(engine: VenueState) {
    this.#engine = engine;
  }

  /** The venue the names are looked up in (for the readers). */
  get venue(): VenueState {
    return this.#engine;
  }

  find(wireId: string): WireMarket | undefined {
    const markets = this.#engine.markets();
    if (markets.length !== this.#count) {
      this.#byId.clear();
      for (const m of markets) {
        const id = m.name.replace('_', '');
        if (!this.#byId.has(id)) this.#byId.set(id, m.name);
      }
      this.#count = markets.length;
    }
    const name = this.#byId.get(wireId);
    const spec = name === undefined ? undefined : this.#engine.market(name);
    return spec === undefined ? undefined : { spec, wireId };
  }
}

const PUBLIC_SUFFIXES = ['_quick_depth', '_depth', '_ticker', '_trades'] as const;

/** `length` of `_quick_depth`: 5 (the default) or 10. */
const QUICK_DEPTH_LENGTH = withDefault(
  choice(QUICK_DEPTH_LENGTHS.map(String)),
  String(QUICK_DEPTH_LENGTHS[0]),
);

/**
 * What `channel` refers to, given the subscription's other fields (`length`, `market`).
 * Throws the Refusal: WS_CHANNEL_EMPTY (1007) for a missing channel or one that names nothing;
 * INVALID_PARAMETER (3005) for a bad `length` or `market`.
 */
export function parseChannel(markets: WireMarkets, message: Readonly<Record<string, unknown>>): Channel {
  const name = message['channel'];
  if (typeof name !== 'string' || name === '') {
    return refuse('WS_CHANNEL_EMPTY', 'Channel is empty: send "channel", e.g. "btcusdt_ticker"');
  }
  if ((PRIVATE_CHANNELS as readonly string[]).includes(name)) {
    return parsePrivate(markets, name as PrivateChannelName, message);
  }

  const unknown = (): never =>
    refuse(
      'WS_CHANNEL_EMPTY',
      `Channel is empty: no channel ${quoted(name)}; channels are <market>_ticker, _depth, _quick_depth, ` +
        `_trades, _kline_<type> with the market id without its underscore (btcusdt_ticker), or push_user_*`,
    );
  const kline = /^([a-z0-9]+)_kline_([a-z0-9]+)$/.exec(name);
  if (kline !== null) {
    const market = markets.find(kline[1] as string);
    const interval = kline[2] as string;
    if (market === undefined || !Object.hasOwn(KLINE_INTERVAL_MS, interval)) return unknown();
    return { kind: 'kline', name, market, interval: interval as KlineInterval };
  }
  for (const suffix of PUBLIC_SUFFIXES) {
    if (!name.endsWith(suffix)) continue;
    const market = markets.find(name.slice(0, -suffix.length));
    if (market === undefined) return unknown();
    if (suffix !== '_quick_depth') {
      const kind = suffix.slice(1) as 'depth' | 'ticker' | 'trades';
      return { kind, name, market };
    }
    const length = Number(QUICK_DEPTH_LENGTH.read(markets.venue, 'length', fieldText(message, 'length')));
    return { kind: 'quick_depth', name, market, length: length as QuickDepthLength };
  }
  return unknown();
}

function parsePrivate(
  markets: WireMarkets,
  name: PrivateChannelName,
  message: Readonly<Record<string, unknown>>,
): PrivateChannel {
  if (name !== 'push_user_incr_record') return { kind: name, name };
  const param = message['market'];
  const id =
    typeof param === 'string' && param.endsWith(RECORD_MARKET_SUFFIX)
      ? param.slice(0, -RECORD_MARKET_SUFFIX.length)
      : undefined;
  const market = id === undefined ? undefined : markets.find(id);
  if (market === undefined) {
    return refuse(
      'INVALID_PARAMETER',
      `market ${quoted(param)} must be a market id without its underscore ` +
        `followed by '${RECORD_MARKET_SUFFIX}', e.g. btcusdt${RECORD_MARKET_SUFFIX}`,
    );
  }
  return { kind: name, name, market };
}
