import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { mustLiquidate, riskRateBp, unitPrice, valuateIsolated, type CoinPosition } from './lines.ts';
import { CrossWatch, holds, LiquidationIndex, triggersOf } from './liquidation-index.ts';
import { OrderedSet } from './ordered-set.ts';
import { DEFAULT_MARGIN_SETTINGS as S } from './settings.ts';

// btc_usdt: base 8 decimals, quote 8 decimals, price scale 2 (one tick = 0.01 USDT).
const PER_TICK = unitPrice(1, 2, 8, 8);
const pos = (coin: string, held: number, owed: number): CoinPosition => ({
  coin,
  available: held,
  frozen: 0,
  principal: owed,
  interest: 0,
});
const USDT = 100_000_000;
const BTC = 100_000_000;

test('ordered set: walks from either end, deletes exactly', () => {
  const s = new OrderedSet();
  for (const [p, k] of [
    [5, 'b'],
    [3, 'a'],
    [5, 'a'],
    [9, 'z'],
  ] as const)
    s.insert(p, k);
  assert.deepEqual(s.atOrAbove(5), ['z', 'b', 'a']);
  assert.deepEqual(s.atOrBelow(5), ['a', 'a', 'b']);
  assert.equal(s.delete(5, 'a'), true);
  assert.equal(s.delete(5, 'a'), false);
  assert.deepEqual(s.entries(), [
    [3, 'a'],
    [5, 'b'],
    [9, 'z'],
  ]);
  assert.equal(s.size, 3);
});

test('a long account: liquidated at its unwind tick, flagged at the notice tick, cleared above 1.15', () => {
  // 500 USDT and 0.15 BTC owing 4,002 USDT (docs/margin.md's example): liquidated at ≤ 25,481.06.
  const t = triggersOf(pos('btc', 15_000_000, 0), pos('usdt', 500 * USDT, 4_002 * USDT), S, PER_TICK);
  assert.ok(t);
  assert.deepEqual(t.liquidation, { op: 'le', priceTicks: 2_548_106 });
  // Notice: (1.13 × 4002 − 500) ÷ 0.15 = 26,815.06; clear above (1.15 × 4002 − 500) ÷ 0.15 = 27,348.66.
  assert.deepEqual(t.notice, { op: 'le', priceTicks: 2_681_506 });
  assert.deepEqual(t.clear, { op: 'ge', priceTicks: 2_734_867 });
  const ix = new LiquidationIndex();
  const k = 'isolated:1:btc_usdt';
  assert.deepEqual(ix.update(k, t, 3_000_000), { liquidate: [], flagged: [], cleared: [] });
  assert.deepEqual(ix.move(2_681_507), { liquidate: [], flagged: [], cleared: [] });
  assert.deepEqual(ix.move(2_681_506), { liquidate: [], flagged: [k], cleared: [] });
  // Back above the notice line but below the hysteresis line: still flagged.
  assert.deepEqual(ix.move(2_700_000), { liquidate: [], flagged: [], cleared: [] });
  assert.equal(ix.isFlagged(k), true);
  assert.deepEqual(ix.move(2_734_867), { liquidate: [], flagged: [], cleared: [k] });
  assert.deepEqual(ix.move(2_548_107), { liquidate: [], flagged: [k], cleared: [] });
  assert.deepEqual(ix.move(2_548_106), { liquidate: [k], flagged: [], cleared: [] });
  ix.remove(k);
  assert.equal(ix.size, 0);
  assert.deepEqual(ix.move(1), { liquidate: [], flagged: [], cleared: [] });
});

test('a short account: liquidated at or above its tick', () => {
  // 5,000 USDT owing 0.15 BTC: liquidated when 5000 ≤ 1.08 × 0.15 × p, p ≥ 30,864.20 (rounded up).
  const t = triggersOf(pos('btc', 0, 15_000_000), pos('usdt', 5_000 * USDT, 0), S, PER_TICK);
  assert.deepEqual(t?.liquidation, { op: 'ge', priceTicks: 3_086_420 });
  const ix = new LiquidationIndex();
  ix.update('s', t, 3_000_000);
  assert.deepEqual(ix.move(3_086_419).liquidate, []);
  assert.deepEqual(ix.move(3_086_420).liquidate, ['s']);
});

test('no debt: out of the index; an update at a mark past the line reports it at once', () => {
  assert.equal(triggersOf(pos('btc', 1, 0), pos('usdt', 1, 0), S, PER_TICK), undefined);
  const ix = new LiquidationIndex();
  const t = triggersOf(pos('btc', 15_000_000, 0), pos('usdt', 500 * USDT, 4_002 * USDT), S, PER_TICK);
  assert.deepEqual(ix.update('a', t, 2_000_000), { liquidate: ['a'], flagged: ['a'], cleared: [] });
  assert.deepEqual(ix.update('a', undefined, 2_000_000), { liquidate: [], flagged: [], cleared: ['a'] });
  assert.equal(ix.size, 0);
});

test('an entry is kept through leaving and re-entering the index; a restored flag is taken by its first update', () => {
  const t = triggersOf(pos('btc', 15_000_000, 0), pos('usdt', 500 * USDT, 4_002 * USDT), S, PER_TICK);
  const ix = new LiquidationIndex(['a', 'b']);
  const a = ix.entry('a');
  assert.equal(ix.entry('a'), a, 'one entry per key');
  assert.equal(ix.size, 0, 'an entry made is not in the index');
  assert.deepEqual(ix.snapshot(), ['a', 'b'], 'restored flags stay until taken');
  // Flagged from the snapshot and above the clear line: the first update clears it.
  assert.deepEqual(ix.updateEntry(a, t, 2_800_000), { liquidate: [], flagged: [], cleared: ['a'] });
  assert.deepEqual(ix.snapshot(), ['b']);
  assert.deepEqual(ix.triggers('a'), t);
  assert.equal(ix.size, 1);
  // Repaid: out of the index (no triggers), the entry kept; borrowing again links it again.
  ix.updateEntry(a, undefined, 2_800_000);
  assert.equal(ix.size, 0);
  assert.equal(ix.triggers('a'), undefined);
  assert.equal(ix.entry('a'), a);
  assert.deepEqual(
    ix.move(1),
    { liquidate: [], flagged: [], cleared: [] },
    'an unlinked entry is never crossed',
  );
  assert.deepEqual(ix.updateEntry(a, t, 2_600_000), { liquidate: [], flagged: ['a'], cleared: [] });
  assert.deepEqual(ix.scan(2_548_106), ['a']);
  ix.remove('a');
  assert.equal(ix.isFlagged('a'), false, 'the flag leaves with the account');
  assert.equal(ix.size, 0);
});

const position = fc.record({
  heldB: fc.nat(2 * BTC),
  owedB: fc.oneof(fc.constant(0), fc.nat(BTC)),
  heldQ: fc.nat(50_000 * USDT),
  owedQ: fc.oneof(fc.constant(0), fc.nat(50_000 * USDT)),
});

test('property: the liquidation trigger holds exactly when the risk rate at the mark is at or below 1.08', () => {
  fc.assert(
    fc.property(position, fc.integer({ min: 1, max: 10_000_000 }), (p, mark) => {
      const base = pos('btc', p.heldB, p.owedB);
      const quote = pos('usdt', p.heldQ, p.owedQ);
      const t = triggersOf(base, quote, S, PER_TICK);
      const v = valuateIsolated(base, quote, unitPrice(mark, 2, 8, 8));
      assert.equal(t !== undefined && holds(t.liquidation, mark), mustLiquidate(v, S));
      if (t !== undefined) {
        const bp = riskRateBp(v) as number;
        if (holds(t.notice, mark)) assert.ok(bp <= S.noticeLineBp);
        // The clear trigger holds exactly above 1.15.
        const exact = v.assets.num * 10_000n * v.debt.den > 11_500n * v.debt.num * v.assets.den;
        assert.equal(holds(t.clear, mark), exact);
      }
    }),
    { numRuns: 2000 },
  );
});

test('property: every move returns exactly the accounts a full scan finds, and flags as a scan would', () => {
  fc.assert(
    fc.property(
      fc.array(
        fc.oneof(
          fc.record({ kind: fc.constant('set' as const), acct: fc.nat(40), p: position }),
          fc.record({ kind: fc.constant('remove' as const), acct: fc.nat(40) }),
          fc.record({ kind: fc.constant('move' as const), mark: fc.integer({ min: 1, max: 8_000_000 }) }),
        ),
        { maxLength: 150 },
      ),
      (ops) => {
        const ix = new LiquidationIndex();
        const flags = new Map<string, boolean>();
        const triggers = new Map<string, NonNullable<ReturnType<typeof triggersOf>>>();
        let mark = 3_000_000;
        for (const op of ops) {
          if (op.kind === 'move') {
            mark = op.mark;
            // Strictly between the edges, a move crosses nothing and changes nothing.
            const quiet = ix.lowEdge() < mark && mark < ix.highEdge();
            const version = ix.version;
            const got = ix.move(mark);
            if (quiet) {
              assert.equal(got.liquidate.length + got.flagged.length + got.cleared.length, 0);
              assert.equal(ix.version, version);
            }
            assert.deepEqual(got.liquidate, ix.scan(mark));
            const wantFlag: string[] = [];
            const wantClear: string[] = [];
            for (const [k, t] of [...triggers].sort(([a], [b]) => (a < b ? -1 : 1))) {
              if (!flags.get(k) && holds(t.notice, mark)) {
                wantFlag.push(k);
                flags.set(k, true);
              } else if (flags.get(k) && holds(t.clear, mark)) {
                wantClear.push(k);
                flags.set(k, false);
              }
            }
            assert.deepEqual(got.flagged, wantFlag);
            assert.deepEqual(got.cleared, wantClear);
          } else {
            const key = `isolated:${op.acct}:btc_usdt`;
            if (op.kind === 'remove') {
              ix.remove(key);
              triggers.delete(key);
              flags.delete(key);
              continue;
            }
            const t = triggersOf(
              pos('btc', op.p.heldB, op.p.owedB),
              pos('usdt', op.p.heldQ, op.p.owedQ),
              S,
              PER_TICK,
            );
            ix.update(key, t, mark);
            if (t === undefined) {
              triggers.delete(key);
              flags.delete(key);
            } else {
              triggers.set(key, t);
              const was = flags.get(key) ?? false;
              flags.set(key, was ? !holds(t.clear, mark) : holds(t.notice, mark));
            }
          }
          for (const [k, f] of flags) assert.equal(ix.isFlagged(k), f, k);
        }
      },
    ),
    { numRuns: 300 },
  );
});

test('cross watch: the accounts holding or owing a moved coin, in key order', () => {
  const w = new CrossWatch();
  w.update('cross:2', ['btc', 'usdt']);
  w.update('cross:1', ['eth']);
  w.update('cross:3', ['btc']);
  assert.deepEqual(w.touched(['btc', 'usdt']), ['cross:2', 'cross:3']);
  w.update('cross:3', []);
  assert.deepEqual(w.touched(['btc', 'eth']), ['cross:1', 'cross:2']);
});

test('snapshot: the flags survive a restore, even in the hysteresis band where re-checking would drop them', () => {
  const t = triggersOf(pos('btc', 15_000_000, 0), pos('usdt', 500 * USDT, 4_002 * USDT), S, PER_TICK);
  const ix = new LiquidationIndex();
  ix.update('a', t, 2_600_000); // 1.13 crossed: flagged
  ix.move(2_700_000); // between 1.13 and 1.15: still flagged
  assert.deepEqual(ix.snapshot(), ['a']);
  const restored = new LiquidationIndex(ix.snapshot());
  assert.deepEqual(restored.update('a', t, 2_700_000), { liquidate: [], flagged: [], cleared: [] });
  assert.equal(restored.isFlagged('a'), true);
  assert.deepEqual(restored.move(2_734_867).cleared, ['a']);
  // Without the snapshot the flag would be lost.
  const fresh = new LiquidationIndex();
  fresh.update('a', t, 2_700_000);
  assert.equal(fresh.isFlagged('a'), false);
});
