import assert from 'node:assert/strict';
import { afterEach, describe, test } from 'node:test';
import { KLINE_INTERVALS } from '../../../store/history-store.ts';
import { MarketData } from '../../market-data/market-data.ts';
import { T0, TestVenue } from '../../../../test/fixtures/public-venue.ts';

const venues: TestVenue[] = [];
afterEach(async () => {
  for (const v of venues.splice(0)) await v.close();
});

function venue(options: { klineMinIntervalMs?: number } = {}): TestVenue {
  const v = new TestVenue(options);
  venues.push(v);
  return v;
}

/** bob's asks 0.5 @ 30000, 0.3 @ 30100, 0.2 @ 30150.55; alice's bids 0.4 @ 29900, 0.1 @ 29850, 0.25 @ 29800.01. */
function bookVenue(options: { klineMinIntervalMs?: number } = {}): {
  v: TestVenue;
  alice: number;
  bob: number;
} {
  const v = venue(options);
  const alice = v.fund('alice', 'usdt', '100000');
  const bob = v.fund('bob', 'btc', '10');
  v.place(bob, 'btc_usdt', 'sell', '30000', '0.5');
  v.place(bob, 'btc_usdt', 'sell', '30100', '0.3');
  v.place(bob, 'btc_usdt', 'sell', '30150.55', '0.2');
  v.place(alice, 'btc_usdt', 'buy', '29900', '0.4');
  v.place(alice, 'btc_usdt', 'buy', '29850', '0.1');
  v.place(alice, 'btc_usdt', 'buy', '29800.01', '0.25');
  return { v, alice, bob };
}

/**
 * The book above, then three minutes of trading from T0: alice lifts 0.2 @ 30000 (trade 1); a
 * minute later bob hits 0.1 @ 29900 (trade 2); a minute later alice buys 0.35 up to 30100,
 * filling 0.3 @ 30000 (trade 3) and 0.05 @ 30100 (trade 4).
 */
function tradedVenue(options: { klineMinIntervalMs?: number } = {}): {
  v: TestVenue;
  alice: number;
  bob: number;
} {
  const b = bookVenue(options);
  const { v, alice, bob } = b;
  v.place(alice, 'btc_usdt', 'buy', '30000', '0.2');
  v.time = T0 + 60_000;
  v.place(bob, 'btc_usdt', 'sell', '29900', '0.1');
  v.time = T0 + 120_000;
  v.place(alice, 'btc_usdt', 'buy', '30100', '0.35');
  return b;
}

const minuteStart = (t: number): number => Math.floor(t / 60_000) * 60_000;

describe('error replies', () => {
  test('bad or missing market: HTTP 200, code 3005, the message names the parameter', async () => {
    const v = venue();
    for (const path of ['ticker', 'depth', 'trades', 'kline']) {
      const cases: [string, RegExp][] = [
        ['', /market is required \(a market such as btc_usdt\)/],
        ['?market=', /market is required/],
        ['?market=foo_bar', /unknown market 'foo_bar' in parameter 'market'/],
        ['?market=BTC_USDT', /market 'BTC_USDT' must be lowercase \('btc_usdt'\)/],
        ['?market=btcusdt', /market 'btcusdt' must be <base>_<quote>, e.g. btc_usdt/],
        ['?market=bchabc_usdt', /market 'bchabc_usdt': coin name 'bchabc' is retired; use 'bch'/],
        ['?market=btc_bchsv', /coin name 'bchsv' is retired; use 'bsv'/],
      ];
      for (const [query, message] of cases) {
        v.time += 1_000; // stay clear of the kline limit
        const r = await v.get(`/data/v1/${path}${query}`);
        assert.equal(r.statusCode, 200);
        assert.match(r.headers['content-type'] as string, /^application\/json; charset=utf-8$/);
        const body = r.json() as { code: number; message: string };
        assert.equal(body.code, 3005, `${path}${query}`);
        assert.match(body.message, message, `${path}${query}`);
        assert.deepEqual(Object.keys(body), ['code', 'message']);
      }
    }
  });
});

describe('/data/v1/markets', () => {
  test('an object keyed by market, four numbers each', async () => {
    const v = venue();
    const r = await v.get('/data/v1/markets');
    assert.equal(r.statusCode, 200);
    assert.deepEqual(r.json(), {
      btc_usdt: { amountScale: 4, minAmount: 0.0001, minSize: 5, priceScale: 2 },
      eth_usdt: { amountScale: 4, minAmount: 0.001, minSize: 5, priceScale: 2 },
      eth_btc: { amountScale: 2, minAmount: 0.01, minSize: 0.0001, priceScale: 6 },
      zb_usdt: { amountScale: 2, minAmount: 0.01, minSize: 5, priceScale: 4 },
      zb_qc: { amountScale: 2, minAmount: 0.01, minSize: 5, priceScale: 4 },
    });
    assert.ok(
      r.payload.startsWith('{"btc_usdt":{"amountScale":4,"minAmount":0.0001,"minSize":5,"priceScale":2}'),
    );
  });

  test('a market added later appears', async () => {
    const v = venue();
    const before = (await v.get('/data/v1/markets')).payload;
    const r = v.run({
      type: 'UpsertMarket',
      market: {
        name: 'bch_usdt',
        base: 'bch',
        quote: 'usdt',
        priceScale: 2,
        amountScale: 3,
        minAmount: 1,
        minSize: 1_000_000,
        makerFee: 2000,
        takerFee: 2000,
        status: 'trading',
      },
    });
    assert.equal(r.result, 'OK', r.message);
    const after = (await v.get('/data/v1/markets')).json() as Record<string, unknown>;
    assert.notEqual(JSON.stringify(after), before);
    assert.deepEqual(after['bch_usdt'], { amountScale: 3, minAmount: 0.001, minSize: 1, priceScale: 2 });
    const tickers = (await v.get('/data/v1/allTicker')).json() as Record<string, unknown>;
    assert.ok('bchusdt' in tickers);
  });
});

describe('/data/v1/ticker and /data/v1/allTicker', () => {
  test('24 h figures from the trades, best bid and ask from the book, all strings; date in ms as a string', async () => {
    const { v } = tradedVenue();
    const r = await v.get('/data/v1/ticker?market=btc_usdt');
    assert.equal(r.statusCode, 200);
    const body = r.json() as { date: string; ticker: Record<string, string> };
    assert.deepEqual(Object.keys(body), ['date', 'ticker']);
    assert.equal(body.date, String(T0 + 120_000));
    assert.deepEqual(body.ticker, {
      high: '30100.00',
      vol: '0.6500',
      last: '30100.00',
      low: '29900.00',
      buy: '29900.00',
      sell: '30100.00',
      turnover: '19495.000000',
      open: '30000.00',
      riseRate: '0.33',
    });
  });

  test('a market without trades: flat at 0, book prices as they are', async () => {
    const { v } = bookVenue();
    const body = (await v.get('/data/v1/ticker?market=btc_usdt')).json() as {
      ticker: Record<string, string>;
    };
    assert.deepEqual(body.ticker, {
      high: '0.00',
      vol: '0.0000',
      last: '0.00',
      low: '0.00',
      buy: '29900.00',
      sell: '30000.00',
      turnover: '0.000000',
      open: '0.00',
      riseRate: '0.00',
    });
  });

  test('the window rolls: trades older than 24 h drop out, minute by minute', async () => {
    const { v, bob } = tradedVenue();
    // Now in the minute 24 h after trade 2's minute: trades 1 and 2 are out, 3 and 4 still in.
    v.time = minuteStart(T0) + 1441 * 60_000;
    let t = ((await v.get('/data/v1/ticker?market=btc_usdt')).json() as { ticker: Record<string, string> })
      .ticker;
    assert.equal(t['vol'], '0.3500');
    assert.equal(t['open'], '30000.00');
    assert.equal(t['high'], '30100.00');
    assert.equal(t['low'], '30000.00');
    assert.equal(t['turnover'], '10505.000000');
    // A fall: bob sells at 29900 into alice's bid; riseRate is negative.
    v.place(bob, 'btc_usdt', 'sell', '29900', '0.1');
    t = ((await v.get('/data/v1/ticker?market=btc_usdt')).json() as { ticker: Record<string, string> })
      .ticker;
    assert.equal(t['last'], '29900.00');
    assert.equal(t['low'], '29900.00');
    assert.equal(t['riseRate'], '-0.33');
    // Two days on: nothing in the window; the day is flat at the last price.
    v.time += 2 * 86_400_000;
    t = ((await v.get('/data/v1/ticker?market=btc_usdt')).json() as { ticker: Record<string, string> })
      .ticker;
    assert.deepEqual(
      [t['open'], t['high'], t['low'], t['last'], t['vol'], t['riseRate']],
      ['29900.00', '29900.00', '29900.00', '29900.00', '0.0000', '0.00'],
    );
  });

  test('allTicker: every market keyed without underscore, the same string fields, no date', async () => {
    const { v } = tradedVenue();
    const r = await v.get('/data/v1/allTicker');
    const body = r.json() as Record<string, Record<string, unknown>>;
    assert.deepEqual(Object.keys(body), ['btcusdt', 'ethusdt', 'ethbtc', 'zbusdt', 'zbqc']);
    const single = (await v.get('/data/v1/ticker?market=btc_usdt')).json() as { ticker: unknown };
    assert.deepEqual(body['btcusdt'], single.ticker);
    for (const t of Object.values(body)) {
      assert.deepEqual(Object.keys(t), [
        'high',
        'vol',
        'last',
        'low',
        'buy',
        'sell',
        'turnover',
        'open',
        'riseRate',
      ]);
      for (const value of Object.values(t)) assert.equal(typeof value, 'string');
    }
    assert.ok(!('date' in body));
  });

  test('cached texts follow every change: book, trades, time', async () => {
    const { v, alice } = bookVenue();
    const first = (await v.get('/data/v1/allTicker')).payload;
    assert.equal((await v.get('/data/v1/allTicker')).payload, first);
    v.place(alice, 'btc_usdt', 'buy', '29950', '0.1');
    const second = (await v.get('/data/v1/allTicker')).payload;
    assert.notEqual(second, first);
    assert.equal(
      (JSON.parse(second) as Record<string, Record<string, string>>)['btcusdt']?.['buy'],
      '29950.00',
    );
  });
});

describe('/data/v1/depth', () => {
  test('asks and bids both from the highest price down, [price, amount] numbers, timestamp in seconds', async () => {
    const { v } = bookVenue();
    v.time = T0 + 1_234;
    const r = await v.get('/data/v1/depth?market=btc_usdt');
    assert.equal(r.statusCode, 200);
    assert.deepEqual(r.json(), {
      asks: [
        [30150.55, 0.2],
        [30100, 0.3],
        [30000, 0.5],
      ],
      bids: [
        [29900, 0.4],
        [29850, 0.1],
        [29800.01, 0.25],
      ],
      timestamp: Math.floor((T0 + 1_234) / 1000),
    });
    assert.ok(r.payload.startsWith('{"asks":[[30150.55,0.2000],[30100.00,0.3000]'));
  });

  test('size takes the best levels of each side', async () => {
    const { v } = bookVenue();
    const body = (await v.get('/data/v1/depth?market=btc_usdt&size=2')).json() as {
      asks: unknown;
      bids: unknown;
    };
    assert.deepEqual(body.asks, [
      [30100, 0.3],
      [30000, 0.5],
    ]);
    assert.deepEqual(body.bids, [
      [29900, 0.4],
      [29850, 0.1],
    ]);
    const one = (await v.get('/data/v1/depth?market=btc_usdt&size=1')).json() as {
      asks: unknown;
      bids: unknown;
    };
    assert.deepEqual(one.asks, [[30000, 0.5]]);
    assert.deepEqual(one.bids, [[29900, 0.4]]);
  });

  test('size outside 1..50 or not an integer → 3005 naming size', async () => {
    const { v } = bookVenue();
    for (const size of [
      '0',
      '51',
      '-1',
      '2.5',
      'abc',
      '1e1',
      '99999999999999999999',
      '05',
      '+5',
      '%205',
      '5%20',
    ]) {
      const body = (await v.get(`/data/v1/depth?market=btc_usdt&size=${size}`)).json() as {
        code: number;
        message: string;
      };
      assert.equal(body.code, 3005, size);
      assert.match(body.message, /size '.*' must be an integer from 1 to 50/, size);
    }
    assert.ok('asks' in ((await v.get('/data/v1/depth?market=btc_usdt&size=50')).json() as object));
  });

  test('merge: bids rounded down and asks up to the step, amounts added, 5 levels at most', async () => {
    const { v, bob } = bookVenue();
    let body = (await v.get('/data/v1/depth?market=btc_usdt&merge=1000')).json() as {
      asks: unknown;
      bids: unknown;
    };
    assert.deepEqual(body.asks, [
      [31000, 0.5],
      [30000, 0.5],
    ]);
    assert.deepEqual(body.bids, [[29000, 0.75]]);
    body = (await v.get('/data/v1/depth?market=btc_usdt&merge=0.1')).json() as {
      asks: unknown;
      bids: unknown;
    };
    assert.deepEqual(body.asks, [
      [30150.6, 0.2],
      [30100, 0.3],
      [30000, 0.5],
    ]);
    assert.deepEqual(body.bids, [
      [29900, 0.4],
      [29850, 0.1],
      [29800, 0.25],
    ]);
    for (let i = 1; i <= 8; i++) v.place(bob, 'btc_usdt', 'sell', String(30200 + i * 10), '0.01');
    body = (await v.get('/data/v1/depth?market=btc_usdt&merge=10&size=50')).json() as {
      asks: unknown[];
      bids: unknown;
    };
    assert.deepEqual(body.asks, [
      [30220, 0.01],
      [30210, 0.01],
      [30160, 0.2],
      [30100, 0.3],
      [30000, 0.5],
    ]);
    body = (await v.get('/data/v1/depth?market=btc_usdt&merge=10&size=2')).json() as {
      asks: unknown[];
      bids: unknown;
    };
    assert.deepEqual(body.asks, [
      [30100, 0.3],
      [30000, 0.5],
    ]);
  });

  test('merge reads as deep as it must for five complete levels', async () => {
    const v = venue();
    const bob = v.fund('bob', 'btc', '10');
    // 300 ask levels one tick apart: merged by 1 USDT (100 ticks), each merged level holds 100.
    for (let i = 0; i < 300; i++) v.place(bob, 'btc_usdt', 'sell', (30000 + i / 100).toFixed(2), '0.001');
    const body = (await v.get('/data/v1/depth?market=btc_usdt&merge=1')).json() as { asks: unknown[] };
    assert.deepEqual(body.asks, [
      [30003, 0.099],
      [30002, 0.1],
      [30001, 0.1],
      [30000, 0.001],
    ]);
  });

  test('merge must be a positive multiple of the tick → else 3005 naming merge', async () => {
    const { v } = bookVenue();
    for (const merge of ['0', '0.00', '0.001', '-1', 'abc', '1e-3', '0x10']) {
      const body = (await v.get(`/data/v1/depth?market=btc_usdt&merge=${merge}`)).json() as {
        code: number;
        message: string;
      };
      assert.equal(body.code, 3005, merge);
      assert.match(
        body.message,
        /merge '.*' must be a positive multiple of the price step 0\.01 of btc_usdt/,
        merge,
      );
    }
    const ok = (await v.get('/data/v1/depth?market=btc_usdt&merge=0.010')).json() as { asks: unknown };
    assert.equal((ok.asks as unknown[]).length, 3);
    // A float in exponent notation (the interface types merge as float) is read exactly.
    const exp = (await v.get('/data/v1/depth?market=btc_usdt&merge=1e-2')).json() as { asks: unknown };
    assert.equal((exp.asks as unknown[]).length, 3);
  });

  test('the cached depth follows the book', async () => {
    const { v, alice } = bookVenue();
    const before = (await v.get('/data/v1/depth?market=btc_usdt&size=1')).json() as { bids: unknown };
    assert.deepEqual(before.bids, [[29900, 0.4]]);
    v.place(alice, 'btc_usdt', 'buy', '29950', '0.1');
    const after = (await v.get('/data/v1/depth?market=btc_usdt&size=1')).json() as { bids: unknown };
    assert.deepEqual(after.bids, [[29950, 0.1]]);
    const merged = (await v.get('/data/v1/depth?market=btc_usdt&merge=100')).json() as { bids: unknown };
    assert.deepEqual((merged.bids as unknown[])[0], [29900, 0.5]);
  });
});

describe('/data/v1/trades', () => {
  test('the latest trades, oldest first: date in seconds, price and amount strings, tid number', async () => {
    const { v } = tradedVenue();
    const r = await v.get('/data/v1/trades?market=btc_usdt');
    assert.equal(r.statusCode, 200);
    const s = (t: number): number => Math.floor(t / 1000);
    assert.deepEqual(r.json(), [
      { date: s(T0), amount: '0.2000', price: '30000.00', trade_type: 'bid', type: 'buy', tid: 1 },
      { date: s(T0 + 60_000), amount: '0.1000', price: '29900.00', trade_type: 'ask', type: 'sell', tid: 2 },
      { date: s(T0 + 120_000), amount: '0.3000', price: '30000.00', trade_type: 'bid', type: 'buy', tid: 3 },
      { date: s(T0 + 120_000), amount: '0.0500', price: '30100.00', trade_type: 'bid', type: 'buy', tid: 4 },
    ]);
    assert.deepEqual((await v.get('/data/v1/trades?market=eth_usdt')).json(), []);
  });

  test('since: the trades after that id, from memory, the store or both, 50 at most', async () => {
    const { v, alice, bob } = bookVenue();
    // 350 trades (memory keeps the latest 200: 151..350); the store has seen the first 180.
    v.place(alice, 'btc_usdt', 'buy', '29000', '1');
    for (let i = 1; i <= 350; i++) {
      v.place(bob, 'btc_usdt', 'sell', '29000', '0.001');
      if (i === 180) await v.flush();
    }
    const ids = (query: string): Promise<number[]> =>
      v
        .get(`/data/v1/trades?market=btc_usdt${query}`)
        .then((r) => (r.json() as { tid: number }[]).map((t) => t.tid));
    const range = (from: number, to: number): number[] =>
      Array.from({ length: to - from + 1 }, (_, i) => from + i);
    assert.deepEqual(await ids(''), range(301, 350));
    assert.deepEqual(await ids('&since=0'), range(1, 50)); // store
    assert.deepEqual(await ids('&since=140'), range(141, 190)); // store 141..180, then memory
    assert.deepEqual(await ids('&since=200'), range(201, 250)); // memory
    assert.deepEqual(await ids('&since=345'), range(346, 350));
    assert.deepEqual(await ids('&since=350'), []);
    assert.deepEqual(await ids('&since=99999'), []);
  });

  test('a bad since → 3005 naming since', async () => {
    const { v } = tradedVenue();
    for (const since of ['abc', '-1', '1.5', '12x', '007', '%2B7', '9007199254740993']) {
      const body = (await v.get(`/data/v1/trades?market=btc_usdt&since=${since}`)).json() as {
        code: number;
        message: string;
      };
      assert.equal(body.code, 3005);
      assert.match(body.message, /since '.*' must be an integer/);
    }
  });
});

describe('/data/v1/kline', () => {
  test('rows [ms, open, high, low, close, volume] as numbers, ascending; symbol and moneyType uppercase', async () => {
    const { v } = tradedVenue();
    await v.flush();
    const r = await v.get('/data/v1/kline?market=btc_usdt&type=1min');
    assert.equal(r.statusCode, 200);
    const m0 = minuteStart(T0);
    assert.deepEqual(r.json(), {
      symbol: 'BTC',
      moneyType: 'USDT',
      data: [
        [m0, 30000, 30000, 30000, 30000, 0.2],
        [m0 + 60_000, 29900, 29900, 29900, 29900, 0.1],
        [m0 + 120_000, 30000, 30100, 30000, 30100, 0.35],
      ],
    });
    assert.ok(r.payload.startsWith('{"symbol":"BTC","moneyType":"USDT","data":[['));
  });

  test('since (ms) and size select rows; size above 1000 is capped; the default type is 1day', async () => {
    const { v } = tradedVenue({ klineMinIntervalMs: 0 });
    await v.flush();
    const m0 = minuteStart(T0);
    const starts = async (query: string): Promise<number[]> =>
      ((await v.get(`/data/v1/kline?market=btc_usdt${query}`)).json() as { data: number[][] }).data.map(
        (row) => row[0] as number,
      );
    assert.deepEqual(await starts(`&type=1min&since=${m0 + 1}`), [m0 + 60_000, m0 + 120_000]);
    assert.deepEqual(await starts('&type=1min&size=2'), [m0 + 60_000, m0 + 120_000]);
    assert.deepEqual(await starts('&type=1min&size=5000'), [m0, m0 + 60_000, m0 + 120_000]);
    assert.deepEqual(await starts(''), [Math.floor(T0 / 86_400_000) * 86_400_000]);
    const day = (await v.get('/data/v1/kline?market=btc_usdt')).json() as { data: number[][] };
    assert.deepEqual(day.data[0]?.slice(1), [30000, 30100, 29900, 30100, 0.65]);
  });

  test('all 13 types answer; a bad type, size or since → 3005 naming it', async () => {
    const { v } = tradedVenue({ klineMinIntervalMs: 0 });
    await v.flush();
    assert.equal(KLINE_INTERVALS.length, 13);
    for (const type of KLINE_INTERVALS) {
      const body = (await v.get(`/data/v1/kline?market=btc_usdt&type=${type}`)).json() as { data: unknown[] };
      assert.ok(body.data.length >= 1, type);
    }
    const bad: [string, RegExp][] = [
      ['&type=1m', /type '1m' must be one of 1min, 3min/],
      ['&type=toString', /type 'toString' must be one of/],
      ['&size=0', /size '0' must be an integer/],
      ['&size=ten', /size 'ten' must be an integer/],
      ['&since=yesterday', /since '.*' must be an integer/],
      ['&since=-5', /since '.*' must be an integer/],
    ];
    for (const [query, message] of bad) {
      const body = (await v.get(`/data/v1/kline?market=btc_usdt${query}`)).json() as {
        code: number;
        message: string;
      };
      assert.equal(body.code, 3005, query);
      assert.match(body.message, message, query);
    }
  });

  test('one request per second per IP; the refusal (4002) says when to retry', async () => {
    const { v } = tradedVenue();
    await v.flush();
    const url = '/data/v1/kline?market=btc_usdt&type=1min';
    assert.ok('data' in ((await v.get(url, { ip: '10.0.0.1' })).json() as object));
    v.time += 400;
    const refused = (await v.get(url, { ip: '10.0.0.1' })).json() as { code: number; message: string };
    assert.equal(refused.code, 4002);
    assert.match(refused.message, new RegExp(`retry in 600 ms \\(at ${v.time + 600}\\)`));
    assert.ok(
      'data' in ((await v.get(url, { ip: '10.0.0.2' })).json() as object),
      'another IP is not limited',
    );
    v.time += 600;
    assert.ok('data' in ((await v.get(url, { ip: '10.0.0.1' })).json() as object));
  });
});

describe('other public endpoints', () => {
  test('/data/v1/getGroupMarkets: zone lists the quote coins; each lists its markets', async () => {
    const v = venue();
    assert.deepEqual((await v.get('/data/v1/getGroupMarkets')).json(), {
      zone: ['usdt', 'btc', 'qc'],
      usdt: ['btc_usdt', 'eth_usdt', 'zb_usdt'],
      btc: ['eth_btc'],
      qc: ['zb_qc'],
    });
  });

  test('/api/getFeeInfo (unsigned): every coin uppercase, an array of its chains with their fees', async () => {
    const v = venue();
    const body = (await v.get('/api/getFeeInfo')).json() as {
      code: number;
      message: string;
      result: Record<string, unknown[]>;
    };
    assert.equal(body.code, 1000);
    assert.equal(body.message, 'success');
    assert.deepEqual(Object.keys(body.result), ['BTC', 'ETH', 'USDT', 'QC', 'ZB', 'BCH', 'BSV', 'HC', 'XWC']);
    assert.deepEqual(body.result['USDT'], [
      { chainName: 'ERC20', fee: 15, mainChainName: 'ETH', canDeposit: true, canWithdraw: true },
      { chainName: 'TRC20', fee: 1, mainChainName: 'TRX', canDeposit: true, canWithdraw: true },
    ]);
    assert.deepEqual(body.result['BTC'], [
      { chainName: 'BTC', fee: 0.0005, mainChainName: 'BTC', canDeposit: true, canWithdraw: true },
    ]);
    for (const currency of ['btc', 'BTC', 'Btc']) {
      const one = (await v.get(`/api/getFeeInfo?currency=${currency}`)).json() as {
        result: Record<string, unknown>;
      };
      assert.deepEqual(Object.keys(one.result), ['BTC'], currency);
    }
    const retired = (await v.get('/api/getFeeInfo?currency=bchabc')).json() as {
      code: number;
      message: string;
    };
    assert.equal(retired.code, 3005);
    assert.match(retired.message, /currency: .*retired; use 'bch'/);
    const unknown = (await v.get('/api/getFeeInfo?currency=doge')).json() as {
      code: number;
      message: string;
    };
    assert.equal(unknown.code, 3005);
    assert.match(unknown.message, /unknown coin 'doge'/);
  });

  test('/Server/api/v2/config/marketList: the empty contract list ccxt needs', async () => {
    const v = venue();
    const r = await v.get('/Server/api/v2/config/marketList');
    assert.equal(r.payload, '{"code":10000,"data":[],"desc":"操作成功"}');
  });

  test('POST with a form body reaches the same routes', async () => {
    const v = venue();
    const { inject } = await import('light-my-request');
    const r = await inject(v.handler, {
      method: 'POST',
      url: '/data/v1/depth',
      headers: { 'user-agent': 'Mozilla/5.0', 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'market=btc_usdt&size=5',
    });
    assert.deepEqual(Object.keys(r.json() as object), ['asks', 'bids', 'timestamp']);
  });
});

describe('start-up seeding', () => {
  test('a restart keeps the 24 h view and the recent trades (from the 1min klines and the store)', async () => {
    const { v } = tradedVenue();
    await v.flush();
    const fresh = new MarketData(v.engine, { now: () => v.time });
    await fresh.seed(v.history);
    const before = JSON.parse(String(v.marketData.tickerBody('btc_usdt'))) as {
      ticker: Record<string, string>;
    };
    const after = JSON.parse(String(fresh.tickerBody('btc_usdt'))) as { ticker: Record<string, string> };
    // Everything but turnover is exact; turnover is estimated from the klines' typical prices.
    assert.deepEqual({ ...after.ticker, turnover: '' }, { ...before.ticker, turnover: '' });
    // Minutes 1 and 2 have one price each (exact); minute 3 uses (30100 + 30000 + 30100) / 3.
    assert.equal(after.ticker['turnover'], '19513.333333');
    assert.equal(
      String(fresh.latestTradesBody('btc_usdt')),
      String(v.marketData.latestTradesBody('btc_usdt')),
    );
  });
});
