import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { loadReplayFile, parseReplay } from './load.ts';
import {
  compareDecimals,
  exactDecimal,
  mergeReplay,
  ReplayFormatError,
  type ReplayCandle,
  type ReplayFormat,
  type ReplayTrade,
} from './replay-data.ts';

const SAMPLES = join(import.meta.dirname, '..', '..', 'samples', 'replay');
const sample = (name: string) => join(SAMPLES, name);

/** The refusal of `text` as `format`: its where and problem. */
function refusal(text: string, format?: ReplayFormat): ReplayFormatError {
  try {
    parseReplay(text, 'f', format);
  } catch (error) {
    assert.ok(error instanceof ReplayFormatError, String(error));
    return error;
  }
  assert.fail(`accepted: ${text.slice(0, 80)}`);
}

const KLINE =
  '1767225600000,93998.86,94006.8,93981.6,93985.78,0.01718492,1767225659999,1615.22,24,0.0089,845.79,0';
const AGG = '3000000000,93998.86,0.00069063,4500000000,4500000002,1767225605494,false,true';

describe('replay loaders', () => {
  test('the shipped samples load, the Binance and ccxt forms of the same hour agree exactly', () => {
    const klines = loadReplayFile(sample('BTCUSDT-1m-2026-01-01.csv'));
    const agg = loadReplayFile(sample('BTCUSDT-aggTrades-2026-01-01.csv'));
    const ohlcv = loadReplayFile(sample('btc_usdt-1m-2026-01-01.ohlcv.json'));
    const trades = loadReplayFile(sample('btc_usdt-2026-01-01.trades.json'));
    assert.deepEqual(
      [klines.format, agg.format, ohlcv.format, trades.format],
      ['binance-klines', 'binance-aggtrades', 'ccxt-ohlcv', 'ccxt-trades'],
    );
    assert.equal(klines.events.length, 60);
    assert.equal(agg.events.length, 742);
    // The aggTrades file is the newer kind (a header row, microsecond times): truncated to ms,
    // trade for trade what ccxt saved.
    assert.deepEqual(agg.events, trades.events);
    const first = agg.events[0] as ReplayTrade;
    assert.deepEqual(first, {
      kind: 'trade',
      time: 1767225605494,
      price: '93998.86',
      amount: '0.00069063',
      side: 'buy',
      id: '3000000000',
    });
    const prices = (c: ReplayCandle) => [c.time, c.open, c.high, c.low, c.close, c.volume];
    assert.deepEqual(
      (klines.events as ReplayCandle[]).map(prices),
      (ohlcv.events as ReplayCandle[]).map(prices),
    );
    const candle = klines.events[0] as ReplayCandle;
    assert.equal(candle.closeTime, 1767225659999);
    assert.equal(candle.quoteVolume, '1615.22142833');
    assert.equal(candle.trades, 24);
    // The candles' volumes are the sums of the trades in their minutes, exactly (in units of 1e-8).
    const units = (d: string): bigint =>
      BigInt(d.replace('.', '')) * 10n ** BigInt(8 - (d.split('.')[1] ?? '').length);
    for (const c of klines.events as ReplayCandle[]) {
      const inMinute = (agg.events as ReplayTrade[]).filter(
        (t) => t.time >= c.time && t.time <= (c.closeTime as number),
      );
      assert.equal(
        inMinute.reduce((sum, t) => sum + units(t.amount), 0n),
        units(c.volume),
        String(c.time),
      );
    }
  });

  test('exact decimals: plain, padded and scientific texts, never through a float', () => {
    const cases: [string, string | undefined][] = [
      ['30000.10', '30000.1'],
      ['0.00000001', '0.00000001'],
      ['1e-8', '0.00000001'],
      ['1.5E+3', '1500'],
      ['2.5e2', '250'],
      ['007', '7'],
      ['0', '0'],
      ['0.0', '0'],
      ['123456789012345678901234.123456789012345678', '123456789012345678901234.123456789012345678'],
      ['-1', undefined],
      ['+1', undefined],
      [' 1', undefined],
      ['1.', undefined],
      ['.5', undefined],
      ['NaN', undefined],
      ['0x10', undefined],
      ['', undefined],
    ];
    for (const [text, want] of cases) assert.equal(exactDecimal(text), want, text);
    assert.equal(compareDecimals('10', '9.99'), 1);
    assert.equal(compareDecimals('0.1', '0.10'), 0);
    assert.equal(compareDecimals('0.09', '0.1'), -1);
    // JSON numbers a float would round keep every digit.
    const [candle] = parseReplay(
      '[[1767225600000, 0.1, 12345678901234567.12345678, 1e-8, 0.30000000000000004, 1E2]]',
      'f',
    ).events as ReplayCandle[];
    assert.deepEqual(
      [candle?.open, candle?.high, candle?.low, candle?.close, candle?.volume],
      ['0.1', '12345678901234567.12345678', '0.00000001', '0.30000000000000004', '100'],
    );
    const [trade] = parseReplay(
      '[{"timestamp": 1, "price": "0.1000", "amount": 3e-7, "side": "sell", "id": 42}]',
      'f',
    ).events as ReplayTrade[];
    assert.deepEqual(trade, {
      kind: 'trade',
      time: 1,
      price: '0.1',
      amount: '0.0000003',
      side: 'sell',
      id: '42',
    });
  });

  test('Binance files with or without a header row, ms or µs times, futures aggTrades without is-best-match', () => {
    const header =
      'open_time,open,high,low,close,volume,close_time,quote_volume,count,taker_buy_volume,taker_buy_quote_volume,ignore';
    const a = parseReplay(`${header}\n${KLINE}\n`, 'f');
    const micro = parseReplay(
      KLINE.replace('1767225600000', '1767225600000000').replace('1767225659999', '1767225659999999'),
      'f',
    );
    assert.deepEqual(a.events, micro.events);
    assert.equal(a.events[0]?.time, 1767225600000);
    const futures = parseReplay(
      'agg_trade_id,price,quantity,first_trade_id,last_trade_id,transact_time,is_buyer_maker\r\n3,1.5,2,4,4,1767225605494,true\r\n',
      'f',
    );
    assert.deepEqual(futures.events, [
      { kind: 'trade', time: 1767225605494, price: '1.5', amount: '2', side: 'sell', id: '3' },
    ]);
  });

  test('a malformed CSV is refused naming its line and column', () => {
    const k = (i: number, value: string): string =>
      KLINE.split(',')
        .map((f, j) => (j === i ? value : f))
        .join(',');
    const t = (i: number, value: string): string =>
      AGG.split(',')
        .map((f, j) => (j === i ? value : f))
        .join(',');
    const cases: [string, RegExp][] = [
      [`${KLINE}\n${KLINE},9`, /^line 2$/],
      [`${KLINE}\n${k(1, 'abc')}`, /^line 2, column 2 \(open\)$/],
      [k(4, '-5'), /^line 1, column 5 \(close\)$/],
      [k(2, '0'), /^line 1, column 3 \(high\)$/],
      [k(0, '17672256e5'), /^line 1, column 1 \(open time\)$/],
      [k(3, '94100'), /^line 1, column 4 \(low\)$/], // low above high
      [k(1, '95000'), /^line 1, column 2 \(open\)$/], // open above high
      [k(6, '1767225500000'), /^line 1, column 7 \(close time\)$/],
      [k(8, '2.5'), /^line 1, column 9 \(trades\)$/],
      [`${KLINE}\n\n${k(0, '1767225500000')}`, /^line 3, column 1 \(open time\)$/], // time goes back
      [t(6, 'maybe'), /^line 1, column 7 \(is buyer maker\)$/],
      [t(2, '0'), /^line 1, column 3 \(quantity\)$/],
      [t(4, '4499999999'), /^line 1, column 5 \(last trade id\)$/],
      [`${AGG}\n${t(5, '1767225605000')}`, /^line 2, column 6 \(timestamp\)$/],
      ['', /^line 1$/],
      ['open_time,open\n', /^line 1$/],
      ['a;b;c\n', /^line 1$/],
    ];
    for (const [text, where] of cases) {
      const e = refusal(text);
      assert.match(e.where, where, `${text}: ${e.message}`);
      assert.ok(e.message.startsWith(`f: ${e.where}: `), e.message);
    }
    assert.equal(refusal(k(1, 'abc')).message, "f: line 1, column 2 (open): 'abc' is not a decimal number");
    assert.equal(
      refusal(`${AGG}\n${t(5, '1767225605000')}`).problem,
      "2026-01-01T00:00:05.000Z is earlier than the line before's: the rows must be in time order",
    );
    // Told the format, a file of another is refused rather than misread.
    assert.match(refusal(AGG, 'binance-klines').message, /^f: line 1: 8 columns, expected 12/);
  });

  test('a malformed ccxt JSON file is refused naming the JSON path', () => {
    const candle = '[1767225600000, 1, 2, 0.5, 1.5, 10]';
    const trade = '{"timestamp": 1767225605494, "price": 1, "amount": 2, "side": "buy"}';
    const cases: [string, string, RegExp][] = [
      ['[[1, 2', '$', /^not JSON: /],
      ['{"a": 1}', '$', /expected an array/],
      ['[]', '$', /no rows/],
      [
        `[${candle}, [1767225660000, 1, 2, 0.5, 1.5]]`,
        '$[1]',
        /expected \[timestamp, open, high, low, close, volume\]/,
      ],
      [`[${candle}, [1767225660000, 1, "x", 0.5, 1.5, 10]]`, '$[1][2]', /"x" is not a non-negative decimal/],
      ['[[1767225660000, 1, 2, 0.5, 1.5, -10]]', '$[0][5]', /-10 is not a non-negative decimal/],
      ['[[1767225660000, 1, 2, 0.5, 1.5, null]]', '$[0][5]', /null is not/],
      ['[[1767225660000, 1, 2, 3, 1.5, 1]]', '$[0][3]', /low 3 is above high 2/],
      ['[["1767225660000", 1, 2, 0.5, 1.5, 1]]', '$[0][0]', /not a time in ms/],
      ['[[1767225660000.5, 1, 2, 0.5, 1.5, 1]]', '$[0][0]', /not a time in ms/],
      [`[[1767225660000, 1, 2, 0.5, 1.5, 1], ${candle}]`, '$[1][0]', /earlier than the row before's/],
      [`[${trade}, 5]`, '$[1]', /expected a trade/],
      [`[${trade.replace('"buy"', '"long"')}]`, '$[0].side', /"long" is not "buy" or "sell"/],
      [`[${trade.replace('"price": 1', '"price": 0')}]`, '$[0].price', /must be more than 0/],
      [`[${trade.replace('"amount": 2', '"amount": true')}]`, '$[0].amount', /true is not/],
      [`[${trade.replace('"timestamp": 1767225605494, ', '')}]`, '$[0].timestamp', /not a time/],
      [`[${trade}, ${trade.replace('1767225605494', '1767225605000')}]`, '$[1].timestamp', /earlier/],
      [`[${trade.replace('}', ', "id": {"x": 1}}')}]`, '$[0].id', /not a trade id/],
    ];
    for (const [text, where, problem] of cases) {
      const e = refusal(text, text.startsWith('[[1, 2') ? 'ccxt-ohlcv' : undefined);
      assert.equal(e.where, where, `${text}: ${e.message}`);
      assert.match(e.problem, problem, text);
    }
  });

  test('refusing a file changes nothing: the file stays as it was and nothing is returned', () => {
    const path = sample('BTCUSDT-1m-2026-01-01.csv');
    const before = readFileSync(path);
    assert.throws(() => loadReplayFile(path, 'ccxt-trades'), ReplayFormatError);
    assert.deepEqual(readFileSync(path), before);
  });

  test('streams merge into one time order; equal times keep the order given', () => {
    const a = parseReplay('[[1000, 1, 1, 1, 1, 1], [3000, 1, 1, 1, 1, 1]]', 'a');
    const b = parseReplay(
      '[{"timestamp": 1000, "price": 1, "amount": 1, "side": "buy"}, {"timestamp": 2000, "price": 1, "amount": 1, "side": "sell"}]',
      'b',
    );
    assert.deepEqual(
      mergeReplay([a, b]).map((e) => `${e.source}:${e.event.kind}@${e.event.time}`),
      ['a:candle@1000', 'b:trade@1000', 'b:trade@2000', 'a:candle@3000'],
    );
  });
});
