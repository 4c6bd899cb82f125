import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CheckedDriver, EngineDriver, limitOrder, mustApply } from '../../test/fixtures/engine-driver.ts';
import { BUY, SELL, type Command } from '../domain/commands.ts';
import { LOAN_STATUS } from '../margin/loans.ts';
import { Engine, type ApplyResult } from './engine.ts';
import { MEDIAN_MARK_VENUE } from '../../test/fixtures/median-venue.ts';

const USDT = 1_000_000;

const order = limitOrder;

const must = mustApply;

/**
 * Alice's cross account: 1,000 usdt in, 3,000 borrowed from the pool, 0.13 btc bought at 30,000
 * from bob (the first trade: mark 30,000). Risk rate (1,000 + 0.12974 × p) ÷ 3,000 reaches 1.08
 * near p = 17,266 … with her 1,000 usdt left: (1,000 + 0.12974 p) ÷ 3,000 ≤ 1.08 ⟺ p ≤ 24,164.
 */
function crossAlice(): { d: CheckedDriver; alice: number; bob: number; carol: number } {
  const d = new CheckedDriver(MEDIAN_MARK_VENUE);
  const alice = d.fund('alice', 'usdt', '2000');
  const bob = d.fund('bob', 'btc', '5');
  d.fund('bob', 'usdt', '100000');
  const carol = d.fund('carol', 'btc', '5');
  must(d, {
    type: 'FundLendingPool',
    fundingId: 'pool-1',
    coin: 'usdt',
    amount: 100_000 * USDT,
    dailyRatePpm: 500,
    days: 10,
  });
  must(d, {
    type: 'MarginTransfer',
    userId: alice,
    direction: 'in',
    acctType: 2,
    market: '',
    coin: 'usdt',
    amount: 1000 * USDT,
  });
  must(d, {
    type: 'Borrow',
    userId: alice,
    acctType: 2,
    market: '',
    coin: 'usdt',
    amount: 3000 * USDT,
    rollOver: false,
  } as Command);
  must(d, order(bob, SELL, 3_000_000, 1300));
  must(d, order(alice, BUY, 3_000_000, 1300, { acctType: 2 }));
  assert.equal(d.engine.risk.markPrice('btc_usdt'), 3_000_000, 'the cross debt keeps btc_usdt marked');
  return { d, alice, bob, carol };
}

/** Twenty trades of 0.001 btc at 23,500 in one command: the mark falls to ⌊(30,000 + 20 × 23,500) ÷ 21⌋. */
function gap(d: EngineDriver, bob: number, carol: number, trades = 20): ApplyResult {
  for (let i = 0; i < trades; i++) must(d, order(bob, BUY, 2_350_000, 10));
  return must(d, order(carol, SELL, 2_350_000, trades * 10, { kind: 'ioc' }));
}

describe('cross accounts at the liquidation line', () => {
  test('a gap through the line: liquidated in the same step, sold within the band, repaid, fee to insurance, repayments listed', () => {
    const { d, alice, bob, carol } = crossAlice();
    assert.equal(d.engine.risk.crossRisk(alice).level, 1);
    must(d, order(bob, BUY, 2_340_000, 2000));
    gap(d, bob, carol);
    const mark = Math.floor((3_000_000 + 20 * 2_350_000) / 21);
    const [rec, ...more] = d.engine.liquidations();
    assert.equal(more.length, 0);
    assert.ok(rec !== undefined);
    assert.deepEqual(rec.account, { kind: 'cross', userId: alice });
    assert.equal(rec.market, '');
    assert.equal(rec.status, 'done');
    assert.equal(rec.startMs, d.time, 'in the same step as the price move');
    assert.ok(rec.riskRateBp <= 10_800);
    assert.deepEqual(
      rec.orders.map((o) => [o.side, o.priceTicks, o.amount, o.filled]),
      [['sell', Math.ceil((mark * 97) / 100), 12_970_000, 12_970_000]],
    );
    const q = rec.coins.find((c) => c.coin === 'usdt');
    assert.ok(q !== undefined);
    assert.equal(q.shortfall, 0);
    assert.equal(q.fee, Math.floor(q.repaid / 100));
    const acct = d.engine.margin.account(alice, 2, '');
    const usdt = acct?.coins.find((c) => c.coin === 'usdt');
    assert.equal((usdt?.borrowed ?? 0) + (usdt?.interest ?? 0), 0);
    assert.equal(usdt?.available, 100 * USDT + 1297 * 2_340_000 - q.repaid - q.fee);
    assert.ok(d.loansOf(alice, 2, '').every((l) => l.status === LOAN_STATUS.LIQUIDATED));
    const repayments = d.repayments(alice, 2, '');
    assert.equal(
      repayments.reduce((s, r) => s + r.principal + r.interest, 0),
      q.repaid,
      'the liquidation’s repayments are listed (getCrossRepayRecords)',
    );
    assert.deepEqual(d.engine.risk.crossRisk(alice), {
      riskRateBp: undefined,
      notice: false,
      repayLock: false,
      level: 1,
    });
    assert.ok((d.engine.insurance().find((c) => c.coin === 'usdt')?.available ?? 0) >= q.fee);
  });

  test("the owner's own bids at the top of the book, of another account, do not block the liquidation (self-trade prevention)", () => {
    const { d, alice, bob, carol } = crossAlice();
    must(d, order(bob, BUY, 2_340_000, 2000)); // plenty inside the band, behind alice's own bids:
    must(d, order(alice, BUY, 2_345_000, 10)); // spot
    must(d, {
      type: 'MarginTransfer',
      userId: alice,
      direction: 'in',
      acctType: 1,
      market: 'btc_usdt',
      coin: 'usdt',
      amount: 100 * USDT,
    });
    must(d, order(alice, BUY, 2_346_000, 10, { acctType: 1 })); // isolated
    must(d, order(alice, BUY, 2_000_000, 10)); // below the band: out of reach
    const [spot, iso, low] = d.engine.openOrders(alice).map((o) => o.id);
    const r = gap(d, bob, carol);
    const [rec] = d.engine.liquidations();
    assert.deepEqual(rec?.account, { kind: 'cross', userId: alice });
    assert.equal(rec?.status, 'done', `orders ${JSON.stringify(rec?.orders.map((o) => o.filled))}`);
    assert.deepEqual(
      r.events.flatMap((e) =>
        e.type === 'OrderUpdated' && e.cancelReason === 'liquidation' ? [e.orderId] : [],
      ),
      [spot, iso],
      'the bids the order could reach, of any account, oldest first',
    );
    assert.deepEqual(
      d.engine.openOrders(alice).map((o) => o.id),
      [low],
    );
    assert.equal(d.engine.balance(alice, 'usdt')?.frozen, 20 * USDT);
    const isoUsdt = d.engine.margin.account(alice, 1, 'btc_usdt')?.coins.find((c) => c.coin === 'usdt');
    assert.equal(isoUsdt?.available, 100 * USDT, "the isolated bid's hold is released");
  });

  test('a thin book: locked (level 3), refuses its owner, the rest goes at the timer tick; a restore mid-way agrees', () => {
    const { d, alice, bob, carol } = crossAlice();
    must(d, order(bob, BUY, 2_340_000, 500));
    gap(d, bob, carol);
    const [rec] = d.engine.liquidations();
    assert.equal(rec?.status, 'running');
    assert.equal(d.engine.risk.crossRisk(alice).repayLock, true);
    assert.equal(d.engine.risk.crossRisk(alice).level, 3);
    const out = d.apply({
      type: 'MarginTransfer',
      userId: alice,
      direction: 'out',
      acctType: 2,
      market: '',
      coin: 'usdt',
      amount: 1,
    });
    assert.equal(out.result, 'INVALID_STATE');
    assert.match(out.message ?? '', /repayLock/);
    assert.equal(d.apply(order(alice, SELL, 2_340_000, 10, { acctType: 2 })).result, 'INVALID_STATE');
    const restored = Engine.restore(d.engine.snapshot());
    assert.equal(restored.stateHash(), d.engine.stateHash());
    for (const cmd of [order(bob, BUY, 2_340_000, 2000), { type: 'FireTimers' } as Command]) {
      const seq = d.seq + 1;
      const time = d.time + 1;
      must(d, cmd);
      assert.equal(restored.apply({ ...cmd, seq, time }).result, 'OK');
    }
    assert.equal(rec?.status, 'done');
    assert.deepEqual(
      rec?.orders.map((o) => o.filled),
      [5_000_000, 7_970_000],
    );
    assert.equal(restored.stateHash(), d.engine.stateHash());
    assert.equal(d.engine.risk.crossRisk(alice).repayLock, false);
  });

  test('a shortfall: the insurance fund pays what it holds, the rest is bad debt; nothing owed after', () => {
    const { d, alice, bob, carol } = crossAlice();
    must(d, order(bob, BUY, 2_340_000, 100));
    gap(d, bob, carol);
    must(d, order(bob, BUY, 100_000, 2000));
    for (let i = 0; i < 70; i++) {
      must(d, order(bob, BUY, 100_000 + i, 100));
      must(d, order(carol, SELL, 100_000 + i, 100, { kind: 'ioc' }));
      must(d, { type: 'FireTimers' });
    }
    const [rec] = d.engine.liquidations();
    assert.equal(rec?.status, 'done');
    const q = rec?.coins.find((c) => c.coin === 'usdt');
    assert.ok(q !== undefined && q.shortfall > 0, 'sold far below the debt');
    assert.ok(q.insurance > 0, 'the fund (fed by the venue’s share of interest) pays what it holds');
    assert.equal(q.badDebt, q.shortfall - q.insurance);
    assert.equal(q.fee, 0);
    const usdt = d.engine.margin.account(alice, 2, '')?.coins.find((c) => c.coin === 'usdt');
    assert.equal((usdt?.borrowed ?? 0) + (usdt?.interest ?? 0), 0);
  });

  test('a slow slide: flagged at the notice line (level 2) before the liquidation', () => {
    const { d, alice, bob, carol } = crossAlice();
    let flagged = false;
    for (let p = 2_990_000; p > 1_000_000 && d.engine.liquidations().length === 0; p -= 10_000) {
      must(d, order(bob, BUY, p, 100));
      must(d, order(carol, SELL, p, 100, { kind: 'ioc' }));
      const risk = d.engine.risk.crossRisk(alice);
      if (!flagged && risk.notice) {
        flagged = true;
        assert.equal(risk.level, 2);
        assert.ok((risk.riskRateBp ?? 0) <= 11_300 && (risk.riskRateBp ?? 0) > 10_800);
        const restored = Engine.restore(d.engine.snapshot());
        assert.equal(restored.risk.crossRisk(alice).notice, true, 'the flag is in the snapshot');
      }
    }
    assert.ok(flagged);
    const [rec] = d.engine.liquidations();
    assert.ok(rec !== undefined && rec.riskRateBp <= 10_800 && rec.riskRateBp > 10_000);
  });
});
