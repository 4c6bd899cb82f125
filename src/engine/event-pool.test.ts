import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { BUY, SELL } from '../domain/commands.ts';
import { ORDER_PARTIAL, type MarginAccountRef } from '../domain/events.ts';
import { EventPool } from './event-pool.ts';
import { Order } from './order-book.ts';

const order = (id: number, side: typeof BUY | typeof SELL): Order => {
  const o = new Order(id, 7, 'btc_usdt', side, 'limit', 101, 5, 505, 1_700_000_000_123, 'c1', 0, false);
  o.filled = 2;
  o.filledValue = 202;
  o.lastTradeId = 9;
  return o;
};
/** A bill as the ledger makes one: the pool's object, its numbers written by the caller. */
const billOf = (
  p: EventPool,
  account: MarginAccountRef | undefined,
  ref: string,
  [available, frozen, deltaAvailable, deltaFrozen, time]: number[],
) => {
  const e = p.bill(
    7,
    account,
    account === undefined ? 'usdt' : 'btc',
    account === undefined ? 'freeze' : 'borrow',
    ref,
  );
  Object.assign(e, { available, frozen, deltaAvailable, deltaFrozen, time });
  return e;
};
const spotBill = (p: EventPool, ref: string) =>
  billOf(p, undefined, ref, [1.5e12, 3e9, -505, 505, 1_700_000_000_123]);
const marginBill = (p: EventPool, ref: string) =>
  billOf(p, { kind: 'cross' }, ref, [4, 0, 4, 0, 1_700_000_000_124]);

describe('EventPool (issue 34)', () => {
  test('off (the default): every event a fresh object, recycled or not', () => {
    const p = new EventPool();
    const a = spotBill(p, '1');
    p.recycle();
    const b = spotBill(p, '2');
    assert.notEqual(a, b);
    assert.notEqual(p.list(), p.list());
    assert.equal(a.ref, '1');
    assert.equal(b.ref, '2');
  });

  test('on: distinct objects until recycled, then the same objects filled in again', () => {
    const p = new EventPool();
    p.enable();
    const a1 = spotBill(p, '1');
    const a2 = spotBill(p, '2');
    const m1 = marginBill(p, '3');
    const t1 = p.trade(4, 'btc_usdt', 101, 2, 202, order(1, BUY), order(2, SELL), 5);
    const u1 = p.orderUpdated(order(1, BUY), ORDER_PARTIAL, null, 5);
    const o1 = p.orderAccepted(order(1, BUY), 5);
    assert.notEqual(a1, a2);
    assert.deepEqual([a1.ref, a2.ref, m1.ref], ['1', '2', '3']);
    p.recycle();
    const b1 = spotBill(p, '11');
    const n1 = marginBill(p, '13');
    const t2 = p.trade(14, 'eth_usdt', 3, 1, 3, order(2, SELL), order(1, BUY), 6);
    assert.equal(b1, a1);
    assert.equal(n1, m1);
    assert.equal(t2, t1);
    assert.equal(p.orderUpdated(order(3, SELL), ORDER_PARTIAL, 'user', 6), u1);
    assert.equal(p.orderAccepted(order(3, SELL), 6), o1);
    assert.equal(b1.ref, '11');
    assert.equal(t2.market, 'eth_usdt');
    assert.equal(t2.takerOrderId, 2);
    assert.equal(spotBill(p, '12'), a2, 'the second bill of the batch is the second object');
    p.recycle();
    const l1 = p.list();
    l1.push(a1, a2);
    const l2 = p.list();
    assert.notEqual(l1, l2);
    p.recycle();
    const l3 = p.list();
    assert.equal(l3, l1);
    assert.equal(l3.length, 0, 'a reused list is emptied');
  });

  test('a reused event reads as a fresh one: the same keys in the same order, the same values', () => {
    const on = new EventPool();
    on.enable();
    const off = new EventPool();
    const make = (p: EventPool) => {
      const trade = p.trade(4, 'btc_usdt', 101, 2, 202, order(1, BUY), order(2, SELL), 5);
      trade.takerFee = 3;
      trade.takerFeeCoin = 'btc';
      return [
        spotBill(p, '1'),
        marginBill(p, '2'),
        p.orderAccepted(order(1, BUY), 5),
        p.orderUpdated(order(1, BUY), ORDER_PARTIAL, 'ioc', 5),
        trade,
      ];
    };
    make(on);
    on.recycle();
    // Different values first, so that every field was rewritten.
    billOf(on, undefined, 'x', [0, 0, 0, 0, 0]);
    billOf(on, { kind: 'isolated', market: 'x' }, 'x', [0, 0, 0, 0, 0]);
    on.recycle();
    assert.equal(JSON.stringify(make(on)), JSON.stringify(make(off)));
    const fresh = make(off);
    assert.equal('account' in (fresh[0] as object), false, 'a spot bill has no account field');
  });
});
