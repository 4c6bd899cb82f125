import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BUY, SELL } from '../domain/commands.ts';
import { Order, OrderBook } from './order-book.ts';

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
