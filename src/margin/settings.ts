/**
 * @module settings — margin settings per market (isolated), for the cross account, and lending
 * settings per coin, with their validation and the edge checks of lending parameters.
 *
 * ## Numbers
 * - Lines and the lever multiple are integer ratios in basis points of 1 (`BP` = 10,000): the real
 *   venue's leverMultiple 5 is 50,000, startLine 1.25 is 12,500, noticeLine 1.13 is 11,300,
 *   forceRepayLine 1.08 is 10,800.
 * - Daily interest rates are integers in parts per million of the principal per day (`RatePpm`):
 *   the real venue's 0.05 %/day is 500, its upper bound 0.2 %/day is 2,000. On the wire a borrow's
 *   or an offer's `interestRateOfDay` is a percent with at most 4 decimals ("0.05" = 500 ppm), as
 *   the SDKs send it; `getLoans` answers the fraction ("0.0005"), as ccxt reads it.
 * - Terms are whole days from the allowed list (10, 20, 30 by default).
 */
import { formatUnitsTrim, parseDecimal, PPM, type RatePpm } from '../domain/money.ts';
import { refuse, type Outcome, type Units } from './movement.ts';

/** One in basis points. */
export const BP = 10_000;

/** The lines and multiple of one margin account kind (an isolated market, or cross). */
export interface MarginSettings {
  /** Whether new borrowing and transfers in are open. */
  readonly enabled: boolean;
  /** Most a position may be levered: debt ≤ (multiple − 1) × net assets. In BP (5× = 50,000). */
  readonly leverMultipleBp: number;
  /** The opening line: borrowing and transfers out keep the risk rate at or above it. In BP. */
  readonly startLineBp: number;
  /** Below this the account is flagged and its owner told (issue 15). In BP. */
  readonly noticeLineBp: number;
  /** At or below this the account is liquidated (issue 15). In BP. */
  readonly forceRepayLineBp: number;
  /** Shown as `leverMultipleInterest` in the lever object; the reference gives no meaning. In BP. */
  readonly leverMultipleInterestBp: number;
}

/** The real venue's numbers (reference §7.1). */
export const DEFAULT_MARGIN_SETTINGS: MarginSettings = Object.freeze({
  enabled: true,
  leverMultipleBp: 50_000,
  startLineBp: 12_500,
  noticeLineBp: 11_300,
  forceRepayLineBp: 10_800,
  leverMultipleInterestBp: 30_000,
});

/** Lending settings of one coin. */
export interface LendingSettings {
  readonly coin: string;
  /** The coin's unitDecimal, to show amounts in messages. */
  readonly unitDecimal: number;
  /** Whether offers and borrowing of this coin are open. */
  readonly enabled: boolean;
  /** Allowed terms in days, ascending. */
  readonly termsDays: readonly number[];
  /** Lowest and highest daily rate an offer or a borrow may name, ppm per day, inclusive. */
  readonly minDailyRatePpm: RatePpm;
  readonly maxDailyRatePpm: RatePpm;
  /** The smallest offer and the smallest borrow, in coin units (`lowestAmount` on the wire). */
  readonly minAmount: Units;
  /** The venue's share of every unit of interest paid, ppm; it goes to the insurance fund. */
  readonly venueSharePpm: RatePpm;
}

export const DEFAULT_TERMS_DAYS: readonly number[] = Object.freeze([10, 20, 30]);
export const DEFAULT_MIN_DAILY_RATE_PPM = 500;
export const DEFAULT_MAX_DAILY_RATE_PPM = 2_000;
/** 10 % of interest paid goes to the insurance fund (issue 15 names the share; this is its value). */
export const DEFAULT_VENUE_SHARE_PPM = 100_000;

/** The default lending settings of a coin with `unitDecimal` decimals: minimum 0.01 of the coin. */
export function defaultLendingSettings(coin: string, unitDecimal: number): LendingSettings {
  return {
    coin,
    unitDecimal,
    enabled: true,
    termsDays: DEFAULT_TERMS_DAYS,
    minDailyRatePpm: DEFAULT_MIN_DAILY_RATE_PPM,
    maxDailyRatePpm: DEFAULT_MAX_DAILY_RATE_PPM,
    minAmount: unitDecimal >= 2 ? 10 ** (unitDecimal - 2) : 1,
    venueSharePpm: DEFAULT_VENUE_SHARE_PPM,
  };
}

const isBp = (v: number): boolean => Number.isSafeInteger(v) && v > 0;

/**
 * Problems of a margin settings record (empty when valid): every number a positive integer,
 * BP < forceRepayLine < noticeLine < startLine, and a multiple above 1×. The opening line should
 * be at least multiple ÷ (multiple − 1) for the multiple to be reachable; that is not required.
 */
export function validateMarginSettings(s: MarginSettings): string[] {
  const problems: string[] = [];
  for (const [k, v] of [
    ['leverMultipleBp', s.leverMultipleBp],
    ['startLineBp', s.startLineBp],
    ['noticeLineBp', s.noticeLineBp],
    ['forceRepayLineBp', s.forceRepayLineBp],
    ['leverMultipleInterestBp', s.leverMultipleInterestBp],
  ] as const) {
    if (!isBp(v) || v > 1_000_000) problems.push(`${k} must be an integer 1..1000000 (basis points of 1)`);
  }
  if (problems.length > 0) return problems;
  if (s.leverMultipleBp <= BP) problems.push('leverMultiple must be above 1');
  if (s.forceRepayLineBp <= BP) problems.push('forceRepayLine must be above 1');
  if (s.noticeLineBp <= s.forceRepayLineBp) problems.push('noticeLine must be above forceRepayLine');
  if (s.startLineBp <= s.noticeLineBp) problems.push('startLine must be above noticeLine');
  return problems;
}

/** Problems of a coin's lending settings (empty when valid). */
export function validateLendingSettings(s: LendingSettings): string[] {
  const problems: string[] = [];
  if (s.termsDays.length === 0) problems.push(`${s.coin}: at least one term`);
  let last = 0;
  for (const d of s.termsDays) {
    if (!Number.isInteger(d) || d < 1 || d > 365) problems.push(`${s.coin}: term ${d} must be 1..365 days`);
    else if (d <= last) problems.push(`${s.coin}: terms must be ascending and distinct`);
    last = d;
  }
  const rates = [s.minDailyRatePpm, s.maxDailyRatePpm];
  if (!rates.every((r) => Number.isInteger(r) && r >= 1 && r <= PPM))
    problems.push(`${s.coin}: daily rates must be 1..${PPM} ppm`);
  else if (s.minDailyRatePpm > s.maxDailyRatePpm) problems.push(`${s.coin}: minimum rate above maximum`);
  if (!Number.isSafeInteger(s.minAmount) || s.minAmount < 1)
    problems.push(`${s.coin}: minAmount must be ≥ 1 unit`);
  if (!Number.isInteger(s.venueSharePpm) || s.venueSharePpm < 0 || s.venueSharePpm > PPM)
    problems.push(`${s.coin}: venueSharePpm must be 0..${PPM}`);
  return problems;
}

/** A daily rate in ppm as a percent with 4 decimals ("0.05" for 500), the wire's request form. */
export function formatRatePercent(ppm: RatePpm): string {
  return (ppm / 10_000).toFixed(4).replace(/\.?0+$/, '');
}

/**
 * Parses the wire's `interestRateOfDay` (a percent per day, at most 4 decimals: "0.05" = 500 ppm).
 * `undefined` when the text is not a plain decimal of that precision.
 */
export function parseRatePercent(text: string): RatePpm | undefined {
  return parseDecimal(text, 4);
}

/** Checks a term against the coin's allowed terms (INVALID_LOAN_TERM). */
export function checkTerm(s: LendingSettings, days: number): Outcome<object> {
  if (Number.isInteger(days) && s.termsDays.includes(days)) return { ok: true };
  return refuse('INVALID_LOAN_TERM', `repaymentDay ${days} is not one of ${s.termsDays.join(', ')} days`);
}

/** Checks a daily rate against the coin's bounds (LOAN_RATE_OUT_OF_RANGE). */
export function checkRate(s: LendingSettings, ratePpm: RatePpm): Outcome<object> {
  if (Number.isInteger(ratePpm) && ratePpm >= s.minDailyRatePpm && ratePpm <= s.maxDailyRatePpm)
    return { ok: true };
  return refuse(
    'LOAN_RATE_OUT_OF_RANGE',
    `interestRateOfDay ${formatRatePercent(ratePpm)} % is outside ${formatRatePercent(s.minDailyRatePpm)}..${formatRatePercent(s.maxDailyRatePpm)} % per day`,
  );
}

/** Checks an offer's or a borrow's amount: a positive safe integer at or above the minimum. */
export function checkLoanAmount(s: LendingSettings, amount: Units): Outcome<object> {
  if (!Number.isSafeInteger(amount) || amount <= 0)
    return refuse('INVALID_AMOUNT', 'amount must be positive');
  if (amount < s.minAmount)
    return refuse(
      'BELOW_MIN_LOAN',
      `amount ${formatUnitsTrim(amount, s.unitDecimal)} is below the minimum ${formatUnitsTrim(s.minAmount, s.unitDecimal)} ${s.coin}`,
    );
  return { ok: true };
}

/** Checks that lending of the coin is open (MARGIN_NOT_OPEN). */
export function checkLendingOpen(
  s: LendingSettings | undefined,
  coin: string,
): Outcome<{ settings: LendingSettings }> {
  if (s === undefined || !s.enabled) return refuse('MARGIN_NOT_OPEN', `lending of ${coin} is not open`);
  return { ok: true, settings: s };
}
