/**
 * `/admin/solvency` with margin in use (issue 29, item 6): the lending pool lends, users lend
 * through offers, two isolated longs are liquidated (one cleanly, its fee to the insurance fund;
 * one through a crash, the fund's cover and then bad debt), of the kind of
 * test/scenarios/liquidation-bad-debt.scenario. At every step the books count every kind of
 * account and balance to the unit: deposited − withdrawn + pool funded = Σ holdings, with the loans
 * outstanding, the bad debt and the insurance fund's movements shown. On the default venue's mark
 * (issue 29's depth rule): the slide and the crash are trades worth a mark window each.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { BUY, SELL, type Command } from '../../domain/commands.ts';
import { parseDecimal } from '../../domain/money.ts';
import { limitOrder as order } from '../../../test/fixtures/engine-driver.ts';
import { callRoute } from '../../../test/fixtures/liquidation-venue.ts';
import { TestVenue } from '../../../test/fixtures/signed-venue.ts';
import { viewsRoutes } from './views-routes.ts';

const USDT = 1_000_000;

type Row = Record<string, unknown>;

async function usdtRow(venue: TestVenue): Promise<Row> {
  const routes = viewsRoutes({ venue, walletHoldings: () => 0n });
  const body = await callRoute(routes, '/admin/solvency', [['coin', 'usdt']]);
  assert.equal(body.code, 1000);
  return (body.coins as Row[])[0] as Row;
}

/**
 * What the users' margin accounts hold of usdt, summed from the accounts' own views (not from the
 * ledger's sums the books use), and the debts they show.
 */
function marginFromViews(venue: TestVenue): { held: bigint; owed: bigint } {
  let held = 0n;
  let owed = 0n;
  for (const userId of venue.engine.userIds())
    for (const a of venue.engine.margin.accountsOf(userId))
      for (const c of a.coins)
        if (c.coin === 'usdt') {
          held += BigInt(c.available + c.frozen);
          owed += BigInt(c.borrowed + c.interest);
        }
  return { held, owed };
}

const units = (text: unknown): bigint => {
  const n = parseDecimal(String(text).replace(/^-/, ''), 6);
  if (n === undefined) throw new Error(`not an amount: ${String(text)}`);
  return String(text).startsWith('-') ? -BigInt(n) : BigInt(n);
};

/** The identity the books must satisfy, to the unit, and the margin figures against the accounts. */
function assertBalanced(venue: TestVenue, row: Row): void {
  const sum = [
    'usersAvailable',
    'usersFrozen',
    'marginAvailable',
    'marginFrozen',
    'lendingPoolAvailable',
    'lendingPoolFrozen',
    'insurance',
    'feeIncome',
  ].reduce((a, k) => a + units(row[k]), 0n);
  assert.equal(sum, units(row.books), 'books = the sum of every kind of account');
  assert.equal(
    units(row.deposited) - units(row.withdrawn) + units(row.poolFunded),
    units(row.books),
    'deposited − withdrawn + pool funded = books',
  );
  assert.equal(row.imbalance, '0');
  assert.equal(row.insuranceImbalance, '0');
  assert.equal(row.poolImbalance, '0', 'pool funded + its interest − its bad debt = held + lent out');
  const lost = (who: unknown): bigint => units((who as Row).principal) + units((who as Row).interest);
  assert.equal(lost(row.badDebtPool) + lost(row.badDebtUsers), units(row.badDebt), 'bad debt by lender');
  assert.equal(
    units(row.insurance),
    units((row.insuranceIn as Row).interestShare) +
      units((row.insuranceIn as Row).liquidationFees) -
      units(row.insuranceOut),
  );
  const fromViews = marginFromViews(venue);
  assert.equal(units(row.marginAvailable) + units(row.marginFrozen), fromViews.held);
  assert.equal(units((row.loans as Row).total), fromViews.owed, 'loans outstanding = what the accounts owe');
}

describe('solvency with margin, the lending pool, insurance and bad debt', () => {
  test('the books balance to the unit at every step, with the loans and bad debt shown', async () => {
    const venue = new TestVenue();
    const must = (c: Command): Promise<unknown> => venue.must(c);
    await must({
      type: 'FundLendingPool',
      fundingId: 'pool-1',
      coin: 'usdt',
      amount: 3000 * USDT,
      dailyRatePpm: 500,
      days: 10,
    });
    const frank = await venue.fund('frank', 'usdt', '1000');
    const alice = await venue.fund('alice', 'usdt', '1000');
    const dave = await venue.fund('dave', 'usdt', '2000');
    const erin = await venue.fund('erin', 'usdt', '2000');
    const bob = await venue.fund('bob', 'btc', '5');
    await venue.fund('bob', 'usdt', '1000000');
    const carol = await venue.fund('carol', 'btc', '50');
    const isolatedUsdt = { acctType: 1, market: 'btc_usdt', coin: 'usdt' } as const;
    const borrow = (userId: number): Promise<unknown> =>
      must({ type: 'Borrow', userId, ...isolatedUsdt, amount: 3000 * USDT, rollOver: false } as Command);
    await must({
      type: 'MarginTransfer',
      userId: frank,
      direction: 'in',
      ...isolatedUsdt,
      amount: 1000 * USDT,
    });
    await borrow(frank);

    // The pool lent all it had to frank: its 3000 are his now, owed back with the first hour's interest.
    let row = await usdtRow(venue);
    assertBalanced(venue, row);
    assert.equal(row.books, '1009000');
    assert.equal(row.deposited, '1006000');
    assert.equal(row.poolFunded, '3000');
    assert.equal(row.isolatedAvailable, '4000');
    assert.equal(row.marginAvailable, '4000');
    assert.equal(row.lendingPoolAvailable, '0');
    assert.equal(row.lendingPoolFrozen, '0');
    assert.deepEqual(row.loans, {
      pool: { principal: '3000', interest: '0.0625' },
      users: { principal: '0', interest: '0' },
      total: '3000.0625',
    });

    for (const [lender, rate] of [
      [dave, 600],
      [erin, 700],
    ] as const)
      await must({
        type: 'PlaceLoanOffer',
        userId: lender,
        coin: 'usdt',
        amount: 2000 * USDT,
        dailyRatePpm: rate,
        days: 10,
      } as Command);
    await must({
      type: 'MarginTransfer',
      userId: alice,
      direction: 'in',
      ...isolatedUsdt,
      amount: 1000 * USDT,
    });
    await borrow(alice);
    row = await usdtRow(venue);
    assertBalanced(venue, row);
    // Erin's unlent 1000 are frozen in her spot account (on offer).
    assert.equal(row.usersFrozen, '1000');
    assert.deepEqual(row.loans, {
      pool: { principal: '3000', interest: '0.0625' },
      users: { principal: '3000', interest: '0.079166' },
      total: '6000.141666',
    });

    // Both longs open at 30,000 (the first trade: the mark): frank's 0.13 btc as in
    // liquidation-slow-slide.scenario, alice's 0.12 (400 usdt and 0.11976 btc left, her line
    // (1.08 × 3000.079166 − 400) ÷ 0.11976 ≈ 23,715, below frank's 24,202.77).
    await must(order(bob, SELL, 3_000_000, 2500));
    await must(order(frank, BUY, 3_000_000, 1300, { acctType: 1 }));
    await must(order(alice, BUY, 3_000_000, 1200, { acctType: 1 }));

    // Frank's long, liquidated cleanly at 24,100: the pool is repaid, the fee goes to the fund. The
    // market slides there in one sell into bids of 0.5 btc (a mark window each) at most 1 % apart,
    // so the mark follows every trade; frank's 0.1297 btc go to the bid at 24,000.
    const b1 = (await venue.must(order(bob, BUY, 2_400_000, 2000))) as { orderId: number };
    const ladder = [
      ...Array.from({ length: 21 }, (_, i) => 2_975_000 - 25_000 * i),
      2_451_000,
      2_430_000,
      2_410_000,
    ];
    for (const price of ladder) await must(order(bob, BUY, price, 5000));
    await must(order(carol, SELL, 2_410_000, 5000 * ladder.length, { kind: 'ioc' }));
    await must({
      type: 'CancelOrder',
      userId: bob,
      market: 'btc_usdt',
      orderId: b1.orderId,
      clientOrderId: '',
    });
    assert.equal(venue.engine.liquidations().length, 1, 'frank only: alice is above her line');
    row = await usdtRow(venue);
    assertBalanced(venue, row);
    assert.equal(row.insurance, '30.006875');
    assert.equal(row.badDebt, '0');
    assert.equal((row.loans as Row).total, '3000.079166');
    // The pool has its 3000 back with the interest less the venue's share.
    assert.equal(row.lendingPoolFrozen, '3000');

    // The crash: 38 trades of 1 btc at 16,000 in one sell; each counts at the mark's 1 % edge, so
    // the mark steps down 1 % a trade to 16,428.42. The only bid in the band (down to 15,935.57) is
    // 15,950: alice's 0.1197 btc fetch 1,909.215; with her 400 she repays 2,309.215 (the interest,
    // erin's 1,000, then 1,309.135834 of dave's 2,000). The fund pays its 30.006875 to dave's record
    // and 660.857291 is bad debt.
    await must(order(bob, BUY, 1_595_000, 2000));
    for (let i = 0; i < 38; i++) await must(order(bob, BUY, 1_600_000, 10_000));
    await must(order(carol, SELL, 1_600_000, 380_000, { kind: 'ioc' }));
    const [, second] = venue.engine.liquidations();
    assert.equal(second?.status, 'done');
    row = await usdtRow(venue);
    assertBalanced(venue, row);
    assert.equal(row.books, '1009000');
    assert.equal(row.badDebt, '660.857291');
    // All of it against dave's and erin's offers; the pool, repaid by frank's liquidation, lost nothing.
    assert.deepEqual(row.badDebtPool, { principal: '0', interest: '0' });
    assert.deepEqual(row.badDebtUsers, { principal: '660.857291', interest: '0' });
    assert.equal(row.insurance, '0.007916');
    assert.deepEqual(row.insuranceIn, { interestShare: '0.014166', liquidationFees: '30.000625' });
    assert.equal(row.insuranceOut, '30.006875');
    assert.deepEqual(row.loans, {
      pool: { principal: '0', interest: '0' },
      users: { principal: '0', interest: '0' },
      total: '0',
    });
    assert.equal(row.wallet, '0');
    assert.equal(row.difference, '-1009000');
  });
});
