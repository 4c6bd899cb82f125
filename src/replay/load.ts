/**
 * @module load — reads a replay file of any format the loaders know (docs/sandbox.md, "Replay
 * data"): the format named, or told by the content (JSON: ccxt; CSV: Binance, by its columns).
 * Reading changes nothing; a malformed file throws a ReplayFormatError naming where.
 */
import { readFileSync } from 'node:fs';
import { binanceFormat, parseBinanceAggTrades, parseBinanceKlines } from './binance-csv.ts';
import { ccxtFormat, parseCcxtOhlcv, parseCcxtTrades } from './ccxt-json.ts';
import { ReplayFormatError, REPLAY_FORMATS, type ReplayFormat, type ReplayStream } from './replay-data.ts';

const PARSERS: Readonly<Record<ReplayFormat, (text: string, source: string) => ReplayStream>> = {
  'binance-klines': parseBinanceKlines,
  'binance-aggtrades': parseBinanceAggTrades,
  'ccxt-ohlcv': parseCcxtOhlcv,
  'ccxt-trades': parseCcxtTrades,
};

/**
 * The format of a file's text, or undefined when it is none the loaders know. JSON whose rows
 * are not arrays is read as trades, so that its refusal names the JSON path.
 */
export function detectFormat(text: string): ReplayFormat | undefined {
  return /^\s*[[{]/.test(text) ? (ccxtFormat(text) ?? 'ccxt-trades') : binanceFormat(text);
}

/** Parses `text` (from `source`, named in refusals) as `format`, or the format its content tells. */
export function parseReplay(text: string, source: string, format?: ReplayFormat): ReplayStream {
  const chosen = format ?? detectFormat(text);
  if (chosen === undefined) {
    throw new ReplayFormatError(
      source,
      'line 1',
      `not a format the replay reads (${REPLAY_FORMATS.join(', ')}): a Binance kline CSV has 12 columns, ` +
        'an aggTrades CSV 7 or 8, ccxt output is a JSON array',
    );
  }
  return PARSERS[chosen](text, source);
}

/** Reads and parses one file. */
export function loadReplayFile(path: string, format?: ReplayFormat): ReplayStream {
  return parseReplay(readFileSync(path, 'utf8'), path, format);
}
