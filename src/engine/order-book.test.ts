import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { BUY, SELL } from '../domain/commands.ts';
import { Order, OrderBook, OrderIndex, OwnerOrders } from './order-book.ts';

let nextId = 1;
const order = (side: 0 | 1, price: number, amount: number): Order =>
  new Order(nextId++, 1, 'btc_usdt', side, 'limit', price, amount, 0, 0, '', 0, false);

test('levels keep price priority on both sides, whatever the insertion order', () => {
  const book = new OrderBook();
  for (const p of [100, 103, 101, 99, 102, 101]) book.add(order(BUY, p, 1));
  for (const p of [110, 107, 109, 108, 107]) book.add(order(SELL, p, 2));
  book.validate();
  assert.deepEqual(book.depth(BUY, 10), [
    [103, 1],
    [102, 1],
    [101, 2],
    [100, 1],
    [99, 1],
  ]);
  assert.deepEqual(book.depth(SELL, 2), [
    [107, 4],
    [108, 2],
  ]);
});

test('removing orders keeps time priority and drops empty levels from any position', () => {
  const book = new OrderBook();
  const a = order(BUY, 100, 1);
  const b = order(BUY, 100, 2);
  const c = order(BUY, 100, 3);
  const d = order(BUY, 98, 1);
  const e = order(BUY, 99, 1);
  for (const o of [a, b, c, d, e]) book.add(o);
  book.remove(b);
  assert.deepEqual(
    [...book.orders()].map((o) => o.id),
    [a.id, c.id, e.id, d.id],
  );
  book.remove(e); // a middle level
  book.remove(a);
  book.remove(c); // the best level empties
  book.validate();
  assert.deepEqual(book.depth(BUY, 5), [[98, 1]]);
  assert.equal(book.size, 1);
});

test('reduce lowers the level total; validate catches a crossed or inconsistent book', () => {
  const book = new OrderBook();
  const bid = order(BUY, 100, 5);
  book.add(bid);
  book.reduce(bid, 2);
  assert.deepEqual(book.depth(BUY, 1), [[100, 3]]);
  book.validate();
  book.add(order(SELL, 100, 1));
  assert.throws(() => book.validate(), /crossed/);
  const other = new OrderBook();
  const o = order(SELL, 5, 1);
  other.add(o);
  o.remaining = 7;
  assert.throws(() => other.validate(), /count\/total mismatch/);
});

const withId = (id: number, userId = 1): Order =>
  new Order(id, userId, 'btc_usdt', BUY, 'limit', 100, 1, 100, 0, '', 0, false);

describe('OrderIndex', () => {
  test('finds, removes and lists orders by id across pages, in id order', () => {
    const index = new OrderIndex();
    const ids = [1, 2, 4095, 4096, 4097, 70_000, 1_000_003];
    for (const id of [...ids].reverse()) index.add(withId(id));
    assert.equal(index.size, ids.length);
    for (const id of ids) assert.equal(index.get(id)?.id, id);
    assert.equal(index.get(3), undefined);
    assert.equal(index.get(5_000_000), undefined);
    assert.deepEqual(
      [...index.values()].map((o) => o.id),
      ids,
    );
    assert.equal(index.delete(4096), true);
    assert.equal(index.delete(4096), false);
    assert.equal(index.delete(12_345), false);
    assert.equal(index.get(4096), undefined);
    assert.equal(index.size, ids.length - 1);
  });

  test('an emptied page and the newest page can be filled again', () => {
    const index = new OrderIndex();
    for (let id = 1; id <= 10_000; id++) index.add(withId(id));
    for (let id = 1; id <= 10_000; id++) index.delete(id);
    assert.equal(index.size, 0);
    assert.deepEqual([...index.values()], []);
    index.add(withId(10_001));
    index.add(withId(5));
    assert.deepEqual(
      [...index.values()].map((o) => o.id),
      [5, 10_001],
    );
  });

  test('refuses an id twice', () => {
    const index = new OrderIndex();
    index.add(withId(9));
    assert.throws(() => index.add(withId(9)), /indexed twice/);
  });
});

describe('OwnerOrders', () => {
  test('keeps resting orders oldest first through adds and removes anywhere', () => {
    const list = new OwnerOrders();
    const os = [1, 2, 3, 4].map((id) => withId(id));
    for (const o of os) list.add(o);
    list.remove(os[1] as Order);
    list.remove(os[3] as Order);
    list.add(withId(5));
    list.remove(os[0] as Order);
    assert.deepEqual(
      [...list].map((o) => o.id),
      [3, 5],
    );
    assert.equal(list.size, 2);
  });
});
