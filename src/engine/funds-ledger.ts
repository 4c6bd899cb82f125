/** @module funds-ledger — the spot side of the ledger as funds, the demo and sub-accounts see it: users, coins and bills. */
import type { FundsLedger } from './funds.ts';
import type { Ledger } from './ledger.ts';
import type { Registry, User } from './registry.ts';

/**
 * Funds and the demo move spot balances only. A user counts as frozen when it or its main user is
 * (Registry.isFrozen). `poolFunded` is the margin side's pool funding per coin; `hasMarket` is for
 * the demo's replay record.
 */
export function spotFundsLedger(
  registry: Registry,
  ledger: Ledger,
  poolFunded: (coin: string) => number,
): FundsLedger & { hasMarket(name: string): boolean } {
  return {
    hasUser: (userId) => registry.hasUser(userId),
    hasMarket: (name) => registry.market(name) !== undefined,
    isFrozen: (userId) => {
      const user = registry.user(userId);
      return user !== undefined && registry.isFrozen(user);
    },
    coin: (name) => registry.coin(name),
    available: (userId, coin) => registry.user(userId)?.spot.available(coin.index) ?? 0,
    change: (userId, coin, deltaAvailable, deltaFrozen, bill, ref) =>
      ledger.change((registry.user(userId) as User).spot, coin, deltaAvailable, deltaFrozen, bill, ref),
    addFeeIncome: (coin, amount) => ledger.addFeeIncome(coin, amount),
    poolFunded: (coin) => BigInt(poolFunded(coin)),
  };
}
