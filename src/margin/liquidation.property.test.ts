/**
 * Property tests of forced liquidation over random margin portfolios (longs and shorts, lenders,
 * an insurance fund) and random price paths with random books: after every step money is conserved
 * per coin, no balance goes negative (the ledger refuses), the ledger's debts equal the loan book's,
 * bad debt = shortfall − insurance paid in every record and equals what was written off, and no
 * account at or below its liquidation line is left unlocked.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { BTC, px, USDT, World } from '../../test/fixtures/liquidation-world.ts';
import { LiquidationQueue, stepPlan } from './liquidation.ts';
import { mustLiquidate, unitPrice, valuateIsolated } from './lines.ts';
import { accountKey, spot, system, type AccountRef } from './movement.ts';
import { DEFAULT_MARGIN_SETTINGS } from './settings.ts';

const portfolio = fc.record({
  long: fc.boolean(),
  own: fc.integer({ min: 1, max: 100 }), // hundredths of a BTC, or ×100 USDT
  lever: fc.integer({ min: 10, max: 40 }), // borrow = own × lever ÷ 10
});

const path = fc.array(
  fc.record({
    movePct: fc.oneof(fc.integer({ min: -5, max: 5 }), fc.integer({ min: -45, max: 45 })),
    bidDepth: fc.integer({ min: 0, max: 300 }), // thousandths of a BTC per level
    askDepth: fc.integer({ min: 0, max: 300 }),
    gapBp: fc.integer({ min: 0, max: 600 }), // distance of the book from the mark
  }),
  { minLength: 1, maxLength: 25 },
);

test('property: liquidations conserve money, never go negative, and leave no liquidatable account unlocked', () => {
  fc.assert(
    fc.property(
      fc.array(portfolio, { minLength: 1, maxLength: 8 }),
      path,
      fc.integer({ min: 0, max: 3_000 }),
      (ports, steps, fundUsdt) => {
        const w = new World({ bandBp: 300, feeBp: 100, maxPerStep: 100 });
        w.lend(spot(50), 'usdt', 1_000_000 * USDT, 500);
        w.lend(spot(51), 'usdt', 1_000_000 * USDT, 700);
        w.lend(spot(50), 'btc', 100 * BTC, 500);
        w.lend(system('lendingPool'), 'btc', 100 * BTC, 600);
        w.fundInsurance('usdt', fundUsdt * USDT);
        w.fundInsurance('btc', Math.floor((fundUsdt * BTC) / 20_000));
        let mark = px(20_000);
        const accounts: AccountRef[] = [];
        ports.forEach((p, i) => {
          if (p.long) {
            const own = p.own * (BTC / 100);
            const borrow = Math.floor((own * 200 * p.lever) / 10 / BTC) * USDT; // at 20,000
            accounts.push(
              w.openLong(i + 1, own, borrow, Math.floor((borrow / USDT / 20_000) * 1000) * 100_000),
            );
          } else {
            const own = p.own * 100 * USDT;
            const borrowBtc = Math.floor((p.own * 100 * p.lever) / 10 / 20) * 100_000; // thousandths of BTC at 20,000
            accounts.push(w.openShort(i + 1, own, borrowBtc, Math.floor((borrowBtc / BTC) * 20_000) * USDT));
          }
        });
        for (const a of accounts) w.reindex(a, mark);
        const queue = new LiquidationQueue();
        for (const st of steps) {
          w.now += 60_000;
          mark = Math.max(100, Math.floor((mark * (100 + st.movePct)) / 100));
          w.bids = [];
          w.asks = [];
          for (let lvl = 1; lvl <= 3; lvl++) {
            const off = Math.floor((mark * (st.gapBp + lvl * 50)) / 10_000);
            if (st.bidDepth > 0 && mark - off > 0) w.addBid(mark - off, st.bidDepth * 100_000);
            if (st.askDepth > 0) w.addAsk(mark + off, st.askDepth * 100_000);
          }
          for (const k of w.index.move(mark).liquidate) {
            const a = accounts.find((x) => accountKey(x) === k) as AccountRef;
            queue.add(a, w.riskBp(a, mark) ?? 0);
            w.index.remove(k);
          }
          const plan = stepPlan(w.liquidations, queue);
          for (const r of plan.continueRecords) w.step(r.account, mark);
          for (const b of plan.begin) {
            w.begin(b.account, mark);
            w.step(b.account, mark);
          }
          check(w, accounts, mark);
        }
      },
    ),
    { numRuns: 150 },
  );
});

function check(w: World, accounts: AccountRef[], mark: number): void {
  for (const c of ['btc', 'usdt']) assert.equal(w.ledger.total(c), w.ledger.credited(c), `${c} conserved`);
  w.loans.assertInvariants();
  let badDebt = new Map<string, number>();
  for (const r of w.liquidations.records())
    for (const c of r.coins) {
      assert.equal(c.badDebt, c.shortfall - c.insurance, `record ${r.id} ${c.coin}`);
      assert.ok(c.insurance >= 0 && c.badDebt >= 0 && c.fee >= 0);
      badDebt = badDebt.set(c.coin, (badDebt.get(c.coin) ?? 0) + c.badDebt);
    }
  for (const c of ['btc', 'usdt']) assert.equal(badDebt.get(c) ?? 0, w.writtenOff.get(c) ?? 0);
  for (const a of accounts) {
    for (const c of ['btc', 'usdt']) {
      const l = w.ledger.owed(a, c);
      const b = w.loans.owed(a, c);
      assert.deepEqual(l, { principal: b.principal, interest: b.interest }, `${accountKey(a)} ${c} debts`);
    }
    const v = valuateIsolated(w.position(a, 'btc'), w.position(a, 'usdt'), unitPrice(mark, 2, 8, 8));
    if (mustLiquidate(v, DEFAULT_MARGIN_SETTINGS))
      assert.ok(w.liquidations.isLocked(a), `${accountKey(a)} below the line and not locked`);
  }
}
