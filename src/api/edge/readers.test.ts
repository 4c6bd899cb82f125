import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DEFAULT_VENUE } from '../../config/default-venue.ts';
import { RESULTS, type ResultName } from '../../domain/result-codes.ts';
import { Engine } from '../../engine/engine.ts';
import { readArgs } from './endpoint.ts';
import {
  ACCT_TYPE,
  ANY_CASE_COIN,
  choice,
  COIN,
  CUSTOMER_ORDER_ID,
  DATE_TIME,
  FLAG,
  ID,
  integer,
  MARGIN_MARKET,
  MARKET,
  optional,
  ORDER_ID,
  plainInteger,
  readCoinUnits,
  readOnOff,
  TRADE_TYPE,
  withDefault,
  type Reader,
} from './readers.ts';
import { errorBody, quoted, Refusal } from './refusal.ts';

const engine = new Engine(DEFAULT_VENUE);
const read = <T>(reader: Reader<T>, text: string | undefined, name = 'p'): T =>
  reader.read(engine, name, text);

function refusedWith(result: ResultName, message: RegExp, run: () => unknown): void {
  assert.throws(run, (e: unknown) => {
    assert.ok(e instanceof Refusal, String(e));
    assert.equal(e.result, result, e.message);
    assert.match(e.message, message);
    return true;
  });
}

describe('parameter readers', () => {
  test("MARKET: the interface's lowercase <base>_<quote>; each way of being wrong named", () => {
    assert.equal(read(MARKET, 'btc_usdt').name, 'btc_usdt');
    refusedWith('INVALID_PARAMETER', /currency is required/, () => read(MARKET, undefined, 'currency'));
    refusedWith('INVALID_PARAMETER', /currency 'BTC_USDT' must be lowercase \('btc_usdt'\)/, () =>
      read(MARKET, 'BTC_USDT', 'currency'),
    );
    refusedWith('INVALID_PARAMETER', /market 'btcusdt' must be <base>_<quote>/, () =>
      read(MARKET, 'btcusdt', 'market'),
    );
    refusedWith('RETIRED_COIN_NAME', /retired; use 'bch'/, () => read(MARKET, 'bchabc_usdt'));
    refusedWith('UNKNOWN_MARKET', /unknown market 'doge_usdt' in parameter 'market'/, () =>
      read(MARKET, 'doge_usdt', 'market'),
    );
  });

  test('MARGIN_MARKET: the three forms clients send, any letter case; else UNKNOWN_MARKET', () => {
    for (const text of ['BTC/USDT', 'btc/usdt', 'btcusdt', 'BTCUSDT', 'btc_usdt', ' BTC_USDT ']) {
      assert.equal(read(MARGIN_MARKET, text).name, 'btc_usdt', text);
    }
    assert.equal(read(MARGIN_MARKET, 'ethbtc').name, 'eth_btc');
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
        read(MARGIN_MARKET, text, 'marketName'),
      );
    }
    refusedWith('INVALID_PARAMETER', /marketName is required/, () =>
      read(MARGIN_MARKET, undefined, 'marketName'),
    );
  });

  test('COIN is lowercase; ANY_CASE_COIN takes any case; unknown and retired coins refused', () => {
    assert.equal(read(COIN, 'usdt').name, 'usdt');
    refusedWith('INVALID_PARAMETER', /currency 'USDT' must be lowercase/, () =>
      read(COIN, 'USDT', 'currency'),
    );
    assert.equal(read(ANY_CASE_COIN, 'USDT').name, 'usdt');
    refusedWith('UNKNOWN_COIN', /unknown coin 'DOGE'/, () => read(ANY_CASE_COIN, 'DOGE', 'coin'));
    refusedWith('RETIRED_COIN_NAME', /coin/, () => read(ANY_CASE_COIN, 'bchabc', 'coin'));
    refusedWith('INVALID_PARAMETER', /coin is required/, () => read(ANY_CASE_COIN, undefined, 'coin'));
  });

  test('integers: plain digits, every safe integer (16 digits), within the bounds', () => {
    const any = integer(0, Number.MAX_SAFE_INTEGER);
    assert.equal(read(any, '0'), 0);
    assert.equal(read(any, '9007199254740991'), Number.MAX_SAFE_INTEGER);
    assert.equal(read(any, '1000000000000000'), 1e15, 'a 16-digit integer reads');
    for (const bad of [
      '9007199254740992',
      '12345678901234567',
      '017',
      '+1',
      ' 1',
      '1.0',
      '-1',
      '1e3',
      'ten',
    ]) {
      refusedWith('INVALID_PARAMETER', /size '.*' must be an integer of at least 0/, () =>
        read(any, bad, 'size'),
      );
    }
    refusedWith('INVALID_PARAMETER', /size '51' must be an integer from 1 to 50/, () =>
      read(integer(1, 50), '51', 'size'),
    );
    assert.equal(read(withDefault(integer(1, 50), 50), undefined), 50);
    assert.equal(read(optional(integer(1, 50)), undefined), undefined);
  });

  test('ids: ID a positive safe integer; ORDER_ID up to 19 digits, beyond 2^53 − 1 not found', () => {
    assert.equal(read(ID, '42'), 42);
    for (const bad of ['0', '042', '-1', '1.0', '99999999999999999']) {
      refusedWith('INVALID_PARAMETER', /loanId .* must be a positive integer/, () => read(ID, bad, 'loanId'));
    }
    assert.equal(read(ORDER_ID, '9007199254740991'), Number.MAX_SAFE_INTEGER);
    refusedWith('ORDER_NOT_FOUND', /order not found/, () => read(ORDER_ID, '202202224851151555', 'id'));
    refusedWith('INVALID_PARAMETER', /id '01' must be an order id/, () => read(ORDER_ID, '01', 'id'));
    assert.equal(read(CUSTOMER_ORDER_ID, 'grid0001'), 'grid0001');
    refusedWith('INVALID_PARAMETER', /customerOrderId 'ab' must be 4 to 36 letters or digits/, () =>
      read(CUSTOMER_ORDER_ID, 'ab', 'customerOrderId'),
    );
  });

  test('plainInteger is the same rule for a number a handler checks itself; readOnOff is the admin switch', () => {
    assert.deepEqual(
      ['0', '15', '9007199254740991', '9007199254740992', '015', '1e3', '', ' 7'].map(plainInteger),
      [0, 15, Number.MAX_SAFE_INTEGER, undefined, undefined, undefined, undefined, undefined],
    );
    assert.deepEqual(
      ['on', 'OFF', 'true', 'False'].map((t) => readOnOff('clear', t)),
      [true, false, true, false],
    );
    refusedWith('INVALID_PARAMETER', /^clear must be on or off \(true or false\), not 'yes'$/, () =>
      readOnOff('clear', 'yes'),
    );
    refusedWith('INVALID_PARAMETER', /^clear is required/, () => readOnOff('clear', undefined));
  });

  test('choices, flags, acctType, tradeType, times, amounts', () => {
    assert.equal(read(FLAG, '1'), true);
    assert.equal(read(FLAG, 'FALSE'), false);
    refusedWith('INVALID_PARAMETER', /isLoop 'yes' must be 1 or 0/, () => read(FLAG, 'yes', 'isLoop'));
    refusedWith('INVALID_PARAMETER', /isLoop is required/, () => read(FLAG, undefined, 'isLoop'));
    assert.equal(read(withDefault(ACCT_TYPE, 0), undefined), 0);
    assert.equal(read(ACCT_TYPE, '2'), 2);
    refusedWith('INVALID_PARAMETER', /acctType '3' must be one of 0, 1, 2/, () =>
      read(ACCT_TYPE, '3', 'acctType'),
    );
    assert.equal(read(TRADE_TYPE, '0'), 0);
    assert.equal(read(choice(['a', 'b']), 'b'), 'b');
    assert.equal(read(DATE_TIME, '2024-02-29 00:00:00'), Date.UTC(2024, 1, 29));
    refusedWith('INVALID_PARAMETER', /startDate '2024-02-30 00:00:00' must be a time/, () =>
      read(DATE_TIME, '2024-02-30 00:00:00', 'startDate'),
    );
    const usdt = engine.coin('usdt')!;
    assert.equal(readCoinUnits('amount', '1.5', usdt, 'INVALID_AMOUNT', true), 1_500_000);
    refusedWith(
      'INVALID_AMOUNT',
      /amount '0' must be a positive decimal with at most 6 decimals of usdt/,
      () => readCoinUnits('amount', '0', usdt, 'INVALID_AMOUNT', true),
    );
  });

  test('readArgs reads the declared parameters in order, the first refusal reported', () => {
    const params = { market: MARKET, size: withDefault(integer(1, 50), 50), merge: optional(FLAG) };
    const texts: Record<string, string> = { market: 'btc_usdt', extra: 'ignored' };
    const args = readArgs(params, engine, texts, (t, name) => t[name]);
    assert.deepEqual(
      { ...args, market: args.market.name },
      { market: 'btc_usdt', size: 50, merge: undefined },
    );
    refusedWith('UNKNOWN_MARKET', /unknown market/, () =>
      readArgs(params, engine, { market: 'x_y', size: '0' }, (t: Record<string, string>, n) => t[n]),
    );
  });
});

describe('the error body', () => {
  test("{code, message}: the registry's code, the given message or the registry's text", () => {
    assert.deepEqual(errorBody('UNKNOWN_MARKET', 'no such market'), {
      code: 3005,
      message: 'no such market',
    });
    assert.deepEqual(errorBody('BUSY'), { code: RESULTS.BUSY.code, message: RESULTS.BUSY.message });
    assert.equal(new Refusal('ORDER_NOT_FOUND').message, RESULTS.ORDER_NOT_FOUND.message);
  });

  test("a client's text is quoted and cut short; a field that is not text is shown as its JSON", () => {
    assert.equal(quoted('btc'), "'btc'");
    assert.equal(quoted('x'.repeat(50)), `'${'x'.repeat(40)}…'`);
    assert.equal(quoted(20), "'20'");
    assert.equal(quoted(undefined), "'undefined'");
  });
});
