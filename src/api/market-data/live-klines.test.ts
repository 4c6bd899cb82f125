import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { TradeExecuted } from '../../domain/events.ts';
import { KLINE_INTERVALS, type HistoryEntry } from '../../store/history-store.ts';
import { SqliteHistoryStore } from '../../store/sqlite-history-store.ts';
import { LiveKlines } from './live-klines.ts';

const T0 = 1_700_000_000_000;

function trade(id: number, time: number, price: number, amount: number): TradeExecuted {
  return {
    type: 'TradeExecuted',
    tradeId: id,
    market: 'btc_usdt',
    price,
    amount,
    value: price * amount,
    takerSide: 1,
    takerOrderId: 1,
    makerOrderId: 2,
    takerUserId: 1,
    makerUserId: 2,
    takerFee: 0,
    takerFeeCoin: 'btc',
    makerFee: 0,
    makerFeeCoin: 'usdt',
    time,
  };
}

test('live candles equal the history store’s for every interval, however the trades are batched', async () => {
  const store = SqliteHistoryStore.open(':memory:');
  const live = new LiveKlines(1_000);
  const entries: HistoryEntry[] = [];
  let time = T0;
  let state = 7;
  for (let seq = 1; seq <= 3_000; seq++) {
    state = (state * 48_271) % 2_147_483_647;
    time += state % 90_000; // up to 90 s apart: many 1min buckets empty, some with several trades
    const price = 3_000_000 + (state % 20_001) - 10_000;
    entries.push({ seq, time, events: [trade(seq, time, price, 1 + (state % 500))] });
  }
  for (let i = 0; i < entries.length; i += 37) {
    const batch = entries.slice(i, i + 37);
    await store.applyBatch(batch);
    live.apply(batch.map((e) => ({ result: { events: e.events } })));
  }
  for (const interval of KLINE_INTERVALS) {
    const stored = await store.klines('btc_usdt', interval, { size: 1_000 });
    assert.deepEqual(live.latest('btc_usdt', interval), stored, interval);
  }
  await store.close();
});

test('seeded from the store, then kept current; at most `kept` candles; `from` gives the touched ones', async () => {
  const store = SqliteHistoryStore.open(':memory:');
  const events = [trade(1, T0, 100, 1), trade(2, T0 + 60_000, 110, 2), trade(3, T0 + 120_000, 90, 3)];
  await store.applyBatch(events.map((e, i) => ({ seq: i + 1, time: e.time, events: [e] })));
  const live = new LiveKlines(2);
  await live.seed(store, ['btc_usdt']);
  assert.deepEqual(
    live.latest('btc_usdt', '1min').map((c) => c[4]),
    [110, 90],
    'the latest two',
  );
  live.apply([{ result: { events: [trade(4, T0 + 130_000, 95, 1), trade(5, T0 + 180_000, 97, 1)] } }]);
  const minute = Math.floor((T0 + 120_000) / 60_000) * 60_000;
  assert.deepEqual(live.from('btc_usdt', '1min', minute), [
    [minute, 90, 95, 90, 95, 4],
    [minute + 60_000, 97, 97, 97, 97, 1],
  ]);
  assert.equal(live.latest('btc_usdt', '1min').length, 2);
  assert.deepEqual(live.latest('eth_usdt', '1min'), []);
  await store.close();
});
