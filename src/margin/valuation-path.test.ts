import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ratio } from './lines.ts';
import { ValuationPaths, type PathMarket } from './valuation-path.ts';

const mk = (base: string, quote: string, priceScale = 2): PathMarket => ({
  name: `${base}_${quote}`,
  base,
  quote,
  priceScale,
  baseDecimal: 8,
  quoteDecimal: 8,
});

const MARKETS = [
  mk('btc', 'usdt'),
  mk('eth', 'btc', 6),
  mk('usdt', 'qc', 4), // usdt quoted in qc: qc is valued through the inverse
  mk('zb', 'qc', 4),
  mk('doge', 'eth', 8),
  mk('lonely', 'nowhere'),
];
const MARKS = new Map<string, number>([
  ['btc_usdt', 2_000_000], // 20,000.00
  ['eth_btc', 50_000], // 0.050000 BTC
  ['usdt_qc', 70_000], // 7.0000 QC
  ['zb_qc', 14_000], // 1.4000 QC
]);
const markOf = (m: string): number | undefined => MARKS.get(m);
const paths = new ValuationPaths(MARKETS, 'usdt');

test('the valuation coin is 1; a direct market gives the price, exact in units', () => {
  assert.deepEqual(paths.path('usdt'), []);
  assert.deepEqual(paths.price('usdt', markOf), ratio(1));
  assert.deepEqual(paths.path('btc'), [{ market: 'btc_usdt', invert: false }]);
  // One BTC unit (1e-8 BTC) is worth 20,000 USDT units (20,000 × 1e-8 USDT).
  assert.deepEqual(paths.price('btc', markOf), ratio(20_000));
});

test('an inverse market gives one over its price', () => {
  assert.deepEqual(paths.path('qc'), [{ market: 'usdt_qc', invert: true }]);
  // 1 QC = 1/7 USDT.
  assert.deepEqual(paths.price('qc', markOf), ratio(1, 7));
});

test('two markets through an intermediate, the preferred one first', () => {
  assert.deepEqual(paths.path('eth'), [
    { market: 'eth_btc', invert: false },
    { market: 'btc_usdt', invert: false },
  ]);
  // 0.05 BTC × 20,000 = 1,000 USDT per ETH.
  assert.deepEqual(paths.price('eth', markOf), ratio(1_000));
  assert.deepEqual(paths.path('zb'), [
    { market: 'zb_qc', invert: false },
    { market: 'usdt_qc', invert: true },
  ]);
  // 1.4 QC ÷ 7 = 0.2 USDT.
  assert.deepEqual(paths.price('zb', markOf), ratio(1, 5));
});

test('no path (three markets away, or unconnected): no price; a market without a mark: no price', () => {
  assert.equal(paths.path('doge'), undefined);
  assert.equal(paths.price('lonely', markOf), undefined);
  assert.equal(paths.price('unknown', markOf), undefined);
  assert.equal(
    paths.price('eth', (m) => (m === 'eth_btc' ? undefined : markOf(m))),
    undefined,
  );
});

test('priceD: the exact price in doubles within 10⁻¹⁴ relative, on direct, inverse and two-leg paths, at random marks', () => {
  const rnd = (k: number): number => 1 + ((k * 2_654_435_761) % 9_999_991);
  for (let k = 1; k <= 2_000; k++) {
    const marks = new Map<string, number>([
      ['btc_usdt', rnd(k)],
      ['eth_btc', rnd(k + 7)],
      ['usdt_qc', rnd(k + 13)],
      ['zb_qc', rnd(k + 29)],
      ['doge_eth', rnd(k + 31)],
    ]);
    const at = (m: string): number | undefined => marks.get(m);
    // doge is three markets away: no price either way.
    assert.equal(paths.priceD('doge', at), null);
    for (const coin of ['usdt', 'btc', 'qc', 'eth', 'zb']) {
      const exact = paths.price(coin, at);
      const d = paths.priceD(coin, at);
      assert.ok(exact !== undefined && d !== null, coin);
      const e = Number(exact.num) / Number(exact.den);
      assert.ok(Math.abs(d - e) <= e * 1e-14, `${coin} at mark set ${k}: ${d} vs ${e}`);
    }
  }
  // No path, or a market on it without a mark: no price, as `price`.
  assert.equal(paths.priceD('lonely', markOf), null);
  assert.equal(
    paths.priceD('eth', (m) => (m === 'eth_btc' ? undefined : markOf(m))),
    null,
  );
});
