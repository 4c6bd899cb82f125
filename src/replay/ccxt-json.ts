/**
 * @module ccxt-json — ccxt's `fetchOHLCV` output (`[[timestamp, open, high, low, close, volume], …]`)
 * and `fetchTrades` output (`[{timestamp, price, amount, side, id?, …}, …]`) saved as JSON, as
 * replay streams. Numbers are read from the file's own text (JSON.parse's source access), never
 * through a float: `0.1`, `1e-8` and 20-digit amounts stay exact. Numeric strings are accepted
 * too. A malformed file is refused whole, naming the JSON path (`$[4].price`).
 */
import {
  compareDecimals,
  exactDecimal,
  ReplayFormatError,
  type ExactDecimal,
  type ReplayCandle,
  type ReplayStream,
  type ReplayTrade,
} from './replay-data.ts';

/** A JSON number kept as the text it was written with. */
class NumberText {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}

type Reviver = (key: string, value: unknown, context?: { source?: string }) => unknown;

/** Parses JSON keeping every number's text; a syntax error is refused with V8's position. */
function parseExact(text: string, source: string): unknown {
  const keepNumbers: Reviver = (_key, value, context) =>
    typeof value === 'number' && context?.source !== undefined ? new NumberText(context.source) : value;
  try {
    return JSON.parse(text, keepNumbers as Parameters<typeof JSON.parse>[1]);
  } catch (error) {
    throw new ReplayFormatError(source, '$', `not JSON: ${(error as Error).message}`);
  }
}

const show = (value: unknown): string =>
  value instanceof NumberText ? value.text : (JSON.stringify(value) ?? String(value)).slice(0, 40);

function fail(source: string, path: string, problem: string): never {
  throw new ReplayFormatError(source, path, problem);
}

function decimalAt(source: string, path: string, value: unknown, positive: boolean): ExactDecimal {
  const text = value instanceof NumberText ? value.text : typeof value === 'string' ? value : undefined;
  const exact = text === undefined ? undefined : exactDecimal(text);
  if (exact === undefined) fail(source, path, `${show(value)} is not a non-negative decimal number`);
  if (positive && exact === '0') fail(source, path, `${show(value)} must be more than 0`);
  return exact;
}

function timeAt(source: string, path: string, value: unknown): number {
  const text = value instanceof NumberText ? value.text : undefined;
  if (text === undefined || !/^\d{1,16}$/.test(text) || Number(text) > 8_640_000_000_000_000) {
    fail(source, path, `${show(value)} is not a time in ms since 1970`);
  }
  return Number(text);
}

function arrayOf(source: string, data: unknown): readonly unknown[] {
  if (!Array.isArray(data)) fail(source, '$', 'expected an array (ccxt fetchOHLCV or fetchTrades output)');
  if (data.length === 0) fail(source, '$', 'no rows');
  return data;
}

function ordered<T extends { time: number }>(
  source: string,
  path: string,
  event: T,
  before: T | undefined,
): T {
  if (before !== undefined && event.time < before.time) {
    fail(source, path, `${event.time} is earlier than the row before's: the rows must be in time order`);
  }
  return event;
}

/** ccxt `fetchOHLCV` output → candles. */
export function parseCcxtOhlcv(text: string, source: string): ReplayStream {
  const rows = arrayOf(source, parseExact(text, source));
  const events: ReplayCandle[] = [];
  rows.forEach((row, i) => {
    const at = `$[${i}]`;
    if (!Array.isArray(row) || row.length !== 6) {
      fail(source, at, `expected [timestamp, open, high, low, close, volume], got ${show(row)}`);
    }
    const time = timeAt(source, `${at}[0]`, row[0]);
    const [open, high, low, close] = [1, 2, 3, 4].map((k) =>
      decimalAt(source, `${at}[${k}]`, row[k], true),
    ) as [string, string, string, string];
    const volume = decimalAt(source, `${at}[5]`, row[5], false);
    if (compareDecimals(low, high) > 0) fail(source, `${at}[3]`, `low ${low} is above high ${high}`);
    for (const [k, value] of [
      [1, open],
      [4, close],
    ] as const) {
      if (compareDecimals(value, high) > 0) fail(source, `${at}[${k}]`, `${value} is above high ${high}`);
      if (compareDecimals(value, low) < 0) fail(source, `${at}[${k}]`, `${value} is below low ${low}`);
    }
    const candle: ReplayCandle = { kind: 'candle', time, open, high, low, close, volume };
    events.push(ordered(source, `${at}[0]`, candle, events.at(-1)));
  });
  return { source, format: 'ccxt-ohlcv', events };
}

/** ccxt `fetchTrades` output → trades (`side` is the taker's, as ccxt gives it). */
export function parseCcxtTrades(text: string, source: string): ReplayStream {
  const rows = arrayOf(source, parseExact(text, source));
  const events: ReplayTrade[] = [];
  rows.forEach((row, i) => {
    const at = `$[${i}]`;
    if (row === null || typeof row !== 'object' || Array.isArray(row) || row instanceof NumberText) {
      fail(source, at, `expected a trade {timestamp, price, amount, side, …}, got ${show(row)}`);
    }
    const trade = row as Record<string, unknown>;
    const time = timeAt(source, `${at}.timestamp`, trade['timestamp']);
    const price = decimalAt(source, `${at}.price`, trade['price'], true);
    const amount = decimalAt(source, `${at}.amount`, trade['amount'], true);
    const side = trade['side'];
    if (side !== 'buy' && side !== 'sell') fail(source, `${at}.side`, `${show(side)} is not "buy" or "sell"`);
    const id = trade['id'];
    if (id !== undefined && id !== null && typeof id !== 'string' && !(id instanceof NumberText)) {
      fail(source, `${at}.id`, `${show(id)} is not a trade id`);
    }
    const event: ReplayTrade = {
      kind: 'trade',
      time,
      price,
      amount,
      side,
      ...(id === undefined || id === null ? {} : { id: id instanceof NumberText ? id.text : id }),
    };
    events.push(ordered(source, `${at}.timestamp`, event, events.at(-1)));
  });
  return { source, format: 'ccxt-trades', events };
}

/** Which ccxt output a JSON text is: rows that are arrays (OHLCV) or objects (trades). */
export function ccxtFormat(text: string): 'ccxt-ohlcv' | 'ccxt-trades' | undefined {
  const start = /^\s*\[\s*(.)/s.exec(text)?.[1];
  return start === '[' ? 'ccxt-ohlcv' : start === '{' ? 'ccxt-trades' : undefined;
}
