/**
 * @module margin-params — what the margin endpoints check beyond the shared readers
 * (edge/readers.ts: `MARGIN_MARKET`, `ANY_CASE_COIN`, `FLAG`, `ID`, `ACCT_TYPE`): the rules that
 * depend on another parameter — an amount in the named coin's decimals, a rate and a term within
 * the coin's lending settings, a coin of the named market. Each takes the text a declared `TEXT`
 * parameter read and refuses with the interface's code and a message naming the parameter,
 * before anything is journaled:
 *
 * | parameter | accepted | refused |
 * |---|---|---|
 * | amounts | a positive decimal with at most the coin's decimals | INVALID_AMOUNT (3003) |
 * | `interestRateOfDay` | a percent per day with at most 4 decimals (`0.05` = 500 ppm), within the coin's bounds | INVALID_PARAMETER, LOAN_RATE_OUT_OF_RANGE (3005) |
 * | `repaymentDay` | one of the coin's terms (10, 20, 30) | INVALID_LOAN_TERM (3005) |
 *
 * What the state decides (a limit, what is owed, whether the record is the caller's) is the
 * engine's check, at apply time, with the same codes (docs/margin.md).
 */
import type { CoinUnits, RatePpm } from '../../../domain/money.ts';
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
import { plainInteger, present, readCoinUnits } from '../../edge/readers.ts';
import { quoted, refuse } from '../../edge/refusal.ts';

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
export function marginAmount(name: string, text: string | undefined, coin: CoinSpec): CoinUnits {
  return readCoinUnits(name, text, coin, 'INVALID_AMOUNT', true);
}

/** An offer's or a borrow's amount: a positive amount at or above the coin's lending minimum. */
export function loanAmount(
  name: string,
  text: string | undefined,
  coin: CoinSpec,
  lending: LendingSettings,
): CoinUnits {
  const amount = marginAmount(name, text, coin);
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
export function rateOf(
  text: string | undefined,
  lending: LendingSettings,
  name = 'interestRateOfDay',
): RatePpm {
  const given = present(name, text);
  const ppm = parseRatePercent(given);
  if (ppm === undefined) {
    refuse(
      'INVALID_PARAMETER',
      `${name} ${quoted(given)} must be a percent per day with at most 4 decimals, e.g. 0.05`,
    );
  }
  const check = checkRate(lending, ppm);
  if (!check.ok) refuse(check.result, check.message);
  return ppm;
}

/** `repaymentDay`: one of the coin's terms (INVALID_LOAN_TERM otherwise, 3005). */
export function termOf(text: string | undefined, lending: LendingSettings, name = 'repaymentDay'): number {
  const given = present(name, text);
  // The integer rule: a term is never written `010` or `10.0`.
  const days = plainInteger(given) ?? NaN;
  const check = checkTerm(lending, days);
  if (!check.ok) {
    refuse(
      'INVALID_LOAN_TERM',
      `${name} ${quoted(given)} must be one of ${lending.termsDays.join(', ')} days`,
    );
  }
  return days;
}

/**
 * `repayType`: 0 all that the record owes, 1 part (`repayAmount`). Absent: part when a
 * `repayAmount` is given, else all.
 */
export function repayHow(repayType: '0' | '1' | undefined, repayAmount: string | undefined): 'all' | 'part' {
  const type = repayType ?? (repayAmount === undefined ? '0' : '1');
  return type === '0' ? 'all' : 'part';
}
