import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DEFAULT_VENUE } from '../../config/default-venue.ts';
import type { ResultName } from '../../domain/result-codes.ts';
import { Engine } from '../../engine/engine.ts';
import { KLINE_INTERVALS } from '../../store/history-store.ts';
import { Refusal } from '../edge/refusal.ts';
import { parseChannel, WireMarkets } from './channels.ts';

const markets = new WireMarkets(new Engine(DEFAULT_VENUE));
const parse = (channel: unknown, extra: Record<string, unknown> = {}) =>
  parseChannel(markets, { channel, ...extra });
const refused = (result: ResultName, message: RegExp, run: () => unknown, what: string): void => {
  assert.throws(
    run,
    (e: unknown) => e instanceof Refusal && e.result === result && message.test(e.message),
    what,
  );
};

test('public channel names: the market id without its underscore, then the kind', () => {
  for (const kind of ['ticker', 'depth', 'trades'] as const) {
    const p = parse(`btcusdt_${kind}`);
    assert.deepEqual(
      [p.kind, p.name, 'market' in p && p.market.spec.name],
      [kind, `btcusdt_${kind}`, 'btc_usdt'],
    );
  }
  const q = parse('ethbtc_quick_depth', { length: '10' });
  assert.ok(q.kind === 'quick_depth');
  assert.equal(q.length, 10);
  assert.equal(q.market.spec.name, 'eth_btc');
  assert.ok(parse('ethbtc_quick_depth', { length: 10 }).kind === 'quick_depth');
  const d = parse('zbqc_quick_depth');
  assert.ok(d.kind === 'quick_depth' && d.length === 5, 'length 5 by default');
});

test('a kline channel for each of the 13 REST kline types', () => {
  for (const interval of KLINE_INTERVALS) {
    const p = parse(`btcusdt_kline_${interval}`);
    assert.ok(p.kind === 'kline', interval);
    assert.equal(p.interval, interval);
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
    refused('WS_CHANNEL_EMPTY', /Channel is empty/, () => parse(name), String(name));
  }
  for (const length of [20, '20', 0, 'five', true]) {
    refused(
      'INVALID_PARAMETER',
      /length '.*' must be one of 5, 10/,
      () => parse('btcusdt_quick_depth', { length }),
      String(length),
    );
  }
  for (const market of [undefined, 'btcusdt', 'btc_usdtdefault', 'nonedefault', 7]) {
    refused(
      'INVALID_PARAMETER',
      /market .* must be a market id/,
      () => parse('push_user_incr_record', { market }),
      String(market),
    );
  }
});

test('private channels; push_user_incr_record names its market as <id>default', () => {
  const r = parse('push_user_incr_record', { market: 'btcusdtdefault' });
  assert.ok(r.kind === 'push_user_incr_record');
  assert.equal(r.market.spec.name, 'btc_usdt');
  for (const name of ['push_user_asset', 'push_user_incr_asset', 'push_user_cross_asset']) {
    assert.equal(parse(name).kind, name);
  }
});
