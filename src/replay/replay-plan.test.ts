import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { EngineDriver } from '../../test/fixtures/engine-driver.ts';
import { DEFAULT_VENUE } from '../config/default-venue.ts';
import { BUY, SELL, type ReplaySource, type StartReplay } from '../domain/commands.ts';
import { Engine } from '../engine/engine.ts';
import { loadReplayInputs, parseReplay, sha256Hex, splitReplayArg, type ReplayInput } from './load.ts';
import { decimalToUnits, marketOfFile, planReplay } from './replay-plan.ts';

const SAMPLES = join(import.meta.dirname, '..', '..', 'samples', 'replay');
const markets = new Engine(DEFAULT_VENUE).markets();
const decimals = (coin: string): number => (coin === 'usdt' ? 6 : 8);
const input = (file: string, text: string, market?: string): ReplayInput => ({
  file,
  stream: parseReplay(text, file),
  sha256: sha256Hex(text),
  ...(market === undefined ? {} : { market }),
});

describe('the replay plan', () => {
  test('a file’s market is named, or told by its name (Binance’s BTCUSDT, ccxt’s btc_usdt)', () => {
    assert.deepEqual(splitReplayArg('eth_usdt=/data/x.csv'), { market: 'eth_usdt', file: '/data/x.csv' });
    assert.deepEqual(splitReplayArg('/data/BTCUSDT-1m.csv'), { file: '/data/BTCUSDT-1m.csv' });
    assert.equal(marketOfFile('/x/BTCUSDT-aggTrades-2026-01-01.csv', markets), 'btc_usdt');
    assert.equal(marketOfFile('btc_usdt-2026-01-01.trades.json', markets), 'btc_usdt');
    assert.equal(marketOfFile('ETHBTC-1m.csv', markets), 'eth_btc');
    assert.equal(marketOfFile('DOGEUSDT-1m.csv', markets), undefined);
    assert.throws(
      () => planReplay([input('DOGEUSDT-1m.csv', '[[1000, 1, 1, 1, 1, 1]]')], markets, decimals),
      /DOGEUSDT-1m.csv: which market\? its name does not tell \(name it: --replay btc_usdt=<file>\)/,
    );
  });

  test('prices round half up to the market’s ticks; amounts to its lots, at least its minimum order', () => {
    assert.equal(decimalToUnits('93998.865', 2), 9_399_887n);
    assert.equal(decimalToUnits('93998.864', 2), 9_399_886n);
    assert.equal(decimalToUnits('12', 4), 120_000n);
    const text = JSON.stringify([
      { timestamp: 1000, price: 30000.004, amount: 0.00126, side: 'buy' },
      { timestamp: 2000, price: 30000, amount: 0.00001, side: 'sell' },
    ]);
    const plan = planReplay([input('btc_usdt.json', text)], markets, decimals);
    assert.deepEqual(
      plan.trades.map((t) => [t.time, t.side, t.price, t.amount]),
      [
        [1000, BUY, 3_000_000, 13],
        [2000, SELL, 3_000_000, 2], // raised: 0.0001 btc is the minimum, and 5 usdt the least value
      ],
    );
    assert.equal(plan.historyStart, 1000);
    assert.equal(plan.sources[0]?.trades, 2);
  });

  test('a market with candles only plays each as four trades: open, the nearer extreme, the other, close', () => {
    const [klines] = loadReplayInputs([join(SAMPLES, 'BTCUSDT-1m-2026-01-01.csv')]);
    const plan = planReplay([klines as ReplayInput], markets, decimals);
    assert.equal(plan.trades.length, 60 * 4);
    const first = plan.trades.slice(0, 4);
    // The first candle: open 93998.86, high 94006.80, low 93981.60, close 93985.78 (down: high first).
    assert.deepEqual(
      first.map((t) => [t.time - 1_767_225_600_000, t.price, t.side]),
      [
        [0, 9_399_886, BUY],
        [15_000, 9_400_680, BUY],
        [30_000, 9_398_160, SELL],
        [45_000, 9_398_578, BUY],
      ],
    );
  });

  test('trades win over candles for the same market; several files merge in time order', () => {
    const inputs = loadReplayInputs([
      join(SAMPLES, 'BTCUSDT-1m-2026-01-01.csv'),
      join(SAMPLES, 'BTCUSDT-aggTrades-2026-01-01.csv'),
    ]);
    const plan = planReplay(inputs, markets, decimals);
    assert.equal(plan.trades.length, 742);
    assert.deepEqual(
      plan.sources.map((s) => [s.format, s.trades]),
      [
        ['binance-klines', 0],
        ['binance-aggtrades', 742],
      ],
    );
    const eth = input(
      'eth_usdt.json',
      JSON.stringify([{ timestamp: 1_767_225_606_000, price: 3000, amount: 1, side: 'buy' }]),
    );
    const merged = planReplay([inputs[1] as ReplayInput, eth], markets, decimals);
    const times = merged.trades.map((t) => t.time);
    assert.deepEqual(
      times,
      [...times].sort((a, b) => a - b),
    );
    assert.equal(merged.trades[1]?.market, 'eth_usdt', 'between the sample’s first two trades');
    // The file's hash is its bytes'.
    const bytes = readFileSync(join(SAMPLES, 'BTCUSDT-aggTrades-2026-01-01.csv'));
    assert.equal(plan.sources[1]?.sha256, sha256Hex(bytes));
  });
});

describe('the replay record in the engine', () => {
  const source = (over: Partial<ReplaySource> = {}): ReplaySource => ({
    file: 'BTCUSDT-aggTrades.csv',
    sha256: 'a'.repeat(64),
    format: 'binance-aggtrades',
    market: 'btc_usdt',
    trades: 742,
    ...over,
  });
  const start = (sources: ReplaySource[]): StartReplay => ({
    type: 'StartReplay',
    sources,
    historyStart: 1000,
  });

  test('StartReplay records the inputs (ReplayStarted), EndReplay the end; bad ones change nothing', () => {
    const d = new EngineDriver();
    const state = (): string => JSON.stringify({ ...d.engine.snapshot(), lastSeq: 0 });
    const before = state();
    for (const [bad, code] of [
      [start([]), 'INVALID_PARAMETER'],
      [start([source({ sha256: 'xyz' })]), 'INVALID_PARAMETER'],
      [start([source({ market: 'doge_usdt' })]), 'UNKNOWN_MARKET'],
      [start([source({ trades: -1 })]), 'INVALID_PARAMETER'],
      [{ ...start([source()]), historyStart: -5 }, 'INVALID_PARAMETER'],
      [{ type: 'EndReplay', replayId: 99, reason: 'finished', played: 0 }, 'INVALID_PARAMETER'],
    ] as const) {
      assert.equal(d.apply(bad).result, code, JSON.stringify(bad));
    }
    assert.equal(state(), before, 'refusals change nothing');
    assert.equal('demo' in JSON.parse(before), false, 'no replay: no trace in the snapshot');

    const started = d.apply(start([source()]));
    assert.equal(started.result, 'OK');
    const event = started.events[0];
    assert.equal(event?.type, 'ReplayStarted');
    const replayId = (event as { replayId: number }).replayId;
    assert.equal(
      d.apply(start([source({ sha256: 'b'.repeat(64) })])).result,
      'INVALID_STATE',
      'one replay a market',
    );
    assert.equal(d.engine.demo.started, false, 'a replay is not the demo');
    assert.equal(
      d.apply({ type: 'EndReplay', replayId, reason: 'finished', played: 742 }).events[0]?.type,
      'ReplayEnded',
    );
    assert.equal(d.apply({ type: 'EndReplay', replayId, reason: 'stopped', played: 742 }).duplicate, true);
    assert.equal(d.engine.demo.replays()[0]?.ended?.played, 742);
    d.engine.assertInvariants();
    const restored = Engine.restore(JSON.parse(JSON.stringify(d.engine.snapshot())));
    assert.equal(restored.stateHash(), d.engine.stateHash());
    assert.deepEqual(restored.demo.replays(), d.engine.demo.replays());
    assert.equal(restored.demo.started, false);
  });
});
