import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DEFAULT_VENUE } from '../config/default-venue.ts';
import { parseOrderNumbers } from './order-input.ts';
import {
  checkCoinName,
  RETIRED_COIN_NAMES,
  splitMarketName,
  validateMarket,
  type MarketSpec,
} from './specs.ts';

const coins = new Map(DEFAULT_VENUE.coins.map((c) => [c.name, c]));
const btcUsdt = DEFAULT_VENUE.markets.find((m) => m.name === 'btc_usdt') as MarketSpec;

describe('coin names', () => {
  test('the retired names are refused with their replacement named', () => {
    for (const [old, replacement] of Object.entries(RETIRED_COIN_NAMES)) {
      const r = checkCoinName(old);
      assert.equal(r.ok, false);
      assert.ok(!r.ok && r.result === 'RETIRED_COIN_NAME' && r.message.includes(`'${replacement}'`));
    }
  });

  test('new names and lowercase shapes pass; other shapes fail', () => {
    for (const ok of ['bch', 'bsv', 'hc', 'xwc', 'usdt']) assert.equal(checkCoinName(ok).ok, true);
    for (const bad of ['BTC', '', '1inch', 'b-t', 'x'.repeat(17)])
      assert.equal(checkCoinName(bad).ok, false, bad);
  });

  test("Object.prototype's names are names like any other, not retired ones (found by the HTTP fuzz suite)", () => {
    for (const name of ['__proto__', 'constructor', 'tostring', 'hasownproperty', 'valueof']) {
      const r = checkCoinName(name);
      assert.ok(r.ok || r.result === 'UNKNOWN_COIN', name);
      assert.ok(r.ok || !r.message.includes('retired'), name);
    }
    assert.equal(checkCoinName('constructor').ok, true, 'a well-formed name: unknown later, not retired');
  });

  test('the default venue uses none of the retired names', () => {
    for (const c of DEFAULT_VENUE.coins) assert.equal(RETIRED_COIN_NAMES[c.name], undefined);
  });
});

describe('markets', () => {
  test('splitMarketName', () => {
    assert.deepEqual(splitMarketName('btc_usdt'), { base: 'btc', quote: 'usdt' });
    for (const bad of ['btcusdt', '_usdt', 'btc_', 'a_b_c']) assert.equal(splitMarketName(bad), undefined);
  });

  test('the default configuration is valid and has the issue’s scales', () => {
    for (const m of DEFAULT_VENUE.markets) assert.deepEqual(validateMarket(m, coins), [], m.name);
    assert.deepEqual(
      DEFAULT_VENUE.markets.map((m) => m.name),
      ['btc_usdt', 'eth_usdt', 'eth_btc', 'zb_usdt', 'zb_qc'],
    );
    assert.equal(btcUsdt.priceScale, 2);
    assert.equal(btcUsdt.amountScale, 4);
    assert.equal(btcUsdt.minAmount, 1); // 0.0001 btc in lots
    assert.equal(btcUsdt.minSize, 5_000_000); // 5 usdt in units
    assert.equal(btcUsdt.makerFee, 2_000);
    const zbQc = DEFAULT_VENUE.markets.find((m) => m.name === 'zb_qc') as MarketSpec;
    assert.deepEqual([zbQc.priceScale, zbQc.amountScale, zbQc.minAmount], [4, 2, 1]);
  });

  test('a market whose value would not be exact in the quote coin is refused', () => {
    const bad = { ...btcUsdt, priceScale: 4 }; // 4 + 4 > usdt's 6 decimals
    assert.match(validateMarket(bad, coins).join(), /priceScale \+ amountScale exceeds/);
    assert.match(validateMarket({ ...btcUsdt, amountScale: 9 }, coins).join(), /amountScale 9 exceeds/);
    assert.match(
      validateMarket({ ...btcUsdt, quote: 'nope', name: 'btc_nope' }, coins).join(),
      /unknown quote/,
    );
  });
});

describe('parseOrderNumbers', () => {
  test('parses with the market scales', () => {
    assert.deepEqual(parseOrderNumbers(btcUsdt, '30000.00', '0.0100'), {
      ok: true,
      price: 3_000_000,
      amount: 100,
    });
  });

  test('refuses more decimals than the scale instead of rounding', () => {
    const p = parseOrderNumbers(btcUsdt, '30000.001', '1');
    assert.equal(p.ok, false);
    assert.ok(!p.ok && p.result === 'INVALID_PRICE' && /at most 2 decimals/.test(p.message));
    const a = parseOrderNumbers(btcUsdt, '30000', '0.00001');
    assert.ok(!a.ok && a.result === 'INVALID_AMOUNT');
  });

  test("reads exponent notation exactly (ZB's Python SDK sends 5e-05)", () => {
    const p = parseOrderNumbers(btcUsdt, '3.00005e4', '1e-2');
    assert.ok(p.ok && p.price === 3_000_050 && p.amount === 100, JSON.stringify(p));
  });

  test('refuses zero, negative and malformed numbers', () => {
    for (const [price, amount] of [
      ['0', '1'],
      ['1', '0'],
      ['-1', '1'],
      ['abc', '1'],
      ['1', '1e-5'],
      ['-3e4', '1'],
    ]) {
      assert.equal(
        parseOrderNumbers(btcUsdt, price as string, amount as string).ok,
        false,
        `${price} ${amount}`,
      );
    }
  });
});
