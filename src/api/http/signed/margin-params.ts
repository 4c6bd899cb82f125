/**
 * @module margin-params — the margin endpoints' parameter readers (issue 14). Each reads one
 * parameter and refuses bad input with the interface's code and a message naming the parameter,
 * through the same `refuse` as every signed endpoint (wire.ts), before anything is journaled:
 *
 * | parameter | accepted | refused |
 * |---|---|---|
 * | `marketName` | `BTC/USDT` (ccxt), `btcusdt` (the SDKs), `btc_usdt`, any letter case | UNKNOWN_MARKET (3005) |
 * | `coin` | a coin name in any letter case (ccxt sends `USDT`) | INVALID_PARAMETER, UNKNOWN_COIN (3005) |
 * | amounts | a positive decimal with at most the coin's decimals | INVALID_AMOUNT (3003) |
 * | `interestRateOfDay` | a percent per day with at most 4 decimals (`0.05` = 500 ppm), within the coin's bounds | INVALID_PARAMETER, LOAN_RATE_OUT_OF_RANGE (3005) |
 * | `repaymentDay` | one of the coin's terms (10, 20, 30) | INVALID_LOAN_TERM (3005) |
 * | `isLoop`, `investMark`, flags | `1`/`0`, `true`/`false` | INVALID_PARAMETER (3005) |
 * | `loanId`, `loanRecordId` | a positive integer | INVALID_PARAMETER (3005) |
 * | `acctType` | `0`, `1`, `2` | INVALID_PARAMETER (3005) |
 *
 * What the state decides (a limit, what is owed, whether the record is the caller's) is the
 * engine's check, at apply time, with the same codes (docs/margin.md).
 */
import type { AcctType } from '../../../domain/commands.ts';
import { parseDecimal, type CoinUnits, type RatePpm } from '../../../domain/money.ts';
import type { CoinSpec, MarketSpec } from '../../../domain/specs.ts';
import type { VenueState } from '../../../sequencer/venue-ports.ts';
import {
  checkLoanAmount,
  checkRate,
  checkTerm,
  checkLendingOpen,
  parseRatePercent,
  type LendingSettings,
} from '../../../margin/settings.ts';
import { parseMarginMarketName } from '../../wire/margin-wire.ts';
import { echo } from '../../auth/authenticate.ts';
import type { ApiRequest } from '../types.ts';
import { choiceParam, fundsCoinParam, optional, PLAIN_INTEGER, refuse, required } from './wire.ts';

/**
 * A margin `marketName` (or another parameter holding one) in any form clients send: `BTC/USDT`,
 * `btcusdt`, `btc_usdt`, any letter case. UNKNOWN_MARKET for an unknown, malformed or ambiguous name.
 */
export function marginMarketParam(engine: VenueState, request: ApiRequest, name = 'marketName'): MarketSpec {
  const text = required(request, name);
  const parsed = parseMarginMarketName(text, engine.markets());
  if (!parsed.ok) refuse(parsed.result, `${name}: ${parsed.message}`);
  return parsed.market;
}

/** A margin `marketName` when given, else `undefined`. */
export function optionalMarginMarketParam(
  engine: VenueState,
  request: ApiRequest,
  name = 'marketName',
): MarketSpec | undefined {
  return optional(request, name) === undefined ? undefined : marginMarketParam(engine, request, name);
}

/** The coin of a margin call, in any letter case (ccxt sends `USDT`); required. */
export function marginCoinParam(engine: VenueState, request: ApiRequest, name = 'coin'): CoinSpec {
  return fundsCoinParam(engine, request, name, true);
}

/** The coin must be one of the market's two (an isolated account holds only those). */
export function coinOfMarket(coin: CoinSpec, market: MarketSpec, name = 'coin'): void {
  if (coin.name !== market.base && coin.name !== market.quote) {
    refuse(
      'INVALID_PARAMETER',
      `${name} ${coin.name} is not a coin of ${market.name}: use ${market.base} or ${market.quote}`,
    );
  }
}

/** A positive amount of `coin` with at most its decimals (INVALID_AMOUNT otherwise). */
export function marginAmountParam(request: ApiRequest, name: string, coin: CoinSpec): CoinUnits {
  const text = required(request, name);
  const value = parseDecimal(text, coin.unitDecimal);
  if (value === undefined || value === 0) {
    refuse(
      'INVALID_AMOUNT',
      `${name} ${echo(text)} must be a positive decimal with at most ${coin.unitDecimal} decimals of ${coin.name}`,
    );
  }
  return value;
}

/** An offer's or a borrow's amount: a positive amount at or above the coin's lending minimum. */
export function loanAmountParam(
  request: ApiRequest,
  name: string,
  coin: CoinSpec,
  lending: LendingSettings,
): CoinUnits {
  const amount = marginAmountParam(request, name, coin);
  const check = checkLoanAmount(lending, amount);
  if (!check.ok) refuse(check.result, `${name}: ${check.message}`);
  return amount;
}

/** The coin's lending settings, the engine's (MARGIN_NOT_OPEN when lending of the coin is not open). */
export function lendingSettingsOf(engine: VenueState, coin: CoinSpec): LendingSettings {
  const open = checkLendingOpen(engine.margin.lendingSettings(coin.name), coin.name);
  if (!open.ok) refuse(open.result, open.message);
  return open.settings;
}

/**
 * `interestRateOfDay`: a percent per day with at most 4 decimals ("0.05" = 500 ppm), within the
 * coin's bounds. INVALID_PARAMETER for malformed text, LOAN_RATE_OUT_OF_RANGE outside the bounds.
 */
export function rateParam(
  request: ApiRequest,
  lending: LendingSettings,
  name = 'interestRateOfDay',
): RatePpm {
  const text = required(request, name);
  const ppm = parseRatePercent(text);
  if (ppm === undefined) {
    refuse(
      'INVALID_PARAMETER',
      `${name} ${echo(text)} must be a percent per day with at most 4 decimals, e.g. 0.05`,
    );
  }
  const check = checkRate(lending, ppm);
  if (!check.ok) refuse(check.result, check.message);
  return ppm;
}

/** `interestRateOfDay` when given (a borrow's ceiling), else `undefined`. */
export function optionalRateParam(
  request: ApiRequest,
  lending: LendingSettings,
  name = 'interestRateOfDay',
): RatePpm | undefined {
  return optional(request, name) === undefined ? undefined : rateParam(request, lending, name);
}

/** `repaymentDay`: one of the coin's terms (INVALID_LOAN_TERM otherwise, 3005). */
export function termParam(request: ApiRequest, lending: LendingSettings, name = 'repaymentDay'): number {
  const text = required(request, name);
  const days = PLAIN_INTEGER.test(text) ? Number(text) : NaN;
  const check = checkTerm(lending, days);
  if (!check.ok) {
    refuse('INVALID_LOAN_TERM', `${name} ${echo(text)} must be one of ${lending.termsDays.join(', ')} days`);
  }
  return days;
}

/** `repaymentDay` when given, else `undefined`. */
export function optionalTermParam(
  request: ApiRequest,
  lending: LendingSettings,
  name = 'repaymentDay',
): number | undefined {
  return optional(request, name) === undefined ? undefined : termParam(request, lending, name);
}

const TRUE = ['1', 'true'];
const FALSE = ['0', 'false'];

/** A yes/no parameter: `1`/`true` or `0`/`false` (clients send either), `fallback` when absent. */
export function flagParam(request: ApiRequest, name: string, fallback?: boolean): boolean {
  const text = optional(request, name);
  if (text === undefined) {
    if (fallback === undefined) refuse('INVALID_PARAMETER', `${name} is required (1 or 0, true or false)`);
    return fallback;
  }
  const lower = text.toLowerCase();
  if (TRUE.includes(lower)) return true;
  if (FALSE.includes(lower)) return false;
  return refuse('INVALID_PARAMETER', `${name} ${echo(text)} must be 1 or 0 (true or false)`);
}

/** Largest id read: a safe integer. */
const ID = /^[1-9][0-9]{0,15}$/;

/** A positive integer id (`loanId`, `loanRecordId`): INVALID_PARAMETER otherwise. */
export function idParam(request: ApiRequest, name: string): number {
  const text = required(request, name);
  const id = ID.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(id))
    refuse('INVALID_PARAMETER', `${name} ${echo(text)} must be a positive integer`);
  return id;
}

/** An id when given, else `undefined`. */
export function optionalIdParam(request: ApiRequest, name: string): number | undefined {
  return optional(request, name) === undefined ? undefined : idParam(request, name);
}

/** `acctType`: 0 spot (the default), 1 isolated margin, 2 cross margin. */
export function acctTypeParam(request: ApiRequest): AcctType {
  return Number(choiceParam(request, 'acctType', ['0', '1', '2'], '0')) as AcctType;
}

/**
 * `repayType`: 0 all that the record owes, 1 part (`repayAmount`). Absent: part when a
 * `repayAmount` is given, else all.
 */
export function repayTypeParam(request: ApiRequest): 'all' | 'part' {
  const fallback = optional(request, 'repayAmount') === undefined ? '0' : '1';
  return choiceParam(request, 'repayType', ['0', '1'], fallback) === '0' ? 'all' : 'part';
}
