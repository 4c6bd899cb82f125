/**
 * @module order-input — turns an order's decimal text into engine integers with the market's
 * scales, refusing (never rounding) text with more decimals than the scale allows.
 */
import { parseDecimal, type Lots, type PriceTicks } from './money.ts';
import type { ResultName } from './result-codes.ts';
import type { MarketSpec } from './specs.ts';

export type ParsedOrderNumbers =
  | { readonly ok: true; readonly price: PriceTicks; readonly amount: Lots }
  | { readonly ok: false; readonly result: ResultName; readonly message: string };

/**
 * Parses price and amount text for `market`. Results on failure: INVALID_PRICE (not a plain
 * positive decimal, or more than priceScale decimals), INVALID_AMOUNT (likewise for amountScale).
 */
export function parseOrderNumbers(
  market: MarketSpec,
  priceText: string,
  amountText: string,
): ParsedOrderNumbers {
  const price = parseDecimal(priceText, market.priceScale);
  if (price === undefined || price <= 0) {
    return {
      ok: false,
      result: 'INVALID_PRICE',
      message: `price '${priceText}' must be a positive decimal with at most ${market.priceScale} decimals for ${market.name}`,
    };
  }
  const amount = parseDecimal(amountText, market.amountScale);
  if (amount === undefined || amount <= 0) {
    return {
      ok: false,
      result: 'INVALID_AMOUNT',
      message: `amount '${amountText}' must be a positive decimal with at most ${market.amountScale} decimals for ${market.name}`,
    };
  }
  return { ok: true, price, amount };
}
