/**
 * @module order-loss — issue 29's limit on margin orders priced far from the mark: what a margin
 * order can hand its counterparty at most, against the mark the limits read, and whether the
 * account may carry that loss.
 *
 * A fill at a price worse than the mark moves value out of the account just as a transfer does
 * (0.2 btc bought at 60,000 from an accomplice while the mark is 30,000 hands them 6,000 usdt of
 * the account's value). So an order's **worst-case loss** is counted as a transfer out:
 * - a buy of `lots` at `price`: (price − mark) × lots when price > mark, else 0;
 * - a sell: (mark − price) × lots when price < mark, else 0;
 * - in a market that has never traded (no mark): 0 — there is no price to be far from, and the
 *   market's first trade becomes its mark (src/margin/depth-mark.ts), so the account is valued at
 *   the price it traded at;
 * in tick·lots, × the market's quote units per tick·lot. With A and D the account's assets and
 * debt at the marks after the order's express borrow of value x (A + x, D + x), and L the losses
 * of the order and of the account's other resting orders (each at its market's mark, valued in
 * the account's valuation coin), the order is allowed while (A + x − L) × BP ≥ S × (D + x), S the
 * opening line; always without debt (no lender's money at stake). Exact: bigint and ratios.
 */
import { ratio, type Ratio, type Valuation } from './lines.ts';
import { BP, type MarginSettings } from './settings.ts';

/** The worst-case loss of an order against the mark, in quote units (see the module comment). */
export function orderLoss(
  buy: boolean,
  priceTicks: number,
  markTicks: number | undefined,
  lots: number,
  quoteUnitsPerTickLot: number,
): bigint {
  if (markTicks === undefined) return 0n;
  const gap = buy ? priceTicks - markTicks : markTicks - priceTicks;
  return gap > 0 ? BigInt(gap) * BigInt(lots) * BigInt(quoteUnitsPerTickLot) : 0n;
}

/**
 * Whether an account valued `v` at the marks, after borrowing the value `borrowed`, stays at or
 * above its opening line having lost `loss` (both in its valuation coin); true without debt.
 */
export function carriesLoss(v: Valuation, s: MarginSettings, borrowed: Ratio, loss: Ratio): boolean {
  const assets = sum(v.assets, borrowed);
  const debt = sum(v.debt, borrowed);
  if (debt.num === 0n) return true;
  const left = sum(assets, { num: -loss.num, den: loss.den });
  // left × BP ≥ S × debt, cross-multiplied (dens are positive).
  return left.num * BigInt(BP) * debt.den >= debt.num * BigInt(s.startLineBp) * left.den;
}

/** `units` of a coin valued at `price` (valuation coin per unit): a loss, or a borrow. */
export function unitsValue(units: bigint, price: Ratio): Ratio {
  return units === 0n ? ratio(0) : { num: units * price.num, den: price.den };
}

export function sum(a: Ratio, b: Ratio): Ratio {
  return a.den === b.den
    ? { num: a.num + b.num, den: a.den }
    : { num: a.num * b.den + b.num * a.den, den: a.den * b.den };
}
