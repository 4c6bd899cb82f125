/**
 * @module binance-csv — Binance's public-data files (data.binance.vision) as replay streams:
 * klines (`BTCUSDT-1m-2024-01-01.csv`: open time, open, high, low, close, volume, close time,
 * quote volume, trades, taker buy base, taker buy quote, ignore) and aggTrades
 * (`BTCUSDT-aggTrades-2024-01-01.csv`: agg trade id, price, quantity, first trade id, last trade
 * id, timestamp, is buyer maker, is best match — the futures files lack the last). Timestamps in
 * milliseconds or (spot files from 2025) microseconds; a header row, when there is one, is skipped.
 * A malformed file is refused whole, naming the line and column.
 */
import {
  compareDecimals,
  epochMs,
  exactDecimal,
  ReplayFormatError,
  type ExactDecimal,
  type ReplayCandle,
  type ReplayStream,
  type ReplayTrade,
} from './replay-data.ts';

export const KLINE_COLUMNS = [
  'open time',
  'open',
  'high',
  'low',
  'close',
  'volume',
  'close time',
  'quote volume',
  'trades',
  'taker buy base volume',
  'taker buy quote volume',
  'ignore',
] as const;

export const AGG_TRADE_COLUMNS = [
  'agg trade id',
  'price',
  'quantity',
  'first trade id',
  'last trade id',
  'timestamp',
  'is buyer maker',
  'is best match',
] as const;

/** Reads one row's fields, refusing with the line and column. */
class Row {
  readonly source: string;
  readonly line: number;
  readonly fields: readonly string[];
  readonly names: readonly string[];

  constructor(source: string, line: number, fields: readonly string[], names: readonly string[]) {
    this.source = source;
    this.line = line;
    this.fields = fields;
    this.names = names;
  }

  fail(column: number, problem: string): never {
    throw new ReplayFormatError(
      this.source,
      `line ${this.line}, column ${column + 1} (${this.names[column] ?? '?'})`,
      problem,
    );
  }

  #text(column: number): string {
    return (this.fields[column] as string).trim();
  }

  decimal(column: number, positive: boolean): ExactDecimal {
    const text = this.#text(column);
    const value = exactDecimal(text);
    if (value === undefined) this.fail(column, `'${text.slice(0, 40)}' is not a decimal number`);
    if (positive && value === '0') this.fail(column, `${text} must be more than 0`);
    return value;
  }

  whole(column: number): bigint {
    const text = this.#text(column);
    if (!/^\d{1,20}$/.test(text)) this.fail(column, `'${text.slice(0, 40)}' is not a whole number`);
    return BigInt(text);
  }

  time(column: number): number {
    const ms = epochMs(this.whole(column));
    if (ms === undefined) this.fail(column, `${this.#text(column)} is not a time (ms or µs since 1970)`);
    return ms;
  }

  bool(column: number): boolean {
    const text = this.#text(column).toLowerCase();
    if (text === 'true' || text === '1') return true;
    if (text === 'false' || text === '0') return false;
    return this.fail(column, `'${text.slice(0, 40)}' is not true or false`);
  }
}

/** The data rows of a CSV text (lines numbered from 1; a header row and blank lines skipped). */
function rows(text: string, source: string, names: readonly string[], widths: readonly number[]): Row[] {
  const lines = text.split(/\r?\n/);
  const out: Row[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    if (line.trim() === '') continue;
    const fields = line.split(',');
    const first = (fields[0] as string).trim();
    if (out.length === 0 && !/^\d/.test(first) && fields.every((f) => /^\s*[A-Za-z_][\w ]*\s*$/.test(f))) {
      continue; // the header row of a newer file (open_time,open,…)
    }
    if (!widths.includes(fields.length)) {
      throw new ReplayFormatError(
        source,
        `line ${i + 1}`,
        `${fields.length} columns, expected ${widths.join(' or ')} (${names.join(', ')})`,
      );
    }
    out.push(new Row(source, i + 1, fields, names));
  }
  if (out.length === 0) throw new ReplayFormatError(source, 'line 1', 'no data rows');
  return out;
}

/** Checks each row's time against the row before's. */
function inOrder<T extends { time: number }>(row: Row, column: number, event: T, before: T | undefined): T {
  if (before !== undefined && event.time < before.time) {
    row.fail(
      column,
      `${new Date(event.time).toISOString()} is earlier than the line before's: the rows must be in time order`,
    );
  }
  return event;
}

/** A Binance kline CSV (any interval) → candles. */
export function parseBinanceKlines(text: string, source: string): ReplayStream {
  const events: ReplayCandle[] = [];
  for (const row of rows(text, source, KLINE_COLUMNS, [KLINE_COLUMNS.length])) {
    const time = row.time(0);
    const open = row.decimal(1, true);
    const high = row.decimal(2, true);
    const low = row.decimal(3, true);
    const close = row.decimal(4, true);
    const volume = row.decimal(5, false);
    const closeTime = row.time(6);
    const quoteVolume = row.decimal(7, false);
    const trades = row.whole(8);
    row.decimal(9, false);
    row.decimal(10, false);
    if (compareDecimals(low, high) > 0) row.fail(3, `low ${low} is above high ${high}`);
    for (const [column, value] of [
      [1, open],
      [4, close],
    ] as const) {
      if (compareDecimals(value, high) > 0) row.fail(column, `${value} is above high ${high}`);
      if (compareDecimals(value, low) < 0) row.fail(column, `${value} is below low ${low}`);
    }
    if (closeTime < time) row.fail(6, 'the close time is before the open time');
    const candle: ReplayCandle = {
      kind: 'candle',
      time,
      closeTime,
      open,
      high,
      low,
      close,
      volume,
      quoteVolume,
      trades: Number(trades),
    };
    events.push(inOrder(row, 0, candle, events.at(-1)));
  }
  return { source, format: 'binance-klines', events };
}

/** A Binance aggTrades CSV → trades; the taker sold when the buyer was the maker. */
export function parseBinanceAggTrades(text: string, source: string): ReplayStream {
  const events: ReplayTrade[] = [];
  for (const row of rows(text, source, AGG_TRADE_COLUMNS, [
    AGG_TRADE_COLUMNS.length,
    AGG_TRADE_COLUMNS.length - 1,
  ])) {
    const id = row.whole(0);
    const price = row.decimal(1, true);
    const amount = row.decimal(2, true);
    const firstId = row.whole(3);
    const lastId = row.whole(4);
    const time = row.time(5);
    const buyerMaker = row.bool(6);
    if (row.fields.length > 7) row.bool(7);
    if (lastId < firstId) row.fail(4, `the last trade id ${lastId} is below the first ${firstId}`);
    const trade: ReplayTrade = {
      kind: 'trade',
      time,
      price,
      amount,
      side: buyerMaker ? 'sell' : 'buy',
      id: String(id),
    };
    events.push(inOrder(row, 5, trade, events.at(-1)));
  }
  return { source, format: 'binance-aggtrades', events };
}

/** Which Binance file a CSV text is, by its column count: 12 klines, 7 or 8 aggTrades. */
export function binanceFormat(text: string): 'binance-klines' | 'binance-aggtrades' | undefined {
  const first = text.split(/\r?\n/).find((line) => line.trim() !== '');
  const width = first === undefined ? 0 : first.split(',').length;
  return width === KLINE_COLUMNS.length
    ? 'binance-klines'
    : width === AGG_TRADE_COLUMNS.length || width === AGG_TRADE_COLUMNS.length - 1
      ? 'binance-aggtrades'
      : undefined;
}
