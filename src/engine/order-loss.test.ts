/**
 * Issue 29: margin orders priced far from the mark (src/margin/order-loss.ts, Margin.orderLossCheck).
 * A margin order whose worst-case loss against the mark, with the account's resting orders', would
 * leave the account below its opening line is refused (OVER_ORDER_LIMIT, 2009) with nothing
 * changed; an order near the mark, and any spot order, goes through. On the default venue (the
 * depth mark), mark 30,000.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { EngineDriver, limitOrder } from '../../test/fixtures/engine-driver.ts';
import { BUY, SELL, type Command } from '../domain/commands.ts';
import { RESULTS } from '../domain/result-codes.ts';

const USDT = 1_000_000;
/** 0.0001 btc a lot; prices in ticks of 0.01 usdt. */
const BTC_LOTS = 10_000;
const P = (usdt: number): number => usdt * 100;

const ok = (d: EngineDriver, cmd: Command): void =>
  assert.equal(d.apply(cmd).result, 'OK', JSON.stringify(cmd));

const state = (d: EngineDriver): string => JSON.stringify({ ...d.engine.snapshot(), lastSeq: 0 });

/** A venue with a usdt pool, 2 btc traded at 30,000 (an empty book after), Alice's 0.2 btc moved into margin. */
function venue(acctType: 1 | 2): { d: EngineDriver; alice: number; mallory: number } {
  const d = new EngineDriver();
  ok(d, {
    type: 'FundLendingPool',
    fundingId: 'pool',
    coin: 'usdt',
    amount: 100_000 * USDT,
    dailyRatePpm: 500,
    days: 10,
  });
  const bob = d.fund('bob', 'usdt', '60000');
  const carol = d.fund('carol', 'btc', '2');
  ok(d, limitOrder(bob, BUY, P(30_000), 2 * BTC_LOTS));
  ok(d, limitOrder(carol, SELL, P(30_000), 2 * BTC_LOTS));
  const alice = d.fund('alice', 'btc', '0.2');
  const mallory = d.fund('mallory', 'btc', '1');
  d.fund('mallory', 'usdt', '100000');
  ok(d, {
    type: 'MarginTransfer',
    userId: alice,
    direction: 'in',
    acctType,
    market: acctType === 1 ? 'btc_usdt' : '',
    coin: 'btc',
    amount: 20_000_000,
  });
  return { d, alice, mallory };
}

/** Refused as over the order limit, with nothing changed. */
function refusedFar(d: EngineDriver, cmd: Command): void {
  const before = state(d);
  const r = d.apply(cmd);
  assert.equal(r.result, 'OVER_ORDER_LIMIT', JSON.stringify(r));
  assert.equal(RESULTS[r.result].code, 2009);
  assert.match(r.message ?? '', /beyond the mark 30000.*opening line/);
  assert.equal(state(d), before);
}

describe('issue 29: margin orders priced far from the mark', () => {
  for (const acctType of [1, 2] as const) {
    const kind = acctType === 1 ? 'isolated' : 'cross';
    const market = acctType === 1 ? 'btc_usdt' : '';

    test(`${kind}: 0.2 btc bought at 60,000 from an accomplice with express borrow is refused; near the mark it is accepted`, () => {
      const { d, alice, mallory } = venue(acctType);
      ok(d, limitOrder(mallory, SELL, P(60_000), 2_000));
      // 12,000 usdt borrowed (within the limit of 4 × 6,000), 6,000 of it handed over: 18,000 − 6,000 < 1.25 × 12,000.
      refusedFar(d, limitOrder(alice, BUY, P(60_000), 2_000, { acctType, express: true }));
      // Without express, the same with the usdt borrowed first.
      ok(d, {
        type: 'Borrow',
        userId: alice,
        acctType,
        market,
        coin: 'usdt',
        amount: 12_000 * USDT,
        rollOver: false,
      });
      refusedFar(d, limitOrder(alice, BUY, P(60_000), 2_000, { acctType }));
      // Near the mark: 0.2 btc at 30,100 hands over 20 usdt, well within the room.
      ok(d, limitOrder(mallory, SELL, P(30_100), 2_000));
      ok(d, limitOrder(alice, BUY, P(30_100), 2_000, { acctType }));
      d.engine.assertInvariants();
    });

    test(`${kind}: the account's resting orders count; a sell far under the mark is refused too`, () => {
      const { d, alice } = venue(acctType);
      ok(d, {
        type: 'Borrow',
        userId: alice,
        acctType,
        market,
        coin: 'usdt',
        amount: 4_800 * USDT,
        rollOver: false,
      });
      // Room at the mark: 6,000 + 4,800 − 1.25 × 4,800.1 = 4,799.875 usdt.
      ok(d, limitOrder(alice, SELL, P(6_000), 500, { acctType })); // rests; 1,200 under the mark
      ok(d, limitOrder(alice, SELL, P(6_000), 500, { acctType })); // rests; 2,400 in all
      // A batch counts each of its orders: 0.05 btc at 1,000 (1,450) would fit alone, two do not.
      const batch = (n: number): Command =>
        ({
          type: 'PlaceOrderBatch',
          userId: alice,
          market: 'btc_usdt',
          side: SELL,
          acctType,
          orders: Array.from({ length: n }, () => ({ price: P(1_000), amount: 500 })),
        }) as Command;
      refusedFar(d, batch(2));
      // 0.1 btc at 5,000 alone (2,500) would fit; with the resting 2,400 it does not.
      refusedFar(d, limitOrder(alice, SELL, P(5_000), 1_000, { acctType }));
      ok(d, limitOrder(alice, SELL, P(6_100), 1_000, { acctType })); // 2,390 + 2,400 ≤ 4,799.875
      d.engine.assertInvariants();
    });
  }

  test('a margin account without debt may price its own money as it likes; a spot order is never held', () => {
    const { d, alice, mallory } = venue(1);
    ok(d, limitOrder(alice, SELL, P(1_000), 1_000, { acctType: 1 }));
    ok(d, limitOrder(mallory, SELL, P(60_000), 100));
    const bob = d.fund('bob2', 'usdt', '10000');
    ok(d, limitOrder(bob, BUY, P(60_000), 100));
  });
});
