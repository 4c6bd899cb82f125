/**
 * @module liquidation-index.bench — what a move of the mark costs with 100,000 open isolated margin
 * accounts indexed by their liquidation and notice ticks (`src/margin/liquidation-index.ts`),
 * against a full scan of the same accounts: of their precomputed triggers (the cheapest scan), and
 * by valuing every account at the new mark (`valuateIsolated` + `mustLiquidate`, what an engine
 * without the index would do). Also the cost of one account's update (after a fill, a borrow, …).
 * The last line is one JSON object.
 *
 *   npm run bench:risk                       # ~1 minute
 *   node bench/liquidation-index.bench.ts --quick
 */
import { cpus, loadavg } from 'node:os';
import { mustLiquidate, unitPrice, valuateIsolated, type CoinPosition } from '../src/margin/lines.ts';
import { LiquidationIndex, triggersOf } from '../src/margin/liquidation-index.ts';
import { DEFAULT_MARGIN_SETTINGS as S } from '../src/margin/settings.ts';
import { finish, QUICK } from './results.ts';

const ACCOUNTS = QUICK ? 10_000 : 100_000;
const ROUNDS = QUICK ? 5 : 21;
const BTC = 100_000_000;
const USDT = 100_000_000;
const PER_TICK = unitPrice(1, 2, 8, 8);
const START = 2_000_000; // 20,000.00

/** xorshift32, seed fixed: the same accounts every run. */
let seed = 20_261_124;
function rnd(): number {
  seed ^= seed << 13;
  seed ^= seed >>> 17;
  seed ^= seed << 5;
  return (seed >>> 0) / 4_294_967_296;
}

const pos = (coin: string, held: number, owed: number): CoinPosition => ({
  coin,
  available: held,
  frozen: 0,
  principal: owed,
  interest: 0,
});

interface Account {
  key: string;
  base: CoinPosition;
  quote: CoinPosition;
}

// Positions at 20,000: risk rates spread uniformly over 1.10–3.0, 80 % long and 20 % short.
const accounts: Account[] = [];
for (let i = 0; i < ACCOUNTS; i++) {
  const risk = 1.1 + rnd() * 1.9;
  const size = Math.floor((0.01 + rnd()) * BTC);
  const value = (size / BTC) * 20_000 * USDT;
  if (rnd() < 0.8) {
    // Long: holds `size` BTC, owes value ÷ risk USDT.
    accounts.push({
      key: `isolated:${i}:btc_usdt`,
      base: pos('btc', size, 0),
      quote: pos('usdt', 0, Math.floor(value / risk)),
    });
  } else {
    // Short: owes `size` BTC, holds value × risk USDT.
    accounts.push({
      key: `isolated:${i}:btc_usdt`,
      base: pos('btc', 0, size),
      quote: pos('usdt', Math.floor(value * risk), 0),
    });
  }
}

const median = (xs: number[]): number =>
  [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)] as number;

// Build the index (timed: one update per account).
const index = new LiquidationIndex();
const triggers = accounts.map((a) => triggersOf(a.base, a.quote, S, PER_TICK));
let t0 = performance.now();
accounts.forEach((a, i) => index.update(a.key, triggers[i], START));
const buildMs = performance.now() - t0;

/** The highest mark at which `share` of all accounts (longs) are at or below their line. */
function markCrossing(share: number): number {
  const ticks = triggers
    .map((t) => (t?.liquidation?.op === 'le' ? t.liquidation.priceTicks : -1))
    .filter((x) => x > 0)
    .sort((a, b) => b - a);
  return ticks[Math.floor(ACCOUNTS * share) - 1] as number;
}

function timeIt(f: () => unknown): number {
  const s = performance.now();
  f();
  return performance.now() - s;
}

const scanTriggers = (mark: number): number => index.scan(mark).length;
const scanValuation = (mark: number): number => {
  const u = unitPrice(mark, 2, 8, 8);
  let n = 0;
  for (const a of accounts) if (mustLiquidate(valuateIsolated(a.base, a.quote, u), S)) n++;
  return n;
};

// A move that crosses none: the mark jitters by ±1 tick around 20,000 (no flag changes either).
const quiet: { index: number[]; scan: number[]; valuation: number[] } = {
  index: [],
  scan: [],
  valuation: [],
};
// A move that crosses 1 % of the accounts: from 20,000 straight to that mark; the index reports
// them (and flags the accounts between the notice and the liquidation lines); then back.
const onePct = markCrossing(0.01);
const cross = {
  index: [] as number[],
  scan: [] as number[],
  valuation: [] as number[],
  reported: 0,
  flagged: 0,
};
for (let r = 0; r < ROUNDS; r++) {
  const m = START + (r % 2 === 0 ? 1 : -1);
  quiet.index.push(timeIt(() => index.move(m)));
  quiet.scan.push(timeIt(() => scanTriggers(m)));
  if (r < 7) quiet.valuation.push(timeIt(() => scanValuation(m)));
  let got = { liquidate: [] as string[], flagged: [] as string[] };
  cross.index.push(timeIt(() => (got = index.move(onePct))));
  cross.reported = got.liquidate.length;
  cross.flagged = got.flagged.length;
  index.move(START); // clears the flags again (untimed)
  cross.scan.push(timeIt(() => scanTriggers(onePct)));
  if (r < 7) cross.valuation.push(timeIt(() => scanValuation(onePct)));
}

// Quiet moves back to back (caches warm, as in a stream of small moves): µs per move, median of
// batches of 1,000.
const quietBatch: number[] = [];
for (let r = 0; r < ROUNDS; r++) {
  t0 = performance.now();
  for (let j = 0; j < 1_000; j++) index.move(START + (j % 2 === 0 ? 1 : -1));
  quietBatch.push(performance.now() - t0); // ms per 1,000 = µs per move
}

// One account's update (its position changed): median over batches of 1,000 updates.
const updates: number[] = [];
for (let r = 0; r < ROUNDS; r++) {
  t0 = performance.now();
  for (let j = 0; j < 1_000; j++) {
    const i = Math.floor(rnd() * ACCOUNTS);
    index.update((accounts[i] as Account).key, triggers[i], START);
  }
  updates.push(((performance.now() - t0) / 1_000) * 1_000); // µs per update
}

const q = { index: median(quiet.index), scan: median(quiet.scan), valuation: median(quiet.valuation) };
const c = { index: median(cross.index), scan: median(cross.scan), valuation: median(cross.valuation) };
const fmt = (ms: number): string => (ms < 1 ? `${(ms * 1000).toFixed(1)} µs` : `${ms.toFixed(2)} ms`);
console.log(
  `liquidation index: ${ACCOUNTS.toLocaleString('en')} open isolated accounts, ${ROUNDS} rounds, medians`,
);
console.log(
  `  build: ${buildMs.toFixed(0)} ms (${((buildMs / ACCOUNTS) * 1000).toFixed(2)} µs per account); update: ${median(updates).toFixed(2)} µs`,
);
console.log(
  `  move crossing none:      index ${fmt(q.index)}, trigger scan ${fmt(q.scan)} (×${(q.scan / q.index).toFixed(0)}), valuation scan ${fmt(q.valuation)} (×${(q.valuation / q.index).toFixed(0)})`,
);
console.log(
  `  move crossing ${cross.reported} (1 %), flagging ${cross.flagged}: index ${fmt(c.index)} (${((c.index / (cross.reported + cross.flagged)) * 1000).toFixed(2)} µs per account touched), trigger scan ${fmt(c.scan)} (×${(c.scan / c.index).toFixed(1)}), valuation scan ${fmt(c.valuation)} (×${(c.valuation / c.index).toFixed(1)})`,
);
console.log(`  quiet moves back to back: ${median(quietBatch).toFixed(2)} µs per move`);
finish('risk', {
  bench: 'liquidation-index',
  accounts: ACCOUNTS,
  rounds: ROUNDS,
  buildMs,
  updateUs: median(updates),
  quietMoveMs: q,
  quietBackToBackUs: median(quietBatch),
  crossingMoveMs: c,
  crossed: cross.reported,
  flagged: cross.flagged,
  node: process.version,
  cpu: cpus()[0]?.model,
  cores: cpus().length,
  load: loadavg(),
});
