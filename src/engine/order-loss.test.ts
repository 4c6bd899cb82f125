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

  for (const acctType of [1, 2] as const) {
    const kind = acctType === 1 ? 'isolated' : 'cross';
    const market = acctType === 1 ? 'btc_usdt' : '';
    /** The limits shown in `coin` (fCanLoanIn, couldTransferOut… / canTransferOut). */
    const limits = (d: EngineDriver, alice: number, coin = 'usdt'): [number, number] => {
      const c = d.engine.margin.account(alice, acctType, market)?.coins.find((x) => x.coin === coin);
      return [c?.borrowLimit ?? -1, c?.transferOutLimit ?? -1];
    };
    const borrow = (alice: number, usdt: number): Command => ({
      type: 'Borrow',
      userId: alice,
      acctType,
      market,
      coin: 'usdt',
      amount: usdt * USDT,
      rollOver: false,
    });
    const transferOut = (alice: number, units: number): Command => ({
      type: 'MarginTransfer',
      userId: alice,
      direction: 'out',
      acctType,
      market,
      coin: 'usdt',
      amount: units,
    });
    /** Refused with `result` and a message matching `text`, with nothing changed. */
    const refusedWith = (d: EngineDriver, cmd: Command, result: string, text: RegExp): void => {
      const before = state(d);
      const r = d.apply(cmd);
      assert.equal(r.result, result, JSON.stringify(r));
      assert.match(r.message ?? '', text);
      assert.equal(state(d), before);
    };

    test(`${kind}: an order resting far from the mark, placed while nothing was owed, counts against a later borrow, transfer out and express borrow`, () => {
      const { d, alice } = venue(acctType);
      // Owing nothing, Alice may price her own 0.2 btc as she likes: a sell at 1,000 rests, and
      // its fill would hand 0.2 × (30,000 − 1,000) = 5,800 usdt beyond the mark to its buyer.
      ok(d, limitOrder(alice, SELL, P(1_000), 2_000, { acctType }));
      // Her limits count that loss as gone: 4 × (6,000 − 5,800) = 800 usdt, not 4 × 6,000 = 24,000
      // (shown in btc: 800 ÷ 30,000 = 0.02666666 btc).
      assert.deepEqual(limits(d, alice, 'btc'), [2_666_666, 0]);
      refusedWith(d, borrow(alice, 4_800), 'OVER_BORROW_LIMIT', /over the limit of 800$/);
      // An order's express borrow (at the mark: no loss of its own) is held to the same limit.
      refusedWith(
        d,
        limitOrder(alice, BUY, P(30_000), 1_000, { acctType, express: true }),
        'OVER_BORROW_LIMIT',
        /over the limit of 800$/,
      );
      ok(d, borrow(alice, 800));
      // 6,800 held, 5,800 of it promised away beyond the mark: 1,000 < 1.25 × 800.016…, nothing may leave.
      assert.deepEqual(limits(d, alice), [0, 0]);
      refusedWith(d, transferOut(alice, 1), 'OVER_TRANSFER_LIMIT', /over the limit of 0 usdt/);
      // Without the resting order the limits are the account's own again.
      const [order] = d.engine.openOrders(alice);
      ok(d, {
        type: 'CancelOrder',
        userId: alice,
        market: 'btc_usdt',
        orderId: order?.id ?? 0,
        clientOrderId: '',
      });
      // 4 × 6,800 − 5 × 800.016… usdt; all 800 usdt held may leave (the btc covers the debt).
      assert.deepEqual(limits(d, alice), [23_199_916_670, 800 * USDT]);
      ok(d, transferOut(alice, 1));
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
