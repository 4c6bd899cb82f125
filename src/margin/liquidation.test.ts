/**
 * The scenarios of issue 15's "Checks", at the domain level: a gap through the line, a slow slide
 * (notice, then liquidation), a thin book where the band stops the sale half-way, a shortfall paid
 * by the insurance fund, a shortfall beyond the fund (bad debt), a cascade.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BTC, px, quoteOf, USDT, World } from '../../test/fixtures/liquidation-world.ts';
import { LiquidationQueue, stepPlan } from './liquidation.ts';
import { LOAN_STATUS } from './loans.ts';
import { MarkPrice } from './mark-price.ts';
import { accountKey, spot, system } from './movement.ts';

const POOL = system('lendingPool');
const INS = system('insurance');
/** The first hour's interest on 4,000 USDT at 0.05 %/day: 4,000 × 0.0005 ÷ 24, rounded down. */
const HOUR1 = Math.floor((4_000 * USDT * 500) / 24_000_000);

/** Alice: 0.2 BTC of her own, 4,000 USDT borrowed and spent on 0.1 BTC: holds 0.3 BTC, owes 4,000 USDT. */
function alice(w: World) {
  w.lend(POOL, 'usdt', 100_000 * USDT);
  const a = w.openLong(1, 0.2 * BTC, 4_000 * USDT, 0.1 * BTC);
  // Liquidated at ≤ 1.08 × 4,000.0833… ÷ 0.3 = 14,400.29, notice at ≤ 15,066.98.
  assert.deepEqual(w.triggers(a)?.liquidation, { op: 'le', priceTicks: 1_440_029 });
  assert.deepEqual(w.triggers(a)?.notice, { op: 'le', priceTicks: 1_506_698 });
  w.reindex(a, px(40_000));
  return a;
}

const conserved = (w: World) => {
  for (const c of ['btc', 'usdt']) assert.equal(w.ledger.total(c), w.ledger.credited(c), `${c} conserved`);
};

test('a gap straight through the line: flagged and liquidated in the same move; fee to the fund, the rest to the user', () => {
  const w = new World();
  const a = alice(w);
  w.addBid(px(13_900), 0.5 * BTC);
  const crossed = w.index.move(px(14_000));
  assert.deepEqual(crossed, { liquidate: [accountKey(a)], flagged: [accountKey(a)], cleared: [] });
  w.begin(a, px(14_000));
  assert.equal(w.liquidations.isLocked(a), true);
  for (const l of w.loansOf(a)) assert.equal(l.status, LOAN_STATUS.NEEDS_LIQUIDATION);
  const s = w.step(a, px(14_000));
  assert.equal(s.done, true);
  // Sold 0.3 BTC at 13,900 (band: ≥ 13,580) = 4,170 USDT; repaid 4,000 + the first hour.
  const owed = 4_000 * USDT + HOUR1;
  const fee = Math.floor(owed / 100);
  const [r] = w.liquidations.records(a);
  assert.ok(r);
  assert.deepEqual(r.orders, [
    { timeMs: 0, side: 'sell', priceTicks: px(13_580), amount: 0.3 * BTC, filled: 0.3 * BTC },
  ]);
  assert.deepEqual(r.coins[1], { coin: 'usdt', repaid: owed, shortfall: 0, insurance: 0, badDebt: 0, fee });
  assert.equal(r.status, 'done');
  assert.equal(w.ledger.get(a, 'usdt'), 4_170 * USDT - owed - fee);
  assert.equal(w.ledger.get(a, 'btc'), 0);
  assert.deepEqual(w.ledger.owed(a, 'usdt'), { principal: 0, interest: 0 });
  // The fund got the fee and the venue's share of the interest (10 %).
  assert.equal(w.ledger.get(INS, 'usdt'), fee + Math.floor(HOUR1 / 10));
  for (const l of w.loansOf(a)) assert.equal(l.status, LOAN_STATUS.LIQUIDATED);
  assert.equal(w.liquidations.isLocked(a), false);
  assert.equal(w.index.size, 0);
  conserved(w);
});

test('a slow slide: the notice flag first, then the liquidation at the first mark at or below the line', () => {
  const w = new World();
  const a = alice(w);
  const k = accountKey(a);
  const seen: string[] = [];
  for (let mark = px(16_000); mark >= px(14_000); mark -= px(100)) {
    const c = w.index.move(mark);
    if (c.flagged.includes(k)) seen.push(`flagged at ${mark / 100}`);
    if (c.liquidate.includes(k)) {
      seen.push(`liquidated at ${mark / 100}`);
      break;
    }
  }
  assert.deepEqual(seen, ['flagged at 15000', 'liquidated at 14400']);
  assert.ok((w.riskBp(a, px(14_400)) as number) <= 10_800);
  assert.ok((w.riskBp(a, px(14_500)) as number) > 10_800);
});

test('a thin book: the band stops the sale half-way; the rest continues at the next tick', () => {
  const w = new World();
  const a = alice(w);
  w.addBid(px(14_300), 0.1 * BTC);
  w.addBid(px(13_000), 1 * BTC); // below the band (≥ 13,968 at a mark of 14,400)
  w.index.move(px(14_400));
  w.begin(a, px(14_400));
  const first = w.step(a, px(14_400));
  assert.equal(first.done, false);
  const [r] = w.liquidations.records(a);
  assert.ok(r);
  assert.equal(r.status, 'running');
  assert.equal(r.orders[0]?.filled, 0.1 * BTC);
  // 1,430 USDT repaid (interest first); still locked, the loan still in status 3.
  assert.equal(r.coins[1]?.repaid, 1_430 * USDT);
  assert.equal(w.liquidations.isLocked(a), true);
  assert.equal(w.loansOf(a)[0]?.status, LOAN_STATUS.NEEDS_LIQUIDATION);
  assert.equal(w.ledger.get(a, 'btc'), 0.2 * BTC);
  assert.equal(w.bids[0]?.priceTicks, px(13_000)); // untouched
  // Next timer tick, an hour later: a buyer came back inside the band.
  w.now += 3_600_000;
  w.addBid(px(14_350), 1 * BTC);
  const second = w.step(a, px(14_400));
  assert.equal(second.done, true);
  assert.equal(r.orders[1]?.filled, 0.2 * BTC);
  assert.equal(r.coins[1]?.shortfall, 0);
  assert.deepEqual(w.ledger.owed(a, 'usdt'), { principal: 0, interest: 0 });
  for (const l of w.loansOf(a)) assert.equal(l.status, LOAN_STATUS.LIQUIDATED);
  conserved(w);
});

test('a shortfall paid by the insurance fund: the lender is repaid in full, no bad debt', () => {
  const w = new World();
  const a = alice(w);
  w.fundInsurance('usdt', 5_000 * USDT);
  w.addBid(px(9_800), 1 * BTC);
  w.index.move(px(10_000));
  w.begin(a, px(10_000));
  assert.equal(w.step(a, px(10_000)).done, true);
  const owed = 4_000 * USDT + HOUR1;
  const sold = quoteOf(0.3 * BTC, px(9_800)); // 2,940 USDT
  const [r] = w.liquidations.records(a);
  assert.deepEqual(r?.coins[1], {
    coin: 'usdt',
    repaid: sold,
    shortfall: owed - sold,
    insurance: owed - sold,
    badDebt: 0,
    fee: 0,
  });
  // The pool got back all its principal and its interest share.
  assert.equal(
    w.ledger.get(POOL, 'usdt', 'frozen') + w.ledger.get(POOL, 'usdt'),
    100_000 * USDT + HOUR1 - Math.floor(HOUR1 / 10),
  );
  assert.equal(w.ledger.get(INS, 'usdt'), 5_000 * USDT - (owed - sold) + Math.floor(HOUR1 / 10));
  assert.equal(w.ledger.get(a, 'usdt'), 0);
  conserved(w);
});

test('a shortfall beyond the fund: bad debt against the lenders pro rata, exact to the unit', () => {
  const w = new World();
  // Two lenders: 2,500 USDT at 0.05 %/day and 1,500 at 0.06 %: the borrow takes both.
  w.lend(spot(50), 'usdt', 2_500 * USDT, 500);
  w.lend(spot(51), 'usdt', 1_500 * USDT, 600);
  const a = w.openLong(1, 0.2 * BTC, 4_000 * USDT, 0.1 * BTC);
  w.fundInsurance('usdt', 500 * USDT);
  w.addBid(px(9_800), 1 * BTC);
  w.begin(a, px(10_000));
  assert.equal(w.step(a, px(10_000)).done, true);
  const i50 = Math.floor((2_500 * USDT * 500) / 24_000_000);
  const i51 = Math.floor((1_500 * USDT * 600) / 24_000_000);
  const owed = 4_000 * USDT + i50 + i51;
  const sold = 2_940 * USDT;
  const [r] = w.liquidations.records(a);
  const c = r?.coins[1];
  assert.ok(c);
  assert.equal(c.shortfall, owed - sold);
  assert.equal(c.insurance, 500 * USDT);
  assert.equal(c.badDebt, c.shortfall - c.insurance);
  const loans = w.loansOf(a).sort((x, y) => x.id - y.id);
  assert.equal(loans.length, 2);
  for (const l of loans) assert.equal(l.status, LOAN_STATUS.LIQUIDATED);
  const [l50, l51] = loans as [(typeof loans)[0], (typeof loans)[0]];
  // The fund paid out all it had; what it holds now is the venue's share of the interest paid.
  assert.equal(w.ledger.get(INS, 'usdt'), l50.venueShare + l51.venueShare);
  // What each lender got + its loss = what it was owed (principal + the hour's interest, less the
  // venue's share of what was paid); the losses add up to the bad debt.
  const got50 = w.ledger.get(spot(50), 'usdt');
  const got51 = w.ledger.get(spot(51), 'usdt');
  const lost50 = 2_500 * USDT + i50 - l50.venueShare - got50;
  const lost51 = 1_500 * USDT + i51 - l51.venueShare - got51;
  assert.equal(lost50 + lost51, c.badDebt);
  assert.equal(got50 + got51 + w.ledger.get(INS, 'usdt'), sold + 500 * USDT);
  // Repayment paid both interests, then the dearer record (0.06 %) in full: it closed; the bad
  // debt fell on the one record still open.
  assert.equal(lost51, 0);
  assert.equal(lost50, c.badDebt);
  assert.deepEqual(w.ledger.owed(a, 'usdt'), { principal: 0, interest: 0 });
  conserved(w);
});

test('write-off pro rata: floor shares, the units left to the largest remainders, ties to the older record', () => {
  const w = new World();
  w.lend(spot(50), 'usdt', 100, 500);
  w.lend(spot(51), 'usdt', 200, 500);
  w.lend(spot(52), 'usdt', 200, 500);
  const a = w.openLong(1, 0, 500);
  w.begin(a, px(10_000));
  // Owed 100 : 200 : 200 (no interest on so little). 7 units: 1.4, 2.8, 2.8 → 1, 2, 2 and the two
  // units left to the largest remainders, 0.8 and 0.8.
  const first = w.loans.writeOff(a, 'usdt', 7, 0);
  w.apply(first.effects);
  assert.deepEqual(
    first.shares.map((x) => x.amount),
    [1, 3, 3],
  );
  // Now 99 : 197 : 197; 6 units: 1.20, 2.39, 2.39 → 1, 2, 2 and one left: a tie, to the older record.
  const again = w.loans.writeOff(a, 'usdt', 6, 0);
  w.apply(again.effects);
  assert.deepEqual(
    again.shares.map((x) => x.amount),
    [1, 3, 2],
  );
  assert.throws(() => w.loans.writeOff(a, 'usdt', 10_000, 0));
});

test('a cascade: ordered by risk rate then account, bounded per step, a liquidation’s sale moving the mark onto the next', () => {
  const w = new World({ bandBp: 300, feeBp: 100, maxPerStep: 1 });
  w.lend(POOL, 'usdt', 100_000 * USDT);
  const mark = new MarkPrice({ windowMs: 60_000, maxTrades: 4, bandBp: 200 });
  mark.step({ timeMs: 0, trades: [px(20_000)], bestBid: undefined, bestAsk: undefined });
  // Three longs: liquidated at ≤ 14,400.29 (1), ≤ 14,097.90 (2), ≤ 13,860.29 (3).
  const a1 = w.openLong(1, 0.2 * BTC, 4_000 * USDT, 0.1 * BTC);
  const a2 = w.openLong(2, 0.3 * BTC, 3_916 * USDT, 0);
  const a3 = w.openLong(3, 0.3 * BTC, 3_850 * USDT, 0);
  for (const a of [a1, a2, a3]) w.reindex(a, px(20_000));
  const liqAt = (a: typeof a1) => w.triggers(a)?.liquidation?.priceTicks as number;
  assert.ok(liqAt(a1) > liqAt(a2) && liqAt(a2) > liqAt(a3));
  const queue = new LiquidationQueue();
  const order: string[] = [];
  w.addBid(px(13_950), 0.1 * BTC);
  w.addBid(px(13_700), 2 * BTC);
  // The shock: trades at 14,000 drive the mark to 14,000.
  let t = 1_000;
  let m = mark.step({
    timeMs: t,
    trades: [px(14_000), px(14_000), px(14_000), px(14_000)],
    bestBid: px(13_950),
    bestAsk: undefined,
  }) as number;
  assert.equal(m, px(14_000));
  for (let stepNo = 0; stepNo < 10; stepNo++) {
    for (const k of w.index.move(m).liquidate) {
      const a = [a1, a2, a3].find((x) => accountKey(x) === k);
      if (a === undefined || w.liquidations.isLocked(a)) continue;
      queue.add(a, w.riskBp(a, m) as number);
      w.index.remove(k);
    }
    const plan = stepPlan(w.liquidations, queue);
    assert.ok(plan.continueRecords.length + plan.begin.length <= 1);
    if (plan.continueRecords.length + plan.begin.length === 0 && queue.size === 0) break;
    const trades: number[] = [];
    for (const r of plan.continueRecords) trades.push(...w.step(r.account, m).trades);
    for (const b of plan.begin) {
      order.push(`${accountKey(b.account)} at ${b.riskRateBp}`);
      w.begin(b.account, m);
      trades.push(...w.step(b.account, m).trades);
    }
    t += 1_000;
    m = mark.step({ timeMs: t, trades, bestBid: w.bids[0]?.priceTicks, bestAsk: undefined }) as number;
  }
  // a1 and a2 crossed together at 14,000; a1 (lower risk rate) went first, one per step; the
  // sales at 13,950 and 13,700 pulled the mark down through a3's line (≤ 13,860.29).
  assert.deepEqual(
    order.map((s) => s.split(' ')[0]),
    [accountKey(a1), accountKey(a2), accountKey(a3)],
  );
  for (const a of [a1, a2, a3]) {
    assert.deepEqual(w.ledger.owed(a, 'usdt'), { principal: 0, interest: 0 });
    assert.equal(w.liquidations.isLocked(a), false);
  }
  conserved(w);
});
