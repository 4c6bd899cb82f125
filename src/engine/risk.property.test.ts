/**
 * Property test of the risk side inside the engine (issue 15): random isolated and cross portfolios
 * (longs and shorts, borrowed from the pool) and random price paths traded through a market maker's
 * book, with timer ticks between (interest). After every command every invariant of the engine
 * holds (conservation per coin with pool, insurance and fee income; ledger debts = loan book;
 * frozen = what orders hold; the risk side's own), and no isolated or cross account whose risk rate
 * at the marks is at or below the liquidation line (1.08) is left unlocked (a stronger rule than "while
 * the book has liquidity inside the band": these runs stay within one step's budget). After every
 * step of the path, the money of the risk side adds up: the insurance fund holds exactly the
 * venue's share of interest plus the liquidation fees less what it paid, and every record's bad
 * debt is its shortfall less the insurance's cover (money is never created: the conservation per
 * coin in `assertInvariants` covers the write-offs). At the end, a restore of the snapshot taken
 * at the start of **every** step of the path, replaying the commands after it, reaches the state
 * hash of the run itself. On the default venue (issue 29's depth mark): the path's trades are of a
 * mark window each, so the mark follows them at most 1 % a trade.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { EngineDriver, limitOrder } from '../../test/fixtures/engine-driver.ts';
import { BUY, SELL, type Command } from '../domain/commands.ts';
import { HOUR_MS } from '../margin/movement.ts';
import { Engine, type ApplyResult } from './engine.ts';

const USDT = 1_000_000;
const BTC = 100_000_000;
const LOT = 10_000; // 0.0001 btc
/** The default venue's depth mark window in btc_usdt, in tick·lots (10,000 usdt). */
const WINDOW_TICK_LOTS = 10_000_000_000;

const order = limitOrder;

class Checked extends EngineDriver {
  readonly users: number[] = [];
  /** Users whose portfolio is in their cross account. */
  readonly crossUsers: number[] = [];
  /** Every command applied, as sequenced. */
  readonly log: Parameters<Engine['apply']>[0][] = [];
  override apply(cmd: Command): ApplyResult {
    const r = super.apply(cmd);
    this.log.push({ ...cmd, seq: this.seq, time: this.time } as Parameters<Engine['apply']>[0]);
    this.engine.assertInvariants();
    for (const userId of this.users) {
      const risk = this.engine.risk.accountRisk(userId, 'btc_usdt');
      if (risk?.riskRateBp !== undefined && risk.riskRateBp <= 10_800)
        assert.ok(risk.repayLock, `user ${userId} at ${risk.riskRateBp} bp left unlocked after ${cmd.type}`);
    }
    for (const userId of this.crossUsers) {
      // Below 10,800 bp shown (rounded down): certainly at or below the line.
      const risk = this.engine.risk.crossRisk(userId);
      if (risk.riskRateBp !== undefined && risk.riskRateBp < 10_800)
        assert.ok(risk.repayLock, `cross ${userId} at ${risk.riskRateBp} bp left unlocked after ${cmd.type}`);
    }
    return r;
  }
}

/**
 * The insurance fund, per coin = the venue's share of interest + liquidation fees − what it
 * covered; and every record's bad debt = shortfall − insurance cover.
 */
function insuranceAddsUp(engine: Engine): void {
  const want = new Map<string, number>();
  const add = (coin: string, x: number): void => void want.set(coin, (want.get(coin) ?? 0) + x);
  for (const [coin, , share] of engine.snapshot().margin?.interestPaid ?? []) add(coin, share);
  for (const r of engine.liquidations())
    for (const c of r.coins) {
      assert.equal(c.badDebt, c.shortfall - c.insurance, `record ${r.id} ${c.coin}`);
      assert.ok(c.insurance <= c.shortfall && c.badDebt >= 0);
      add(c.coin, c.fee - c.insurance);
    }
  for (const { coin, available } of engine.insurance())
    assert.equal(available, want.get(coin) ?? 0, `insurance ${coin}`);
}

const portfolio = fc.record({
  long: fc.boolean(),
  cross: fc.boolean(),
  own: fc.integer({ min: 20, max: 200 }), // × 10 usdt
  lever: fc.integer({ min: 10, max: 38 }), // borrow = own × lever ÷ 10
});
const step = fc.record({
  movePct: fc.oneof(fc.integer({ min: -4, max: 4 }), fc.integer({ min: -35, max: 35 })),
  depth: fc.integer({ min: 0, max: 3000 }), // lots on each side of the maker's quote
  spreadBp: fc.integer({ min: 0, max: 600 }),
  trades: fc.integer({ min: 1, max: 8 }),
  tick: fc.boolean(),
});

test('risk in the engine: invariants after every command, nothing at or below the line left unlocked, restore gives the same hash', () => {
  const seen = { liquidations: 0, done: 0, shortfalls: 0, badDebt: 0, cross: 0 };
  fc.assert(
    fc.property(
      fc.array(portfolio, { minLength: 1, maxLength: 5 }),
      fc.array(step, { minLength: 1, maxLength: 20 }),
      (ports, path) => {
        const d = new Checked();
        const mm = d.fund('mm', 'btc', '1000');
        d.fund('mm', 'usdt', '100000000');
        const taker = d.fund('taker', 'btc', '10000000');
        d.fund('taker', 'usdt', '100000000');
        for (const [id, coin, amount] of [
          ['pool-u', 'usdt', 10_000_000 * USDT],
          ['pool-b', 'btc', 500 * BTC],
        ] as const)
          d.apply({ type: 'FundLendingPool', fundingId: id, coin, amount, dailyRatePpm: 500, days: 10 });
        let price = 3_000_000;
        // Opening trade: the market's first mark.
        d.apply(order(mm, SELL, price, 10));
        d.apply(order(taker, BUY, price, 10, { kind: 'ioc' }));
        ports.forEach((p, i) => {
          const u = d.fund(`u${i}`, 'usdt', String(p.own * 10));
          (p.cross ? d.crossUsers : d.users).push(u);
          const acctType = p.cross ? 2 : 1;
          const market = p.cross ? '' : 'btc_usdt';
          const own = p.own * 10 * USDT;
          d.apply({
            type: 'MarginTransfer',
            userId: u,
            direction: 'in',
            acctType,
            market,
            coin: 'usdt',
            amount: own,
          });
          if (p.long) {
            const borrow = Math.floor((own * p.lever) / 10);
            d.apply({
              type: 'Borrow',
              userId: u,
              acctType,
              market,
              coin: 'usdt',
              amount: borrow,
              rollOver: false,
            } as Command);
            const lots = Math.floor((own + borrow) / (price * 1.01));
            d.apply(order(mm, SELL, price, lots));
            d.apply(order(u, BUY, price, lots, { acctType, kind: 'ioc' }));
          } else {
            const lots = Math.floor((own * p.lever) / 10 / price);
            d.apply({
              type: 'Borrow',
              userId: u,
              acctType,
              market,
              coin: 'btc',
              amount: lots * LOT,
              rollOver: false,
            } as Command);
            d.apply(order(mm, BUY, price, lots));
            d.apply(order(u, SELL, price, lots, { acctType, kind: 'ioc' }));
          }
        });
        const snapshots: { at: number; snapshot: ReturnType<Engine['snapshot']> }[] = [];
        for (const s of path) {
          snapshots.push({ at: d.log.length, snapshot: d.engine.snapshot() });
          const target = Math.max(1000, Math.round((price * (100 + s.movePct)) / 100));
          const half = Math.max(1, Math.floor((target * s.spreadBp) / 20_000));
          if (s.depth > 0) {
            d.apply(order(mm, BUY, target - half, s.depth));
            d.apply(order(mm, SELL, target + half, s.depth));
          }
          // Each trade a full mark window at its price (at least 0.001 btc), and enough of them for
          // the mark, which moves at most 1 % a window, to catch up with the move (a real move).
          const lots = Math.max(10, Math.ceil(WINDOW_TICK_LOTS / target));
          const trades = s.trades + Math.ceil(1.1 * Math.abs(s.movePct));
          for (let t = 0; t < trades; t++) {
            d.apply(order(mm, BUY, target, lots));
            d.apply(order(taker, SELL, target, lots, { kind: 'ioc' }));
          }
          price = target;
          if (s.tick) {
            d.time += HOUR_MS;
            d.apply({ type: 'FireTimers' });
          }
          insuranceAddsUp(d.engine);
        }
        for (const r of d.engine.liquidations()) {
          seen.liquidations++;
          if (r.status === 'done') seen.done++;
          if (r.account.kind === 'cross') seen.cross++;
          if (r.coins.some((c) => c.shortfall > 0)) seen.shortfalls++;
          if (r.coins.some((c) => c.badDebt > 0)) seen.badDebt++;
        }
        const hash = d.engine.stateHash();
        assert.equal(Engine.restore(d.engine.snapshot()).stateHash(), hash);
        for (const { at, snapshot } of snapshots) {
          const replay = Engine.restore(snapshot);
          for (const cmd of d.log.slice(at)) replay.apply(cmd);
          assert.equal(replay.stateHash(), hash, `replayed from the snapshot after command ${at}`);
        }
      },
    ),
    { numRuns: 40, seed: 15 },
  );
  // The runs must reach what they test: liquidations, finished ones, shortfalls and bad debt.
  assert.ok(
    seen.liquidations > 0 && seen.done > 0 && seen.shortfalls > 0 && seen.badDebt > 0 && seen.cross > 0,
    JSON.stringify(seen),
  );
});
