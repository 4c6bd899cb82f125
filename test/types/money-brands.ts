/**
 * @module money-brands — compile-time proof that the money quantities do not mix (issue 14).
 *
 * Not run: `tsc` (npm run typecheck) checks it. Every `@ts-expect-error` line must fail to compile,
 * or tsc reports the directive as unused; the lines without one must compile.
 */
import type { CoinUnits, Lots, PriceTicks } from '../../src/domain/money.ts';
import type { MarketSpec } from '../../src/domain/specs.ts';
import type { LedgerCoin } from '../../src/engine/funds.ts';
import type { Ledger, LedgerAccount } from '../../src/engine/ledger.ts';
import { Order } from '../../src/engine/order-book.ts';
import type { MarketState } from '../../src/engine/registry.ts';
import type { Settlement } from '../../src/engine/settlement.ts';

declare const units: CoinUnits;
declare const ticks: PriceTicks;
declare const lots: Lots;
declare const market: MarketSpec;
declare const order: Order;
declare const ledger: Ledger;
declare const account: LedgerAccount;
declare const coin: LedgerCoin;
declare const settlement: Settlement;
declare const marketState: MarketState;

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

export function mixInLedger(): void {
  ledger.change(account, coin, units, -units, 'buy', '1');
  // @ts-expect-error the ledger moves coin units, not lots
  ledger.change(account, coin, lots, 0, 'buy', '1');
  // @ts-expect-error nor price ticks
  ledger.changeDebt(account, coin, ticks, 0);
  // @ts-expect-error a fill is at a price in ticks for an amount in lots, not the other way round
  settlement.fill(marketState, order, account, order, account, lots, ticks);
  settlement.fill(marketState, order, account, order, account, ticks, lots);
}
