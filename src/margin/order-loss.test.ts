import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ratio } from './lines.ts';
import { carriesLoss, orderLoss } from './order-loss.ts';
import { DEFAULT_MARGIN_SETTINGS } from './settings.ts';

test('orderLoss: the part of the price beyond the mark, nothing at or better than it, nothing without a mark', () => {
  assert.equal(orderLoss(true, 6_000_000, 3_000_000, 2_000, 1), 6_000_000_000n);
  assert.equal(orderLoss(true, 2_900_000, 3_000_000, 2_000, 1), 0n);
  assert.equal(orderLoss(false, 2_000_000, 3_000_000, 10, 3), 30_000_000n);
  assert.equal(orderLoss(false, 3_100_000, 3_000_000, 10, 3), 0n);
  assert.equal(orderLoss(true, 6_000_000, undefined, 2_000, 1), 0n);
});

test('carriesLoss: (A + x − L) × BP ≥ S × (D + x), exactly at the line; always without debt', () => {
  const v = { assets: ratio(6_000), debt: ratio(0) };
  const s = DEFAULT_MARGIN_SETTINGS;
  assert.equal(carriesLoss(v, s, ratio(0), ratio(1_000_000)), true);
  // 6,000 + 12,000 − 3,000 = 15,000 = 1.25 × 12,000: at the line; one unit more is below.
  assert.equal(carriesLoss(v, s, ratio(12_000), ratio(3_000)), true);
  assert.equal(carriesLoss(v, s, ratio(12_000), ratio(3_001)), false);
  assert.equal(carriesLoss(v, s, ratio(12_000), ratio(6_001, 2)), false);
});
