/**
 * @module readers — the one module of parameter readers (issue 32): each turns a parameter's text
 * into a value or throws the one `Refusal` (refusal.ts) with the interface's code and a message
 * naming the parameter. Transport-neutral: a reader sees the parameter's name and its text
 * (`undefined` when absent or empty: clients send `name=` for "not given"), never a request, so
 * HTTP query strings, admin forms and WebSocket JSON fields are read alike.
 *
 * A reader is a plain object made once, at declaration (no closure or allocation per request).
 * Endpoints declare their parameters with them (endpoint.ts); `kind` and the declared bounds say
 * what a reader accepts, for docs and for the fuzz suite's catalogue.
 *
 * | reader | accepts | refuses |
 * |---|---|---|
 * | `MARKET` | `<base>_<quote>` lowercase, of known coins (interface: "A market identifier is `<base>_<quote>`, lowercase") | INVALID_PARAMETER (missing, case, shape), RETIRED_COIN_NAME, UNKNOWN_COIN, UNKNOWN_MARKET (all 3005) |
 * | `MARGIN_MARKET` | the same market as `BTC/USDT` (ccxt), `btcusdt` (the SDKs) or `btc_usdt`, any case (margin's `marketName`, not in the interface) | UNKNOWN_MARKET |
 * | `COIN` | a lowercase coin name | INVALID_PARAMETER (case), RETIRED_COIN_NAME, UNKNOWN_COIN |
 * | `ANY_CASE_COIN` | a coin name in any letter case (ccxt sends `USDT` to the funds and margin calls) | RETIRED_COIN_NAME, UNKNOWN_COIN |
 * | `integer(min, max)` | digits without sign, space or leading zero, at most 16 (every safe integer: the interface types these `int`/`long`), in `[min, max]` | INVALID_PARAMETER |
 * | `ID` | a positive integer id (`loanId`, `loanRecordId`, `downloadId`) | INVALID_PARAMETER |
 * | `ORDER_ID` | a positive integer of up to 19 digits (ZB's ids were 17 to 19); beyond 2^53 − 1 no order has it | INVALID_PARAMETER; ORDER_NOT_FOUND beyond 2^53 − 1 |
 * | `CUSTOMER_ORDER_ID` | 4 to 36 letters or digits (interface) | INVALID_PARAMETER |
 * | `choice([…])` | one of a fixed set of texts | INVALID_PARAMETER |
 * | `PAGE_INDEX`, `pageParams(min, max, default)` | a page from 1 to 100,000 (default 1); a page size within the list's bounds | INVALID_PARAMETER |
 * | `FLAG` | `1`/`0`, `true`/`false`, any case | INVALID_PARAMETER |
 * | `readOnOff` | `on`/`off`, `true`/`false`, any case (the admin API's switches) | INVALID_PARAMETER |
 * | `plainInteger` | the integer rule alone, for a number a handler checks itself (an id it looks up, a loan term) | — (undefined) |
 * | `DATE_TIME` | `YYYY-MM-DD HH:MM:SS` (UTC), a real date | INVALID_PARAMETER |
 * | `TEXT` | any text (prices, amounts and passwords, whose rule depends on another parameter) | INVALID_PARAMETER when required and missing |
 *
 * Every reader refuses a missing parameter unless wrapped in `optional(reader)` (absent → `undefined`)
 * or `withDefault(reader, value)`.
 */
import { CLIENT_ORDER_ID, type AcctType, type Side } from '../../domain/commands.ts';
import { parseDecimal, type CoinUnits } from '../../domain/money.ts';
import type { ResultName } from '../../domain/result-codes.ts';
import { checkCoinName, splitMarketName, type CoinSpec, type MarketSpec } from '../../domain/specs.ts';
import { parseMarginMarketName } from '../wire/margin-wire.ts';
import type { VenueState } from '../../sequencer/venue-ports.ts';
import { quoted, refuse } from './refusal.ts';

/** What a reader reads, named for docs and the fuzz catalogue. */
export type ReaderKind =
  | 'market'
  | 'marginMarket'
  | 'coin'
  | 'anyCaseCoin'
  | 'integer'
  | 'id'
  | 'orderId'
  | 'customerOrderId'
  | 'choice'
  | 'flag'
  | 'dateTime'
  | 'text';

/** The markets and coins a reader looks names up in. */
export type ReaderVenue = Pick<VenueState, 'market' | 'markets' | 'coin'>;

/**
 * A parameter reader: `read` returns the value of the parameter `name` whose text is `text`
 * (`undefined` when absent or empty), or throws a Refusal naming it.
 */
export interface Reader<T> {
  readonly kind: ReaderKind;
  /** Whether a request may leave the parameter out. */
  readonly optional: boolean;
  /** The texts a `choice` accepts; the bounds of an `integer`. */
  readonly choices?: readonly string[];
  readonly min?: number;
  readonly max?: number;
  read(venue: ReaderVenue, name: string, text: string | undefined): T;
}

/** Text given, or INVALID_PARAMETER `<name> is required` (with what it should be, when said). */
export function present(name: string, text: string | undefined, what?: string): string {
  if (text === undefined)
    refuse('INVALID_PARAMETER', `${name} is required${what === undefined ? '' : ` (${what})`}`);
  return text;
}

function lowercase(name: string, text: string): void {
  if (text !== text.toLowerCase()) {
    refuse('INVALID_PARAMETER', `${name} ${quoted(text)} must be lowercase (${quoted(text.toLowerCase())})`);
  }
}

/**
 * The market `text` names, by the interface's rule: `<base>_<quote>`, lowercase, of known coins.
 * A known name is found at once; only a refused one is diagnosed (case, shape, retired or unknown
 * coin, unknown market), so the hot path of the public endpoints does one lookup.
 */
export function readMarket(venue: ReaderVenue, name: string, text: string | undefined): MarketSpec {
  const given = present(name, text, 'a market such as btc_usdt');
  const spec = venue.market(given);
  if (spec !== undefined) return spec;
  lowercase(name, given);
  const parts = splitMarketName(given);
  if (parts === undefined)
    refuse('INVALID_PARAMETER', `${name} ${quoted(given)} must be <base>_<quote>, e.g. btc_usdt`);
  for (const coin of [parts.base, parts.quote]) {
    const check = checkCoinName(coin);
    if (!check.ok) refuse(check.result, `${name} ${quoted(given)}: ${check.message}`);
  }
  return refuse(
    'UNKNOWN_MARKET',
    `unknown market ${quoted(given)} in parameter '${name}' (the markets are listed by /data/v1/markets)`,
  );
}

/** A margin `marketName` in any form clients send: `BTC/USDT`, `btcusdt`, `btc_usdt`, any case. */
export function readMarginMarket(venue: ReaderVenue, name: string, text: string | undefined): MarketSpec {
  const parsed = parseMarginMarketName(present(name, text), venue.markets());
  if (!parsed.ok) refuse(parsed.result, `${name}: ${parsed.message}`);
  return parsed.market;
}

/** A coin name, lowercase as the interface writes them, not retired, known. */
export function readCoin(venue: ReaderVenue, name: string, text: string | undefined): CoinSpec {
  const given = present(name, text);
  lowercase(name, given);
  return anyCaseCoin(venue, name, given);
}

/** A coin name in any letter case (ccxt sends `BTC` to the funds and margin calls): not retired, known. */
export function readAnyCaseCoin(venue: ReaderVenue, name: string, text: string | undefined): CoinSpec {
  return anyCaseCoin(venue, name, present(name, text));
}

function anyCaseCoin(venue: ReaderVenue, name: string, given: string): CoinSpec {
  const lower = given.toLowerCase();
  const check = checkCoinName(lower);
  if (!check.ok) refuse(check.result, `${name}: ${check.message}`);
  return venue.coin(lower) ?? refuse('UNKNOWN_COIN', `${name}: unknown coin ${quoted(given)}`);
}

/**
 * An integer as the interface types `int` and `long` on the way in: decimal digits without sign,
 * space or leading zero ("0", "17"; not "017", "+1", " 1"), at most 16 of them, so every safe
 * integer reads and nothing is ever rounded.
 */
const PLAIN_INTEGER = /^(?:0|[1-9][0-9]{0,15})$/;

/**
 * `text` by the one integer rule (`PLAIN_INTEGER`, a safe integer), or undefined: for a number
 * a handler looks up or checks against rules of its own (a withdrawal id, a loan term).
 */
export function plainInteger(text: string): number | undefined {
  const value = PLAIN_INTEGER.test(text) ? Number(text) : NaN;
  return Number.isSafeInteger(value) ? value : undefined;
}

/** `text` as an integer in [min, max], or INVALID_PARAMETER naming the range. */
export function readInteger(name: string, text: string | undefined, min: number, max: number): number {
  const given = present(name, text);
  const value = plainInteger(given) ?? NaN;
  if (!(value >= min && value <= max)) {
    const range = max >= Number.MAX_SAFE_INTEGER ? `of at least ${min}` : `from ${min} to ${max}`;
    refuse('INVALID_PARAMETER', `${name} ${quoted(given)} must be an integer ${range}`);
  }
  return value;
}

/** A positive integer id (`loanId`, `loanRecordId`, `downloadId`). */
export function readId(name: string, text: string | undefined): number {
  const given = present(name, text);
  const id = plainInteger(given) ?? NaN;
  if (!(id > 0)) refuse('INVALID_PARAMETER', `${name} ${quoted(given)} must be a positive integer`);
  return id;
}

/** An order id as the real venue wrote them: up to 19 digits, no leading zero, read as text. */
const ORDER_ID_TEXT = /^[1-9][0-9]{0,18}$/;

/**
 * An order id. INVALID_PARAMETER for text that is not one; ORDER_NOT_FOUND for a well-formed id
 * beyond 2^53 − 1, which no order of this venue can have (never rounded to a nearby one).
 */
export function readOrderId(name: string, text: string | undefined): number {
  const given = present(name, text);
  if (!ORDER_ID_TEXT.test(given)) {
    refuse(
      'INVALID_PARAMETER',
      `${name} ${quoted(given)} must be an order id (a positive integer of up to 19 digits)`,
    );
  }
  const id = Number(given);
  if (!Number.isSafeInteger(id)) refuse('ORDER_NOT_FOUND');
  return id;
}

/** A customerOrderId: 4 to 36 letters or digits (interface). */
export function readCustomerOrderId(name: string, text: string | undefined): string {
  const given = present(name, text);
  if (!CLIENT_ORDER_ID.test(given))
    refuse('INVALID_PARAMETER', `${name} ${quoted(given)} must be 4 to 36 letters or digits`);
  return given;
}

/** One of `allowed`. */
export function readChoice<T extends string>(
  name: string,
  text: string | undefined,
  allowed: readonly T[],
): T {
  const given = present(name, text, `one of ${allowed.join(', ')}`);
  if (!(allowed as readonly string[]).includes(given)) {
    refuse('INVALID_PARAMETER', `${name} ${quoted(given)} must be one of ${allowed.join(', ')}`);
  }
  return given as T;
}

/** A yes/no: `1`/`true` or `0`/`false`, any case (clients send either). */
export function readFlag(name: string, text: string | undefined): boolean {
  const given = present(name, text, '1 or 0, true or false');
  switch (given.toLowerCase()) {
    case '1':
    case 'true':
      return true;
    case '0':
    case 'false':
      return false;
    default:
      return refuse('INVALID_PARAMETER', `${name} ${quoted(given)} must be 1 or 0 (true or false)`);
  }
}

/** An operator's switch: `on`/`true` or `off`/`false`, any case (the admin API's settings). */
export function readOnOff(name: string, text: string | undefined): boolean {
  const given = present(name, text, 'on or off');
  switch (given.toLowerCase()) {
    case 'on':
    case 'true':
      return true;
    case 'off':
    case 'false':
      return false;
    default:
      return refuse('INVALID_PARAMETER', `${name} must be on or off (true or false), not ${quoted(given)}`);
  }
}

const DATE_TIME_TEXT = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/;

/** A time as the wire writes it, `YYYY-MM-DD HH:MM:SS` (UTC). */
export function formatDateTime(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
}

/** `YYYY-MM-DD HH:MM:SS` (UTC) → ms, refusing impossible dates (2024-02-30) with INVALID_PARAMETER. */
export function readDateTime(name: string, text: string | undefined): number {
  const given = present(name, text);
  const f = (DATE_TIME_TEXT.exec(given) ?? []).slice(1).map(Number);
  const ms = f.length === 6 ? Date.UTC(f[0] ?? 0, (f[1] ?? 0) - 1, f[2], f[3], f[4], f[5]) : NaN;
  // The round trip refuses what Date.UTC would roll over (2024-02-30, 25:00:00, years 0–99).
  if (!Number.isFinite(ms) || formatDateTime(ms) !== given) {
    refuse('INVALID_PARAMETER', `${name} ${quoted(given)} must be a time 'YYYY-MM-DD HH:MM:SS' (UTC)`);
  }
  return ms;
}

/**
 * An amount of `coin` in its units, from decimal text with at most its decimals (the rule depends
 * on the coin another parameter names, so the handler calls it with a `TEXT` parameter's value).
 * `result` is the refusal of malformed text (INVALID_AMOUNT for amounts); `positive` refuses zero.
 */
export function readCoinUnits(
  name: string,
  text: string | undefined,
  coin: CoinSpec,
  result: ResultName,
  positive: boolean,
): CoinUnits {
  const given = present(name, text);
  const value = parseDecimal(given, coin.unitDecimal);
  if (value === undefined || (positive && value === 0)) {
    refuse(
      result,
      `${name} ${quoted(given)} must be a ${positive ? 'positive ' : ''}decimal with at most ${coin.unitDecimal} decimals of ${coin.name}`,
    );
  }
  return value;
}

// The readers as values, for declarations.

export const MARKET: Reader<MarketSpec> = { kind: 'market', optional: false, read: readMarket };
export const MARGIN_MARKET: Reader<MarketSpec> = {
  kind: 'marginMarket',
  optional: false,
  read: readMarginMarket,
};
export const COIN: Reader<CoinSpec> = { kind: 'coin', optional: false, read: readCoin };
export const ANY_CASE_COIN: Reader<CoinSpec> = {
  kind: 'anyCaseCoin',
  optional: false,
  read: readAnyCaseCoin,
};
export const ID: Reader<number> = {
  kind: 'id',
  optional: false,
  read: (_v, name, text) => readId(name, text),
};
export const ORDER_ID: Reader<number> = {
  kind: 'orderId',
  optional: false,
  read: (_v, name, text) => readOrderId(name, text),
};
export const CUSTOMER_ORDER_ID: Reader<string> = {
  kind: 'customerOrderId',
  optional: false,
  read: (_v, name, text) => readCustomerOrderId(name, text),
};
export const FLAG: Reader<boolean> = {
  kind: 'flag',
  optional: false,
  read: (_v, name, text) => readFlag(name, text),
};
export const DATE_TIME: Reader<number> = {
  kind: 'dateTime',
  optional: false,
  read: (_v, name, text) => readDateTime(name, text),
};
/** Any text, required: a price, an amount or a password whose rule depends on another parameter. */
export const TEXT: Reader<string> = {
  kind: 'text',
  optional: false,
  read: (_v, name, text) => present(name, text),
};

/** An integer in [min, max]. */
export function integer(min: number, max: number): Reader<number> {
  return {
    kind: 'integer',
    optional: false,
    min,
    max,
    read: (_v, name, text) => readInteger(name, text, min, max),
  };
}

/** One of `allowed`. */
export function choice<const T extends string>(allowed: readonly T[]): Reader<T> {
  return {
    kind: 'choice',
    optional: false,
    choices: allowed,
    read: (_v, name, text) => readChoice(name, text, allowed),
  };
}

/** `reader`, with an absent parameter read as `undefined`. */
export function optional<T>(reader: Reader<T>): Reader<T | undefined> {
  return {
    ...reader,
    optional: true,
    read: (venue, name, text) => (text === undefined ? undefined : reader.read(venue, name, text)),
  };
}

/** `reader`, with an absent parameter read as `fallback`. */
export function withDefault<T>(reader: Reader<T>, fallback: T): Reader<T> {
  return {
    ...reader,
    optional: true,
    read: (venue, name, text) => (text === undefined ? fallback : reader.read(venue, name, text)),
  };
}

/** Deepest page a list reads: bounds the work of an offset query (10^5 pages × 100 = 10^7 rows). */
export const MAX_PAGE_INDEX = 100_000;

/** `pageIndex`: from 1 (the default) to MAX_PAGE_INDEX. */
export const PAGE_INDEX: Reader<number> = withDefault(integer(1, MAX_PAGE_INDEX), 1);

/** `pageIndex` and a `pageSize` from `min` to `max` (`fallback` when absent), as every list pages. */
export function pageParams(
  min: number,
  max: number,
  fallback: number,
): { readonly pageIndex: Reader<number>; readonly pageSize: Reader<number> } {
  return { pageIndex: PAGE_INDEX, pageSize: withDefault(integer(min, max), fallback) };
}

const ACCT_TYPES = ['0', '1', '2'] as const;
/** `acctType`: 0 spot, 1 isolated margin, 2 cross margin (`withDefault(ACCT_TYPE, 0)` where absent means spot). */
export const ACCT_TYPE: Reader<AcctType> = {
  kind: 'choice',
  optional: false,
  choices: ACCT_TYPES,
  read: (_v, name, text) => Number(readChoice(name, text, ACCT_TYPES)) as AcctType,
};

const SIDES = ['1', '0'] as const;
/** `tradeType`: 1 buy, 0 sell. */
export const TRADE_TYPE: Reader<Side> = {
  kind: 'choice',
  optional: false,
  choices: SIDES,
  read: (_v, name, text) => (readChoice(name, text, SIDES) === '1' ? 1 : 0),
};
