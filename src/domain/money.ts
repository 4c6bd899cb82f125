/**
 * @module money — exact integer money: decimal text ⇄ integer units, and every rounding rule.
 *
 * ## Representation
 * Every amount is an integer count of a smallest unit, held in a JS `number` and exact because it
 * stays a safe integer (|x| ≤ 2^53 − 1). No float ever touches a balance: decimal text is parsed
 * straight into integers here and formatted back here, nowhere else.
 *
 * - A coin's unit is 10^-unitDecimal of the coin (btc with unitDecimal 8: 1 unit = 1 satoshi).
 * - A market's price is counted in *ticks* of 10^-priceScale quote per base.
 * - A market's amount is counted in *lots* of 10^-amountScale base.
 * - Configuration guarantees amountScale ≤ base.unitDecimal and priceScale + amountScale ≤
 *   quote.unitDecimal, so one lot is a whole number of base units (`baseUnitsPerLot`) and
 *   price × amount is a whole number of quote units (`quoteUnitsPerTickLot`). Trade values
 *   therefore never round: only fees do.
 * - Any product that could leave the safe range is checked (`safeMul`); a command that would
 *   produce an unsafe value is refused with a result code, never computed approximately.
 *
 * ## Funds rules (what the engine moves, case by case)
 * - Place a buy: freeze price × amount of the quote coin (available → frozen).
 * - Place a sell: freeze amount of the base coin.
 * - Fill of q lots at the resting (maker) price p: the buyer's frozen quote falls by p × q and
 *   the buyer receives q of base; the seller's frozen base falls by q and the seller receives
 *   p × q of quote. When the buyer is the taker with limit price P > p, the improvement
 *   (P − p) × q is released from frozen to available at once.
 * - Fees are charged in the coin received, after it is credited: fee = floor(received × rate),
 *   rate in parts per million (`feeFloor`). Rounding down means a fee never exceeds the rate.
 * - Platform-coin fees (useZbFee): the fee owed in the received coin is converted to zb at the
 *   last trade prices (`convertFeeToZb`), discounted, rounded down, and taken from available zb.
 *   If no price path exists or the zb balance is short, the ordinary fee is charged instead.
 * - Cancel (by the user, IOC remainder, self-trade prevention, dead-man switch): release exactly
 *   the order's remaining frozen amount, which is price × remaining (buy) or remaining (sell).
 * - Withdrawal: freeze amount + fee on request; on success both leave the venue's books
 *   (the fee becomes fee income); on failure or cancel both return to available.
 * - Fees accrue to the fee account, so for every coin:
 *   Σ users' (available + frozen) + fee income = credits − settled withdrawals.
 *
 * ## Merged depth (market data)
 * Bids are rounded down to the merge step, asks up; the amounts at one merged price add up.
 */

/**
 * The brand that tells the money quantities apart. It is optional, so a plain number (a literal, a
 * value the API edge just parsed, the result of arithmetic) is any quantity, while a value typed as
 * one quantity cannot be passed or assigned as another: `const p: PriceTicks = lots` does not
 * compile. Arithmetic gives a plain `number`, and the name it is assigned to says what it is.
 * test/types/money-brands.ts proves each mix fails.
 */
declare const quantity: unique symbol;

/** An integer count of a coin's smallest unit (10^-unitDecimal of the coin). */
export type CoinUnits = number & { readonly [quantity]?: 'coin units' };
/** An integer count of price ticks (10^-priceScale quote per base). */
export type PriceTicks = number & { readonly [quantity]?: 'price ticks' };
/** An integer count of amount lots (10^-amountScale base). */
export type Lots = number & { readonly [quantity]?: 'lots' };
/** A rate in parts per million (0.2% = 2_000). */
export type RatePpm = number;

export const PPM = 1_000_000;
/** The longest decimal text accepted for any amount (digits and point), to bound parse work. */
export const MAX_DECIMAL_TEXT_LENGTH = 40;

const DECIMAL = /^(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;
/**
 * Beyond this exponent a non-zero mantissa of at most MAX_DECIMAL_TEXT_LENGTH digits is either
 * past the safe range (positive) or has a digit past any scale up to 15 (negative).
 */
const MAX_EXPONENT = 2 * MAX_DECIMAL_TEXT_LENGTH;

/**
 * Parses decimal text ("30000", "0.0100") into integer units of 10^-scale. Exponent notation
 * ("5e-05", "1.5E+3") is accepted too, because real clients format floats that way (ZB's Python SDK
 * sends prices with `%s`); it is converted by moving the decimal point in the text, never through
 * a float, so "5e-05" is exactly 5 units of 10^-5.
 * Returns `undefined` when the text is not a non-negative decimal of that form, has more
 * significant decimals than `scale` (trailing zeros beyond the scale are fine: the value is
 * exact), or the result is not a safe integer. Never rounds.
 */
export function parseDecimal(text: string, scale: number): number | undefined {
  if (text.length === 0 || text.length > MAX_DECIMAL_TEXT_LENGTH) return undefined;
  const m = DECIMAL.exec(text);
  if (m === null) return undefined;
  let whole = m[1] as string;
  let frac = m[2] ?? '';
  if (m[3] !== undefined) {
    const shifted = shiftPoint(whole, frac, Number(m[3]));
    if (shifted === undefined) return undefined;
    [whole, frac] = shifted;
  }
  if (frac.length > scale) {
    const extra = frac.slice(scale);
    if (!/^0*$/.test(extra)) return undefined;
    frac = frac.slice(0, scale);
  }
  const digits = whole + frac.padEnd(scale, '0');
  const value = Number(digits);
  return Number.isSafeInteger(value) ? value : undefined;
}

/**
 * The whole and fraction digits of whole.frac × 10^exponent, by moving the point in the text;
 * `undefined` when the exponent is so large that a non-zero value cannot be exact (see
 * MAX_EXPONENT). A zero mantissa is zero whatever its exponent.
 */
function shiftPoint(whole: string, frac: string, exponent: number): readonly [string, string] | undefined {
  const mantissa = whole + frac;
  if (/^0+$/.test(mantissa)) return ['0', ''];
  if (Math.abs(exponent) > MAX_EXPONENT) return undefined;
  const point = whole.length + exponent;
  if (point <= 0) return ['0', '0'.repeat(-point) + mantissa];
  if (point >= mantissa.length) return [mantissa + '0'.repeat(point - mantissa.length), ''];
  return [mantissa.slice(0, point), mantissa.slice(point)];
}

/** Formats integer units of 10^-scale as fixed decimal text with exactly `scale` decimals. */
export function formatUnits(units: number, scale: number): string {
  const negative = units < 0;
  const digits = String(negative ? -units : units);
  if (scale === 0) return negative ? `-${digits}` : digits;
  const padded = digits.padStart(scale + 1, '0');
  const text = `${padded.slice(0, -scale)}.${padded.slice(-scale)}`;
  return negative ? `-${text}` : text;
}

/** Formats units as decimal text without trailing zeros ("0.5", "12", "-3.25"). */
export function formatUnitsTrim(units: number, scale: number): string {
  const text = formatUnits(units, scale);
  return scale === 0 ? text : text.replace(/\.?0+$/, '');
}

/** Formats a bigint amount of units (a sum over many balances) like `formatUnitsTrim`. */
export function formatBigUnitsTrim(units: bigint, scale: number): string {
  const negative = units < 0n;
  const digits = (negative ? -units : units).toString();
  if (scale === 0) return negative ? `-${digits}` : digits;
  const padded = digits.padStart(scale + 1, '0');
  const text = `${padded.slice(0, -scale)}.${padded.slice(-scale)}`.replace(/\.?0+$/, '');
  return negative ? `-${text}` : text;
}

/** Units as a JSON number for wire fields typed as numbers (exact text, nearest double). */
export function unitsToNumber(units: number, scale: number): number {
  return Number(formatUnits(units, scale));
}

/** 10^n as an exact integer, for n in 0..15. */
export function pow10(n: number): number {
  if (!Number.isInteger(n) || n < 0 || n > 15) throw new RangeError(`pow10(${n}) out of range`);
  return 10 ** n;
}

/** a × b when the product is a safe integer, else `undefined` (exact: no approximate result). */
export function safeMul(a: number, b: number): number | undefined {
  const p = a * b;
  // If the exact product exceeds 2^53 − 1, the rounded double is ≥ 2^53, so this test is exact.
  return Number.isSafeInteger(p) ? p : undefined;
}

/** floor(amount × rate / 10^6) exactly, for a safe non-negative amount and 0 ≤ rate ≤ 10^6. */
export function feeFloor(amount: CoinUnits, rate: RatePpm): CoinUnits {
  if (rate === 0 || amount === 0) return 0;
  // Split so that no intermediate product leaves the safe range.
  const high = Math.floor(amount / PPM);
  const low = amount - high * PPM;
  return high * rate + Math.floor((low * rate) / PPM);
}

/**
 * floor(a × b / c) for non-negative integers, exact for any size (bigint), as a safe number or
 * `undefined` when the result itself is not safe.
 */
export function mulDivFloor(a: number, b: number, c: number): number | undefined {
  const p = a * b;
  if (Number.isSafeInteger(p)) return Math.floor(p / c);
  const r = (BigInt(a) * BigInt(b)) / BigInt(c);
  return r <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(r) : undefined;
}

/** A price conversion step: amount in coin A → coin B at `priceTicks` (B per A, `priceScale`). */
export interface PriceLeg {
  /** true when the leg's market is A_B (price is B per A: multiply), false for B_A (divide). */
  readonly multiply: boolean;
  readonly priceTicks: PriceTicks;
  readonly priceScale: number;
  /** unitDecimal of the coin converted from and to. */
  readonly fromDecimal: number;
  readonly toDecimal: number;
}

/**
 * Converts `fee` units of a coin to zb units along one or two price legs, then applies
 * `discountPpm` (the share taken off), rounding down once at the end. Exact rational arithmetic
 * (bigint) throughout; returns `undefined` if the result is not a safe integer.
 */
export function convertFeeToZb(
  fee: CoinUnits,
  legs: readonly PriceLeg[],
  discountPpm: RatePpm,
): CoinUnits | undefined {
  let num = BigInt(fee) * BigInt(PPM - discountPpm);
  let den = BigInt(PPM);
  for (const leg of legs) {
    // value_to = value_from × 10^(toDec − fromDec) × (price × 10^-scale)^(±1)
    const decShift = leg.toDecimal - leg.fromDecimal;
    if (decShift >= 0) num *= 10n ** BigInt(decShift);
    else den *= 10n ** BigInt(-decShift);
    if (leg.multiply) {
      num *= BigInt(leg.priceTicks);
      den *= 10n ** BigInt(leg.priceScale);
    } else {
      num *= 10n ** BigInt(leg.priceScale);
      den *= BigInt(leg.priceTicks);
    }
  }
  const r = num / den;
  return r <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(r) : undefined;
}

/** Rounds a price down (bids) or up (asks) to a multiple of `step` ticks. */
export function roundToStep(price: PriceTicks, step: PriceTicks, up: boolean): PriceTicks {
  const down = Math.floor(price / step) * step;
  return up && down !== price ? down + step : down;
}
