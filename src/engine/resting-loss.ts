/**
 * @module engine/resting-loss — what a margin account's resting orders could hand their
 * counterparties beyond the mark (issue 29), for every limit that values the account.
 *
 * An order placed while the account owed nothing is not held at placement (only its owner's money
 * was at stake), and may rest far from the mark. Once the account borrows, its fill would move
 * the lender's money out just as a transfer does. So every limit — the borrowing limit, an
 * order's express borrow, the transfer-out limit and the limits the answers show — counts the
 * account's resting orders' worst-case loss against the mark (src/margin/order-loss.ts
 * `orderLoss`, the function the order-loss check counts them with) as already gone: it values the
 * account's assets at A − L (`lessRestingLoss`).
 *
 * Cost: nothing when the account holds nothing frozen (no order rests in it: a margin account
 * freezes only for its orders); else one pass over its owner's resting orders — never another
 * user's, nor the books.
 */
import { BUY } from '../domain/commands.ts';
import { ratio, reduced, type Ratio, type Valuation } from '../margin/lines.ts';
import { orderLoss, sum, unitsValue } from '../margin/order-loss.ts';
import type { LedgerAccount } from './ledger.ts';
import type { LimitPrices, ValuedIn } from './limit-prices.ts';
import type { CoinState, MarketState, Registry, User } from './registry.ts';

/** The resting orders' loss could not be valued (a quote coin without a price on its path). */
export const UNVALUED = 'unvalued';

/**
 * Σ over the resting orders held in `account` of their worst-case loss at the marks `prices`
 * reads, in the account's valuation coin (`valuedIn`: the isolated market, or undefined for
 * cross); `UNVALUED` when a loss cannot be valued.
 */
export function restingLoss(
  prices: LimitPrices,
  registry: Registry,
  user: User,
  account: LedgerAccount,
  valuedIn: ValuedIn,
): Ratio | typeof UNVALUED {
  const coins: readonly CoinState[] =
    valuedIn !== undefined ? [valuedIn.base, valuedIn.quote] : registry.coinStates();
  let frozen = false;
  for (const c of coins)
    if (account.frozen(c.index) > 0) {
      frozen = true;
      break;
    }
  if (!frozen) return ratio(0);
  let loss = ratio(0);
  for (const o of user.openOrders) {
    if (o.marginAccount !== account) continue;
    const m = registry.market(o.market) as MarketState;
    const units = orderLoss(o.side === BUY, o.price, prices.mark(m), o.remaining, m.quoteUnitsPerTickLot);
    if (units === 0n) continue;
    const p = prices.price(valuedIn, m.quote);
    if (p === undefined) return UNVALUED;
    loss = sum(loss, unitsValue(units, p));
  }
  return reduced(loss);
}

/**
 * The valuation the limits read: `v` with its assets less the resting orders' `loss`, never below
 * 0 (a Ratio is non-negative; either way nothing can be borrowed). A loss that cannot be valued
 * leaves no assets (nothing can be borrowed, nor anything transferred out while a debt is owed).
 */
export function lessRestingLoss(v: Valuation, loss: Ratio | typeof UNVALUED): Valuation {
  if (loss === UNVALUED) return { assets: ratio(0), debt: v.debt };
  if (loss.num === 0n) return v;
  const left = sum(v.assets, { num: -loss.num, den: loss.den });
  return { assets: left.num <= 0n ? ratio(0) : reduced(left), debt: v.debt };
}
