import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  convertFeeToZb,
  feeFloor,
  formatBigUnitsTrim,
  formatUnits,
  formatUnitsTrim,
  mulDivFloor,
  parseDecimal,
  roundToStep,
  safeMul,
  unitsToNumber,
} from './money.ts';

describe('parseDecimal', () => {
  test('parses plain decimals into integer units of the scale', () => {
    assert.equal(parseDecimal('30000', 2), 3_000_000);
    assert.equal(parseDecimal('30000.5', 2), 3_000_050);
    assert.equal(parseDecimal('0.0001', 4), 1);
    assert.equal(parseDecimal('007.10', 2), 710);
    assert.equal(parseDecimal('0', 8), 0);
  });

  test('accepts zeros beyond the scale (the value is exact) but refuses real extra decimals', () => {
    assert.equal(parseDecimal('1.2300', 2), 123);
    assert.equal(parseDecimal('1.231', 2), undefined);
    assert.equal(parseDecimal('0.00001', 4), undefined);
  });

  test('refuses anything that is not plain non-negative decimal text', () => {
    for (const bad of [
      '',
      '-1',
      '+1',
      '1e',
      'e3',
      '1e3.5',
      '-1e3',
      '1e--3',
      '1.',
      '.5',
      ' 1',
      '1 ',
      '0x10',
      'NaN',
      'Infinity',
      '1,5',
      '１',
    ]) {
      assert.equal(parseDecimal(bad, 4), undefined, bad);
    }
  });

  test('converts exponent notation exactly, by moving the point in the text', () => {
    assert.equal(parseDecimal('5e-05', 5), 5);
    assert.equal(parseDecimal('5e-05', 8), 5000);
    assert.equal(parseDecimal('1.5E+3', 0), 1500);
    assert.equal(parseDecimal('1e3', 2), 100_000);
    assert.equal(parseDecimal('0.1e1', 0), 1);
    assert.equal(parseDecimal('12.34e-1', 3), 1234);
    assert.equal(parseDecimal('3e0', 1), 30);
    assert.equal(parseDecimal('0e999999', 4), 0);
    // 1.1e-05 is not exactly representable as a double; here it is exact.
    assert.equal(parseDecimal('1.1e-05', 6), 11);
  });

  test('exponent notation still refuses decimals beyond the scale and unsafe values', () => {
    assert.equal(parseDecimal('5e-05', 4), undefined);
    assert.equal(parseDecimal('1.23e-1', 2), undefined);
    assert.equal(parseDecimal('1e16', 0), undefined);
    assert.equal(parseDecimal('1e999999999', 0), undefined);
    assert.equal(parseDecimal('1e-999999999', 8), undefined);
    assert.equal(parseDecimal('9.007199254740991e15', 0), Number.MAX_SAFE_INTEGER);
    assert.equal(parseDecimal('9.007199254740992e15', 0), undefined);
    assert.equal(parseDecimal('5.000e-2', 2), 5);
  });

  test('refuses values outside the exact range and over-long text', () => {
    assert.equal(parseDecimal('90071992547409.92', 2), undefined);
    assert.equal(parseDecimal('90071992547409.91', 2), Number.MAX_SAFE_INTEGER);
    assert.equal(parseDecimal('1'.repeat(41), 0), undefined);
  });
});

describe('formatting', () => {
  test('formatUnits gives exactly scale decimals', () => {
    assert.equal(formatUnits(123456, 4), '12.3456');
    assert.equal(formatUnits(5, 4), '0.0005');
    assert.equal(formatUnits(-5, 2), '-0.05');
    assert.equal(formatUnits(42, 0), '42');
  });

  test('formatUnitsTrim drops trailing zeros', () => {
    assert.equal(formatUnitsTrim(1_500_000, 6), '1.5');
    assert.equal(formatUnitsTrim(2_000_000, 6), '2');
    assert.equal(formatUnitsTrim(0, 6), '0');
  });

  test('formatBigUnitsTrim: sums beyond 2^53 units, exact', () => {
    assert.equal(formatBigUnitsTrim(2n ** 60n, 8), '11529215046.06846976');
    assert.equal(formatBigUnitsTrim(-30_000_000n, 6), '-30');
    assert.equal(formatBigUnitsTrim(5n, 4), '0.0005');
    assert.equal(formatBigUnitsTrim(0n, 6), '0');
    assert.equal(formatBigUnitsTrim(120n, 0), '120');
  });

  test('unitsToNumber round-trips through decimal text', () => {
    assert.equal(unitsToNumber(3_000_050, 2), 30000.5);
    assert.equal(unitsToNumber(1, 8), 0.00000001);
  });

  test('format then parse is the identity', () => {
    for (const [units, scale] of [
      [0, 0],
      [1, 8],
      [123456789012345, 6],
      [Number.MAX_SAFE_INTEGER, 4],
    ] as const) {
      assert.equal(parseDecimal(formatUnits(units, scale), scale), units);
    }
  });
});

describe('exact arithmetic', () => {
  test('safeMul refuses products beyond 2^53 − 1', () => {
    assert.equal(safeMul(3, 5), 15);
    assert.equal(safeMul(2 ** 26, 2 ** 26), 2 ** 52);
    assert.equal(safeMul(2 ** 27, 2 ** 26), undefined);
    assert.equal(safeMul(94906267, 94906267), undefined);
  });

  test('feeFloor rounds down and never overflows', () => {
    assert.equal(feeFloor(10_000, 2_000), 20);
    assert.equal(feeFloor(499, 2_000), 0);
    assert.equal(feeFloor(501, 2_000), 1);
    const big = Number.MAX_SAFE_INTEGER;
    assert.equal(BigInt(feeFloor(big, 2_000)), (BigInt(big) * 2_000n) / 1_000_000n);
  });

  test('mulDivFloor is exact beyond the safe product range', () => {
    assert.equal(mulDivFloor(7, 3, 2), 10);
    const a = 2 ** 40 + 7;
    assert.equal(BigInt(mulDivFloor(a, 1_000_003, 999_983) as number), (BigInt(a) * 1_000_003n) / 999_983n);
    assert.equal(mulDivFloor(Number.MAX_SAFE_INTEGER, 4, 2), undefined);
  });

  test('convertFeeToZb: same coin applies only the discount', () => {
    assert.equal(convertFeeToZb(1000, [], 250_000), 750);
  });

  test('convertFeeToZb: one leg, fee in usdt (6 dp) to zb (8 dp) at 0.5000 usdt per zb', () => {
    // 2 usdt fee → 4 zb → 25% off → 3 zb = 300000000 units.
    const leg = { multiply: false, priceTicks: 5000, priceScale: 4, fromDecimal: 6, toDecimal: 8 };
    assert.equal(convertFeeToZb(2_000_000, [leg], 250_000), 300_000_000);
  });

  test('convertFeeToZb: two legs, btc → usdt → zb, rounded down once at the end', () => {
    // 0.0001 btc at 30000.00 usdt = 3 usdt; at 0.3000 usdt/zb = 10 zb; 25% off = 7.5 zb.
    const btcUsdt = { multiply: true, priceTicks: 3_000_000, priceScale: 2, fromDecimal: 8, toDecimal: 6 };
    const usdtZb = { multiply: false, priceTicks: 3000, priceScale: 4, fromDecimal: 6, toDecimal: 8 };
    assert.equal(convertFeeToZb(10_000, [btcUsdt, usdtZb], 250_000), 750_000_000);
    assert.equal(convertFeeToZb(1, [btcUsdt, usdtZb], 250_000), 75_000);
  });

  test('roundToStep: bids down, asks up', () => {
    assert.equal(roundToStep(12345, 100, false), 12300);
    assert.equal(roundToStep(12345, 100, true), 12400);
    assert.equal(roundToStep(12300, 100, true), 12300);
  });
});
