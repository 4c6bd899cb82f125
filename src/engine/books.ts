/**
 * @module books — the operator's books of one coin (issue 29, item 6): what every kind of account
 * holds (spot, isolated, cross, the lending pool, the insurance fund, fee income), what was put in
 * and taken out (deposits and credits, settled withdrawals, the operator's pool funding), the loans
 * outstanding between the accounts (by lender: the pool or users' offers), the bad debt written off
 * and the insurance fund's movements.
 *
 * Two identities hold to the unit at every command (the engine's invariants check the first; the
 * second is a consequence of the movement rules of loans.ts and liquidation.ts):
 * - **Conservation**: deposited − withdrawn + pool funded = Σ available + frozen over every account
 *   of every kind (`held`). A loan moves coins from a lender to a borrower, so it changes no sum;
 *   what a borrower owes is a claim beside the coins, shown under `loans`. `imbalance` is
 *   (deposited − withdrawn + pool funded) − held, zero unless the ledger is broken.
 * - **Insurance**: the fund's balance = its interest share + liquidation fees − its cover of
 *   shortfalls (`insuranceImbalance`, zero likewise).
 * - **The lending pool**: pool funded + interest it received − principal written off against it
 *   = what it holds + the principal it has lent out (`poolImbalance`, zero likewise).
 * Bad debt is what liquidations wrote off against the lenders: it moves no coin (the lender simply
 * never gets it back), so it appears as a loss of the lenders' claims, never as a hole in `held`.
 */
import type { CoinState } from './registry.ts';
import { FEE_INCOME, INSURANCE, LENDING_POOL } from './ledger.ts';
import type { SnapshotParts } from './snapshot.ts';

/** Σ available and Σ frozen over accounts of one kind. */
export interface Held {
  readonly available: bigint;
  readonly frozen: bigint;
}

/** Loans outstanding: principal and interest charged but not paid. */
export interface Owed {
  readonly principal: bigint;
  readonly interest: bigint;
}

/** One coin's books. Every amount in the coin's units. */
export interface CoinBooks {
  readonly coin: string;
  readonly spot: Held;
  readonly isolated: Held;
  readonly cross: Held;
  readonly lendingPool: Held;
  readonly insurance: Held;
  readonly feeIncome: bigint;
  /** Σ available + frozen over every account above. */
  readonly held: bigint;
  /** Deposits credited and operator credits, lifetime. */
  readonly deposited: bigint;
  /** Withdrawals settled (sent and not failed), lifetime. */
  readonly withdrawn: bigint;
  /** What the operator put into the lending pool (`bourse lending fund`), lifetime. */
  readonly poolFunded: bigint;
  /** (deposited − withdrawn + poolFunded) − held: zero. */
  readonly imbalance: bigint;
  /** Open loans from the lending pool and from users' offers. */
  readonly loansFromPool: Owed;
  readonly loansFromUsers: Owed;
  /** Written off against the lenders by liquidations (principal and interest), lifetime. */
  readonly badDebt: bigint;
  /** Of it, what the lending pool's records and users' records lost (see LoanBook's lenderTotals). */
  readonly badDebtPool: Owed;
  readonly badDebtUsers: Owed;
  /** Interest the lending pool received (the venue's share excluded), lifetime. */
  readonly poolInterest: bigint;
  /**
   * (pool funded + pool interest − pool principal written off) − (pool's available + frozen + its
   * principal lent out): zero. What the operator put in, plus what it earned, less what bad debt
   * took, is in the pool or lent out.
   */
  readonly poolImbalance: bigint;
  /** The insurance fund's income: the venue's share of interest paid, and liquidation fees. */
  readonly insuranceInterestShare: bigint;
  readonly insuranceLiquidationFees: bigint;
  /** What the fund paid toward liquidations' shortfalls. */
  readonly insuranceCover: bigint;
  /** insurance available + frozen − (share + fees − cover): zero. */
  readonly insuranceImbalance: bigint;
}

/** What the books are read from: the engine's modules (src/engine/snapshot.ts names them). */
export type BooksSources = Pick<SnapshotParts, 'ledger' | 'funds' | 'margin' | 'risk'>;

const ZERO: Held = { available: 0n, frozen: 0n };

export function coinBooks(src: BooksSources, coin: CoinState): CoinBooks {
  const i = coin.index;
  const name = coin.spec.name;
  const sums = new Map<string, { available: bigint; frozen: bigint }>();
  for (const a of src.ledger.accounts()) {
    const kind = a.key.kind === 'system' ? a.key.name : a.key.kind;
    const s = sums.get(kind) ?? { available: 0n, frozen: 0n };
    s.available += BigInt(a.available(i));
    s.frozen += BigInt(a.frozen(i));
    sums.set(kind, s);
  }
  const of = (kind: string): Held => sums.get(kind) ?? ZERO;
  let held = 0n;
  for (const s of sums.values()) held += s.available + s.frozen;
  const pool = { principal: 0n, interest: 0n };
  const users = { principal: 0n, interest: 0n };
  for (const l of src.margin.openLoans()) {
    if (l.coin !== name) continue;
    const to = l.lender.kind === 'system' ? pool : users;
    to.principal += BigInt(l.principal);
    to.interest += BigInt(l.interestOwed);
  }
  let badDebt = 0n;
  let fees = 0n;
  let cover = 0n;
  for (const r of src.risk.liquidations())
    for (const c of r.coins)
      if (c.coin === name) {
        badDebt += BigInt(c.badDebt);
        fees += BigInt(c.fee);
        cover += BigInt(c.insurance);
      }
  const deposited = src.funds.credited(name);
  const withdrawn = src.funds.withdrawn(name);
  const poolFunded = BigInt(src.margin.poolFunded(name));
  const insurance = of(INSURANCE);
  const share = BigInt(src.margin.interestPaid(name).insurance);
  const lenders = src.margin.lenderTotals(name);
  const lost = (t: (typeof lenders)['pool']): Owed => ({
    principal: BigInt(t.principalWrittenOff),
    interest: BigInt(t.interestWrittenOff),
  });
  const lendingPool = of(LENDING_POOL);
  const poolInterest = BigInt(lenders.pool.interestReceived);
  return {
    coin: name,
    spot: of('spot'),
    isolated: of('isolated'),
    cross: of('cross'),
    lendingPool,
    insurance,
    feeIncome: of(FEE_INCOME).available + of(FEE_INCOME).frozen,
    held,
    deposited,
    withdrawn,
    poolFunded,
    imbalance: deposited - withdrawn + poolFunded - held,
    loansFromPool: pool,
    loansFromUsers: users,
    badDebt,
    badDebtPool: lost(lenders.pool),
    badDebtUsers: lost(lenders.users),
    poolInterest,
    poolImbalance:
      poolFunded +
      poolInterest -
      BigInt(lenders.pool.principalWrittenOff) -
      (lendingPool.available + lendingPool.frozen + pool.principal),
    insuranceInterestShare: share,
    insuranceLiquidationFees: fees,
    insuranceCover: cover,
    insuranceImbalance: insurance.available + insurance.frozen - (share + fees - cover),
  };
}
