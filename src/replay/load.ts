/**
 * @module load — reads a replay file of any format the loaders know (docs/sandbox.md, "Replay
 * data"): the format named, or told by the content (JSON: ccxt; CSV: Binance, by its columns).
 * Reading changes nothing; a malformed file throws a ReplayFormatError naming where.
 */
import { createHash } from 'node:crypto';
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

/** A file to replay: its path, the stream loaded from it, its bytes' hash, and the market if named. */
export interface ReplayInput {
  readonly file: string;
  readonly stream: ReplayStream;
  readonly sha256: string;
  readonly market?: string;
}

/** The SHA-256 of a file's bytes, in hex. */
export const sha256Hex = (bytes: Uint8Array | string): string =>
  createHash('sha256').update(bytes).digest('hex');

/**
 * `btc_usdt=path` → market and path; a bare path keeps its market undefined (told by its name:
 * replay-plan.ts, `marketOfFile`).
 */
export function splitReplayArg(arg: string): { market?: string; file: string } {
  const m = /^([a-z0-9]+_[a-z0-9]+)=(.+)$/.exec(arg);
  return m === null ? { file: arg } : { market: m[1] as string, file: m[2] as string };
}

/** Reads and parses `--replay` arguments (`<file>` or `<market>=<file>`); throws a ReplayFormatError or a read error. */
export function loadReplayInputs(args: readonly string[]): ReplayInput[] {
  return args.map((arg) => {
    const { market, file } = splitReplayArg(arg);
    const bytes = readFileSync(file);
    const stream = parseReplay(bytes.toString('utf8'), file);
    return { file, stream, sha256: sha256Hex(bytes), ...(market === undefined ? {} : { market }) };
  });
}

/** Why a `--replay` argument cannot be replayed (unreadable, malformed: the loaders' line and column), or undefined. */
export function replayArgProblem(arg: string): string | undefined {
  try {
    loadReplayInputs([arg]);
    return undefined;
  } catch (error) {
    const e = error as NodeJS.ErrnoException;
    return e.code === 'ENOENT' ? `${arg}: no such file` : e.message;
  }
}

/**
 * The first time (ms) of the history `args` name, where a fresh sandbox's manual or speed clock
 * starts (src/sequencer/venue-clock.ts); undefined without files or when one cannot be read (the
 * options refused it already).
 */
export function replayStart(args: readonly string[]): number | undefined {
  if (args.length === 0) return undefined;
  try {
    const times = loadReplayInputs(args).map((i) => i.stream.events[0]?.time ?? Infinity);
    const first = Math.min(...times);
    return Number.isFinite(first) ? first : undefined;
  } catch {
    return undefined;
  }
}
