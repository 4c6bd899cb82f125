import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CheckedDriver, EngineDriver, limitOrder, mustApply } from '../../test/fixtures/engine-driver.ts';
import { BUY, SELL, type Command } from '../domain/commands.ts';
import { LOAN_STATUS } from '../margin/loans.ts';
import { Engine, type ApplyResult } from './engine.ts';

const USDT = 1_000_000;

const order = limitOrder;

const must = mustApply;

/**
 * Alice's cross account: 1,000 usdt in, 3,000 borrowed from the pool, 0.13 btc bought at 30,000
 * from bob (the first trade: mark 30,000). Risk rate (1,000 + 0.12974 × p) ÷ 3,000 reaches 1.08
 * near p = 17,266 … with her 1,000 usdt left: (1,000 + 0.12974 p) ÷ 3,000 ≤ 1.08 ⟺ p ≤ 24,164.
 */
function crossAlice(): { d: CheckedDriver; alice: number; bob: number; carol: number } {
  const d = new CheckedDriver();
  const alice = d.fund('alice', 'usdt', '2000');
  const bob = d.fund('bob', 'btc', '5');
  d.fund('bob', 'usdt', '2000000');
  const carol = d.fund('carol', 'btc', '60');
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

/** A trade of 0.5 btc: more than the depth mark's window (10,000 usdt) at any price above 20,000. */
const WINDOW = 5000;

/**
 * A gap to 23,500 with real volume: 22 trades of 0.5 btc at 23,500 in one command, each counted at
 * the default venue's depth mark's 1 % edge: the mark falls to ⌈m × 0.99⌉ 22 times from 30,000, 24,049.02.
 */
function gap(d: EngineDriver, bob: number, carol: number): ApplyResult {
  for (let i = 0; i < 22; i++) must(d, order(bob, BUY, 2_350_000, WINDOW));
  return must(d, order(carol, SELL, 2_350_000, 22 * WINDOW, { kind: 'ioc' }));
}

/** The mark after `n` trades of a window each beyond its 1 % edge below: ⌈m × 0.99⌉, n times. */
const edgeSteps = (mark: number, n: number): number => {
  let m = mark;
  for (let i = 0; i < n; i++) m = Math.ceil((m * 99) / 100);
  return m;
};

describe('cross accounts at the liquidation line', () => {
  test('a gap through the line: liquidated in the same step, sold within the band, repaid, fee to insurance, repayments listed', () => {
    const { d, alice, bob, carol } = crossAlice();
    assert.equal(d.engine.risk.crossRisk(alice).level, 1);
    must(d, order(bob, BUY, 2_340_000, 2000));
    gap(d, bob, carol);
    const mark = edgeSteps(3_000_000, 22);
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

  test('a thin book: locked (level 3), refuses its owner, the rest goes in the command that bids inside the band (issue 29 §4); a restore mid-way agrees', () => {
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
    // A bid below the band takes nothing; one inside it is taken in the command that brings it —
    // no mark move, no timer (before, a cross liquidation waited for its retry deadline).
    for (const cmd of [order(bob, BUY, 2_200_000, 2000), order(bob, BUY, 2_340_000, 2000)]) {
      const seq = d.seq + 1;
      const time = d.time + 1;
      assert.equal(rec?.status, 'running');
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
    // The market crashes: 16 btc trade at 16,000 (the mark 1 % a trade, to some 20,480), and the
    // first bid inside the band is at 20,000, far below her debt.
    assert.equal(d.engine.liquidations()[0]?.status, 'running');
    for (let i = 0; i < 16; i++) must(d, order(bob, BUY, 1_600_000, 2 * WINDOW));
    must(d, order(carol, SELL, 1_600_000, 32 * WINDOW, { kind: 'ioc' }));
    assert.equal(d.engine.liquidations()[0]?.status, 'running', 'no bid inside the band');
    must(d, order(bob, BUY, 2_000_000, 2000));
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
      must(d, order(bob, BUY, p, WINDOW));
      must(d, order(carol, SELL, p, WINDOW, { kind: 'ioc' }));
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
