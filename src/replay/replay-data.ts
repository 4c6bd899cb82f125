/**
 * @module replay-data — the one internal form every loader produces (docs/sandbox.md, "Replay
 * data"): a time-ordered stream of trades and candles of one market, each price and amount an exact
 * decimal string (digits, at most one point, no exponent, no float on the way), and the refusal a
 * loader gives for a malformed file, naming where: the line and column of a CSV file, the JSON path
 * of a JSON one.
 */

/** An exact, non-negative decimal in plain notation: `30000.01`, `0.00000001`, `12` (no sign, exponent or padding). */
export type ExactDecimal = string;

/** One historical trade. `side` is the taker's: `sell` when the buyer was the maker. */
export interface ReplayTrade {
  readonly kind: 'trade';
  /** Venue time (ms since the epoch); a microsecond source is truncated to its millisecond. */
  readonly time: number;
  readonly price: ExactDecimal;
  readonly amount: ExactDecimal;
  readonly side: 'buy' | 'sell';
  /** The source's trade id, when it has one (Binance's aggregate trade id, ccxt's `id`). */
  readonly id?: string;
}

/** One historical candle: its open time, prices and base volume (and what else the source gives). */
export interface ReplayCandle {
  readonly kind: 'candle';
  /** The candle's open time (ms). */
  readonly time: number;
  /** The candle's close time (ms), when the source gives it (Binance: open + interval − 1 ms). */
  readonly closeTime?: number;
  readonly open: ExactDecimal;
  readonly high: ExactDecimal;
  readonly low: ExactDecimal;
  readonly close: ExactDecimal;
  /** Base-coin volume. */
  readonly volume: ExactDecimal;
  readonly quoteVolume?: ExactDecimal;
  readonly trades?: number;
}

export type ReplayEvent = ReplayTrade | ReplayCandle;

/** The formats the loaders read. */
export const REPLAY_FORMATS = ['binance-klines', 'binance-aggtrades', 'ccxt-ohlcv', 'ccxt-trades'] as const;
export type ReplayFormat = (typeof REPLAY_FORMATS)[number];

/** What one file held: its format, and its events in time order (equal times keep the file's order). */
export interface ReplayStream {
  readonly source: string;
  readonly format: ReplayFormat;
  readonly events: readonly ReplayEvent[];
}

/** A malformed file: `where` is `line 3, column 2 (open)` or `$[4].price`; nothing was loaded. */
export class ReplayFormatError extends Error {
  readonly source: string;
  readonly where: string;
  readonly problem: string;

  constructor(source: string, where: string, problem: string) {
    super(`${source}: ${where}: ${problem}`);
    this.name = 'ReplayFormatError';
    this.source = source;
    this.where = where;
    this.problem = problem;
  }
}

const PLAIN = /^(0|[1-9]\d*)(\.\d+)?$/;
const SCIENTIFIC = /^(\d+)(?:\.(\d+))?[eE]([+-]?\d{1,4})$/;

/**
 * The exact decimal a text spells (`30000.10`, `1e-8`, `1.5E+3`, `007`), in plain canonical form
 * (`30000.1`, `0.00000001`, `1500`, `7`); undefined for anything else (a sign, spaces, `NaN`,
 * hex, an empty text). No floating point: the digits are moved, never computed.
 */
export function exactDecimal(text: string): ExactDecimal | undefined {
  let digits: string;
  let point: number; // digits before the decimal point
  const sci = SCIENTIFIC.exec(text);
  if (sci !== null) {
    const [, whole = '', fraction = '', exponent = '0'] = sci;
    digits = whole + fraction;
    point = whole.length + Number(exponent);
  } else if (/^\d+(\.\d+)?$/.test(text)) {
    const [whole = '', fraction = ''] = text.split('.');
    digits = whole + fraction;
    point = whole.length;
  } else {
    return undefined;
  }
  if (point < 0) {
    digits = '0'.repeat(-point) + digits;
    point = 0;
  } else if (point > digits.length) {
    digits = digits + '0'.repeat(point - digits.length);
  }
  const whole = digits.slice(0, point).replace(/^0+/, '') || '0';
  const fraction = digits.slice(point).replace(/0+$/, '');
  const result = fraction === '' ? whole : `${whole}.${fraction}`;
  return PLAIN.test(result) ? result : undefined;
}

/** Compares two exact decimals (−1, 0, 1), digit by digit. */
export function compareDecimals(a: ExactDecimal, b: ExactDecimal): number {
  const [aw = '', af = ''] = a.split('.');
  const [bw = '', bf = ''] = b.split('.');
  if (aw.length !== bw.length) return aw.length < bw.length ? -1 : 1;
  const width = Math.max(af.length, bf.length);
  const x = aw + af.padEnd(width, '0');
  const y = bw + bf.padEnd(width, '0');
  return x === y ? 0 : x < y ? -1 : 1;
}

/** Milliseconds since the epoch from a whole ms or µs timestamp (µs from 10^14 up: after year 5138 in ms). */
export function epochMs(value: bigint): number | undefined {
  if (value < 0n) return undefined;
  const ms = value >= 100_000_000_000_000n ? value / 1000n : value;
  return ms <= 8_640_000_000_000_000n ? Number(ms) : undefined;
}

/**
 * Merges streams (several files, markets or kinds) into one time-ordered sequence; equal times
 * keep the order of `streams`, then each stream's own order.
 */
export function mergeReplay(streams: readonly ReplayStream[]): { source: string; event: ReplayEvent }[] {
  const all = streams.flatMap((s, i) => s.events.map((event, j) => ({ source: s.source, event, i, j })));
  all.sort((a, b) => a.event.time - b.event.time || a.i - b.i || a.j - b.j);
  return all.map(({ source, event }) => ({ source, event }));
}
