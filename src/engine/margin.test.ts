import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CheckedDriver, EngineDriver, limitOrder } from '../../test/fixtures/engine-driver.ts';
import { BUY, SELL, type Command } from '../domain/commands.ts';
import { HOUR_MS, DAY_MS } from '../margin/movement.ts';
import { LOAN_STATUS } from '../margin/loans.ts';
import { Engine, type ApplyResult } from './engine.ts';
import { SNAPSHOT_VERSION_MARGIN } from './snapshot.ts';

const USDT = 1_000_000; // units of one usdt
const BTC = 100_000_000; // units of one btc

/** A driver that checks every invariant after every command. */
class Checked extends CheckedDriver {
  /** Applies `cmd` at exactly `time`. */
  at(time: number, cmd: Command): ApplyResult {
    this.time = time - 1;
    return this.apply(cmd);
  }
}

const transferIn = (userId: number, coin: string, amount: number, acctType: 1 | 2 = 1): Command => ({
  type: 'MarginTransfer',
  userId,
  direction: 'in',
  acctType,
  market: acctType === 1 ? 'btc_usdt' : '',
  coin,
  amount,
});

const borrow = (userId: number, coin: string, amount: number, extra: Record<string, unknown> = {}): Command =>
  ({
    type: 'Borrow',
    userId,
    acctType: 1,
    market: 'btc_usdt',
    coin,
    amount,
    rollOver: false,
    ...extra,
  }) as Command;

const stateOf = (e: Engine): string => JSON.stringify({ ...e.snapshot(), lastSeq: 0 });

/** A venue whose pool lends 100,000 usdt and 10 btc at 0.05 %/day for 10 days; alice holds 2,000 usdt. */
function venue(): { d: Checked; alice: number; bob: number } {
  const d = new Checked();
  const alice = d.fund('alice', 'usdt', '2000');
  const bob = d.fund('bob', 'btc', '5');
  d.fund('bob', 'usdt', '100000');
  for (const [id, coin, amount] of [
    ['pool-1', 'usdt', 100_000 * USDT],
    ['pool-2', 'btc', 10 * BTC],
  ] as const) {
    const r = d.apply({ type: 'FundLendingPool', fundingId: id, coin, amount, dailyRatePpm: 500, days: 10 });
    assert.equal(r.result, 'OK', r.message);
  }
  return { d, alice, bob };
}

const isolatedOf = (d: EngineDriver, userId: number) => d.engine.margin.account(userId, 1, 'btc_usdt');
const coinOf = (d: EngineDriver, userId: number, coin: string) =>
  isolatedOf(d, userId)?.coins.find((c) => c.coin === coin);

describe('margin transfers', () => {
  test('in and out between spot and the isolated and cross accounts, out only above the opening line', () => {
    const { d, alice } = venue();
    assert.equal(d.apply(transferIn(alice, 'usdt', 1000 * USDT)).result, 'OK');
    assert.equal(d.apply(transferIn(alice, 'usdt', 500 * USDT, 2)).result, 'OK');
    assert.equal(d.engine.balance(alice, 'usdt')?.available, 500 * USDT);
    assert.equal(coinOf(d, alice, 'usdt')?.available, 1000 * USDT);
    assert.equal(d.engine.margin.account(alice, 2, '')?.coins[0]?.available, 500 * USDT);
    // Borrow 3,000: assets 4,000, debt 3,000; out keeps 4,000 − y ≥ 1.25 × 3,000, so at most 250 leaves.
    assert.equal(d.apply(borrow(alice, 'usdt', 3000 * USDT)).result, 'OK');
    const debt = 3000 * USDT + (coinOf(d, alice, 'usdt')?.interest ?? 0);
    const limit = Math.floor((4000 * USDT * 10_000 - debt * 12_500) / 10_000);
    assert.equal(coinOf(d, alice, 'usdt')?.transferOutLimit, limit);
    const out = (amount: number): Command => ({
      type: 'MarginTransfer',
      userId: alice,
      direction: 'out',
      acctType: 1,
      market: 'btc_usdt',
      coin: 'usdt',
      amount,
    });
    const before = stateOf(d.engine);
    const r = d.apply(out(limit + 1));
    assert.equal(r.result, 'OVER_TRANSFER_LIMIT');
    assert.match(r.message ?? '', /over the limit of 249\.\d+ usdt/);
    assert.equal(stateOf(d.engine), before, 'a refusal changes nothing');
    assert.equal(d.apply(out(limit)).result, 'OK');
    assert.equal(d.engine.balance(alice, 'usdt')?.available, 500 * USDT + limit);
  });

  test('bad transfers get their codes and change nothing', () => {
    const { d, alice } = venue();
    d.apply(transferIn(alice, 'usdt', 100 * USDT));
    const before = stateOf(d.engine);
    const cases: [Command, string][] = [
      [{ ...transferIn(alice, 'usdt', USDT), market: 'doge_usdt' } as Command, 'UNKNOWN_MARKET'],
      [transferIn(alice, 'eth', USDT), 'INVALID_PARAMETER'], // not a coin of btc_usdt
      [transferIn(alice, 'doge', USDT), 'UNKNOWN_COIN'],
      [transferIn(alice, 'usdt', 0), 'INVALID_AMOUNT'],
      [transferIn(alice, 'usdt', 5000 * USDT), 'INSUFFICIENT_BALANCE'],
      [{ ...transferIn(alice, 'usdt', USDT, 2), market: 'btc_usdt' } as Command, 'INVALID_PARAMETER'],
      [{ ...transferIn(alice, 'usdt', USDT), acctType: 3 } as unknown as Command, 'INVALID_PARAMETER'],
      [{ ...transferIn(alice, 'usdt', 101 * USDT), direction: 'out' } as Command, 'INSUFFICIENT_BALANCE'],
      [{ ...transferIn(99, 'usdt', USDT) } as Command, 'USER_NOT_FOUND'],
    ];
    for (const [cmd, result] of cases) {
      const r = d.apply(cmd);
      assert.equal(r.result, result, JSON.stringify(cmd));
      assert.deepEqual(r.events, []);
    }
    assert.equal(stateOf(d.engine), before);
  });
});

describe('a frozen user (issue 16)', () => {
  test('moves no money on margin: transfers, borrowing and offers are refused; repaying is not', () => {
    const { d, alice } = venue();
    d.apply(transferIn(alice, 'usdt', 1000 * USDT));
    d.apply(borrow(alice, 'usdt', 100 * USDT));
    assert.equal(d.apply({ type: 'SetUserStatus', userId: alice, status: 'frozen' } as Command).result, 'OK');
    const before = stateOf(d.engine);
    for (const cmd of [
      transferIn(alice, 'usdt', USDT),
      borrow(alice, 'usdt', 10 * USDT),
      {
        type: 'PlaceLoanOffer',
        userId: alice,
        coin: 'usdt',
        amount: 10 * USDT,
        dailyRatePpm: 500,
        days: 10,
        loop: false,
      },
    ] as Command[])
      assert.equal(d.apply(cmd).result, 'ACCOUNT_FROZEN');
    assert.equal(stateOf(d.engine), before);
    assert.equal(d.apply({ type: 'RepayLoan', userId: alice, loanId: 1, amount: 'all' }).result, 'OK');
  });
});

describe('lending and borrowing', () => {
  test('pool funding applies once per id; bad terms, rates and amounts are refused', () => {
    const { d } = venue();
    const fund = (over: Record<string, unknown>): ApplyResult =>
      d.apply({
        type: 'FundLendingPool',
        fundingId: 'pool-3',
        coin: 'usdt',
        amount: 10 * USDT,
        dailyRatePpm: 500,
        days: 10,
        ...over,
      } as Command);
    const before = stateOf(d.engine);
    assert.equal(fund({ fundingId: 'pool-1' }).duplicate, true);
    assert.equal(fund({ days: 15 }).result, 'INVALID_LOAN_TERM');
    assert.equal(fund({ dailyRatePpm: 2001 }).result, 'LOAN_RATE_OUT_OF_RANGE');
    assert.equal(fund({ dailyRatePpm: 499 }).result, 'LOAN_RATE_OUT_OF_RANGE');
    assert.equal(fund({ amount: 1 }).result, 'BELOW_MIN_LOAN');
    assert.equal(fund({ coin: 'doge' }).result, 'UNKNOWN_COIN');
    assert.equal(stateOf(d.engine), before);
    assert.equal(fund({}).result, 'OK');
    assert.equal(d.engine.margin.poolFunded('usdt'), 100_010 * USDT);
    assert.equal(d.engine.margin.openOffers('usdt').length, 2);
  });

  test('borrowing at the limit (4 × assets with the real venue lines) and beyond it', () => {
    const { d, alice } = venue();
    d.apply(transferIn(alice, 'usdt', 1000 * USDT));
    assert.equal(coinOf(d, alice, 'usdt')?.borrowLimit, 4000 * USDT);
    const before = stateOf(d.engine);
    const over = d.apply(borrow(alice, 'usdt', 4000 * USDT + 1));
    assert.equal(over.result, 'OVER_BORROW_LIMIT');
    assert.match(over.message ?? '', /over the limit of 4000$/);
    for (const [cmd, result] of [
      [borrow(alice, 'usdt', 100 * USDT, { days: 15 }), 'INVALID_LOAN_TERM'],
      [borrow(alice, 'usdt', 100 * USDT, { maxDailyRatePpm: 3000 }), 'LOAN_RATE_OUT_OF_RANGE'],
      [borrow(alice, 'usdt', 100 * USDT, { market: 'doge_usdt' }), 'UNKNOWN_MARKET'],
      [borrow(alice, 'usdt', 100 * USDT, { days: 20 }), 'LENDING_SHORT'], // the pool lends for 10 days
    ] as const)
      assert.equal(d.apply(cmd).result, result);
    assert.equal(stateOf(d.engine), before);
    const r = d.apply(borrow(alice, 'usdt', 4000 * USDT));
    assert.equal(r.result, 'OK');
    const a = coinOf(d, alice, 'usdt');
    assert.equal(a?.available, 5000 * USDT);
    assert.equal(a?.borrowed, 4000 * USDT);
    // The first hour is charged at once: 4,000 × 0.05 % ÷ 24 = 0.083333 usdt (floor).
    assert.equal(a?.interest, 83_333);
    assert.equal(a?.borrowLimit, 0);
    const [loan] = d.loansOf(alice, 1, 'btc_usdt');
    assert.equal(loan?.lender.kind, 'system');
    assert.equal(loan?.principal, 4000 * USDT);
  });

  test('a user lends, a borrower takes the cheapest offer first, repays in parts, interest first', () => {
    const { d, alice, bob } = venue();
    const offer = d.apply({
      type: 'PlaceLoanOffer',
      userId: bob,
      coin: 'usdt',
      amount: 1000 * USDT,
      dailyRatePpm: 500,
      days: 10,
      loop: false,
    });
    assert.equal(offer.result, 'OK');
    assert.equal(d.engine.balance(bob, 'usdt')?.frozen, 1000 * USDT, 'the offer is frozen in spot');
    d.apply(transferIn(alice, 'usdt', 1000 * USDT));
    // Same rate as the pool: the older offer (the pool's) goes first.
    d.apply(borrow(alice, 'usdt', 100 * USDT));
    assert.equal(d.loansOf(alice, 1, 'btc_usdt')[0]?.lender.kind, 'system');
    // Bob's cheaper offer goes first.
    d.apply({ type: 'CancelLoanOffer', userId: bob, offerId: offer.offerId as number });
    d.apply({
      type: 'PlaceLoanOffer',
      userId: bob,
      coin: 'usdt',
      amount: 1000 * USDT,
      dailyRatePpm: 500,
      days: 10,
      loop: false,
    });
    const cheap = d.apply({
      type: 'PlaceLoanOffer',
      userId: bob,
      coin: 'usdt',
      amount: 240 * USDT,
      dailyRatePpm: 600,
      days: 10,
      loop: false,
    });
    assert.equal(cheap.result, 'OK');
    const r = d.apply(borrow(alice, 'usdt', 1000 * USDT, { maxDailyRatePpm: 500 }));
    assert.equal(r.result, 'OK');
    const loans = d.loansOf(alice, 1, 'btc_usdt');
    assert.equal(loans.length, 2);
    const [mine] = loans;
    assert.ok(mine !== undefined);
    // Repay in parts: first less than the interest, then some principal, then all.
    const interest = mine.interestOwed;
    assert.ok(interest > 1);
    const repay = (amount: number | 'all'): ApplyResult =>
      d.apply({ type: 'RepayLoan', userId: alice, loanId: mine.id, amount });
    const before = stateOf(d.engine);
    assert.equal(repay(mine.principal + interest + 1).result, 'REPAY_OVER_OWED');
    assert.equal(repay(0).result, 'INVALID_AMOUNT');
    assert.equal(
      d.apply({ type: 'RepayLoan', userId: bob, loanId: mine.id, amount: 1 }).result,
      'LOAN_NOT_FOUND',
    );
    assert.equal(stateOf(d.engine), before);
    assert.equal(repay(1).result, 'OK');
    assert.equal(d.loan(mine.id)?.interestOwed, interest - 1);
    assert.equal(d.loan(mine.id)?.principal, mine.amount);
    assert.equal(repay(interest - 1 + 10 * USDT).result, 'OK');
    assert.equal(d.loan(mine.id)?.principal, mine.amount - 10 * USDT);
    assert.equal(repay('all').result, 'OK');
    assert.equal(d.loan(mine.id)?.status, LOAN_STATUS.REPAID);
    const paid = d.repayments(alice, 1, 'btc_usdt');
    assert.equal(paid.length, 3);
    assert.equal(
      paid.reduce((s, p) => s + p.principal, 0),
      mine.amount,
    );
    // All of a coin: what is left of the other loan.
    assert.equal(
      d.apply({
        type: 'RepayAll',
        userId: alice,
        acctType: 1,
        market: 'btc_usdt',
        coin: 'usdt',
        amount: 'all',
      }).result,
      'OK',
    );
    assert.equal(coinOf(d, alice, 'usdt')?.borrowed, 0);
    assert.equal(coinOf(d, alice, 'usdt')?.interest, 0);
    assert.equal(
      d.apply({
        type: 'RepayAll',
        userId: alice,
        acctType: 1,
        market: 'btc_usdt',
        coin: 'usdt',
        amount: 'all',
      }).result,
      'LOAN_NOT_FOUND',
    );
  });
});

describe('interest by timers', () => {
  test('hourly interest on FireTimers at nextDeadline; the term end repays from the account (no roll-over)', () => {
    const { d, alice } = venue();
    d.apply(transferIn(alice, 'usdt', 1000 * USDT));
    assert.equal(d.engine.nextDeadline(), undefined);
    const t0 = d.time + 1;
    d.at(t0, borrow(alice, 'usdt', 500 * USDT));
    // 500 usdt × 500 ppm ÷ 24 = 10,416.67 units an hour: 10,416 now, the fraction carried.
    assert.equal(coinOf(d, alice, 'usdt')?.interest, 10_416);
    assert.equal(d.engine.nextDeadline(), t0 + HOUR_MS);
    d.at(t0 + HOUR_MS, { type: 'FireTimers' });
    assert.equal(coinOf(d, alice, 'usdt')?.interest, 20_833);
    assert.equal(d.engine.nextDeadline(), t0 + 2 * HOUR_MS);
    // Over 3 days at once (a late timer): the same units as hour by hour.
    d.at(t0 + 3 * DAY_MS, { type: 'FireTimers' });
    assert.equal(coinOf(d, alice, 'usdt')?.interest, Math.floor((500 * USDT * 500 * (72 + 1)) / 24_000_000));
    // The term ends after 10 days: no roll-over, so the timer repays from the account, charging
    // the hour that begins at the term's end too (a loan accrues until it is repaid): 241 hours.
    d.at(t0 + 10 * DAY_MS, { type: 'FireTimers' });
    const [loan] = d.loansOf(alice, 1, 'btc_usdt');
    assert.equal(loan?.status, LOAN_STATUS.AUTO_REPAID);
    assert.equal(coinOf(d, alice, 'usdt')?.borrowed, 0);
    assert.equal(d.engine.nextDeadline(), undefined);
    const interest = loan?.interestPaid ?? 0;
    assert.equal(interest, Math.floor((500 * USDT * 500 * 241) / 24_000_000));
    assert.equal(coinOf(d, alice, 'usdt')?.available, 1000 * USDT - interest);
    // Interest charged = paid to the pool + the venue's 10 % share (to insurance).
    assert.equal(loan?.venueShare, Math.floor(interest / 10));
  });

  test('a roll-over loan continues for another term at the same rate', () => {
    const { d, alice } = venue();
    d.apply(transferIn(alice, 'usdt', 1000 * USDT));
    const t0 = d.time + 1;
    d.at(t0, borrow(alice, 'usdt', 500 * USDT, { rollOver: true }));
    d.at(t0 + 10 * DAY_MS + HOUR_MS, { type: 'FireTimers' });
    const [loan] = d.loansOf(alice, 1, 'btc_usdt');
    assert.equal(loan?.status, LOAN_STATUS.REPAYING);
    assert.equal(loan?.termEndMs, t0 + 20 * DAY_MS);
    assert.equal(coinOf(d, alice, 'usdt')?.borrowed, 500 * USDT);
  });
});

describe('margin orders', () => {
  test('express borrows what a buy needs beyond the balance; auto-repay pays from what a sale brings in', () => {
    const { d, alice, bob } = venue();
    d.apply(limitOrder(bob, SELL, 3_000_000, 500)); // bob asks 0.05 btc @ 30000
    d.apply(transferIn(alice, 'usdt', 1000 * USDT));
    const buy = limitOrder(alice, BUY, 3_000_000, 500, { acctType: 1 }); // 0.05 btc = 1,500 usdt
    const short = d.apply(buy);
    assert.equal(short.result, 'INSUFFICIENT_BALANCE');
    const r = d.apply({ ...buy, express: true } as Command);
    assert.equal(r.result, 'OK', r.message);
    let usdt = coinOf(d, alice, 'usdt');
    assert.equal(usdt?.borrowed, 500 * USDT);
    assert.equal(usdt?.available, 0);
    assert.equal(coinOf(d, alice, 'btc')?.available, (5 * BTC) / 100 - ((5 * BTC) / 100) * 0.002);
    assert.equal(d.engine.balance(alice, 'usdt')?.available, 1000 * USDT, 'spot untouched');
    // The fill's bills name the account.
    assert.ok(
      r.events.some(
        (e) => e.type === 'BalanceChanged' && e.account?.kind === 'isolated' && e.billType === 'buy',
      ),
    );
    // Over the limit: express refuses, nothing changes.
    const before = stateOf(d.engine);
    assert.equal(
      d.apply({ ...limitOrder(alice, BUY, 3_000_000, 5_000, { acctType: 1 }), express: true } as Command)
        .result,
      'OVER_BORROW_LIMIT',
    );
    assert.equal(stateOf(d.engine), before);
    // Auto-repay on: selling the btc brings usdt in, which repays the debt, interest first.
    assert.equal(
      d.apply({
        type: 'SetMarginPreferences',
        userId: alice,
        acctType: 1,
        market: 'btc_usdt',
        autoRepay: true,
      }).result,
      'OK',
    );
    d.apply(limitOrder(bob, BUY, 3_100_000, 499)); // bob bids 0.0499 @ 31000
    const sell = d.apply(limitOrder(alice, SELL, 3_100_000, 499, { acctType: 1 }));
    assert.equal(sell.result, 'OK');
    usdt = coinOf(d, alice, 'usdt');
    assert.equal(usdt?.borrowed, 0);
    assert.equal(usdt?.interest, 0);
    const proceeds = 499 * 3_100_000 - Math.floor((499 * 3_100_000 * 2000) / 1_000_000);
    const [loan] = d.loansOf(alice, 1, 'btc_usdt');
    assert.equal(usdt?.available, proceeds - 500 * USDT - (loan?.interestPaid ?? 0));
  });

  test('the express default (setExpressState) and a cross account order', () => {
    const { d, alice, bob } = venue();
    d.apply(limitOrder(bob, SELL, 3_000_000, 10_000));
    d.apply(transferIn(alice, 'usdt', 1000 * USDT, 2));
    const buy = limitOrder(alice, BUY, 3_000_000, 500, { acctType: 2 });
    assert.equal(d.apply(buy).result, 'INSUFFICIENT_BALANCE');
    d.apply({ type: 'SetMarginPreferences', userId: alice, acctType: 2, market: '', express: true });
    assert.equal(d.apply(buy).result, 'OK');
    const cross = d.engine.margin.account(alice, 2, '');
    assert.equal(cross?.coins.find((c) => c.coin === 'usdt')?.borrowed, 500 * USDT);
    assert.ok((cross?.coins.find((c) => c.coin === 'btc')?.available ?? 0) > 0);
    assert.equal(cross?.preferences.express, true);
  });

  test('a resting margin order holds its margin account frozen; cancelling releases it there', () => {
    const { d, alice } = venue();
    d.apply(transferIn(alice, 'usdt', 1000 * USDT));
    const r = d.apply(limitOrder(alice, BUY, 2_000_000, 100, { acctType: 1 }));
    assert.equal(coinOf(d, alice, 'usdt')?.frozen, 200 * USDT);
    d.apply({
      type: 'CancelOrder',
      userId: alice,
      market: 'btc_usdt',
      orderId: r.orderId as number,
      clientOrderId: '',
    });
    assert.equal(coinOf(d, alice, 'usdt')?.frozen, 0);
    assert.equal(coinOf(d, alice, 'usdt')?.available, 1000 * USDT);
  });
});

describe('isolated accounts in two markets', () => {
  test('orders alternating between them freeze and release in their own market accounts', () => {
    const { d, alice } = venue();
    d.apply(transferIn(alice, 'usdt', 1000 * USDT));
    const eth = { ...transferIn(alice, 'usdt', 500 * USDT), market: 'eth_usdt' } as Command;
    assert.equal(d.apply(eth).result, 'OK');
    const usdtOf = (market: string) =>
      d.engine.margin.account(alice, 1, market)?.coins.find((c) => c.coin === 'usdt');
    const ids: number[] = [];
    for (let k = 0; k < 4; k++) {
      const market = k % 2 === 0 ? 'btc_usdt' : 'eth_usdt';
      // 100 usdt each: 0.005 btc at 20,000, or 0.05 eth at 2,000.
      const order = limitOrder(alice, BUY, k % 2 === 0 ? 2_000_000 : 200_000, k % 2 === 0 ? 50 : 500, {
        acctType: 1,
        market,
      });
      const r = d.apply(order);
      assert.equal(r.result, 'OK', r.message);
      ids.push(r.orderId as number);
    }
    assert.equal(usdtOf('btc_usdt')?.frozen, 200 * USDT);
    assert.equal(usdtOf('btc_usdt')?.available, 800 * USDT);
    assert.equal(usdtOf('eth_usdt')?.frozen, 200 * USDT);
    assert.equal(usdtOf('eth_usdt')?.available, 300 * USDT);
    ids.forEach((orderId, k) =>
      d.apply({
        type: 'CancelOrder',
        userId: alice,
        market: k % 2 === 0 ? 'btc_usdt' : 'eth_usdt',
        orderId,
        clientOrderId: '',
      }),
    );
    assert.equal(usdtOf('btc_usdt')?.available, 1000 * USDT);
    assert.equal(usdtOf('eth_usdt')?.available, 500 * USDT);
  });
});

describe('margin state in snapshots', () => {
  test('a snapshot with loans round-trips as version 4, restores the same hash and continues identically', () => {
    const { d, alice, bob } = venue();
    d.apply(limitOrder(bob, SELL, 3_000_000, 10_000));
    d.apply(transferIn(alice, 'usdt', 1000 * USDT));
    d.apply({ ...limitOrder(alice, BUY, 3_000_000, 500, { acctType: 1 }), express: true } as Command);
    d.apply({
      type: 'PlaceLoanOffer',
      userId: bob,
      coin: 'btc',
      amount: BTC,
      dailyRatePpm: 700,
      days: 20,
      loop: true,
    });
    d.apply({
      type: 'SetMarginPreferences',
      userId: alice,
      acctType: 1,
      market: 'btc_usdt',
      autoRepay: true,
    });
    d.apply({ type: 'RepayLoan', userId: alice, loanId: 1, amount: 1 });
    // A margin order resting in the snapshot: restored with its account (accounts load first).
    const resting = d.apply(limitOrder(alice, SELL, 4_000_000, 100, { acctType: 1 }));
    assert.equal(resting.result, 'OK');
    const s = d.engine.snapshot();
    assert.equal(s.version, SNAPSHOT_VERSION_MARGIN);
    const restored = Engine.restore(JSON.parse(JSON.stringify(s)));
    assert.equal(restored.stateHash(), d.engine.stateHash());
    assert.equal(JSON.stringify(restored.snapshot()), JSON.stringify(s));
    const next = { type: 'FireTimers' as const, seq: d.seq + 1, time: d.time + 5 * HOUR_MS };
    d.engine.apply(next);
    restored.apply(next);
    assert.equal(restored.stateHash(), d.engine.stateHash());
    assert.equal(restored.nextDeadline(), d.engine.nextDeadline());
    const cancel = {
      type: 'CancelOrder' as const,
      userId: alice,
      market: 'btc_usdt',
      orderId: resting.orderId as number,
      clientOrderId: '',
      seq: d.seq + 2,
      time: d.time + 6 * HOUR_MS,
    };
    assert.equal(restored.apply(cancel).result, 'OK');
    assert.equal(d.engine.apply(cancel).result, 'OK');
    assert.equal(restored.stateHash(), d.engine.stateHash());
    assert.equal(restored.margin.account(alice, 1, 'btc_usdt')?.coins[0]?.frozen, 0);
    // A spot-only venue still writes version 2.
    assert.equal(new EngineDriver().engine.snapshot().version, 2);
  });
});
