/**
 * @module engine/invariants — the whole engine's invariants, checked over its modules (the parts
 * of a snapshot): the books and order lists (`Matching.assertInvariants`); every account of the
 * ledger (`Ledger.assertInvariants`: no negative or unsafe balance, frozen equal to what the
 * account's open orders, pending withdrawals and lending offers hold, and per coin
 * Σ (available + frozen) + system accounts = credits − settled withdrawals + pool funding); the
 * operator's books of every coin over every kind of account (src/engine/books.ts: the same sum as
 * the solvency view adds it, and the insurance fund = interest share + liquidation fees − cover);
 * and the margin, risk, funds, demo and sub-account states' own rules. Throws on the first broken one.
 */
import type { CoinUnits } from '../domain/money.ts';
import { coinBooks } from './books.ts';
import type { LedgerAccount } from './ledger.ts';
import type { CoinState } from './registry.ts';
import type { SnapshotParts } from './snapshot.ts';

export function assertEngineInvariants(p: Omit<SnapshotParts, 'lastSeq' | 'settings'>): void {
  const registry = p.registry;
  const n = registry.coinCount;
  const holds = new Map<LedgerAccount, CoinUnits[]>();
  const hold = (account: LedgerAccount, coin: number, units: CoinUnits): void => {
    let xs = holds.get(account);
    if (xs === undefined) holds.set(account, (xs = new Array<CoinUnits>(n).fill(0)));
    xs[coin] = (xs[coin] ?? 0) + units;
  };
  p.matching.assertInvariants(hold);
  p.funds.forEachHold((userId, coin, units) => {
    const user = registry.user(userId);
    if (user === undefined) throw new Error(`funds hold of unknown user ${userId}`);
    hold(user.spot, (registry.coin(coin) as CoinState).index, units);
  });
  p.margin.forEachOfferHold((lender, coin, units) => {
    if (lender.kind === 'spot') hold(registry.user(lender.userId)?.spot as LedgerAccount, coin.index, units);
  });
  p.ledger.assertInvariants(
    registry.coinStates(),
    (account) => holds.get(account),
    (coin) =>
      p.funds.credited(coin.spec.name) -
      p.funds.withdrawn(coin.spec.name) +
      BigInt(p.margin.poolFunded(coin.spec.name)),
  );
  // The operator's books (src/engine/books.ts) over every kind of account: conservation again as
  // they add it up, and the insurance fund equal to its income less its cover.
  for (const coin of registry.coinStates()) {
    const b = coinBooks(p, coin);
    // (The lending pool's identity, `poolImbalance`, is not among them: a snapshot may hold a pool
    // balance from before pool funding was counted; the differential run checks it instead.)
    if (b.imbalance !== 0n || b.insuranceImbalance !== 0n)
      throw new Error(
        `books of ${coin.spec.name} out of balance: held ${b.held}, in − out ${b.held + b.imbalance}, ` +
          `insurance off by ${b.insuranceImbalance}`,
      );
  }
  p.margin.assertInvariants();
  p.risk.assertInvariants();
  p.funds.assertInvariants();
  p.demo.assertInvariants();
  p.subAccounts.assertInvariants();
}
