import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DEFAULT_VENUE } from '../../../config/default-venue.ts';
import { RESULTS, type ResultName } from '../../../domain/result-codes.ts';
import { Engine } from '../../../engine/engine.ts';
import type { ApiRequest } from '../types.ts';
import {
  acctTypeParam,
  coinOfMarket,
  flagParam,
  idParam,
  lendingSettingsOf,
  loanAmountParam,
  marginAmountParam,
  marginCoinParam,
  marginMarketParam,
  rateParam,
  repayTypeParam,
  termParam,
} from './margin-params.ts';
import { Refusal } from './wire.ts';

const engine = new Engine(DEFAULT_VENUE);

function req(params: Record<string, string>): ApiRequest {
  return {
    method: 'GET',
    path: '/api/x',
    params: Object.entries(params).map(([name, value]) => ({ name, value, raw: `${name}=${value}` })),
    ip: '10.0.0.1',
    headers: {},
    receivedAt: 0,
  };
}

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
  test('marketName in the three forms clients send, any letter case', () => {
    for (const text of ['BTC/USDT', 'btc/usdt', 'btcusdt', 'BTCUSDT', 'btc_usdt', ' BTC_USDT ']) {
      assert.equal(marginMarketParam(engine, req({ marketName: text })).name, 'btc_usdt', text);
    }
    assert.equal(marginMarketParam(engine, req({ marketName: 'ethbtc' })).name, 'eth_btc');
  });

  test('unknown or malformed marketName → UNKNOWN_MARKET (3005); missing → INVALID_PARAMETER', () => {
    for (const text of [
      'btc-usdt',
      'BTC/',
      '/USDT',
      'btc/usdt/x',
      'dogeusdt',
      'usdt_btc',
      'btc__usdt',
      'x'.repeat(50),
    ]) {
      refusedWith('UNKNOWN_MARKET', /marketName: unknown marketName/, () =>
        marginMarketParam(engine, req({ marketName: text })),
      );
    }
    refusedWith('INVALID_PARAMETER', /marketName is required/, () => marginMarketParam(engine, req({})));
  });

  test('coin in any case; unknown and retired coins refused', () => {
    assert.equal(marginCoinParam(engine, req({ coin: 'USDT' })).name, 'usdt');
    refusedWith('UNKNOWN_COIN', /unknown coin 'DOGE'/, () => marginCoinParam(engine, req({ coin: 'DOGE' })));
    refusedWith('RETIRED_COIN_NAME', /coin/, () => marginCoinParam(engine, req({ coin: 'bchabc' })));
    refusedWith('INVALID_PARAMETER', /coin is required/, () => marginCoinParam(engine, req({})));
  });

  test("an isolated account's coin must be one of the market's two", () => {
    const m = engine.market('btc_usdt')!;
    coinOfMarket(btc, m);
    coinOfMarket(usdt, m);
    refusedWith('INVALID_PARAMETER', /eth is not a coin of btc_usdt/, () =>
      coinOfMarket(engine.coin('eth')!, m),
    );
  });

  test("amounts: positive, at most the coin's decimals, safe (INVALID_AMOUNT 3003)", () => {
    assert.equal(marginAmountParam(req({ amount: '1000' }), 'amount', usdt), 1_000_000_000);
    assert.equal(marginAmountParam(req({ amount: '0.000001' }), 'amount', usdt), 1);
    assert.equal(marginAmountParam(req({ amount: '1.50000000' }), 'amount', usdt), 1_500_000);
    // Exponent notation, as ZB's Python SDK formats floats, read exactly.
    assert.equal(marginAmountParam(req({ amount: '1e3' }), 'amount', usdt), 1_000_000_000);
    assert.equal(marginAmountParam(req({ amount: '5e-06' }), 'amount', usdt), 5);
    for (const bad of ['0', '0.0000001', '-1', '1e-9', '1,5', 'abc', '99999999999999999999', ' 1']) {
      refusedWith(
        'INVALID_AMOUNT',
        /amount .* must be a positive decimal with at most 6 decimals of usdt/,
        () => marginAmountParam(req({ amount: bad }), 'amount', usdt),
      );
    }
  });

  test("a loan's amount: at or above the lending minimum (BELOW_MIN_LOAN 3003)", () => {
    const lending = lendingSettingsOf(engine, usdt);
    assert.equal(loanAmountParam(req({ amount: '0.01' }), 'amount', usdt, lending), 10_000);
    refusedWith('BELOW_MIN_LOAN', /below the minimum 0.01 usdt/, () =>
      loanAmountParam(req({ amount: '0.009999' }), 'amount', usdt, lending),
    );
  });

  test('interestRateOfDay: percent with 4 decimals within 0.05..0.2 (LOAN_RATE_OUT_OF_RANGE)', () => {
    const lending = lendingSettingsOf(engine, usdt);
    assert.equal(rateParam(req({ interestRateOfDay: '0.05' }), lending), 500);
    assert.equal(rateParam(req({ interestRateOfDay: '0.2' }), lending), 2_000);
    assert.equal(rateParam(req({ interestRateOfDay: '0.1234' }), lending), 1_234);
    for (const out of ['0.0499', '0.2001', '0', '5']) {
      refusedWith('LOAN_RATE_OUT_OF_RANGE', /outside 0.05..0.2 % per day/, () =>
        rateParam(req({ interestRateOfDay: out }), lending),
      );
    }
    for (const bad of ['0.12345', 'x', '-0.1', '0.1%']) {
      refusedWith('INVALID_PARAMETER', /interestRateOfDay .* percent per day with at most 4 decimals/, () =>
        rateParam(req({ interestRateOfDay: bad }), lending),
      );
    }
  });

  test('repaymentDay: 10, 20 or 30 (INVALID_LOAN_TERM 3005)', () => {
    const lending = lendingSettingsOf(engine, usdt);
    for (const d of [10, 20, 30]) assert.equal(termParam(req({ repaymentDay: String(d) }), lending), d);
    for (const bad of ['15', '0', '010', '10.0', '-10', 'ten', '31']) {
      refusedWith('INVALID_LOAN_TERM', /repaymentDay .* must be one of 10, 20, 30 days/, () =>
        termParam(req({ repaymentDay: bad }), lending),
      );
    }
  });

  test('flags, ids, acctType, repayType', () => {
    assert.equal(flagParam(req({ isLoop: '1' }), 'isLoop'), true);
    assert.equal(flagParam(req({ isLoop: 'FALSE' }), 'isLoop'), false);
    assert.equal(flagParam(req({}), 'isLoop', false), false);
    refusedWith('INVALID_PARAMETER', /isLoop 'yes' must be 1 or 0/, () =>
      flagParam(req({ isLoop: 'yes' }), 'isLoop'),
    );
    refusedWith('INVALID_PARAMETER', /isLoop is required/, () => flagParam(req({}), 'isLoop'));
    assert.equal(idParam(req({ loanId: '42' }), 'loanId'), 42);
    for (const bad of ['0', '042', '-1', '1.0', '99999999999999999']) {
      refusedWith('INVALID_PARAMETER', /loanId .* must be a positive integer/, () =>
        idParam(req({ loanId: bad }), 'loanId'),
      );
    }
    assert.equal(acctTypeParam(req({})), 0);
    assert.equal(acctTypeParam(req({ acctType: '2' })), 2);
    refusedWith('INVALID_PARAMETER', /acctType '3' must be one of 0, 1, 2/, () =>
      acctTypeParam(req({ acctType: '3' })),
    );
    assert.equal(repayTypeParam(req({})), 'all');
    assert.equal(repayTypeParam(req({ repayAmount: '1' })), 'part');
    assert.equal(repayTypeParam(req({ repayType: '0', repayAmount: '1' })), 'all');
  });
});
