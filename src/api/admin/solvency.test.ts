/**
 * `/admin/solvency` with margin in use (issue 29, item 6): the lending pool lends, users lend
 * through offers, two isolated longs are liquidated (one cleanly, its fee to the insurance fund;
 * one through a crash, the fund's cover and then bad debt), as in
 * test/scenarios/liquidation-bad-debt.scenario. At every step the books count every kind of
 * account and balance to the unit: deposited − withdrawn + pool funded = Σ holdings, with the loans
 * outstanding, the bad debt and the insurance fund's movements shown. The venue keeps issue 15's
 * median mark, as that scenario does: its crash is one lone trade (test/fixtures/median-venue.ts).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { BUY, SELL, type Command } from '../../domain/commands.ts';
import { parseDecimal } from '../../domain/money.ts';
import { limitOrder as order } from '../../../test/fixtures/engine-driver.ts';
import { callRoute } from '../../../test/fixtures/liquidation-venue.ts';
import { TestVenue } from '../../../test/fixtures/signed-venue.ts';
import { MEDIAN_MARK_VENUE } from '../../../test/fixtures/median-venue.ts';
import { viewsRoutes } from './views-routes.ts';

const USDT = 1_000_000;
const MINUTE = 60_000;

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
    const venue = new TestVenue(MEDIAN_MARK_VENUE);
    const must = (c: Command): Promise<unknown> => venue.must(c);
    const later = (ms: number): void => {
      venue.time += ms;
    };
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
    await venue.fund('bob', 'usdt', '100000');
    const carol = await venue.fund('carol', 'btc', '5');
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
    assert.equal(row.books, '109000');
    assert.equal(row.deposited, '106000');
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

    // Frank's long, liquidated cleanly at 24,100: the pool is repaid, the fee goes to the fund.
    await must(order(bob, SELL, 3_000_000, 1300));
    await must(order(frank, BUY, 3_000_000, 1300, { acctType: 1 }));
    const b1 = (await venue.must(order(bob, BUY, 2_400_000, 2000))) as { orderId: number };
    later(6 * MINUTE);
    await must(order(bob, BUY, 2_410_000, 100));
    await must(order(carol, SELL, 2_410_000, 100, { kind: 'ioc' }));
    await must({
      type: 'CancelOrder',
      userId: bob,
      market: 'btc_usdt',
      orderId: b1.orderId,
      clientOrderId: '',
    });
    row = await usdtRow(venue);
    assertBalanced(venue, row);
    assert.equal(row.insurance, '30.006875');
    assert.equal(row.badDebt, '0');
    assert.equal((row.loans as Row).total, '3000.079166');
    // The pool has its 3000 back with the interest less the venue's share.
    assert.equal(row.lendingPoolFrozen, '3000');

    // Alice's long and the crash: the fund pays 30.006875, 2370.597591 is bad debt.
    later(6 * MINUTE);
    // The market trades back at 30000 first: a margin buy 25 % above the mark (24000) would be
    // refused as over the order limit (issue 29, docs/margin.md); this one is at the mark.
    await must(order(carol, SELL, 3_000_000, 10));
    await must(order(bob, BUY, 3_000_000, 10));
    await must(order(bob, SELL, 3_000_000, 1300));
    await must(order(alice, BUY, 3_000_000, 1300, { acctType: 1 }));
    await must(order(bob, BUY, 385_100, 2000));
    later(6 * MINUTE);
    await must(order(bob, BUY, 397_000, 100));
    await must(order(carol, SELL, 397_000, 100, { kind: 'ioc' }));
    const [, second] = venue.engine.liquidations();
    assert.equal(second?.status, 'done');
    row = await usdtRow(venue);
    assertBalanced(venue, row);
    assert.equal(row.books, '109000');
    assert.equal(row.badDebt, '2370.597591');
    // All of it against dave's and erin's offers; the pool, repaid by frank's liquidation, lost nothing.
    assert.deepEqual(row.badDebtPool, { principal: '0', interest: '0' });
    assert.deepEqual(row.badDebtUsers, { principal: '2370.597591', interest: '0' });
    assert.equal(row.insurance, '0.007916');
    assert.deepEqual(row.insuranceIn, { interestShare: '0.014166', liquidationFees: '30.000625' });
    assert.equal(row.insuranceOut, '30.006875');
    assert.deepEqual(row.loans, {
      pool: { principal: '0', interest: '0' },
      users: { principal: '0', interest: '0' },
      total: '0',
    });
    assert.equal(row.wallet, '0');
    assert.equal(row.difference, '-109000');
  });
});
