/**
 * Property tests of forced liquidation over random margin portfolios (longs and shorts, lenders,
 * an insurance fund) and random price paths with random books: after every step money is conserved
 * per coin, no balance goes negative (the ledger refuses), the ledger's debts equal the loan book's,
 * bad debt = shortfall − insurance paid in every record and equals what was written off, and no
 * account at or below its liquidation line is left unlocked; and a run restored from a snapshot
 * of the risk side after any step ends in the same state as one that was not.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { BTC, px, USDT, World } from '../../test/fixtures/liquidation-world.ts';
import { LendingBook } from './lending-book.ts';
import { LiquidationIndex } from './liquidation-index.ts';
import { LiquidationQueue, Liquidations, stepPlan } from './liquidation.ts';
import { LoanBook } from './loans.ts';
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

type Port = { long: boolean; own: number; lever: number };
type Step = { movePct: number; bidDepth: number; askDepth: number; gapBp: number };

/**
 * Runs a portfolio along a price path; with `cutAt`, the risk side is snapshotted after that step
 * and restored into fresh objects (lending book, loan book, liquidations, index flags, queue),
 * as a replay from a snapshot would. Returns a fingerprint of the final state.
 */
function run(
  ports: readonly Port[],
  steps: readonly Step[],
  fundUsdt: number,
  opts: { maxPerStep: number; check: boolean; cutAt?: number },
): string {
  const settings = { bandBp: 300, feeBp: 100, maxPerStep: opts.maxPerStep };
  const w = new World(settings);
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
      accounts.push(w.openLong(i + 1, own, borrow, Math.floor((borrow / USDT / 20_000) * 1000) * 100_000));
    } else {
      const own = p.own * 100 * USDT;
      const borrowBtc = Math.floor((p.own * 100 * p.lever) / 10 / 20) * 100_000; // thousandths of BTC at 20,000
      accounts.push(w.openShort(i + 1, own, borrowBtc, Math.floor((borrowBtc / BTC) * 20_000) * USDT));
    }
  });
  for (const a of accounts) w.reindex(a, mark);
  let queue = new LiquidationQueue();
  steps.forEach((st, n) => {
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
    if (opts.check) check(w, accounts, mark);
    if (n === opts.cutAt) {
      const snap = JSON.parse(
        JSON.stringify({
          lending: w.lending.snapshot(),
          loans: w.loans.snapshot(),
          liquidations: w.liquidations.snapshot(),
          flags: w.index.snapshot(),
          queue: queue.snapshot(),
        }),
      );
      w.lending = new LendingBook((c) => w.settings.get(c), snap.lending);
      w.loans = new LoanBook(w.lending, (c) => w.settings.get(c), snap.loans, w.onClose);
      w.liquidations = new Liquidations(w.loans, settings, snap.liquidations);
      w.index = new LiquidationIndex(snap.flags);
      queue = new LiquidationQueue(snap.queue);
      const waiting = new Set(queue.snapshot().map((q) => accountKey(q.account)));
      for (const a of accounts)
        if (!w.liquidations.isLocked(a) && !waiting.has(accountKey(a))) w.reindex(a, mark);
    }
  });
  return JSON.stringify({
    records: w.liquidations.records(),
    loans: w.loans.snapshot(),
    flags: w.index.snapshot(),
    queue: queue.snapshot(),
    held: [...accounts, system('insurance'), spot(50), spot(51), system('lendingPool')].map((a) =>
      ['btc', 'usdt'].map((c) => [w.ledger.get(a, c), w.ledger.get(a, c, 'frozen'), w.ledger.owed(a, c)]),
    ),
  });
}

const portfolios = fc.array(portfolio, { minLength: 1, maxLength: 8 });
const fund = fc.integer({ min: 0, max: 3_000 });

test('property: liquidations conserve money, never go negative, and leave no liquidatable account unlocked', () => {
  fc.assert(
    fc.property(portfolios, path, fund, (ports, steps, fundUsdt) => {
      run(ports, steps, fundUsdt, { maxPerStep: 100, check: true });
    }),
    { numRuns: 150 },
  );
});

test('property: a run restored from a snapshot after any step ends in the same state (cascades bounded at 2 per step)', () => {
  fc.assert(
    fc.property(portfolios, path, fund, fc.nat(), (ports, steps, fundUsdt, cut) => {
      const straight = run(ports, steps, fundUsdt, { maxPerStep: 2, check: false });
      const restored = run(ports, steps, fundUsdt, {
        maxPerStep: 2,
        check: false,
        cutAt: cut % steps.length,
      });
      assert.equal(restored, straight);
    }),
    { numRuns: 100 },
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
