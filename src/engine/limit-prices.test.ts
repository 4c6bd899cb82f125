/**
 * The prices every margin limit reads (limit-prices.ts, issue 29): the risk step's marks, the
 * start mark of a market not marked yet, no price before a market's first trade, and a cross
 * account's coin two markets away valued along the risk step's path.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { EngineDriver, limitOrder } from '../../test/fixtures/engine-driver.ts';
import { BUY, SELL, type Command } from '../domain/commands.ts';
import { Engine } from './engine.ts';
import type { EngineSnapshot } from './snapshot.ts';

const USDT = 1_000_000;

const borrow = (userId: number, acctType: 1 | 2, market: string, coin: string, amount: number): Command => ({
  type: 'Borrow',
  userId,
  acctType,
  market,
  coin,
  amount,
  rollOver: false,
});

const moveIn = (userId: number, acctType: 1 | 2, market: string, coin: string, amount: number): Command => ({
  type: 'MarginTransfer',
  userId,
  direction: 'in',
  acctType,
  market,
  coin,
  amount,
});

/** A venue whose pool lends usdt. */
function venue(): EngineDriver {
  const d = new EngineDriver();
  const r = d.apply({
    type: 'FundLendingPool',
    fundingId: 'pool',
    coin: 'usdt',
    amount: 100_000 * USDT,
    dailyRatePpm: 500,
    days: 10,
  });
  assert.equal(r.result, 'OK');
  return d;
}

const ok = (d: EngineDriver, cmd: Command): void =>
  assert.equal(d.apply(cmd).result, 'OK', JSON.stringify(cmd));

describe('limit prices', () => {
  test('a market nothing is owed in: the limit is at the mark the risk step then starts with', () => {
    const d = venue();
    const bob = d.fund('bob', 'usdt', '10000');
    const carol = d.fund('carol', 'btc', '1');
    const alice = d.fund('alice', 'btc', '0.1');
    ok(d, limitOrder(bob, BUY, 3_000_000, 100));
    ok(d, limitOrder(carol, SELL, 3_000_000, 100));
    assert.equal(d.engine.risk.markPrice('btc_usdt'), undefined, 'not marked: nothing is owed there');
    ok(d, moveIn(alice, 1, 'btc_usdt', 'btc', 10_000_000));
    const limit = d.engine.margin
      .account(alice, 1, 'btc_usdt')
      ?.coins.find((c) => c.coin === 'usdt')?.borrowLimit;
    assert.equal(limit, 12_000 * USDT); // 4 × 0.1 btc × 30,000
    assert.equal(
      d.apply(borrow(alice, 1, 'btc_usdt', 'usdt', 12_000 * USDT + 1)).result,
      'OVER_BORROW_LIMIT',
    );
    ok(d, borrow(alice, 1, 'btc_usdt', 'usdt', 12_000 * USDT));
    // The borrow made the market marked, at the price the limit was valued at.
    assert.equal(d.engine.risk.markPrice('btc_usdt'), 3_000_000);
    const risk = d.engine.risk.accountRisk(alice, 'btc_usdt');
    // 15,000 ÷ 12,000.25 (the first hour's interest): the opening line less that hour.
    assert.equal(risk?.riskRateBp, 12_499);
    assert.equal(d.engine.margin.account(alice, 1, 'btc_usdt')?.riskRateBp, risk?.riskRateBp);
  });

  test('issue 29: one tiny print at 60,000 in a market nothing is owed in moves no first borrow off ~30,000', () => {
    const d = venue();
    const bob = d.fund('bob', 'usdt', '100000');
    const carol = d.fund('carol', 'btc', '10');
    const alice = d.fund('alice', 'btc', '0.1');
    const mallory = d.fund('mallory', 'usdt', '100');
    // Real trading at 30,000: 2 btc, 60,000 usdt (the depth window holds 10,000 usdt).
    ok(d, limitOrder(bob, BUY, 3_000_000, 20_000));
    ok(d, limitOrder(carol, SELL, 3_000_000, 20_000));
    // Bids at 29,990, no ask: an accomplice's 0.0001 btc at 60,000 is the last print.
    ok(d, limitOrder(bob, BUY, 2_999_000, 10_000));
    ok(d, limitOrder(carol, SELL, 6_000_000, 1));
    ok(d, limitOrder(mallory, BUY, 6_000_000, 1));
    assert.equal(d.engine.lastPrice('btc_usdt'), 6_000_000);
    assert.equal(d.engine.risk.markPrice('btc_usdt'), undefined, 'not active: nothing is owed there');
    ok(d, moveIn(alice, 1, 'btc_usdt', 'btc', 10_000_000));
    const limit = d.engine.margin.account(alice, 1, 'btc_usdt')?.coins.find((c) => c.coin === 'usdt')
      ?.borrowLimit as number;
    // 4 × 0.1 btc at the running mark, which the print moved by about 1 % × 6 ÷ 10,000 at most.
    assert.ok(limit >= 12_000 * USDT && limit <= 12_010 * USDT, String(limit));
    const before = JSON.stringify({ ...d.engine.snapshot(), lastSeq: 0 });
    // What the print's price would allow (4 × 0.1 × 60,000 = 24,000) is refused, state unchanged.
    const r = d.apply(borrow(alice, 1, 'btc_usdt', 'usdt', 20_000 * USDT));
    assert.equal(r.result, 'OVER_BORROW_LIMIT');
    assert.equal(JSON.stringify({ ...d.engine.snapshot(), lastSeq: 0 }), before);
    // The running mark is in the snapshot: a restored engine takes the same borrow to the same state.
    const restored = Engine.restore(JSON.parse(JSON.stringify(d.engine.snapshot())) as EngineSnapshot);
    assert.equal(restored.stateHash(), d.engine.stateHash());
    const next = { ...borrow(alice, 1, 'btc_usdt', 'usdt', limit), seq: d.seq + 1, time: d.time + 1 };
    assert.equal(restored.apply(next).result, 'OK');
    ok(d, borrow(alice, 1, 'btc_usdt', 'usdt', limit));
    assert.equal(restored.stateHash(), d.engine.stateHash());
    // The market became active with the running mark, the one the limit was valued at.
    const mark = d.engine.risk.markPrice('btc_usdt') as number;
    assert.ok(mark >= 3_000_000 && mark < 3_003_000, String(mark));
    assert.equal(limit, 4_000 * mark); // 4 × 0.1 btc × mark ÷ 100 usdt
  });

  test('a market that never traded: its base counts nothing and nothing is lent against it', () => {
    const d = venue();
    const alice = d.fund('alice', 'eth', '10');
    ok(d, moveIn(alice, 1, 'eth_usdt', 'eth', 10 * 10 ** 8));
    const usdt = d.engine.margin.account(alice, 1, 'eth_usdt')?.coins.find((c) => c.coin === 'usdt');
    assert.equal(usdt?.borrowLimit, 0);
    const before = JSON.stringify({ ...d.engine.snapshot(), lastSeq: 0 });
    const r = d.apply(borrow(alice, 1, 'eth_usdt', 'usdt', 100 * USDT));
    assert.equal(r.result, 'OVER_BORROW_LIMIT');
    assert.equal(JSON.stringify({ ...d.engine.snapshot(), lastSeq: 0 }), before);
  });

  test('a cross account values a coin two markets away (qc through zb_qc and zb_usdt) as the risk step does', () => {
    const d = venue();
    const bob = d.fund('bob', 'usdt', '10000');
    d.fund('bob', 'qc', '10000');
    const carol = d.fund('carol', 'zb', '1000');
    const alice = d.fund('alice', 'qc', '1000');
    // zb at 0.5 usdt and at 0.5 qc: one qc is worth one usdt.
    for (const market of ['zb_usdt', 'zb_qc']) {
      ok(d, limitOrder(bob, BUY, 5_000, 2_000, { market }));
      ok(d, limitOrder(carol, SELL, 5_000, 2_000, { market }));
    }
    const qc = 10 ** (d.engine.coin('qc')?.unitDecimal as number);
    ok(d, moveIn(alice, 2, '', 'qc', 1000 * qc));
    const limit = d.engine.margin.account(alice, 2, '')?.coins.find((c) => c.coin === 'qc')?.borrowLimit;
    assert.equal(limit, 4000 * qc); // 4 × 1,000 qc of equity, in qc
    assert.equal(d.apply(borrow(alice, 2, '', 'usdt', 4000 * USDT + 1)).result, 'OVER_BORROW_LIMIT');
    ok(d, borrow(alice, 2, '', 'usdt', 1000 * USDT));
    const view = d.engine.margin.account(alice, 2, '');
    assert.equal(view?.riskRateBp, d.engine.risk.crossRisk(alice).riskRateBp);
    assert.equal(view?.riskRateBp, 19_999); // 2,000 ÷ 1,000.020833
  });
});
