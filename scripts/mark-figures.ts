/**
 * The figures docs/margin.md ("Mark price") states for issue 29's mark (src/margin/depth-mark.ts)
 * on the default venue's btc_usdt (a window of 10,000 usdt, a 1 % step, 0.2 % maker and taker
 * fee): what it costs to move the mark by 1 %, and how fast a real 10 % move is followed.
 *
 *     node_modules/.bin/node scripts/mark-figures.ts
 */
import { DepthMark, depthMarkSettings, depthTickLots } from '../src/margin/depth-mark.ts';

const D = depthTickLots(5_000_000, 1); // 10,000 usdt in tick·lots (1 tick·lot = 10⁻⁶ usdt)
const FEES = 0.004; // a wash pays the taker's 0.2 % and the maker's 0.2 %
const usdt = (tickLots: number): string => (tickLots / 1e6).toFixed(2);
const fresh = (): DepthMark => {
  const m = new DepthMark(depthMarkSettings(D));
  m.seed(3_000_000);
  return m;
};

/**
 * Trades of `lots` at `price` until the mark is 1 % down (at most 100,000): their count and value
 * as traded, and whether the mark got there.
 */
function toMoveDown(price: number, lots: number): { trades: number; value: number; moved: boolean } {
  const m = fresh();
  let trades = 0;
  let value = 0;
  while ((m.mark as number) > 2_970_000 && trades < 100_000) {
    m.take(price, lots);
    trades++;
    value += price * lots;
  }
  return { trades, value, moved: (m.mark as number) <= 2_970_000 };
}

console.log('Cost to move the mark of btc_usdt 1 % down, from 30,000:');
for (const [price, lots, what] of [
  [2_970_000, 3_400, 'one trade of 0.34 btc at 29,700'],
  [2_250_000, 3, 'wash prints of 0.0003 btc at 22,500'],
  [2_970_000, 1_000, 'trades of 0.1 btc at 29,700'],
  [1, 3_400, 'trades of 0.34 btc at 0.01'],
] as const) {
  const r = toMoveDown(price, lots);
  console.log(
    r.moved
      ? `  ${what}: ${r.trades} trades worth ${usdt(r.value)} usdt as traded; a wash between two accounts pays ${usdt(r.value * FEES)} usdt of fees`
      : `  ${what}: ${r.trades} trades (${usdt(r.value)} usdt) do not move it 1 %`,
  );
}

console.log('Following a real move of 10 % (30,000 → 27,000, every trade at 27,000):');
for (const btc of [0.4, 0.1, 0.01]) {
  const m = fresh();
  let trades = 0;
  let value = 0;
  const lots = Math.round(btc * 10_000);
  while ((m.mark as number) > 2_700_000) {
    m.take(2_700_000, lots);
    trades++;
    value += 2_700_000 * lots;
  }
  console.log(`  trades of ${btc} btc: followed after ${trades} trades, ${usdt(value)} usdt traded`);
}

console.log('A fall of 0.1 % a trade (30,000 → 21,279.65), the mark behind the last trade:');
for (const btc of [0.4, 0.1, 0.04]) {
  const m = fresh();
  const lots = Math.round(btc * 10_000);
  let p = 2_950_000;
  let worst = 0;
  let n = 0;
  while (p > 2_127_965) {
    p = Math.floor((p * 999) / 1000);
    m.take(p, lots);
    n++;
    worst = Math.max(worst, (m.mark as number) / p - 1);
  }
  console.log(
    `  trades of ${btc} btc: ${n} trades, the mark at most ${(worst * 100).toFixed(2)} % above the trade`,
  );
}
