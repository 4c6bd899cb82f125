import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  checkLoanAmount,
  checkLendingOpen,
  checkRate,
  checkTerm,
  DEFAULT_MARGIN_SETTINGS,
  defaultLendingSettings,
  formatRatePercent,
  parseRatePercent,
  validateLendingSettings,
  validateMarginSettings,
} from './settings.ts';

const usdt = defaultLendingSettings('usdt', 8);

describe('margin settings', () => {
  test("the defaults are the real venue's numbers and valid", () => {
    assert.deepEqual(validateMarginSettings(DEFAULT_MARGIN_SETTINGS), []);
    assert.equal(DEFAULT_MARGIN_SETTINGS.leverMultipleBp, 50_000);
    assert.equal(DEFAULT_MARGIN_SETTINGS.startLineBp, 12_500);
    assert.equal(DEFAULT_MARGIN_SETTINGS.noticeLineBp, 11_300);
    assert.equal(DEFAULT_MARGIN_SETTINGS.forceRepayLineBp, 10_800);
  });

  test('lines must be ordered above 1, the multiple above 1×', () => {
    const bad = (patch: Partial<typeof DEFAULT_MARGIN_SETTINGS>): string[] =>
      validateMarginSettings({ ...DEFAULT_MARGIN_SETTINGS, ...patch });
    assert.deepEqual(bad({ forceRepayLineBp: 10_000 }), ['forceRepayLine must be above 1']);
    assert.deepEqual(bad({ noticeLineBp: 10_800 }), ['noticeLine must be above forceRepayLine']);
    assert.deepEqual(bad({ startLineBp: 11_300 }), ['startLine must be above noticeLine']);
    assert.deepEqual(bad({ leverMultipleBp: 10_000 }), ['leverMultiple must be above 1']);
    assert.equal(bad({ startLineBp: 1.5 }).length, 1);
    assert.equal(bad({ noticeLineBp: -1 }).length, 1);
  });
});

describe('lending settings', () => {
  test('defaults: terms 10/20/30, 0.05..0.2 % a day, minimum 0.01 of the coin, 10 % venue share', () => {
    assert.deepEqual(validateLendingSettings(usdt), []);
    assert.deepEqual(usdt.termsDays, [10, 20, 30]);
    assert.equal(usdt.minAmount, 1_000_000);
    assert.equal(defaultLendingSettings('x', 0).minAmount, 1);
  });

  test('invalid lending settings are named', () => {
    assert.equal(validateLendingSettings({ ...usdt, termsDays: [] }).length, 1);
    assert.equal(validateLendingSettings({ ...usdt, termsDays: [20, 10] }).length, 1);
    assert.equal(validateLendingSettings({ ...usdt, minDailyRatePpm: 3_000 }).length, 1);
    assert.equal(validateLendingSettings({ ...usdt, minAmount: 0 }).length, 1);
    assert.equal(validateLendingSettings({ ...usdt, venueSharePpm: 1_000_001 }).length, 1);
  });

  test('terms: exactly the allowed ones', () => {
    for (const d of [10, 20, 30]) assert.equal(checkTerm(usdt, d).ok, true);
    for (const d of [0, 9, 11, 15.5, 31, -10, Number.NaN]) {
      const r = checkTerm(usdt, d);
      assert.equal(r.ok, false);
      if (!r.ok) assert.equal(r.result, 'INVALID_LOAN_TERM');
    }
  });

  test('rates: bounds inclusive, one ppm beyond refused with the range in percent', () => {
    assert.equal(checkRate(usdt, 500).ok, true);
    assert.equal(checkRate(usdt, 2_000).ok, true);
    for (const r of [499, 2_001, 0, 1.5]) {
      const o = checkRate(usdt, r);
      assert.equal(o.ok, false);
      if (!o.ok) assert.equal(o.result, 'LOAN_RATE_OUT_OF_RANGE');
    }
    const o = checkRate(usdt, 499);
    if (!o.ok) assert.match(o.message, /0\.0499 % is outside 0\.05\.\.0\.2 % per day/);
  });

  test('amounts: at the minimum accepted, one unit below refused with both in coin', () => {
    assert.equal(checkLoanAmount(usdt, 1_000_000).ok, true);
    const r = checkLoanAmount(usdt, 999_999);
    assert.deepEqual(r, {
      ok: false,
      result: 'BELOW_MIN_LOAN',
      message: 'amount 0.00999999 is below the minimum 0.01 usdt',
    });
    for (const a of [0, -1, 1.5, Number.MAX_SAFE_INTEGER + 2]) {
      const o = checkLoanAmount(usdt, a);
      assert.equal(o.ok ? 'ok' : o.result, 'INVALID_AMOUNT');
    }
  });

  test('a coin without lending settings or switched off is not open', () => {
    assert.equal(checkLendingOpen(undefined, 'eth').ok, false);
    assert.equal(checkLendingOpen({ ...usdt, enabled: false }, 'usdt').ok, false);
    assert.equal(checkLendingOpen(usdt, 'usdt').ok, true);
  });

  test('rates on the wire: a percent with up to 4 decimals', () => {
    assert.equal(parseRatePercent('0.05'), 500);
    assert.equal(parseRatePercent('0.2'), 2_000);
    assert.equal(parseRatePercent('0.1234'), 1_234);
    assert.equal(parseRatePercent('0.00005'), undefined);
    assert.equal(parseRatePercent('-0.05'), undefined);
    assert.equal(parseRatePercent('abc'), undefined);
    assert.equal(formatRatePercent(500), '0.05');
    assert.equal(formatRatePercent(1_234), '0.1234');
    assert.equal(formatRatePercent(10_000), '1');
  });
});
