import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DEFAULT_VENUE } from '../../../config/default-venue.ts';
import { RESULTS, type ResultName } from '../../../domain/result-codes.ts';
import { Engine } from '../../../engine/engine.ts';
import { Refusal } from '../../edge/refusal.ts';
import {
  coinOfMarket,
  lendingSettingsOf,
  loanAmount,
  marginAmount,
  rateOf,
  repayHow,
  termOf,
} from './margin-params.ts';

const engine = new Engine(DEFAULT_VENUE);

function refusedWith(result: ResultName, message: RegExp, run: () => unknown): void {
  assert.throws(run, (e: unknown) => {
    assert.ok(e instanceof Refusal, String(e));
    assert.equal(e.result, result, e.message);
    assert.equal(RESULTS[e.result].code, RESULTS[result].code);
    assert.match(e.message, message);
    return true;
  });
}

const usdt = engine.coin('usdt')!;
const btc = engine.coin('btc')!;

describe('margin parameters', () => {
  test("an isolated account's coin must be one of the market's two", () => {
    const m = engine.market('btc_usdt')!;
    coinOfMarket(btc, m);
    coinOfMarket(usdt, m);
    refusedWith('INVALID_PARAMETER', /eth is not a coin of btc_usdt/, () =>
      coinOfMarket(engine.coin('eth')!, m),
    );
  });

  test("amounts: positive, at most the coin's decimals, safe (INVALID_AMOUNT 3003)", () => {
    assert.equal(marginAmount('amount', '1000', usdt), 1_000_000_000);
    assert.equal(marginAmount('amount', '0.000001', usdt), 1);
    assert.equal(marginAmount('amount', '1.50000000', usdt), 1_500_000);
    // Exponent notation, as ZB's Python SDK formats floats, read exactly.
    assert.equal(marginAmount('amount', '1e3', usdt), 1_000_000_000);
    assert.equal(marginAmount('amount', '5e-06', usdt), 5);
    for (const bad of ['0', '0.0000001', '-1', '1e-9', '1,5', 'abc', '99999999999999999999', ' 1']) {
      refusedWith(
        'INVALID_AMOUNT',
        /amount .* must be a positive decimal with at most 6 decimals of usdt/,
        () => marginAmount('amount', bad, usdt),
      );
    }
  });

  test("a loan's amount: at or above the lending minimum (BELOW_MIN_LOAN 3003)", () => {
    const lending = lendingSettingsOf(engine, usdt);
    assert.equal(loanAmount('amount', '0.01', usdt, lending), 10_000);
    refusedWith('BELOW_MIN_LOAN', /below the minimum 0.01 usdt/, () =>
      loanAmount('amount', '0.009999', usdt, lending),
    );
  });

  test('interestRateOfDay: percent with 4 decimals within 0.05..0.2 (LOAN_RATE_OUT_OF_RANGE)', () => {
    const lending = lendingSettingsOf(engine, usdt);
    assert.equal(rateOf('0.05', lending), 500);
    assert.equal(rateOf('0.2', lending), 2_000);
    assert.equal(rateOf('0.1234', lending), 1_234);
    for (const out of ['0.0499', '0.2001', '0', '5']) {
      refusedWith('LOAN_RATE_OUT_OF_RANGE', /outside 0.05..0.2 % per day/, () => rateOf(out, lending));
    }
    for (const bad of ['0.12345', 'x', '-0.1', '0.1%']) {
      refusedWith('INVALID_PARAMETER', /interestRateOfDay .* percent per day with at most 4 decimals/, () =>
        rateOf(bad, lending),
      );
    }
  });

  test('repaymentDay: 10, 20 or 30 (INVALID_LOAN_TERM 3005)', () => {
    const lending = lendingSettingsOf(engine, usdt);
    for (const d of [10, 20, 30]) assert.equal(termOf(String(d), lending), d);
    for (const bad of ['15', '0', '010', '10.0', '-10', 'ten', '31']) {
      refusedWith('INVALID_LOAN_TERM', /repaymentDay .* must be one of 10, 20, 30 days/, () =>
        termOf(bad, lending),
      );
    }
  });

  test('repayType: absent means part when repayAmount is given, else all', () => {
    assert.equal(repayHow(undefined, undefined), 'all');
    assert.equal(repayHow(undefined, '1'), 'part');
    assert.equal(repayHow('0', '1'), 'all');
    assert.equal(repayHow('1', undefined), 'part');
  });
});
