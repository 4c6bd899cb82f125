import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { depthTickLots, DepthMark, depthMarkSettings } from './depth-mark.ts';

// The default venue's btc_usdt: prices in cents (ticks), lots of 0.0001 btc, a tick·lot is one
// usdt unit (10⁻⁶ usdt), the minimum order value 5 usdt: a window of 10,000 usdt.
const D = depthTickLots(5_000_000, 1);
const px = (usdt: number): number => Math.round(usdt * 100);
const lots = (btc: number): number => Math.round(btc * 10_000);
const fresh = (price = px(30_000)): DepthMark => {
  const m = new DepthMark(depthMarkSettings(D));
  m.seed(price);
  return m;
};

test('the window is 2,000 minimum order values: 10,000 usdt in btc_usdt', () => {
  assert.equal(D, 10_000_000_000);
  assert.equal(depthTickLots(0, 1), 1);
  assert.equal(depthTickLots(5, 0), 1);
});

test('no mark before the first trade; the first trade seeds a full window', () => {
  const m = new DepthMark(depthMarkSettings(D));
  assert.equal(m.mark, undefined);
  assert.equal(m.take(px(30_000), 1), px(30_000));
  assert.ok(m.value >= D);
});

test('one small trade far away barely moves the mark (issue 29: 0.0001 btc at 200,000)', () => {
  const m = fresh();
  // It counts at 30,300 (1 % above the mark) with one lot of a 3,334-lot window.
  const mark = m.take(px(200_000), lots(0.0001));
  assert.equal(mark, px(30_000.08));
  assert.equal(m.last, px(200_000));
});

test('a sweep then 28 tiny wash prints move the mark by well under 1 % (issue 29)', () => {
  const m = fresh();
  // The sweep: 0.3 btc through bids 29,900 … 29,500.
  for (const p of [29_900, 29_800, 29_700, 29_600, 29_500, 29_500]) m.take(px(p), lots(0.05));
  const afterSweep = m.mark as number;
  for (let i = 0; i < 28; i++) m.take(px(22_500), lots(0.0003));
  const mark = m.mark as number;
  assert.ok(mark > px(29_600), `mark ${mark}`);
  assert.ok(afterSweep - mark < px(30_000) / 100, `moved ${afterSweep - mark} ticks`);
});

test('a real move is followed as value trades at the new level; old value leaves', () => {
  const m = fresh();
  // 10 % down at once, in trades of 0.4 btc (about one window each): each counts 1 % below the mark.
  let n = 0;
  while ((m.mark as number) > px(27_000)) {
    m.take(px(27_000), lots(0.4));
    n++;
  }
  assert.equal(m.mark, px(27_000));
  assert.equal(n, 11);
});

test('a trade at a give-away price counts with the value it traded: next to nothing', () => {
  const m = fresh();
  // 0.34 btc sold at 0.01 (between accomplices: value moves between them, the mark should not).
  for (let i = 0; i < 1_000; i++) m.take(1, lots(0.34));
  assert.equal(m.mark, px(30_000));
  // 1 btc sold at 15,000: it counts as ⌊10,000 × 15,000 ÷ 29,700⌋ = 5,050 lots at 29,700.
  m.take(px(15_000), lots(1));
  assert.equal(m.mark, px(29_700));
});

test('trades above the window are capped: a huge trade is one full window, not more', () => {
  const m = fresh();
  m.take(px(29_700), lots(1_000));
  assert.equal(m.mark, px(29_700));
  assert.ok(m.value < D + px(29_700));
});

test('no number of tiny trades flushes the window: the oldest slots merge', () => {
  const m = new DepthMark({ depth: D, stepBp: 100, maxSlots: 8 });
  m.seed(px(30_000));
  for (let i = 0; i < 1_000; i++) m.take(px(29_800), 1);
  // 1,000 lots at 29,800 against a window of 3,334 lots: the seed still weighs most.
  assert.ok((m.mark as number) > px(29_800), `mark ${m.mark}`);
  assert.ok(m.snapshot().slots?.length === 8);
});

const tradeArb = fc.record({
  price: fc.integer({ min: 1, max: px(300_000) }),
  lots: fc.integer({ min: 1, max: lots(2) }),
});

test('property: a snapshot restores the same marks afterwards', () => {
  fc.assert(
    fc.property(fc.array(tradeArb, { minLength: 1, maxLength: 80 }), fc.nat(), (trades, cutAt) => {
      const cut = cutAt % trades.length;
      const a = new DepthMark({ depth: D, stepBp: 100, maxSlots: 16 });
      let b = new DepthMark({ depth: D, stepBp: 100, maxSlots: 16 });
      trades.forEach((t, i) => {
        assert.equal(a.take(t.price, t.lots), b.take(t.price, t.lots));
        if (i === cut)
          b = new DepthMark(
            { depth: D, stepBp: 100, maxSlots: 16 },
            JSON.parse(JSON.stringify(b.snapshot())),
          );
      });
      assert.deepEqual(a.snapshot(), b.snapshot());
    }),
    { numRuns: 200 },
  );
});

test('property: a window inside (lo, hi) and trades inside keep the mark inside (the engine defers on it)', () => {
  fc.assert(
    fc.property(
      fc.array(fc.integer({ min: px(29_000), max: px(31_000) }), { maxLength: 40 }),
      fc.array(
        fc.record({
          price: fc.integer({ min: px(29_500), max: px(30_500) }),
          lots: fc.integer({ min: 1, max: 5_000 }),
        }),
        {
          maxLength: 40,
        },
      ),
      (history, more) => {
        const m = new DepthMark({ depth: D, stepBp: 100, maxSlots: 8 });
        m.seed(px(30_000));
        for (const p of history) m.take(p, 700);
        const lo = px(29_400);
        const hi = px(30_600);
        if (!m.within(lo, hi)) return;
        for (const t of more) {
          const mark = m.take(t.price, t.lots);
          assert.ok(lo < mark && mark < hi, `${mark} outside (${lo}, ${hi})`);
        }
      },
    ),
    { numRuns: 300 },
  );
});

/**
 * The stated bound (docs/margin.md "Mark price"): from a settled mark P, trades worth V at the mark
 * (their lots × P), V ≤ D, move it by at most 2 × step × V ÷ D × P, and one tick — whatever their
 * prices, sizes and order.
 */
test('property: trades worth V ≤ D at the mark move it by at most 2 × step × V ÷ D (and a tick)', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: px(100), max: px(100_000) }),
      fc.array(
        fc.record({
          up: fc.boolean(),
          far: fc.double({ min: 0, max: 10, noNaN: true }),
          share: fc.integer({ min: 1, max: 1_000 }),
        }),
        { minLength: 1, maxLength: 60 },
      ),
      fc.integer({ min: 1, max: 1_000 }),
      (start, trades, budgetPerMille) => {
        const m = fresh(start);
        const budget = Math.floor((D * budgetPerMille) / 1_000);
        const totalShares = trades.reduce((s, t) => s + t.share, 0);
        let spent = 0;
        for (const t of trades) {
          const q = Math.floor((budget * t.share) / totalShares / start);
          if (q < 1) continue;
          const price = Math.max(1, Math.round(start * (t.up ? 1 + t.far : 1 / (1 + t.far))));
          spent += q * start;
          m.take(price, q);
        }
        const moved = Math.abs((m.mark as number) - start);
        const bound = (2 * 0.01 * spent * start) / D + 1;
        assert.ok(moved <= bound, `moved ${moved} > ${bound} after ${spent} of ${D}`);
      },
    ),
    { numRuns: 500 },
  );
});
