/**
 * @module lines — valuation of margin accounts and their lines: assets and debt in a quote coin,
 * the risk rate, how much more may be borrowed, how much may be transferred out, and the price
 * at which an isolated account reaches its liquidation line (`unwindPrice`, for issue 15).
 *
 * ## Numbers
 * Everything is exact: values are rationals of bigints (`Ratio`), in units of the quote coin;
 * lines come in basis points (`settings.ts`). Only the answers round, each in the account's
 * disfavour, so that a limit never lets the account cross a line:
 * - the borrowing and transfer-out limits round down to whole units of their coin;
 * - the risk rate in basis points rounds down;
 * - the unwind price rounds to the tick at which the account is liquidatable: down for a price
 *   below which (a long position), up for a price above which (a short one).
 *
 * ## Rules
 * - Assets = Σ (available + frozen) of every coin; debt = Σ (principal + accrued interest), each
 *   coin valued at its unit price in the quote coin. Risk rate = assets ÷ debt (none without debt).
 * - Borrowing x (valued x_q) adds x_q to both. It is allowed while (A + x_q) ÷ (D + x_q) ≥ startLine
 *   and the debt stays within the lever multiple: D + x_q ≤ (multiple − 1) × (A − D). With the
 *   real venue's numbers (5×, 1.25 = 5 ÷ 4) both give x_q ≤ 4A − 5D.
 * - A transfer out of y (valued y_q) is allowed while (A − y_q) ÷ D ≥ startLine, and never beyond
 *   the coin's available; without debt, the available.
 * - Liquidation line: an account is liquidated when its risk rate is at or below forceRepayLine.
 */
import { formatUnitsTrim, type PriceTicks } from '../domain/money.ts';
import { refuse, type Outcome, type Units } from './movement.ts';
import { BP, type MarginSettings } from './settings.ts';

/** An exact non-negative rational, `den` > 0. */
export interface Ratio {
  readonly num: bigint;
  readonly den: bigint;
}

export const ratio = (num: bigint | number, den: bigint | number = 1n): Ratio => ({
  num: BigInt(num),
  den: BigInt(den),
});

/** r in lowest terms. */
export function reduced(r: Ratio): Ratio {
  let a = r.num < 0n ? -r.num : r.num;
  let b = r.den;
  while (b !== 0n) [a, b] = [b, a % b];
  return a <= 1n ? r : { num: r.num / a, den: r.den / a };
}

/** floor(r) as a number (the caller keeps r within the safe range). */
export const floorRatio = (r: Ratio): number => Number(r.num / r.den);

/** a ≥ b. */
export const atLeast = (a: Ratio, b: Ratio): boolean => a.num * b.den >= b.num * a.den;

/** What a margin account holds and owes in one coin. */
export interface CoinPosition {
  readonly coin: string;
  readonly available: Units;
  readonly frozen: Units;
  readonly principal: Units;
  readonly interest: Units;
}

/** Assets and debt of an account, in quote coin units. */
export interface Valuation {
  readonly assets: Ratio;
  readonly debt: Ratio;
}

/**
 * The value of one base unit in quote units at a price: priceTicks × 10^(quoteDecimal −
 * priceScale − baseDecimal).
 */
export function unitPrice(
  priceTicks: PriceTicks,
  priceScale: number,
  baseDecimal: number,
  quoteDecimal: number,
): Ratio {
  const shift = quoteDecimal - priceScale - baseDecimal;
  return shift >= 0
    ? ratio(BigInt(priceTicks) * 10n ** BigInt(shift))
    : reduced(ratio(BigInt(priceTicks), 10n ** BigInt(-shift)));
}

/** `unitPrice` as a double (within a few units of 2^-52 of it relatively), for pre-checks in doubles. */
export function unitPriceD(
  priceTicks: PriceTicks,
  priceScale: number,
  baseDecimal: number,
  quoteDecimal: number,
): number {
  return priceTicks * 10 ** (quoteDecimal - priceScale - baseDecimal);
}

/**
 * Values a set of coin positions with `priceOf` (quote units per unit of the coin; the quote coin
 * itself is 1). A coin without a price counts 0 among the assets; a debt in a coin without a price
 * cannot be valued, and then the answer is `undefined` (no borrowing, no transfer out).
 */
export function valuate(
  positions: readonly CoinPosition[],
  priceOf: (coin: string) => Ratio | undefined,
): Valuation | undefined {
  let assets = ratio(0);
  let debt = ratio(0);
  for (const p of positions) {
    const held = p.available + p.frozen;
    const owed = p.principal + p.interest;
    if (held === 0 && owed === 0) continue;
    const price = priceOf(p.coin);
    if (price === undefined) {
      if (owed > 0) return undefined;
      continue;
    }
    assets = add(assets, mul(price, held));
    debt = add(debt, mul(price, owed));
  }
  return { assets: reduced(assets), debt: reduced(debt) };
}

/** An isolated account: its base and quote positions valued at one unit price of the base. */
export function valuateIsolated(base: CoinPosition, quote: CoinPosition, basePrice: Ratio): Valuation {
  return valuate([base, quote], (c) => (c === base.coin ? basePrice : ratio(1))) as Valuation;
}

/** Risk rate = assets ÷ debt, exact; `undefined` without debt (shown as "-"). */
export function riskRate(v: Valuation): Ratio | undefined {
  if (v.debt.num === 0n) return undefined;
  return { num: v.assets.num * v.debt.den, den: v.assets.den * v.debt.num };
}

/** The risk rate in basis points, rounded down; `undefined` without debt. */
export function riskRateBp(v: Valuation): number | undefined {
  const r = riskRate(v);
  return r === undefined ? undefined : Number((r.num * BigInt(BP)) / r.den);
}

/** Whether the risk rate is at or above a line (true without debt). */
export function atOrAboveLine(v: Valuation, lineBp: number): boolean {
  return atLeast(mul(v.assets, BP), mul(v.debt, lineBp));
}

/** Whether the account is at or below its liquidation line (false without debt). */
export function mustLiquidate(v: Valuation, s: MarginSettings): boolean {
  return v.debt.num > 0n && atLeast(mul(v.debt, s.forceRepayLineBp), mul(v.assets, BP));
}

/**
 * How many units of a coin (unit price `price`, > 0) the account may still borrow: the largest x
 * with (A + x_q) ÷ (D + x_q) ≥ startLine and D + x_q ≤ (multiple − 1)(A − D); 0 when none.
 */
export function borrowLimit(v: Valuation, s: MarginSettings, price: Ratio): Units {
  const S = BigInt(s.startLineBp);
  const L = BigInt(s.leverMultipleBp);
  const B = BigInt(BP);
  // Line: x_q ≤ (B·A − S·D) ÷ (S − B).
  const line = div(sub(mul(v.assets, B), mul(v.debt, S)), S - B);
  // Multiple: x_q ≤ ((L − B)(A − D) − B·D) ÷ B.
  const multiple = div(sub(mul(sub(v.assets, v.debt), L - B), mul(v.debt, B)), B);
  const best = min(line, multiple);
  if (best.num <= 0n) return 0;
  return toUnits(best, price);
}

/**
 * How many units of a coin may leave the account: its available when nothing is owed, else the
 * largest y ≤ available with (A − y_q) ÷ D ≥ startLine.
 */
export function transferOutLimit(v: Valuation, s: MarginSettings, available: Units, price: Ratio): Units {
  if (v.debt.num === 0n) return available;
  const room = div(sub(mul(v.assets, BP), mul(v.debt, s.startLineBp)), BigInt(BP));
  if (room.num <= 0n) return 0;
  return Math.min(available, toUnits(room, price));
}

/**
 * Relative slack of `surelyWithinBorrowLimit` for the rounding of doubles: each sum and product
 * there is within about 2^-52 × (number of terms) of the exact one, far inside 10^-9.
 */
const DOUBLE_SLACK = 1e-9;

/**
 * `borrowLimit`'s pre-check in doubles (an express borrow comes with every short margin order):
 * whether `amount` units at `priceD` quote units each are within the limit of an account of
 * assets `a` and debt `d` (quote units, as `valuate` sums them, in doubles) with a margin of
 * 10^-9 of the terms' size for rounding. False means "not sure", never "over": the caller then
 * decides exactly (`checkBorrowLimit`), so the answer is always the exact rule's.
 */
export function surelyWithinBorrowLimit(
  a: number,
  d: number,
  s: MarginSettings,
  amount: Units,
  priceD: number,
): boolean {
  if (!s.enabled || !(priceD > 0)) return false;
  const S = s.startLineBp;
  const L = s.leverMultipleBp;
  // As `borrowLimit`: line x_q ≤ (B·A − S·D) ÷ (S − B), multiple x_q ≤ ((L − B)(A − D) − B·D) ÷ B,
  // each less the slack of its terms.
  const line = (BP * a - S * d - DOUBLE_SLACK * (BP * a + S * d)) / (S - BP);
  const multiple = ((L - BP) * (a - d) - BP * d - DOUBLE_SLACK * ((L - BP) * (a + d) + BP * d)) / BP;
  return amount * priceD * (1 + DOUBLE_SLACK) <= Math.min(line, multiple);
}

/** The coin a limit is checked in: its name, decimals (for messages) and unit price in the quote coin. */
export interface PricedCoin {
  readonly coin: string;
  readonly unitDecimal: number;
  readonly price: Ratio;
}

/**
 * The edge check of a borrow against the account's lines: MARGIN_NOT_OPEN when its settings are
 * switched off, OVER_BORROW_LIMIT when the account cannot be valued or `amount` exceeds
 * `borrowLimit` (the message gives the limit in the coin).
 */
export function checkBorrowLimit(
  v: Valuation | undefined,
  s: MarginSettings,
  c: PricedCoin,
  amount: Units,
): Outcome<{ limit: Units }> {
  if (!s.enabled) return refuse('MARGIN_NOT_OPEN', 'margin borrowing is switched off for this account');
  if (v === undefined)
    return refuse(
      'OVER_BORROW_LIMIT',
      'the account holds or owes a coin without a price: nothing can be borrowed',
    );
  const limit = borrowLimit(v, s, c.price);
  if (amount > limit)
    return refuse(
      'OVER_BORROW_LIMIT',
      `borrowing ${formatUnitsTrim(amount, c.unitDecimal)} ${c.coin} is over the limit of ${formatUnitsTrim(limit, c.unitDecimal)}`,
    );
  return { ok: true, limit };
}

/**
 * The edge check of a transfer out of a margin account: INSUFFICIENT_BALANCE beyond the coin's
 * available, OVER_TRANSFER_LIMIT beyond what keeps the opening line (or when the account cannot
 * be valued while it owes something).
 */
export function checkTransferOut(
  v: Valuation | undefined,
  s: MarginSettings,
  c: PricedCoin,
  available: Units,
  amount: Units,
): Outcome<{ limit: Units }> {
  const show = (u: Units): string => `${formatUnitsTrim(u, c.unitDecimal)} ${c.coin}`;
  if (amount > available)
    return refuse('INSUFFICIENT_BALANCE', `available ${show(available)}, the transfer needs ${show(amount)}`);
  if (v === undefined)
    return refuse('OVER_TRANSFER_LIMIT', 'the account owes a coin without a price: nothing can leave it');
  const limit = transferOutLimit(v, s, available, c.price);
  if (amount > limit)
    return refuse(
      'OVER_TRANSFER_LIMIT',
      `transferring ${show(amount)} out is over the limit of ${show(limit)}`,
    );
  return { ok: true, limit };
}

/** Where an isolated account reaches its liquidation line as the price of its base moves. */
export type UnwindPrice =
  /** Liquidated when the price is at or below `priceTicks` (the account holds more than it owes of the base). */
  | { readonly side: 'below'; readonly priceTicks: PriceTicks }
  /** Liquidated when the price is at or above `priceTicks` (it owes more base than it holds); 0: at any price. */
  | { readonly side: 'above'; readonly priceTicks: PriceTicks };

/**
 * The price (in ticks) at which an isolated account's risk rate reaches forceRepayLine, or
 * `undefined` when no positive price liquidates it (no debt, or assets cover the line at every
 * price). `perTick` is the value of one base unit at one tick (`unitPrice(1, …)`).
 *
 * With Aq, Ab what it holds of quote and base, Dq, Db what it owes, F the line and u(p) = p × perTick:
 * liquidated ⟺ Aq + Ab·u ≤ F·(Dq + Db·u) ⟺ p·perTick·(Ab − F·Db) ≤ F·Dq − Aq.
 */
export function unwindPrice(
  base: CoinPosition,
  quote: CoinPosition,
  s: MarginSettings,
  perTick: Ratio,
): UnwindPrice | undefined {
  return unwindAt(
    BigInt(base.available + base.frozen),
    BigInt(base.principal + base.interest),
    BigInt(quote.available + quote.frozen),
    BigInt(quote.principal + quote.interest),
    BigInt(s.forceRepayLineBp),
    perTick,
  );
}

/**
 * `unwindPrice` on amounts already summed (held and owed of base and quote, units) at any line
 * `lineBp` (the liquidation index asks three lines of one position without re-reading it).
 */
export function unwindAt(
  heldB: bigint,
  owedB: bigint,
  heldQ: bigint,
  owedQ: bigint,
  lineBp: bigint,
  perTick: Ratio,
): UnwindPrice | undefined {
  const F = lineBp;
  const B = BIG_BP;
  if (owedB === 0n && owedQ === 0n) return undefined;
  const coef = B * heldB - F * owedB; // per base unit, × B
  const rhs = F * owedQ - B * heldQ; // quote units, × B
  // p × perTick × coef ≤ rhs, with perTick = n/d: p × n × coef ≤ rhs × d.
  const left = perTick.num * coef;
  const right = rhs * perTick.den;
  if (left > 0n) {
    if (right <= 0n) return undefined;
    const ticks = right / left; // floor
    return ticks >= 1n ? { side: 'below', priceTicks: Number(ticks) } : undefined;
  }
  if (left < 0n) {
    // p ≥ right ÷ left (both sides divided by a negative number).
    if (right >= 0n) return { side: 'above', priceTicks: 0 };
    const n = -right;
    const d = -left;
    return { side: 'above', priceTicks: Number((n + d - 1n) / d) };
  }
  return right >= 0n ? { side: 'above', priceTicks: 0 } : undefined;
}

const BIG_BP = BigInt(BP);

/** Twice the unit roundoff of a double, as a generous relative error per operation. */
const EPS = 2 ** -51;

/**
 * `unwindAt` in doubles, for the liquidation index's updates (bigint arithmetic allocates, and an
 * update comes with every fill of a margin account). Each rounded step's error is bounded; when
 * the bound cannot rule out a different answer (a sign too close to 0, a quotient too close to an
 * integer, an amount beyond the safe range) the answer is `null` and the caller asks `unwindAt`.
 * So the answer, when there is one, is exactly `unwindAt`'s (test: lines.test.ts).
 */
export function unwindAtFast(
  heldB: number,
  owedB: number,
  heldQ: number,
  owedQ: number,
  lineBp: number,
  perTickNum: number,
  perTickDen: number,
): UnwindPrice | undefined | null {
  if (owedB === 0 && owedQ === 0) return undefined;
  const a = BP * heldB;
  const b = lineBp * owedB;
  const c = lineBp * owedQ;
  const e = BP * heldQ;
  const coef = a - b;
  const rhs = c - e;
  // Absolute error bounds of coef and rhs (each product and the difference rounded once).
  const errCoef = (a + b) * EPS;
  const errRhs = (c + e) * EPS;
  if (!Number.isFinite(a + b + c + e)) return null;
  // Exact zeros (nothing of the coin held or owed) answer as `unwindAt` does.
  if (heldB === 0 && owedB === 0) return c > e ? { side: 'above', priceTicks: 0 } : c < e ? undefined : null;
  if (!(Math.abs(coef) > 2 * errCoef)) return null;
  if (heldQ === 0 && owedQ === 0) return coef > 0 ? undefined : { side: 'above', priceTicks: 0 };
  // Twice the bounds: the relative errors below are taken of the computed values.
  if (!(Math.abs(rhs) > 2 * errRhs)) return null;
  const rel = 2 * (errRhs / Math.abs(rhs) + errCoef / Math.abs(coef)) + 8 * EPS;
  const left = perTickNum * coef;
  const right = rhs * perTickDen;
  if (left > 0) {
    if (right < 0) return undefined;
    const t = right / left;
    const err = t * rel;
    const ticks = Math.floor(t - err);
    if (ticks !== Math.floor(t + err) || !Number.isSafeInteger(ticks)) return null;
    return ticks >= 1 ? { side: 'below', priceTicks: ticks } : undefined;
  }
  // left < 0: p ≥ right ÷ left.
  if (right > 0) return { side: 'above', priceTicks: 0 };
  const t = right / left;
  const err = t * rel;
  const ticks = Math.ceil(t - err);
  if (ticks !== Math.ceil(t + err) || !Number.isSafeInteger(ticks)) return null;
  return { side: 'above', priceTicks: ticks };
}

function add(a: Ratio, b: Ratio): Ratio {
  return a.den === b.den
    ? { num: a.num + b.num, den: a.den }
    : { num: a.num * b.den + b.num * a.den, den: a.den * b.den };
}

function sub(a: Ratio, b: Ratio): Ratio {
  return add(a, { num: -b.num, den: b.den });
}

function mul(a: Ratio, k: bigint | number): Ratio {
  return { num: a.num * BigInt(k), den: a.den };
}

function div(a: Ratio, k: bigint): Ratio {
  return { num: a.num, den: a.den * k };
}

function min(a: Ratio, b: Ratio): Ratio {
  return atLeast(a, b) ? b : a;
}

/** floor(value ÷ price) in units of the priced coin, capped at the safe range. */
function toUnits(value: Ratio, price: Ratio): Units {
  if (price.num <= 0n) return 0;
  const units = (value.num * price.den) / (value.den * price.num);
  return units > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(units);
}
