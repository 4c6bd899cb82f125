import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DEFAULT_VENUE } from '../../config/default-venue.ts';
import { Engine } from '../../engine/engine.ts';
import { KLINE_INTERVALS } from '../../store/history-store.ts';
import { parseChannel, WireMarkets } from './channels.ts';

const markets = new WireMarkets(new Engine(DEFAULT_VENUE));
const parse = (channel: unknown, extra: Record<string, unknown> = {}) =>
  parseChannel(markets, { channel, ...extra });

test('public channel names: the market id without its underscore, then the kind', () => {
  for (const kind of ['ticker', 'depth', 'trades'] as const) {
    const p = parse(`btcusdt_${kind}`);
    assert.ok(p.ok);
    assert.deepEqual(
      [p.value.kind, p.value.name, 'market' in p.value && p.value.market.spec.name],
      [kind, `btcusdt_${kind}`, 'btc_usdt'],
    );
  }
  const q = parse('ethbtc_quick_depth', { length: '10' });
  assert.ok(q.ok && q.value.kind === 'quick_depth');
  assert.equal(q.value.length, 10);
  assert.equal(q.value.market.spec.name, 'eth_btc');
  const d = parse('zbqc_quick_depth');
  assert.ok(d.ok && d.value.kind === 'quick_depth' && d.value.length === 5, 'length 5 by default');
});

test('a kline channel for each of the 13 REST kline types', () => {
  for (const interval of KLINE_INTERVALS) {
    const p = parse(`btcusdt_kline_${interval}`);
    assert.ok(p.ok && p.value.kind === 'kline', interval);
    assert.equal(p.value.interval, interval);
  }
});

test('names that refer to nothing are 1007 (WS_CHANNEL_EMPTY); a bad length or market is 3005', () => {
  for (const name of [
    undefined,
    '',
    42,
    'btc_usdt_ticker',
    'BTCUSDT_ticker',
    'btcusdt',
    'btcusdt_kline_1m',
    'nousdt_depth',
    'btcusdt_kline_',
  ]) {
    const p = parse(name);
    assert.ok(!p.ok && p.result === 'WS_CHANNEL_EMPTY', String(name));
  }
  for (const length of [20, '20', 0, 'five', true]) {
    const p = parse('btcusdt_quick_depth', { length });
    assert.ok(!p.ok && p.result === 'INVALID_PARAMETER', String(length));
  }
  for (const market of [undefined, 'btcusdt', 'btc_usdtdefault', 'nonedefault', 7]) {
    const p = parse('push_user_incr_record', { market });
    assert.ok(!p.ok && p.result === 'INVALID_PARAMETER', String(market));
  }
});

test('private channels; push_user_incr_record names its market as <id>default', () => {
  const r = parse('push_user_incr_record', { market: 'btcusdtdefault' });
  assert.ok(r.ok && r.value.kind === 'push_user_incr_record');
  assert.equal(r.value.market.spec.name, 'btc_usdt');
  for (const name of ['push_user_asset', 'push_user_incr_asset', 'push_user_cross_asset']) {
    const p = parse(name);
    assert.ok(p.ok && p.value.kind === name);
  }
});
