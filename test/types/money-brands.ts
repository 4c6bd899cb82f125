/**
 * @module money-brands — compile-time proof that the money quantities do not mix (issue 14).
 *
 * Not run: `tsc` (npm run typecheck) checks it. Every `@ts-expect-error` line must fail to compile,
 * or tsc reports the directive as unused; the lines without one must compile.
 */
import type { CoinUnits, Lots, PriceTicks } from '../../src/domain/money.ts';
import type { MarketSpec } from '../../src/domain/specs.ts';
import { Order } from '../../src/engine/order-book.ts';

declare const units: CoinUnits;
declare const ticks: PriceTicks;
declare const lots: Lots;
declare const market: MarketSpec;
declare const order: Order;

// A plain number (a literal, what the API edge parsed, an arithmetic result) is any quantity.
export const fromLiteral: PriceTicks = 3_000_000;
export const fromArithmetic: CoinUnits = ticks * lots * 100;
export const same: Lots = lots;

// @ts-expect-error lots are not price ticks
export const lotsAsTicks: PriceTicks = lots;
// @ts-expect-error price ticks are not lots
export const ticksAsLots: Lots = ticks;
// @ts-expect-error coin units are not lots
export const unitsAsLots: Lots = units;
// @ts-expect-error lots are not coin units
export const lotsAsUnits: CoinUnits = lots;
// @ts-expect-error price ticks are not coin units
export const ticksAsUnits: CoinUnits = ticks;
// @ts-expect-error coin units are not price ticks
export const unitsAsTicks: PriceTicks = units;

// The domain's fields carry their quantity: a market's minimum total is coin units, not lots.
// @ts-expect-error minSize (coin units) compared as a minimum amount (lots)
export const minAmountFromSize: Lots = market.minSize;
export const minAmount: Lots = market.minAmount;

export function mixInOrder(): void {
  // @ts-expect-error an order's frozen coin units are not its remaining lots
  order.remaining = order.frozen;
  // @ts-expect-error an order's price is not its amount
  order.amount = order.price;
  order.filled = order.amount - order.remaining;
}
