/**
 * @module engine/exact-range — the one rule every credit from outside the venue keeps (issue 29
 * §5): the venue's net holdings of a coin — deposits credited (operator credits, chain deposits,
 * the demo faucet) less settled withdrawals, plus what the operator put into the lending pool —
 * stay within the exact range of a double (2^53 − 1 units). Every balance, every debt (lent out
 * of those holdings) and every sum of them then stays exact. A credit that would leave the range
 * is refused with VALUE_OUT_OF_RANGE and changes nothing. Nothing else creates money: fills, fees,
 * loans, interest, insurance and liquidations move what is already held.
 */
import type { CoinUnits } from '../domain/money.ts';
import { refused } from './command-context.ts';
import type { ApplyResult } from './results.ts';

/** The venue's net holdings of a coin from outside, by source (the engine wires both). */
export interface OutsideHoldings {
  /** Deposits credited less settled withdrawals (funds). */
  funds(coin: string): bigint;
  /** What the operator put into the lending pool (margin). */
  pool(coin: string): bigint;
}

/** The VALUE_OUT_OF_RANGE refusal when crediting `amount` of `coin` from outside would leave the range. */
export function outsideCreditRefusal(
  held: OutsideHoldings,
  coin: string,
  amount: CoinUnits,
): ApplyResult | undefined {
  if (held.funds(coin) + held.pool(coin) + BigInt(amount) <= BigInt(Number.MAX_SAFE_INTEGER))
    return undefined;
  return refused('VALUE_OUT_OF_RANGE', `the venue's ${coin} holdings would leave the exact range`);
}
