import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import {
  CrossBound,
  crossNextOrder,
  crossState,
  fastDecision,
  tolerance,
  type CrossMarket,
} from './cross-risk.ts';
import { ratio, riskRate, valuate, type CoinPosition, type Ratio } from './lines.ts';
import { Liquidations } from './liquidation.ts';
import { LendingBook } from './lending-book.ts';
import { LoanBook } from './loans.ts';
import { DEFAULT_MARGIN_SETTINGS as S } from './settings.ts';

const pos = (coin: string, held: number, owed = 0): CoinPosition => ({
  coin,
  available: held,
  frozen: 0,
  principal: owed,
  interest: 0,
});

describe('crossState', () => {
  test('flag at ≤ 1.13, cleared only above 1.15, liquidation at ≤ 1.08', () => {
    const r = (x: number): Ratio => ratio(x, 10_000);
    assert.deepEqual(crossState(r(11_301), false, S), { flagged: false, liquidate: false });
    assert.deepEqual(crossState(r(11_300), false, S), { flagged: true, liquidate: false });
    assert.deepEqual(crossState(r(11_500), true, S), { flagged: true, liquidate: false });
    assert.deepEqual(crossState(r(11_501), true, S), { flagged: false, liquidate: false });
    assert.deepEqual(crossState(r(10_800), false, S), { flagged: true, liquidate: true });
    assert.deepEqual(crossState(undefined, true, S), { flagged: false, liquidate: false });
  });
});

describe('fastDecision', () => {
  test('when it decides, it decides as the exact rate; near a line or at the liquidation line it defers', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 10n ** 6n, max: 10n ** 15n }),
        fc.integer({ min: 10_700, max: 11_700 }),
        fc.bigInt({ min: -1000n, max: 1000n }),
        fc.boolean(),
        (den, k, jitter, was) => {
          // Rates around the lines, some within a few units of one.
          const num = (den * BigInt(k)) / 10_000n + jitter;
          if (num <= 0n) return;
          const fast = fastDecision(Number(num) / Number(den), was, S);
          if (fast === undefined) return;
          assert.deepEqual(fast.state, crossState({ num, den }, was, S));
          assert.ok(fast.tol <= tolerance({ num, den }, fast.state.flagged, S) + 1e-12);
        },
      ),
      { numRuns: 2000, seed: 15 },
    );
    assert.equal(fastDecision(1.13, false, S), undefined);
    assert.equal(fastDecision(1.07, false, S), undefined);
    assert.deepEqual(fastDecision(1.14, true, S)?.state, { flagged: true, liquidate: false });
  });
});

describe('CrossBound', () => {
  test('never misses a line: an account not popped by any move has not changed state (random paths, two markets)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 400 }), // btc held, × 0.01
        fc.integer({ min: 1, max: 400 }), // eth held
        fc.integer({ min: 1, max: 4000 }), // usdt owed
        fc.array(fc.tuple(fc.boolean(), fc.integer({ min: -300, max: 300 })), {
          minLength: 1,
          maxLength: 40,
        }),
        (btc, eth, owed, moves) => {
          const marks = [30_000, 2_000];
          const positions = [pos('btc', btc), pos('eth', eth), pos('usdt', 0, owed * 100)];
          const rateAt = (m: readonly number[]): Ratio | undefined => {
            const v = valuate(positions, (c) =>
              c === 'btc' ? ratio(m[0] as number) : c === 'eth' ? ratio(m[1] as number) : ratio(1, 100),
            );
            return v === undefined ? undefined : riskRate(v);
          };
          const b = new CrossBound();
          let flagged = false;
          let r = rateAt(marks);
          flagged = crossState(r, flagged, S).flagged;
          b.set(1, tolerance(r, flagged, S), [
            [0, marks[0] as number],
            [1, marks[1] as number],
          ]);
          for (const [which, bp] of moves) {
            const i = which ? 0 : 1;
            marks[i] = Math.max(1, Math.round(((marks[i] as number) * (10_000 + bp)) / 10_000));
            const due = new Set<number>();
            b.due(i, marks[i] as number, due);
            r = rateAt(marks);
            const st = crossState(r, flagged, S);
            if (due.has(1)) {
              flagged = st.flagged;
              b.set(1, tolerance(r, flagged, S), [
                [0, marks[0] as number],
                [1, marks[1] as number],
              ]);
            } else assert.deepEqual(st, { flagged, liquidate: false }, 'a state change the bound missed');
          }
        },
      ),
      { numRuns: 300, seed: 15 },
    );
  });

  test('an interval kept across fills is still safe: no state change the bound misses (random fills and moves)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 400 }), // btc held, × 0.01
        fc.integer({ min: 1, max: 4000 }), // usdt owed
        fc.array(
          fc.oneof(
            fc.tuple(fc.constant('move' as const), fc.integer({ min: -300, max: 300 })),
            fc.tuple(fc.constant('fill' as const), fc.integer({ min: -40, max: 40 })),
          ),
          { minLength: 1, maxLength: 60 },
        ),
        (btc0, owed0, events) => {
          let mark = 30_000;
          let btc = btc0;
          let owed = owed0 * 100;
          const rate = (): Ratio | undefined => {
            const v = valuate([pos('btc', btc), pos('usdt', 0, owed)], (c) =>
              c === 'btc' ? ratio(mark) : ratio(1, 100),
            );
            return v === undefined ? undefined : riskRate(v);
          };
          const b = new CrossBound();
          let flagged = crossState(rate(), false, S).flagged;
          b.set(1, tolerance(rate(), flagged, S), [[0, mark]]);
          for (const [kind, x] of events) {
            if (kind === 'fill') {
              // A fill: the account's position changes, it is valued again and placed (or kept).
              btc = Math.max(1, btc + x);
              owed = Math.max(1, owed + x * 50);
              const st = crossState(rate(), flagged, S);
              flagged = st.flagged;
              b.set(1, tolerance(rate(), flagged, S), [[0, mark]]);
              continue;
            }
            mark = Math.max(1, Math.round((mark * (10_000 + x)) / 10_000));
            const due = new Set<number>();
            b.due(0, mark, due);
            const st = crossState(rate(), flagged, S);
            if (due.has(1)) {
              flagged = st.flagged;
              b.set(1, tolerance(rate(), flagged, S), [[0, mark]]);
            } else assert.deepEqual(st, { flagged, liquidate: false }, 'a state change the bound missed');
          }
        },
      ),
      { numRuns: 500, seed: 16 },
    );
  });

  test('a valuation whose interval contains the one placed keeps it (no heap change); one that does not replaces it', () => {
    const b = new CrossBound();
    b.set(7, 0.08, [[0, 1000]]);
    const v = b.version(0);
    const [lo, hi] = [b.lowEdge(0), b.highEdge(0)];
    // A safer account at the same mark, and one a little less safe at a mark moved a little: kept.
    b.set(7, 0.2, [[0, 1000]]);
    b.set(7, 0.075, [[0, 1001]]);
    assert.equal(b.version(0), v);
    assert.deepEqual([b.lowEdge(0), b.highEdge(0)], [lo, hi]);
    // Much less safe: the narrower interval replaces it.
    b.set(7, 0.02, [[0, 1000]]);
    assert.notEqual(b.version(0), v);
    assert.ok(b.highEdge(0) < hi && b.lowEdge(0) > lo);
    // Other markets: replaced.
    const w = b.version(0);
    b.set(7, 0.5, [
      [0, 1000],
      [1, 50],
    ]);
    assert.notEqual(b.version(0), w);
  });

  test('a price wavering inside the interval pops nothing; leaving it pops the account once', () => {
    const b = new CrossBound();
    b.set(7, 0.05, [[0, 1000]]);
    const due = new Set<number>();
    for (let i = 0; i < 1000; i++) b.due(0, 1000 + (i % 3) - 1, due);
    assert.equal(due.size, 0);
    b.due(0, 1060, due);
    assert.deepEqual([...due], [7]);
    due.clear();
    b.due(0, 2000, due);
    assert.equal(due.size, 0, 'popped once until placed again');
  });
});

describe('crossNextOrder', () => {
  const market = (base: string, quote: string, mark: number): CrossMarket => ({
    name: `${base}_${quote}`,
    base,
    quote,
    perTick: ratio(1),
    lotUnits: 1,
    mark,
  });
  const venue = new Map([
    ['btc_usdt', market('btc', 'usdt', 100)],
    ['eth_btc', market('eth', 'btc', 10)],
    ['eth_usdt', market('eth', 'usdt', 1000)],
  ]);
  const find = (b: string, q: string): CrossMarket | undefined => venue.get(`${b}_${q}`);
  // nextOrder reads no loan: an empty book will do.
  const liq = new Liquidations(new LoanBook(new LendingBook(() => undefined), () => undefined));

  test('debts in name order, surplus coins in name order, the direct market first', () => {
    // Owes usdt; holds btc and eth: btc (first by name) sells through btc_usdt.
    const o = crossNextOrder(liq, [pos('usdt', 0, 500), pos('eth', 3), pos('btc', 4)], find, 'usdt');
    assert.deepEqual(o, { side: 'sell', priceTicks: 97, amount: 4, market: 'btc_usdt' });
  });

  test('an owed base coin is bought through the market quoted in the surplus coin (as a short)', () => {
    const o = crossNextOrder(liq, [pos('btc', 0, 2), pos('usdt', 1000)], find, 'usdt');
    assert.deepEqual(o, { side: 'buy', priceTicks: 103, amount: 2, market: 'btc_usdt' });
  });

  test('nothing to trade: undefined', () => {
    assert.equal(crossNextOrder(liq, [pos('usdt', 10, 5), pos('btc', 1)], find, 'usdt'), undefined);
    assert.equal(crossNextOrder(liq, [pos('usdt', 0, 5)], find, 'usdt'), undefined);
  });
});
