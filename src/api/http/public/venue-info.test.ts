import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DEFAULT_VENUE } from '../../../config/default-venue.ts';
import { Engine } from '../../../engine/engine.ts';
import { venueInfo } from './venue-info.ts';

test('venueInfo: fee rates, status, the platform discount, the demo and the clock', () => {
  const engine = new Engine(DEFAULT_VENUE);
  const clock = { mode: 'manual' as const, now: () => 1_700_000_000_000 };
  const plain = venueInfo({ engine, clock });
  assert.deepEqual((plain.markets as Record<string, unknown>)['btc_usdt'], {
    makerFee: '0.002',
    takerFee: '0.002',
    status: 'trading',
  });
  assert.equal(Object.keys(plain.markets as object).length, DEFAULT_VENUE.markets.length);
  assert.equal(plain.platformCoin, 'zb');
  assert.equal(plain.platformFeeDiscount, '0.25');
  assert.equal(plain.demo, null);
  assert.deepEqual(plain.clock, { mode: 'manual', time: 1_700_000_000_000 });
  assert.equal(plain.seq, 0);

  engine.apply({ type: 'StartDemo', faucet: [{ coin: 'usdt', perHour: 10_000_000_000 }], seq: 1, time: 1 });
  assert.deepEqual(venueInfo({ engine, clock }).demo, { stopped: false, faucet: { usdt: '10000' } });
});
