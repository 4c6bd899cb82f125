import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import {
  unwindAt,
  unwindAtFast,
  atOrAboveLine,
  borrowLimit,
  checkBorrowLimit,
  checkTransferOut,
  mustLiquidate,
  ratio,
  riskRate,
  riskRateBp,
  surelyWithinBorrowLimit,
  transferOutLimit,
  unitPrice,
  unitPriceD,
  unwindPrice,
  valuate,
  valuateIsolated,
  type CoinPosition,
} from './lines.ts';
import { DEFAULT_MARGIN_SETTINGS as S } from './settings.ts';

// btc_usdt: both coins with 8 decimals, prices with 2: one tick of one satoshi is 1/100 usdt unit.
const USDT = 100_000_000;
const SAT = 1;
const BTC = 100_000_000 * SAT;
const perTick = unitPrice(1, 2, 8, 8);
const at = (usdtPrice: number): ReturnType<typeof unitPrice> => unitPrice(usdtPrice * 100, 2, 8, 8);
const pos = (coin: string, p: Partial<CoinPosition> = {}): CoinPosition => ({
  coin,
  available: 0,
  frozen: 0,
  principal: 0,
  interest: 0,
  ...p,
});

describe('valuation and risk rate', () => {
  test('a unit price is exact: 30,000.00 usdt per btc is 30,000 usdt units per satoshi', () => {
    assert.deepEqual(at(30_000), ratio(30_000));
    assert.deepEqual(unitPrice(7, 4, 8, 2), ratio(7, 10_000_000_000));
  });

  test('assets and debt of an isolated account at a price; no debt, no risk rate', () => {
    const btc = pos('btc', { available: BTC / 10, frozen: BTC / 10 });
    const usdt = pos('usdt', { available: 1_000 * USDT, principal: 4_000 * USDT, interest: 2 * USDT });
    const v = valuateIsolated(btc, usdt, at(30_000));
    assert.deepEqual(v.assets, ratio(7_000 * USDT));
    assert.deepEqual(v.debt, ratio(4_002 * USDT));
    assert.equal(riskRateBp(v), 17_491); // 1.74912…
    assert.equal(riskRate(valuateIsolated(btc, pos('usdt'), at(1))), undefined);
  });

  test('cross: every coin through the price lookup; an unpriced debt cannot be valued', () => {
    const prices = new Map([
      ['usdt', ratio(1)],
      ['btc', at(20_000)],
    ]);
    const v = valuate(
      [
        pos('usdt', { available: 100 * USDT }),
        pos('btc', { available: BTC, principal: BTC / 2 }),
        pos('doge', { available: 9 }),
      ],
      (c) => prices.get(c),
    );
    assert.deepEqual(v, { assets: ratio(20_100 * USDT), debt: ratio(10_000 * USDT) });
    assert.equal(
      valuate([pos('doge', { principal: 1 })], (c) => prices.get(c)),
      undefined,
    );
  });
});

describe('borrowing limit', () => {
  test('4 × assets without debt at 5× and 1.25; the limit keeps the opening line, one unit more breaks it', () => {
    const usdt = pos('usdt', { available: 1_000 * USDT });
    const btc = pos('btc');
    const v = valuateIsolated(btc, usdt, at(30_000));
    assert.equal(borrowLimit(v, S, ratio(1)), 4_000 * USDT);
    assert.equal(borrowLimit(v, S, at(30_000)), 13_333_333); // 0.13333333 btc, rounded down
    const after = (x: number): ReturnType<typeof valuateIsolated> =>
      valuateIsolated(btc, pos('usdt', { available: 1_000 * USDT + x, principal: x }), at(30_000));
    assert.equal(atOrAboveLine(after(4_000 * USDT), S.startLineBp), true);
    assert.equal(riskRateBp(after(4_000 * USDT)), 12_500);
    assert.equal(atOrAboveLine(after(4_000 * USDT + 1), S.startLineBp), false);
    assert.equal(borrowLimit(after(4_000 * USDT), S, ratio(1)), 0);
  });

  test('the lever multiple binds when the line is looser', () => {
    const loose = { ...S, startLineBp: 11_500 };
    const v = valuateIsolated(pos('btc'), pos('usdt', { available: 1_000 * USDT }), at(1));
    // Line alone: 1000 ÷ 0.15 = 6666.67; multiple: 4 × 1000.
    assert.equal(borrowLimit(v, loose, ratio(1)), 4_000 * USDT);
  });

  test('with debt: 4A − 5D; nothing below the line', () => {
    const v = valuateIsolated(
      pos('btc', { available: BTC / 10 }),
      pos('usdt', { available: 2_000 * USDT, principal: 3_000 * USDT }),
      at(30_000),
    );
    assert.equal(borrowLimit(v, S, ratio(1)), (4 * 5_000 - 5 * 3_000) * USDT);
    const under = valuateIsolated(
      pos('btc'),
      pos('usdt', { available: 1_200 * USDT, principal: 1_000 * USDT }),
      at(1),
    );
    assert.equal(borrowLimit(under, S, ratio(1)), 0);
  });
});

describe('transfer-out limit', () => {
  test('all of the available without debt, what keeps the opening line with debt', () => {
    const free = valuateIsolated(pos('btc'), pos('usdt', { available: 5 * USDT }), at(1));
    assert.equal(transferOutLimit(free, S, 5 * USDT, ratio(1)), 5 * USDT);
    const owing = valuateIsolated(
      pos('btc'),
      pos('usdt', { available: 6_000 * USDT, principal: 4_000 * USDT }),
      at(1),
    );
    assert.equal(transferOutLimit(owing, S, 6_000 * USDT, ratio(1)), 1_000 * USDT);
    const btc = pos('btc', { available: BTC });
    const mixed = valuateIsolated(btc, pos('usdt', { principal: 20_000 * USDT }), at(30_000));
    // Room 30,000 − 25,000 = 5,000 usdt = 0.16666666 btc.
    assert.equal(transferOutLimit(mixed, S, BTC, at(30_000)), 16_666_666);
    const exact = valuateIsolated(
      pos('btc'),
      pos('usdt', { available: 5_000 * USDT, principal: 4_000 * USDT }),
      at(1),
    );
    assert.equal(transferOutLimit(exact, S, 5_000 * USDT, ratio(1)), 0);
  });
});

describe('unwind price', () => {
  test('long: holds 0.2 btc, owes 4,000 usdt: liquidated at or below 21,600.00', () => {
    const btc = pos('btc', { available: BTC / 5 });
    const usdt = pos('usdt', { principal: 4_000 * USDT });
    const u = unwindPrice(btc, usdt, S, perTick);
    assert.deepEqual(u, { side: 'below', priceTicks: 2_160_000 });
    assert.equal(mustLiquidate(valuateIsolated(btc, usdt, at(21_600)), S), true);
    assert.equal(mustLiquidate(valuateIsolated(btc, usdt, unitPrice(2_160_001, 2, 8, 8)), S), false);
  });

  test('short: owes 0.1 btc, holds 4,000 usdt: liquidated at or above 37,037.04 (rounded up)', () => {
    const btc = pos('btc', { principal: BTC / 10 });
    const usdt = pos('usdt', { available: 4_000 * USDT });
    assert.deepEqual(unwindPrice(btc, usdt, S, perTick), { side: 'above', priceTicks: 3_703_704 });
    assert.equal(mustLiquidate(valuateIsolated(btc, usdt, unitPrice(3_703_704, 2, 8, 8)), S), true);
    assert.equal(mustLiquidate(valuateIsolated(btc, usdt, unitPrice(3_703_703, 2, 8, 8)), S), false);
  });

  test('none without debt or when no price reaches the line; at any price when nothing covers the debt', () => {
    assert.equal(unwindPrice(pos('btc', { available: 1 }), pos('usdt'), S, perTick), undefined);
    const safe = unwindPrice(
      pos('btc', { available: BTC }),
      pos('usdt', { available: 2 * USDT, principal: USDT }),
      S,
      perTick,
    );
    assert.equal(safe, undefined);
    assert.deepEqual(unwindPrice(pos('btc'), pos('usdt', { available: USDT, principal: USDT }), S, perTick), {
      side: 'above',
      priceTicks: 0,
    });
  });

  test('property: the tick is exactly where liquidation starts', () => {
    const amount = fc.integer({ min: 0, max: 10 * BTC });
    fc.assert(
      fc.property(amount, amount, amount, amount, (heldB, owedB, heldQ, owedQ) => {
        const b = pos('btc', { available: heldB, principal: owedB });
        const q = pos('usdt', { available: heldQ, principal: owedQ });
        const u = unwindPrice(b, q, S, perTick);
        const liq = (ticks: number): boolean =>
          mustLiquidate(valuateIsolated(b, q, unitPrice(ticks, 2, 8, 8)), S);
        if (u === undefined) {
          for (const t of [1, 100, 3_000_000, 1e12]) assert.equal(liq(t), false);
        } else if (u.side === 'below') {
          assert.equal(liq(u.priceTicks), true);
          assert.equal(liq(u.priceTicks + 1), false);
        } else {
          if (u.priceTicks > 1) assert.equal(liq(u.priceTicks - 1), false);
          assert.equal(liq(Math.max(1, u.priceTicks)), true);
        }
      }),
      { numRuns: 2_000 },
    );
  });
});

describe('limits at and beyond, over random accounts', () => {
  const amount = fc.integer({ min: 0, max: 50 * BTC });
  const ticks = fc.integer({ min: 1, max: 10_000_000 });
  /** Debt within the lever multiple: D ≤ (multiple − 1)(A − D), exactly. */
  const withinMultiple = (v: ReturnType<typeof valuateIsolated>): boolean => {
    const L = BigInt(S.leverMultipleBp - 10_000);
    const a = v.assets;
    const d = v.debt;
    // d × 10_000 ≤ L × (a − d), cross-multiplied over the denominators.
    return d.num * a.den * 10_000n <= L * (a.num * d.den - d.num * a.den);
  };

  test('borrowing the limit keeps the opening line and the multiple; one unit more breaks one of them', () => {
    fc.assert(
      fc.property(amount, amount, amount, amount, ticks, fc.boolean(), (hb, ob, hq, oq, t, inBase) => {
        const price = unitPrice(t, 2, 8, 8);
        const b = pos('btc', { available: hb, principal: ob });
        const q = pos('usdt', { available: hq, principal: oq });
        const v = valuateIsolated(b, q, price);
        const x = borrowLimit(v, S, inBase ? price : ratio(1));
        const after = (n: number): ReturnType<typeof valuateIsolated> =>
          inBase
            ? valuateIsolated({ ...b, available: hb + n, principal: ob + n }, q, price)
            : valuateIsolated(b, { ...q, available: hq + n, principal: oq + n }, price);
        if (x > 0) {
          assert.equal(atOrAboveLine(after(x), S.startLineBp), true);
          assert.equal(withinMultiple(after(x)), true);
        }
        const beyond = after(x + 1);
        assert.equal(atOrAboveLine(beyond, S.startLineBp) && withinMultiple(beyond), false);
      }),
      { numRuns: 2_000 },
    );
  });

  test('transferring the limit out keeps the opening line; one unit more breaks it or exceeds the available', () => {
    fc.assert(
      fc.property(amount, amount, amount, amount, ticks, fc.boolean(), (hb, ob, hq, oq, t, inBase) => {
        const price = unitPrice(t, 2, 8, 8);
        const b = pos('btc', { available: hb, principal: ob });
        const q = pos('usdt', { available: hq, principal: oq });
        const v = valuateIsolated(b, q, price);
        const available = inBase ? hb : hq;
        const y = transferOutLimit(v, S, available, inBase ? price : ratio(1));
        assert.ok(y >= 0 && y <= available);
        const after = (n: number): ReturnType<typeof valuateIsolated> =>
          inBase
            ? valuateIsolated({ ...b, available: hb - n }, q, price)
            : valuateIsolated(b, { ...q, available: hq - n }, price);
        if (y > 0) assert.equal(atOrAboveLine(after(y), S.startLineBp), true);
        if (y + 1 <= available) assert.equal(atOrAboveLine(after(y + 1), S.startLineBp), false);
      }),
      { numRuns: 2_000 },
    );
  });
});

describe('edge checks', () => {
  const usdt = { coin: 'usdt', unitDecimal: 8, price: ratio(1) };
  const v = valuateIsolated(
    pos('btc'),
    pos('usdt', { available: 6_000 * USDT, principal: 4_000 * USDT }),
    at(1),
  );

  test('a borrow at the limit passes, one unit more is refused with the limit in the message', () => {
    const limit = borrowLimit(v, S, ratio(1));
    assert.equal(limit, 4_000 * USDT);
    assert.deepEqual(checkBorrowLimit(v, S, usdt, limit), { ok: true, limit });
    assert.deepEqual(checkBorrowLimit(v, S, usdt, limit + 1), {
      ok: false,
      result: 'OVER_BORROW_LIMIT',
      message: 'borrowing 4000.00000001 usdt is over the limit of 4000',
    });
    assert.equal(checkBorrowLimit(undefined, S, usdt, 1).ok, false);
    const off = checkBorrowLimit(v, { ...S, enabled: false }, usdt, 1);
    assert.equal(off.ok ? 'OK' : off.result, 'MARGIN_NOT_OPEN');
  });

  test('a transfer out at the limit passes, beyond it or beyond the available is refused', () => {
    assert.deepEqual(checkTransferOut(v, S, usdt, 6_000 * USDT, 1_000 * USDT), {
      ok: true,
      limit: 1_000 * USDT,
    });
    const over = checkTransferOut(v, S, usdt, 6_000 * USDT, 1_000 * USDT + 1);
    assert.equal(
      over.ok ? 'OK' : over.message,
      'transferring 1000.00000001 usdt out is over the limit of 1000 usdt',
    );
    const short = checkTransferOut(v, S, usdt, 6_000 * USDT, 6_000 * USDT + 1);
    assert.equal(short.ok ? 'OK' : short.result, 'INSUFFICIENT_BALANCE');
    assert.equal(checkTransferOut(undefined, S, usdt, 5, 1).ok, false);
  });
});

describe('unwind price in doubles (the liquidation index)', () => {
  test('unwindAtFast gives unwindAt’s answer whenever it answers, over amounts of every size', () => {
    const amount = fc.oneof(
      fc.constant(0),
      fc.integer({ min: 1, max: 1_000 }),
      fc.integer({ min: 1, max: 1_000_000_000 }),
      fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
    );
    const perTick = fc.constantFrom(
      unitPrice(1, 2, 8, 6),
      unitPrice(1, 2, 8, 8),
      unitPrice(1, 8, 2, 8),
      unitPrice(7, 0, 0, 3),
    );
    let answered = 0;
    fc.assert(
      fc.property(
        amount,
        amount,
        amount,
        amount,
        fc.constantFrom(10_800, 11_300, 11_500, 12_500, 10_000),
        perTick,
        (hb, ob, hq, oq, line, pt) => {
          const fast = unwindAtFast(hb, ob, hq, oq, line, Number(pt.num), Number(pt.den));
          if (fast === null) return;
          answered++;
          assert.deepEqual(fast, unwindAt(BigInt(hb), BigInt(ob), BigInt(hq), BigInt(oq), BigInt(line), pt));
        },
      ),
      { numRuns: 20_000 },
    );
    assert.ok(answered > 10_000, `answered ${answered} of 20,000`);
  });

  test('near-ties fall back: a position exactly at a tick boundary', () => {
    // 1 btc held, 0 owed; owes q usdt: line at q × 1.08 ÷ (price of 1 btc) — chosen to land on a tick.
    const pt = unitPrice(1, 2, 8, 6);
    for (const oq of [1_000_000, 123_456_789, 2_000_000_000_000, 4_503_599_627_370_495]) {
      const fast = unwindAtFast(100_000_000, 0, 0, oq, 10_800, Number(pt.num), Number(pt.den));
      if (fast !== null) assert.deepEqual(fast, unwindAt(100_000_000n, 0n, 0n, BigInt(oq), 10_800n, pt));
    }
  });
});

describe('borrowing limit in doubles (the express pre-check)', () => {
  /** Assets and debt in doubles, as the engine's pre-check sums them. */
  const doubles = (hb: number, ob: number, hq: number, oq: number, t: number): [number, number] => {
    const p = unitPriceD(t, 2, 8, 8);
    return [hb * p + hq, ob * p + oq];
  };

  test('whenever it says "surely", the exact limit allows the amount; it says so far inside the limit', () => {
    const amount = fc.oneof(
      fc.constant(0),
      fc.integer({ min: 1, max: 1_000 }),
      fc.integer({ min: 1, max: 50 * BTC }),
      fc.integer({ min: 1, max: 2 ** 50 }),
    );
    const ticks = fc.integer({ min: 1, max: 10_000_000 });
    let sure = 0;
    fc.assert(
      fc.property(
        amount,
        amount,
        amount,
        amount,
        ticks,
        fc.boolean(),
        amount,
        (hb, ob, hq, oq, t, inBase, x) => {
          const price = unitPrice(t, 2, 8, 8);
          const v = valuateIsolated(
            pos('btc', { available: hb, principal: ob }),
            pos('usdt', { available: hq, principal: oq }),
            price,
          );
          const [a, d] = doubles(hb, ob, hq, oq, t);
          const limit = borrowLimit(v, S, inBase ? price : ratio(1));
          if (surelyWithinBorrowLimit(a, d, S, x, inBase ? unitPriceD(t, 2, 8, 8) : 1)) {
            sure++;
            assert.ok(x <= limit, `surely within, but ${x} > limit ${limit}`);
          }
          // Half the limit, far from its edge, is always decided in doubles.
          const half = Math.floor(limit / 2);
          if (limit > 1_000_000 && limit < 2 ** 52)
            assert.equal(surelyWithinBorrowLimit(a, d, S, half, inBase ? unitPriceD(t, 2, 8, 8) : 1), true);
        },
      ),
      { numRuns: 20_000 },
    );
    assert.ok(sure > 1_000, `decided ${sure} of 20,000`);
  });

  test('at the limit, one unit beyond it, or with the settings off, it is never sure', () => {
    // 1 btc at 30,000.00 and no debt: the limit is 4 × 30,000 usdt exactly.
    const [a, d] = doubles(BTC, 0, 0, 0, 3_000_000);
    const limit = borrowLimit(
      valuateIsolated(pos('btc', { available: BTC }), pos('usdt'), at(30_000)),
      S,
      ratio(1),
    );
    assert.equal(limit, 120_000 * USDT);
    assert.equal(surelyWithinBorrowLimit(a, d, S, limit, 1), false);
    assert.equal(surelyWithinBorrowLimit(a, d, S, limit + 1, 1), false);
    assert.equal(surelyWithinBorrowLimit(a, d, S, limit - limit / 1_000, 1), true);
    assert.equal(surelyWithinBorrowLimit(a, d, { ...S, enabled: false }, 1, 1), false);
    assert.equal(surelyWithinBorrowLimit(a, d, S, 1, 0), false);
  });
});
