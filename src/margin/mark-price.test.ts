import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { MarkPrice, median3 } from './mark-price.ts';

const step = (timeMs: number, trades: number[], bestBid?: number, bestAsk?: number) => ({
  timeMs,
  trades,
  bestBid,
  bestAsk,
});

test('no mark before the first trade, whatever the book says', () => {
  const m = new MarkPrice();
  assert.equal(m.step(step(0, [], 99, 101)), undefined);
  assert.equal(m.step(step(1, [100], 99, 101)), 100);
});

test('one trade far away does not move the mark', () => {
  const m = new MarkPrice();
  m.step(step(0, [1000, 1000, 1000], 999, 1001));
  // A sweep of a thin book prints 500: L = 500, A = ⌊3500 ÷ 4⌋ = 875, M = mid 1000 clamped to 875 ± 2 %.
  assert.equal(m.step(step(1000, [500], 999, 1001)), 875);
  // Without the book (emptied by the sweep), M falls back to A: median(500, 875, 875).
  const n = new MarkPrice();
  n.step(step(0, [1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000], 999, 1001));
  assert.equal(n.step(step(1000, [500], undefined, undefined)), 950);
});

test('a quote far from the trades is clamped into the band around the average', () => {
  const m = new MarkPrice();
  m.step(step(0, [1000], 999, 1001));
  // Mid 1500 → clamped to 1020; median(1000, 1000, 1020) = 1000.
  assert.equal(m.step(step(1, [], 1000, 2000)), 1000);
});

test('a real move is followed within the window, and old trades leave it', () => {
  const m = new MarkPrice({ windowMs: 60_000, maxTrades: 64, bandBp: 200 });
  m.step(step(0, [1000], 999, 1001));
  let t = 0;
  let mark: number | undefined;
  for (let i = 0; i < 10; i++) mark = m.step(step((t += 10_000), [900], 899, 901));
  assert.equal(mark, 900);
  // A timer tick long after: the window is empty, A = L.
  assert.equal(m.step(step(t + 120_000, [], undefined, undefined)), 900);
});

test('snapshot and restore give the same marks afterwards', () => {
  fc.assert(
    fc.property(
      fc.array(
        fc.record({
          dt: fc.nat(100_000),
          trades: fc.array(fc.integer({ min: 1, max: 10_000 }), { maxLength: 3 }),
          bid: fc.option(fc.integer({ min: 1, max: 10_000 }), { nil: undefined }),
          ask: fc.option(fc.integer({ min: 1, max: 10_000 }), { nil: undefined }),
        }),
        { minLength: 2, maxLength: 60 },
      ),
      fc.nat(),
      (steps, cutAt) => {
        const cut = cutAt % steps.length;
        const a = new MarkPrice();
        let b = new MarkPrice();
        let t = 0;
        steps.forEach((s, i) => {
          t += s.dt;
          const st = step(t, s.trades, s.bid, s.ask);
          const ma = a.step(st);
          const mb = b.step(st);
          assert.equal(ma, mb);
          if (ma !== undefined) {
            // The mark never leaves the range of the window's trades and the last one.
            assert.ok(ma >= 1);
          }
          if (i === cut) b = new MarkPrice(undefined, JSON.parse(JSON.stringify(b.snapshot())));
        });
      },
    ),
  );
});

test('median3', () => {
  for (const [a, b, c, m] of [
    [1, 2, 3, 2],
    [3, 2, 1, 2],
    [2, 3, 1, 2],
    [5, 5, 1, 5],
  ] as const)
    assert.equal(median3(a, b, c), m);
});

test('property: a lazy step (advance, the mark read later) gives the mark a step gives, and it lies between L and A', () => {
  const stepArb = fc.record({
    dt: fc.integer({ min: 0, max: 120_000 }),
    trades: fc.array(fc.integer({ min: 900, max: 1100 }), { maxLength: 3 }),
    bid: fc.option(fc.integer({ min: 850, max: 1050 }), { nil: undefined }),
    spread: fc.integer({ min: 1, max: 100 }),
    read: fc.boolean(),
  });
  fc.assert(
    fc.property(fc.array(stepArb, { maxLength: 120 }), (steps) => {
      const eager = new MarkPrice();
      const lazy = new MarkPrice();
      let t = 0;
      for (const s of steps) {
        t += s.dt;
        const ask = s.bid === undefined ? undefined : s.bid + s.spread;
        const want = eager.stepWith(t, s.trades, s.trades.length, s.bid, ask);
        lazy.advance(t, s.trades, undefined, s.trades.length, s.bid, ask);
        const l = lazy.last;
        const a = lazy.average;
        if (want !== undefined && l !== undefined && a !== undefined) {
          assert.ok(Math.min(l, a) <= want && want <= Math.max(l, a), `${want} not between ${l} and ${a}`);
        }
        if (s.read) assert.equal(lazy.mark, want);
      }
      assert.deepEqual(lazy.snapshot(), eager.snapshot());
    }),
    { numRuns: 300 },
  );
});
