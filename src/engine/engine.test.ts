import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { EngineDriver, limitOrder, UNLIMITED_WITHDRAWALS } from '../../test/fixtures/engine-driver.ts';
import { BUY, SELL, type Command } from '../domain/commands.ts';
import type { EngineEvent } from '../domain/events.ts';
import { Engine } from './engine.ts';

/** The state without the sequence position, which every command advances. */
const stateOf = (e: Engine): string => JSON.stringify({ ...e.snapshot(), lastSeq: 0 });
const types = (events: readonly EngineEvent[]): string[] => events.map((e) => e.type);

/** alice (usdt, zb) and bob (btc) with two asks and a bid resting on btc_usdt. */
function tradingDay(): { d: EngineDriver; alice: number; bob: number } {
  const d = new EngineDriver();
  const alice = d.fund('alice', 'usdt', '100000');
  const bob = d.fund('bob', 'btc', '3');
  d.fund('alice', 'zb', '1000');
  d.apply(limitOrder(bob, SELL, 3_000_000, 5_000)); // order 1: 0.5 @ 30000
  d.apply(limitOrder(bob, SELL, 3_010_000, 5_000)); // order 2: 0.5 @ 30100
  d.apply(limitOrder(alice, BUY, 2_990_000, 10_000)); // order 3: 1 @ 29900
  return { d, alice, bob };
}

describe('refusals', () => {
  test('every refused command returns its result, emits nothing and changes nothing', () => {
    const { d, alice, bob } = tradingDay();
    const refusals: [Command, string][] = [
      [limitOrder(alice, BUY, 3_000_000, 1_000_000), 'INSUFFICIENT_BALANCE'],
      [limitOrder(alice, BUY, 0, 100), 'INVALID_PRICE'],
      [limitOrder(alice, BUY, 3_000_000, 0), 'INVALID_AMOUNT'],
      [limitOrder(alice, BUY, 1.5, 100), 'INVALID_PRICE'],
      [limitOrder(alice, BUY, 100, 1), 'BELOW_MIN_SIZE'],
      [limitOrder(alice, BUY, 3_000_000, 100, { market: 'foo_bar' }), 'UNKNOWN_MARKET'],
      // Margin accounts never funded hold nothing (src/engine/margin.test.ts trades on margin).
      [limitOrder(alice, BUY, 3_000_000, 100, { acctType: 1 }), 'INSUFFICIENT_BALANCE'],
      [limitOrder(alice, BUY, 3_000_000, 100, { acctType: 2 }), 'INSUFFICIENT_BALANCE'],
      [limitOrder(alice, BUY, 3_000_000, 100, { acctType: 7 as 0 }), 'INVALID_PARAMETER'],
      [limitOrder(alice, BUY, 3_000_000, 100, { kind: 'postOnly' }), 'POST_ONLY_WOULD_TAKE'],
      [limitOrder(alice, BUY, 3_000_000, 100, { kind: 'market' as 'limit' }), 'INVALID_PARAMETER'],
      [limitOrder(alice, 2 as 0, 3_000_000, 100), 'INVALID_PARAMETER'],
      [limitOrder(alice, BUY, 3_000_000, 100, { clientOrderId: 'a!' }), 'INVALID_PARAMETER'],
      [limitOrder(alice, BUY, 3_000_000, 100, { clientOrderId: 'abc' }), 'INVALID_PARAMETER'],
      [limitOrder(99, BUY, 3_000_000, 100), 'USER_NOT_FOUND'],
      [limitOrder(alice, BUY, 2 ** 40, 2 ** 20), 'VALUE_OUT_OF_RANGE'],
      [
        { type: 'CancelOrder', userId: alice, market: 'btc_usdt', orderId: 1, clientOrderId: '' },
        'ORDER_NOT_FOUND',
      ],
      [
        { type: 'CancelOrder', userId: alice, market: 'eth_usdt', orderId: 3, clientOrderId: '' },
        'ORDER_NOT_FOUND',
      ],
      [
        { type: 'CancelOrder', userId: alice, market: 'btc_usdt', orderId: 0, clientOrderId: '' },
        'INVALID_PARAMETER',
      ],
      [
        { type: 'CancelOrder', userId: alice, market: 'btc_usdt', orderId: 3, clientOrderId: 'abcd' },
        'INVALID_PARAMETER',
      ],
      [
        { type: 'CancelOrder', userId: alice, market: 'btc_usdt', orderId: 0, clientOrderId: 'none1' },
        'ORDER_NOT_FOUND',
      ],
      [
        { type: 'CreditDeposit', depositId: 'x', userId: bob, coin: 'bchabc', amount: 1, remark: '' },
        'RETIRED_COIN_NAME',
      ],
      [
        { type: 'CreditDeposit', depositId: 'x', userId: bob, coin: 'doge', amount: 1, remark: '' },
        'UNKNOWN_COIN',
      ],
      [
        { type: 'CreditDeposit', depositId: 'x', userId: bob, coin: 'btc', amount: -1, remark: '' },
        'INVALID_AMOUNT',
      ],
      [
        { type: 'CreditDeposit', depositId: '', userId: bob, coin: 'btc', amount: 1, remark: '' },
        'INVALID_PARAMETER',
      ],
      [
        {
          type: 'CreditDeposit',
          depositId: 'x',
          userId: bob,
          coin: 'btc',
          amount: Number.MAX_SAFE_INTEGER,
          remark: '',
        },
        'VALUE_OUT_OF_RANGE',
      ],
      [
        {
          type: 'RequestWithdrawal',
          userId: bob,
          coin: 'btc',
          address: 'bc1qnowhere',
          amount: 10 ** 12,
          fee: 50_000,
          itransfer: false,
        },
        'WITHDRAW_ADDRESS_UNVERIFIED',
      ],
      [{ type: 'ApproveWithdrawal', withdrawalId: 'nope' }, 'UNKNOWN_REFERENCE'],
      [{ type: 'FailWithdrawal', withdrawalId: 'nope', reason: '' }, 'INVALID_PARAMETER'],
      [{ type: 'RegisterUser', name: 'alice' }, 'INVALID_PARAMETER'],
      [{ type: 'RegisterUser', name: 'bad name' }, 'INVALID_PARAMETER'],
      [{ type: 'SetMarketStatus', market: 'btc_usdt', status: 'closed' as 'halted' }, 'INVALID_PARAMETER'],
      [{ type: 'SetMarketStatus', market: 'nope_usdt', status: 'halted' }, 'UNKNOWN_MARKET'],
      [{ type: 'CancelAllOrdersAfter', userId: alice, market: 'nope' }, 'UNKNOWN_MARKET'],
      [{ type: 'SetFeePreference', userId: 42, usePlatformCoin: true }, 'USER_NOT_FOUND'],
      [{ type: 'Bogus' } as unknown as Command, 'INVALID_PARAMETER'],
    ];
    for (const [cmd, expected] of refusals) {
      const before = stateOf(d.engine);
      const r = d.apply(cmd);
      assert.equal(r.result, expected, JSON.stringify(cmd));
      assert.deepEqual(r.events, [], JSON.stringify(cmd));
      assert.equal(stateOf(d.engine), before, JSON.stringify(cmd));
      d.engine.assertInvariants();
    }
  });

  test('a command out of sequence is a broken invariant, not a result', () => {
    const d = new EngineDriver();
    d.apply({ type: 'RegisterUser', name: 'a' });
    assert.throws(() => d.engine.apply({ type: 'RegisterUser', name: 'b', seq: 1, time: 0 }), /out of order/);
  });

  test('a halted market refuses orders but allows cancels', () => {
    const { d, alice } = tradingDay();
    assert.equal(d.apply({ type: 'SetMarketStatus', market: 'btc_usdt', status: 'halted' }).result, 'OK');
    assert.equal(d.apply(limitOrder(alice, BUY, 2_980_000, 100)).result, 'MARKET_HALTED');
    const r = d.apply({
      type: 'CancelOrder',
      userId: alice,
      market: 'btc_usdt',
      orderId: 3,
      clientOrderId: '',
    });
    assert.equal(r.result, 'OK');
    assert.equal(r.order?.id, 3);
    assert.equal(r.order?.filled, 0);
    const updated = r.events.find((e) => e.type === 'OrderUpdated');
    assert.equal(updated?.type === 'OrderUpdated' && updated.status, 1);
  });
});

describe('matching and events', () => {
  test('a crossing order emits events in the documented order', () => {
    const { d, alice } = tradingDay();
    const r = d.apply(limitOrder(alice, BUY, 3_010_000, 7_000));
    assert.equal(r.result, 'OK');
    assert.deepEqual(types(r.events), [
      'OrderAccepted',
      'BalanceChanged', // freeze
      'TradeExecuted',
      'BalanceChanged', // buyer quote (paid, improvement released)
      'BalanceChanged', // buyer base received
      'BalanceChanged', // buyer fee
      'BalanceChanged', // seller base
      'BalanceChanged', // seller quote
      'BalanceChanged', // seller fee
      'OrderUpdated', // maker done
      'TradeExecuted',
      'BalanceChanged',
      'BalanceChanged',
      'BalanceChanged',
      'BalanceChanged',
      'BalanceChanged',
      'BalanceChanged',
      'OrderUpdated', // maker partial
      'OrderUpdated', // taker done
    ]);
    const trades = r.events.filter((e) => e.type === 'TradeExecuted');
    assert.deepEqual(
      trades.map((t) => [t.price, t.amount, t.makerOrderId]),
      [
        [3_000_000, 5_000, 1],
        [3_010_000, 2_000, 2],
      ],
    );
    d.engine.assertInvariants();
  });

  test('a resting order with no fill emits only acceptance and the freeze', () => {
    const { d, alice } = tradingDay();
    const r = d.apply(limitOrder(alice, BUY, 2_000_000, 100));
    assert.deepEqual(types(r.events), ['OrderAccepted', 'BalanceChanged']);
    assert.equal(d.engine.openOrder(r.orderId as number)?.status, 0);
  });

  test('a batch is all or nothing: one bad order or the total balance refuses every order', () => {
    const { d, alice } = tradingDay();
    const batch = (orders: { price: number; amount: number }[]): Command => ({
      type: 'PlaceOrderBatch',
      userId: alice,
      market: 'btc_usdt',
      side: BUY,
      acctType: 0,
      orders,
    });
    const before = stateOf(d.engine);
    const bad = d.apply(
      batch([
        { price: 2_000_000, amount: 100 },
        { price: 0, amount: 100 },
      ]),
    );
    assert.equal(bad.result, 'INVALID_PRICE');
    assert.match(bad.message ?? '', /order 2 of the batch/);
    // Each order alone fits in 100000 usdt; together they do not.
    const tooMuch = d.apply(
      batch([
        { price: 2_000_000, amount: 300_000 },
        { price: 2_000_000, amount: 300_000 },
      ]),
    );
    assert.equal(tooMuch.result, 'INSUFFICIENT_BALANCE');
    assert.equal(tooMuch.message, 'insufficient balance: available 70100 usdt, required 1200000 usdt');
    assert.equal(d.apply(batch([])).result, 'INVALID_PARAMETER');
    assert.equal(
      d.apply(batch(Array.from({ length: 21 }, () => ({ price: 2_000_000, amount: 100 })))).result,
      'INVALID_PARAMETER',
    );
    assert.equal(stateOf(d.engine), before);
    const ok = d.apply(
      batch([
        { price: 2_000_000, amount: 100 },
        { price: 3_000_000, amount: 100 },
      ]),
    );
    assert.equal(ok.result, 'OK');
    assert.equal(ok.orderIds?.length, 2);
    d.engine.assertInvariants();
  });
});

describe('refusals carry the numbers a user needs (issue 13)', () => {
  test('below the minimum amount or total, and a short balance, say the numbers in coin units', () => {
    const { d, alice, bob } = tradingDay();
    const cases: [Command, string, string][] = [
      [
        limitOrder(alice, BUY, 2_000_000, 9, { market: 'eth_usdt' }),
        'BELOW_MIN_AMOUNT',
        "amount 0.0009 eth is below the market's minimum amount of 0.001 eth",
      ],
      [
        limitOrder(alice, BUY, 100, 1),
        'BELOW_MIN_SIZE',
        "order total 0.0001 usdt is below the market's minimum total of 5 usdt",
      ],
      [
        limitOrder(alice, BUY, 3_000_000, 1_000_000),
        'INSUFFICIENT_BALANCE',
        'insufficient balance: available 70100 usdt, required 3000000 usdt',
      ],
      [
        limitOrder(bob, SELL, 3_000_000, 20_001),
        'INSUFFICIENT_BALANCE',
        'insufficient balance: available 2 btc, required 2.0001 btc',
      ],
    ];
    for (const [cmd, result, message] of cases) {
      const before = stateOf(d.engine);
      const r = d.apply(cmd);
      assert.equal(r.result, result, message);
      assert.equal(r.message, message);
      assert.equal(stateOf(d.engine), before);
    }
  });
});

describe('user names are unique regardless of case (issue 13)', () => {
  test('a new name equal to a taken one ignoring case is refused; lookups ignore case', () => {
    const d = new EngineDriver();
    const alice = d.user('alice');
    const before = stateOf(d.engine);
    const r = d.apply({ type: 'RegisterUser', name: 'Alice', uniqueIgnoringCase: true });
    assert.equal(r.result, 'INVALID_PARAMETER');
    assert.equal(
      r.message,
      "user name 'Alice' is taken: 'alice' exists, and names are unique regardless of case",
    );
    assert.equal(stateOf(d.engine), before);
    assert.equal(d.engine.userId('ALICE'), alice);
    assert.equal(d.engine.userId('alice'), alice);
    assert.equal(d.apply({ type: 'RegisterUser', name: 'bob', uniqueIgnoringCase: true }).result, 'OK');
  });

  test('a history from before the rule, holding alice and Alice, replays and restores unchanged', () => {
    const d = new EngineDriver();
    const lower = d.user('alice');
    // Journals written before issue 13 carry RegisterUser without uniqueIgnoringCase.
    const upper = d.apply({ type: 'RegisterUser', name: 'Alice' }).userId as number;
    assert.notEqual(upper, lower);
    assert.equal(d.engine.userId('alice'), lower);
    assert.equal(d.engine.userId('Alice'), upper);
    assert.equal(d.engine.userId('ALICE'), lower, 'the first registered wins an inexact lookup');
    const restored = Engine.restore(JSON.parse(JSON.stringify(d.engine.snapshot())));
    assert.equal(restored.stateHash(), d.engine.stateHash());
    assert.equal(restored.userId('Alice'), upper);
    assert.equal(restored.userId('ALICE'), lower);
  });
});

describe('funds commands apply once per business id', () => {
  test('deposits: a same-content repeat is a duplicate, other content is refused', () => {
    const d = new EngineDriver();
    const u = d.user('carol');
    const credit = {
      type: 'CreditDeposit',
      depositId: 'tx-1',
      userId: u,
      coin: 'eth',
      amount: 5,
      remark: '',
    } as const;
    assert.equal(d.apply(credit).result, 'OK');
    const again = d.apply(credit);
    assert.equal(again.result, 'OK');
    assert.equal(again.duplicate, true);
    assert.equal(d.apply({ ...credit, amount: 6 }).result, 'DUPLICATE_REFERENCE');
    assert.deepEqual(d.engine.balance(u, 'eth'), { available: 5, frozen: 0 });
  });
});

describe('configuration commands', () => {
  test('coins and markets can be added and changed, but not their decimals or scales', () => {
    const d = new EngineDriver();
    const ltc = {
      name: 'ltc',
      unitDecimal: 8,
      enName: 'LTC',
      cnName: '莱特币',
      showName: 'LTC',
      fundsType: 3,
      canDeposit: true,
      canWithdraw: true,
    };
    assert.equal(d.apply({ type: 'UpsertCoin', coin: ltc }).result, 'OK');
    assert.equal(d.apply({ type: 'UpsertCoin', coin: { ...ltc, unitDecimal: 6 } }).result, 'INVALID_STATE');
    assert.equal(d.apply({ type: 'UpsertCoin', coin: { ...ltc, name: 'hsr' } }).result, 'INVALID_PARAMETER');
    const market = {
      name: 'ltc_usdt',
      base: 'ltc',
      quote: 'usdt',
      priceScale: 2,
      amountScale: 3,
      minAmount: 1,
      minSize: 1_000_000,
      makerFee: 1_000,
      takerFee: 2_000,
      status: 'trading',
    } as const;
    assert.equal(d.apply({ type: 'UpsertMarket', market }).result, 'OK');
    assert.equal(d.apply({ type: 'UpsertMarket', market: { ...market, makerFee: 0 } }).result, 'OK');
    assert.equal(d.engine.market('ltc_usdt')?.makerFee, 0);
    assert.equal(
      d.apply({ type: 'UpsertMarket', market: { ...market, priceScale: 3 } }).result,
      'INVALID_STATE',
    );
    assert.equal(
      d.apply({ type: 'UpsertMarket', market: { ...market, priceScale: 5 } }).result,
      'INVALID_PARAMETER',
    );
    d.engine.assertInvariants();
  });
});

describe("the operator's reads", () => {
  test('spot holdings per coin and resting orders per market, read without a snapshot', () => {
    const { d, alice, bob } = tradingDay();
    d.apply(limitOrder(alice, BUY, 3_000_000, 2_000)); // takes 0.2 of order 1
    const holdings = d.engine.spotHoldings();
    for (const coin of d.engine.coins()) {
      const sum = { available: 0n, frozen: 0n };
      for (const user of [alice, bob]) {
        const b = d.engine.balance(user, coin.name);
        sum.available += BigInt(b?.available ?? 0);
        sum.frozen += BigInt(b?.frozen ?? 0);
      }
      assert.deepEqual(holdings.get(coin.name), sum, coin.name);
    }
    assert.deepEqual([...d.engine.openOrdersByMarket()], [['btc_usdt', 3]]);
  });
});

describe('snapshots and hashes', () => {
  test('restore gives the same state hash, and the restored engine continues identically', () => {
    const { d, alice, bob } = tradingDay();
    d.apply({ type: 'SetFeePreference', userId: alice, usePlatformCoin: true });
    d.apply(limitOrder(alice, BUY, 3_000_000, 2_000, { clientOrderId: 'buy1' }));
    d.apply({ type: 'CancelAllOrdersAfter', userId: bob, market: 'btc_usdt' });
    d.payOut(bob, 'btc', 'bc1qexternal', 100_000, { complete: false });
    const restored = Engine.restore(JSON.parse(JSON.stringify(d.engine.snapshot())));
    assert.equal(restored.stateHash(), d.engine.stateHash());
    const next: Command[] = [
      limitOrder(alice, BUY, 3_010_000, 4_000),
      { type: 'CancelOrder', userId: alice, market: 'btc_usdt', orderId: 0, clientOrderId: 'buy1' },
      { type: 'FireTimers' },
    ];
    let seq = d.seq;
    for (const cmd of next) {
      const time = d.time + 61_000;
      const a = d.engine.apply({ ...cmd, seq: ++seq, time });
      const b = restored.apply({ ...cmd, seq, time });
      assert.deepEqual(b, a);
      d.time = time;
    }
    assert.equal(restored.stateHash(), d.engine.stateHash());
    restored.assertInvariants();
  });

  test('different states have different hashes', () => {
    const a = tradingDay().d;
    const b = tradingDay().d;
    assert.equal(a.engine.stateHash(), b.engine.stateHash());
    b.apply({ type: 'RegisterUser', name: 'zed' });
    assert.notEqual(a.engine.stateHash(), b.engine.stateHash());
  });

  test('assertInvariants detects a corrupted snapshot', () => {
    const { d } = tradingDay();
    const s = JSON.parse(JSON.stringify(d.engine.snapshot()));
    s.users[0][4][2] += 1; // alice's frozen usdt no longer matches her orders
    assert.throws(() => Engine.restore(s), /frozen/);
  });
});

describe('dead-man switch', () => {
  test('nextDeadline tracks the earliest armed timer; firing removes it', () => {
    const { d, alice, bob } = tradingDay();
    assert.equal(d.engine.nextDeadline(), undefined);
    const a = d.apply({ type: 'CancelAllOrdersAfter', userId: bob, market: 'btc_usdt' });
    d.apply({ type: 'CancelAllOrdersAfter', userId: alice, market: 'btc_usdt' });
    assert.equal(d.engine.nextDeadline(), a.deadline);
    d.time = (a.deadline as number) - 2;
    assert.deepEqual(types(d.apply({ type: 'FireTimers' }).events), []);
    d.time = (a.deadline as number) - 1; // the driver adds 1 ms: fires exactly at bob’s deadline
    const fired = d.apply({ type: 'FireTimers' });
    assert.deepEqual(types(fired.events).slice(-1), ['DeadmanFired']);
    assert.equal(d.engine.openOrders(bob).length, 0);
    assert.equal(d.engine.openOrders(alice).length, 1);
    assert.notEqual(d.engine.nextDeadline(), undefined);
  });
});

describe('the exact range', () => {
  test('lifetime credits may pass 2^53 while net holdings stay within it', () => {
    const d = new EngineDriver(UNLIMITED_WITHDRAWALS);
    const u = d.user('whale');
    const credit = (id: string, amount: number) =>
      d.apply({ type: 'CreditDeposit', depositId: id, userId: u, coin: 'xwc', amount, remark: '' });
    assert.equal(credit('d1', 2 ** 52).result, 'OK');
    assert.equal(credit('d2', 2 ** 52).result, 'VALUE_OUT_OF_RANGE'); // would hold 2^53
    const fee = 1_000_000; // 0.01 xwc stays as fee income
    d.payOut(u, 'xwc', 'ext.account_1', 2 ** 52 - fee);
    assert.equal(credit('d3', 2 ** 52).result, 'OK');
    assert.equal(credit('d4', 2 ** 52 - 1 - fee).result, 'OK'); // net 2^53 − 1: the largest exact holding
    assert.equal(credit('d5', 1).result, 'VALUE_OUT_OF_RANGE');
    assert.equal(d.engine.totals('xwc')?.credited, 3n * 2n ** 52n - 1n - BigInt(fee));
    d.engine.assertInvariants();
    assert.equal(
      Engine.restore(JSON.parse(JSON.stringify(d.engine.snapshot()))).stateHash(),
      d.engine.stateHash(),
    );
  });
});

describe('the exact range with the lending pool (issue 29 §5)', () => {
  const fund = (d: EngineDriver, id: string, amount: number) =>
    d.apply({ type: 'FundLendingPool', fundingId: id, coin: 'usdt', amount, dailyRatePpm: 500, days: 10 });

  test('funding the pool twice beyond the range is refused the second time, and changes nothing', () => {
    const d = new EngineDriver();
    const units = 9_000_000_000 * 1_000_000; // 9,000,000,000 usdt: within 2^53 − 1 units once
    assert.equal(fund(d, 'f1', units).result, 'OK');
    const before = stateOf(d.engine);
    const r = fund(d, 'f2', units);
    assert.equal(r.result, 'VALUE_OUT_OF_RANGE');
    assert.match(r.message ?? '', /usdt holdings would leave the exact range/);
    assert.equal(r.events.length, 0);
    assert.equal(stateOf(d.engine), before);
    // The refused funding id is not used up: the same id with an amount that fits is taken.
    assert.equal(fund(d, 'f2', 10_000).result, 'OK');
    d.engine.assertInvariants();
  });

  test('deposits and the pool share one range', () => {
    const d = new EngineDriver();
    const u = d.user('whale');
    const credit = (id: string, amount: number) =>
      d.apply({ type: 'CreditDeposit', depositId: id, userId: u, coin: 'usdt', amount, remark: '' });
    assert.equal(credit('d1', 2 ** 52).result, 'OK');
    assert.equal(fund(d, 'f1', 2 ** 52).result, 'VALUE_OUT_OF_RANGE'); // would hold 2^53
    assert.equal(fund(d, 'f1', 2 ** 52 - 1).result, 'OK'); // 2^53 − 1: the largest exact holding
    const before = stateOf(d.engine);
    assert.equal(credit('d2', 1).result, 'VALUE_OUT_OF_RANGE');
    assert.equal(fund(d, 'f2', 10_000).result, 'VALUE_OUT_OF_RANGE');
    assert.equal(stateOf(d.engine), before);
    d.engine.assertInvariants();
    assert.equal(
      Engine.restore(JSON.parse(JSON.stringify(d.engine.snapshot()))).stateHash(),
      d.engine.stateHash(),
    );
  });
});
