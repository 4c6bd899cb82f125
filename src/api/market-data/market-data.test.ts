import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DEFAULT_VENUE } from '../../config/default-venue.ts';
import { SELL, type Command } from '../../domain/commands.ts';
import { Engine } from '../../engine/engine.ts';
import { IntervalLimiter } from '../http/public/interval-limiter.ts';
import { MarketData, riseRateHundredths } from './market-data.ts';
import { MINUTE_MS, RollingWindow } from './rolling-window.ts';

const T0 = 1_700_000_040_000; // a minute boundary

describe('RollingWindow', () => {
  test('open, high, low, volume and value over the 1440 minutes ending now', () => {
    const w = new RollingWindow();
    w.add(T0, 100, 1, 100);
    w.add(T0 + 30_000, 120, 2, 240);
    w.add(T0 + MINUTE_MS, 90, 3, 270);
    assert.deepEqual(w.stats(T0 + MINUTE_MS), {
      empty: false,
      open: 100,
      high: 120,
      low: 90,
      volume: 6,
      value: 610n,
    });
    // Incremental update inside the current minute, no rescan needed.
    w.add(T0 + MINUTE_MS + 1, 130, 1, 130);
    assert.deepEqual(w.stats(T0 + MINUTE_MS + 2), {
      empty: false,
      open: 100,
      high: 130,
      low: 90,
      volume: 7,
      value: 740n,
    });
    // The last instant at which minute T0 is still inside, then the first at which it is not.
    assert.equal(w.stats(T0 + 1440 * MINUTE_MS - 1).volume, 7);
    assert.deepEqual(w.stats(T0 + 1440 * MINUTE_MS), {
      empty: false,
      open: 90,
      high: 130,
      low: 90,
      volume: 4,
      value: 400n,
    });
    assert.equal(w.stats(T0 + 1441 * MINUTE_MS).empty, true);
  });

  test('a slot reused a day later starts afresh; data older than a slot is ignored', () => {
    const w = new RollingWindow();
    w.add(T0, 100, 1, 100);
    w.add(T0 + 1440 * MINUTE_MS, 200, 2, 400); // same slot, next day
    w.add(T0 + 5, 999, 9, 999); // older than the slot's minute now: ignored
    assert.deepEqual(w.stats(T0 + 1440 * MINUTE_MS), {
      empty: false,
      open: 200,
      high: 200,
      low: 200,
      volume: 2,
      value: 400n,
    });
  });

  test('seeded buckets merge with trades of the same minute', () => {
    const w = new RollingWindow();
    w.addBucket(T0, 100, 150, 80, 120, 10, 1000);
    w.add(T0 + 59_999, 160, 1, 160);
    assert.deepEqual(w.stats(T0), { empty: false, open: 100, high: 160, low: 80, volume: 11, value: 1160n });
  });
});

describe('riseRateHundredths', () => {
  test('the change in hundredths of a percent, half away from zero', () => {
    assert.equal(riseRateHundredths(3_000_000, 3_010_000), 33);
    assert.equal(riseRateHundredths(3, 4), 3333);
    assert.equal(riseRateHundredths(20_000, 20_001), 1);
    assert.equal(riseRateHundredths(20_000, 19_999), -1);
    assert.equal(riseRateHundredths(8, 7), -1250);
    assert.equal(riseRateHundredths(0, 5), 0);
    assert.equal(riseRateHundredths(100, 100), 0);
  });
});

describe('IntervalLimiter', () => {
  test('one per interval per key; a refusal does not move the window; old keys are forgotten', () => {
    const l = new IntervalLimiter(1000);
    assert.equal(l.take('a', 0), 0);
    assert.equal(l.take('a', 300), 700);
    assert.equal(l.take('a', 900), 100);
    assert.equal(l.take('b', 900), 0);
    assert.equal(l.take('a', 1000), 0);
    assert.equal(l.size, 2);
    assert.equal(l.take('c', 20_000), 0);
    assert.equal(l.size, 1);
  });
});

describe('MarketData caching', () => {
  /** An engine whose depth() calls are counted. */
  function setup(): { engine: Engine; md: MarketData; calls: () => number; run: (c: Command) => void } {
    const engine = new Engine(DEFAULT_VENUE);
    let depthCalls = 0;
    const original = engine.depth.bind(engine);
    engine.depth = (market: string, limit: number) => {
      depthCalls++;
      return original(market, limit);
    };
    const md = new MarketData(engine, { now: () => T0 });
    let seq = 0;
    const run = (c: Command): void => {
      const r = engine.apply({ ...c, seq: ++seq, time: T0 });
      md.apply([{ result: r }]);
    };
    run({ type: 'RegisterUser', name: 'bob' });
    run({ type: 'CreditDeposit', depositId: 'd1', userId: 1, coin: 'btc', amount: 100_000_000, remark: '' });
    return { engine, md, calls: () => depthCalls, run };
  }
  const sell = (price: number): Command => ({
    type: 'PlaceOrder',
    userId: 1,
    market: 'btc_usdt',
    side: SELL,
    kind: 'limit',
    price,
    amount: 100,
    acctType: 0,
    clientOrderId: '',
  });

  test('depth, merged depth and ticker are rebuilt once per change, not per read', () => {
    const { md, calls, run } = setup();
    run(sell(3_000_000));
    const a = md.depthBody('btc_usdt', 10);
    md.depthBody('btc_usdt', 10);
    md.mergedDepthBody('btc_usdt', 100, 5);
    md.mergedDepthBody('btc_usdt', 100, 5);
    md.tickerBody('btc_usdt');
    md.tickerBody('btc_usdt');
    assert.equal(calls(), 3, 'one depth read each for depth, merged depth and ticker');
    md.allTickerBody();
    md.allTickerBody();
    assert.equal(calls(), 7, 'allTicker reuses btc_usdt and builds the four other tickers once');
    run(sell(3_000_100));
    const b = md.depthBody('btc_usdt', 10);
    md.depthBody('btc_usdt', 10);
    assert.equal(calls(), 8);
    assert.notEqual(String(a), String(b));
    md.depthBody('btc_usdt', 11); // another size is another cache entry
    assert.equal(calls(), 9);
    assert.equal(md.depthBody('nope_usdt', 10), undefined);
    assert.equal(md.tickerBody('nope_usdt'), undefined);
  });

  test('events of other markets leave a market cached', () => {
    const { md, calls, run } = setup();
    md.depthBody('eth_usdt', 5);
    run(sell(3_000_000));
    md.depthBody('eth_usdt', 5);
    assert.equal(calls(), 1);
  });
});
