import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { creditCommand, EngineDriver } from '../../test/fixtures/engine-driver.ts';
import { BUY, SELL, type Command, type PlaceOrder } from '../domain/commands.ts';
import { LOAN_STATUS } from '../margin/loans.ts';
import { Engine, type ApplyResult } from './engine.ts';
import type { VenueConfig } from '../domain/specs.ts';
import { DEFAULT_VENUE } from '../config/default-venue.ts';
import { MEDIAN_MARK_VENUE } from '../../test/fixtures/median-venue.ts';

const USDT = 1_000_000; // units of one usdt (the default venue's 6 decimals)

/** A driver that checks every invariant after every command. */
class Checked extends EngineDriver {
  override apply(cmd: Command): ApplyResult {
    const r = super.apply(cmd);
    this.engine.assertInvariants();
    return r;
  }
}

const order = (
  userId: number,
  side: 0 | 1,
  price: number,
  amount: number,
  extra: Partial<PlaceOrder> = {},
): Command => ({
  type: 'PlaceOrder',
  userId,
  market: 'btc_usdt',
  side,
  kind: 'limit',
  price,
  amount,
  acctType: 0,
  clientOrderId: '',
  ...extra,
});

/** A usdt borrow into the user's isolated btc_usdt account. */
const borrowUsdt = (userId: number, amount: number): Command =>
  ({
    type: 'Borrow',
    userId,
    acctType: 1,
    market: 'btc_usdt',
    coin: 'usdt',
    amount,
    rollOver: false,
  }) as Command;

/** A usdt transfer between the user's spot and isolated btc_usdt accounts. */
const transferUsdt = (userId: number, direction: 'in' | 'out', amount: number): Command => ({
  type: 'MarginTransfer',
  userId,
  direction,
  acctType: 1,
  market: 'btc_usdt',
  coin: 'usdt',
  amount,
});

const must = (d: EngineDriver, cmd: Command): ApplyResult => {
  const r = d.apply(cmd);
  assert.equal(r.result, 'OK', `${cmd.type}: ${r.message ?? ''}`);
  return r;
};

/**
 * Alice's isolated btc_usdt account: 1,000 usdt in, 3,000 borrowed from the pool, 0.13 btc bought
 * at 30,000 from bob (the first trade: mark 30,000). Her liquidation line is near 24,203. On the
 * default venue (issue 29's depth mark) unless a test of issue 15's median mark names it.
 */
function longAlice(venue: VenueConfig = DEFAULT_VENUE): {
  d: Checked;
  alice: number;
  bob: number;
  carol: number;
} {
  const d = new Checked(venue);
  const alice = d.fund('alice', 'usdt', '2000');
  const bob = d.fund('bob', 'btc', '5');
  d.fund('bob', 'usdt', '2000000');
  const carol = d.fund('carol', 'btc', '60');
  must(d, {
    type: 'FundLendingPool',
    fundingId: 'pool-1',
    coin: 'usdt',
    amount: 100_000 * USDT,
    dailyRatePpm: 500,
    days: 10,
  });
  must(d, transferUsdt(alice, 'in', 1000 * USDT));
  must(d, borrowUsdt(alice, 3000 * USDT));
  must(d, order(bob, SELL, 3_000_000, 1300));
  must(d, order(alice, BUY, 3_000_000, 1300, { acctType: 1 }));
  assert.equal(d.engine.risk.markPrice('btc_usdt'), 3_000_000);
  return { d, alice, bob, carol };
}

/** A trade of 0.5 btc: more than the depth mark's window (10,000 usdt) at any price above 20,000. */
const WINDOW = 5000;

/** The depth mark after `n` trades of a window each beyond its 1 % edge below: ⌈m × 0.99⌉, n times. */
const edgeSteps = (mark: number, n: number): number => {
  let m = mark;
  for (let i = 0; i < n; i++) m = Math.ceil((m * 99) / 100);
  return m;
};

/**
 * A gap to 23,500 with real volume: `trades` trades of 0.5 btc at 23,500 in one command. Each counts
 * at the depth mark's 1 % edge (or, once that is below 23,500, at 23,500): 22 take the mark to
 * edgeSteps(30,000, 22) = 24,049.02, through alice's line. On the median venue (`small`): trades of
 * 0.001 btc, the mark ⌊(30,000 + 20 × 23,500) ÷ 21⌋.
 */
function gap(d: EngineDriver, bob: number, carol: number, trades = 22, lots = WINDOW): ApplyResult {
  for (let i = 0; i < trades; i++) must(d, order(bob, BUY, 2_350_000, lots));
  return must(d, order(carol, SELL, 2_350_000, trades * lots, { kind: 'ioc' }));
}
/** The median venue's gap of issue 15: 20 trades of 0.001 btc. */
const smallGap = (d: EngineDriver, bob: number, carol: number): ApplyResult => gap(d, bob, carol, 20, 10);

const stateOf = (e: Engine): string => JSON.stringify({ ...e.snapshot(), lastSeq: 0 });

describe('mark price in the engine', () => {
  test('follows each command’s trades and book, is in the snapshot and survives a restore', () => {
    const { d, bob, carol } = longAlice();
    const snap = d.engine.snapshot();
    assert.deepEqual(
      snap.risk?.marks.map(([m]) => m),
      ['btc_usdt'],
    );
    for (let i = 0; i < 22; i++) must(d, order(bob, BUY, 2_350_000, WINDOW));
    assert.equal(d.engine.risk.markPrice('btc_usdt'), 3_000_000, 'bids alone move no mark');
    const restored = Engine.restore(d.engine.snapshot());
    assert.equal(restored.stateHash(), d.engine.stateHash());
    const sell = order(carol, SELL, 2_350_000, 22 * WINDOW, { kind: 'ioc' });
    const next = { ...sell, seq: d.seq + 1, time: d.time + 1 };
    must(d, sell);
    restored.apply(next);
    assert.equal(d.engine.risk.markPrice('btc_usdt'), edgeSteps(3_000_000, 22), '22 windows, 1 % each');
    assert.equal(restored.risk.markPrice('btc_usdt'), d.engine.risk.markPrice('btc_usdt'));
    assert.equal(restored.stateHash(), d.engine.stateHash(), 'a restored engine computes the same marks');
  });
});

describe('forced liquidation in the engine step that crossed the line', () => {
  test('a gap through the line: locked, sold within the band without trading fee, repaid, fee to insurance, unlocked', () => {
    const { d, alice, bob, carol } = longAlice();
    must(d, order(bob, BUY, 2_340_000, 2000)); // 0.2 btc bid at 23,400, inside the band of the new mark
    const btc = d.engine.margin.account(alice, 1, 'btc_usdt')?.coins.find((c) => c.coin === 'btc')?.available;
    assert.equal(btc, 12_974_000, '0.13 btc less the 0.2 % buying fee; whole lots (0.0001 btc) are sold');
    const r = gap(d, bob, carol);
    const mark = edgeSteps(3_000_000, 22);
    const [rec, ...more] = d.engine.liquidations();
    assert.equal(more.length, 0);
    assert.ok(rec !== undefined);
    assert.equal(rec.status, 'done');
    assert.equal(rec.startMs, d.time, 'in the same step as the price move');
    assert.equal(rec.markAtStart, mark);
    assert.deepEqual(
      rec.orders.map((o) => [o.side, o.priceTicks, o.amount, o.filled]),
      [['sell', Math.ceil((mark * 97) / 100), 12_970_000, 12_970_000]],
    );
    // The liquidation's trade is in the command's events, at bob's bid, without trading fee.
    const liqTrade = r.events.find((e) => e.type === 'TradeExecuted' && e.price === 2_340_000);
    assert.ok(liqTrade !== undefined && liqTrade.type === 'TradeExecuted');
    assert.equal(liqTrade.takerFee, 0);
    const acct = d.engine.margin.account(alice, 1, 'btc_usdt');
    const usdt = acct?.coins.find((c) => c.coin === 'usdt');
    assert.equal(usdt?.borrowed, 0);
    assert.equal(usdt?.interest, 0);
    const q = rec.coins.find((c) => c.coin === 'usdt');
    assert.ok(q !== undefined);
    assert.equal(q.shortfall, 0);
    assert.equal(q.fee, Math.floor(q.repaid / 100));
    // 100 usdt left + 0.13 × 23,400 − repaid − fee stays with her, available.
    assert.equal(usdt?.available, 100 * USDT + 1297 * 2_340_000 - q.repaid - q.fee);
    assert.ok(d.loansOf(alice, 1, 'btc_usdt').every((l) => l.status === LOAN_STATUS.LIQUIDATED));
    assert.equal(d.engine.risk.isLocked(alice, 'btc_usdt'), false);
    const ins = d.engine.insurance().find((c) => c.coin === 'usdt');
    assert.ok((ins?.available ?? 0) >= q.fee);
    assert.deepEqual(d.engine.risk.liquidations(alice), [rec]);
    assert.deepEqual(d.engine.risk.liquidations(bob), []);
  });

  test('a thin book: the band stops the sale, the account stays locked and refuses its owner, the rest goes when liquidity comes back', () => {
    const { d, alice, bob, carol } = longAlice();
    must(d, order(bob, BUY, 2_340_000, 500)); // only 0.05 btc inside the band
    gap(d, bob, carol);
    const [rec] = d.engine.liquidations();
    assert.equal(rec?.status, 'running');
    assert.deepEqual(
      rec?.orders.map((o) => o.filled),
      [5_000_000],
    );
    assert.equal(d.engine.risk.isLocked(alice, 'btc_usdt'), true);
    const before = stateOf(d.engine);
    const out = d.apply(transferUsdt(alice, 'out', 1));
    assert.equal(out.result, 'INVALID_STATE');
    assert.match(out.message ?? '', /repayLock/);
    assert.equal(d.apply(order(alice, SELL, 2_340_000, 10, { acctType: 1 })).result, 'INVALID_STATE');
    assert.equal(stateOf(d.engine), before, 'refusals change nothing');
    must(d, order(bob, BUY, 2_340_000, 2000)); // liquidity comes back, inside the band
    assert.equal(rec?.status, 'done');
    assert.deepEqual(
      rec?.orders.map((o) => o.filled),
      [5_000_000, 7_970_000],
    );
    assert.equal(d.engine.risk.isLocked(alice, 'btc_usdt'), false);
  });

  test('issue 29: liquidity that enters a running liquidation’s band is taken in the command that brings it', () => {
    const { d, alice, bob, carol } = longAlice();
    must(d, order(bob, BUY, 2_340_000, 500)); // only 0.05 btc inside the band
    gap(d, bob, carol);
    const [rec] = d.engine.liquidations();
    assert.equal(rec?.status, 'running');
    // No mark move, no timer: the bid alone continues the liquidation (on main it waited).
    must(d, order(bob, BUY, 2_340_000, 2000));
    assert.equal(rec?.status, 'done');
    assert.deepEqual(
      rec?.orders.map((o) => [o.filled, o.timeMs]),
      [
        [5_000_000, rec?.startMs],
        [7_970_000, d.time],
      ],
    );
    assert.equal(d.engine.risk.isLocked(alice, 'btc_usdt'), false);
  });

  test('issue 29 §4 as reported: an ask that enters a running short liquidation’s band is taken at once', () => {
    // Dave short: 1,000 usdt of his own, 0.1 btc borrowed and sold at 30,000 (3,994 usdt held);
    // his line near 36,980. A rise with real volume: 22 trades of 0.5 btc at 38,000, each counted
    // at the mark's 1 % edge above, take the mark to about 37,418; only 0.01 btc is asked inside
    // his band (no higher than ⌊mark × 1.03⌋), so the liquidation buys that and waits.
    const d = new Checked();
    const dave = d.fund('dave', 'usdt', '1000');
    const mm = d.fund('mm', 'btc', '20');
    d.fund('mm', 'usdt', '2000000');
    d.fund('lender', 'btc', '1');
    must(d, {
      type: 'FundLendingPool',
      fundingId: 'pool-b',
      coin: 'btc',
      amount: 100_000_000,
      dailyRatePpm: 500,
      days: 10,
    });
    const tom = d.fund('tom', 'usdt', '100');
    must(d, order(mm, SELL, 3_000_000, 10)); // the first trade: a price to borrow btc against
    must(d, order(tom, BUY, 3_000_000, 10));
    must(d, transferUsdt(dave, 'in', 1000 * USDT));
    must(d, { ...borrowUsdt(dave, 10_000_000), coin: 'btc' } as Command);
    must(d, order(mm, BUY, 3_000_000, 1000));
    must(d, order(dave, SELL, 3_000_000, 1000, { acctType: 1 }));
    assert.equal(d.engine.risk.markPrice('btc_usdt'), 3_000_000);
    must(d, order(mm, SELL, 3_810_000, 100)); // 0.01 btc asked at 38,100
    for (let i = 0; i < 22; i++) must(d, order(mm, SELL, 3_800_000, WINDOW));
    const taker = d.fund('taker', 'usdt', '1000000');
    must(d, order(taker, BUY, 3_800_000, 22 * WINDOW, { kind: 'ioc' }));
    const [rec] = d.engine.liquidations();
    assert.equal(rec?.status, 'running');
    assert.deepEqual(
      rec?.orders.map((o) => [o.side, o.filled]),
      [['buy', 1_000_000]],
    );
    assert.ok((rec?.orders[0]?.priceTicks ?? 0) >= 3_810_000, 'the band reaches 38,100');
    // The ask comes; no trade, no mark move, no timer: bought in that command.
    must(d, order(mm, SELL, 3_810_000, 2000));
    assert.equal(rec?.status, 'done');
    assert.equal(d.engine.risk.isLocked(dave, 'btc_usdt'), false);
    const btc = d.engine.margin.account(dave, 1, 'btc_usdt')?.coins.find((c) => c.coin === 'btc');
    assert.equal((btc?.borrowed ?? 0) + (btc?.interest ?? 0), 0, 'the btc he owed is repaid');
  });

  test('issue 29: a running liquidation is retried on its own deadline, a second after it was last taken up (median mark)', () => {
    // Under issue 15's median rule (a genesis before issue 29) the mark ages with time alone, so
    // only the deadline takes the liquidation up; under the depth rule nothing moves without a
    // command, and every command that moves a mark or brings liquidity takes it up at once.
    const { d, bob, carol } = longAlice(MEDIAN_MARK_VENUE);
    must(d, order(bob, BUY, 2_340_000, 500));
    smallGap(d, bob, carol);
    const [rec] = d.engine.liquidations();
    assert.equal(rec?.status, 'running');
    // A bid below the band: nothing trades until the mark comes down to it, which here only the
    // mark's window ageing does (the trades leave it after five minutes) — no trade, no command.
    must(d, order(bob, BUY, 2_280_000, 2000));
    assert.equal(rec?.status, 'running');
    let fired = 0;
    while (rec?.status === 'running' && fired < 1_000) {
      const deadline = d.engine.nextDeadline();
      assert.ok(deadline !== undefined && deadline <= d.time + 1_000, `deadline ${deadline} at ${d.time}`);
      d.time = deadline - 1;
      must(d, { type: 'FireTimers' });
      fired++;
    }
    assert.equal(rec?.status, 'done');
    assert.ok(fired > 250 && fired < 320, `${fired} retries`);
    assert.equal(rec?.orders.at(-1)?.filled, 7_970_000);
    assert.equal(
      d.engine.nextDeadline() === undefined || (d.engine.nextDeadline() as number) > d.time + 1_000,
      true,
    );
  });

  test('issue 29: the retry deadline survives a snapshot and restore', () => {
    const { d, bob, carol } = longAlice();
    must(d, order(bob, BUY, 2_340_000, 500));
    gap(d, bob, carol);
    const restored = Engine.restore(d.engine.snapshot());
    assert.equal(restored.nextDeadline(), d.engine.nextDeadline());
    assert.equal(d.engine.nextDeadline(), d.time + 1_000);
    assert.equal(restored.stateHash(), d.engine.stateHash());
  });

  test('a liquidation that continues after an idempotent duplicate (a deposit already credited) reports its events (median mark)', () => {
    // Found by the differential run with price shocks (test/property): the risk step ran after a
    // duplicate CreditDeposit, but its result carried its own empty events, so the liquidation's
    // order, trades and balance changes were missing from what the command reported. Reached under
    // the median rule, whose mark moves with time alone (a command that trades nothing moves it).
    const { d, alice, bob, carol } = longAlice(MEDIAN_MARK_VENUE);
    must(d, order(bob, BUY, 2_340_000, 500)); // the band stops the sale half-way
    smallGap(d, bob, carol);
    const [rec] = d.engine.liquidations();
    assert.equal(rec?.status, 'running');
    // Liquidity comes back below the band (liquidity inside it would be taken at once, issue 29) …
    must(d, order(bob, BUY, 2_280_000, 2000));
    assert.equal(rec?.status, 'running');
    must(d, creditCommand(d.engine, bob, 'usdt', '1', 'dup-1'));
    d.time += 400_000; // … the trades leave the mark's window: the mark moves, the bid is inside
    const r = must(d, creditCommand(d.engine, bob, 'usdt', '1', 'dup-1'));
    assert.equal(r.duplicate, true);
    assert.equal(rec?.status, 'done', 'the move continued the liquidation');
    assert.deepEqual(
      r.events.filter((e) => e.type === 'TradeExecuted').map((e) => e.takerUserId),
      [alice],
      "the liquidation's trade is in the command's events",
    );
  });

  test("the owner's own spot bid at the top of the book does not block the liquidation (self-trade prevention)", () => {
    // Found by the differential run with price shocks: a liquidation order stopped by self-trade
    // prevention at its owner's resting spot bid, 200+ times, with liquidity just behind it. Now the
    // owner's orders the liquidation order could reach are cancelled before it is sent.
    const { d, alice, bob, carol } = longAlice();
    must(d, order(bob, BUY, 2_340_000, 2000)); // plenty inside the band …
    must(d, order(alice, BUY, 2_345_000, 10)); // … behind alice's own spot bid
    must(d, order(alice, BUY, 2_000_000, 10)); // below the band: out of reach
    const [top, low] = d.engine.openOrders(alice).map((o) => o.id);
    const r = gap(d, bob, carol);
    const [rec] = d.engine.liquidations();
    assert.equal(rec?.status, 'done', `orders ${JSON.stringify(rec?.orders.map((o) => o.filled))}`);
    assert.deepEqual(
      r.events.flatMap((e) =>
        e.type === 'OrderUpdated' && e.cancelReason === 'liquidation' ? [e.orderId] : [],
      ),
      [top],
      'only the bid the order could reach is cancelled, reason liquidation',
    );
    assert.deepEqual(
      d.engine.openOrders(alice).map((o) => o.id),
      [low],
    );
    assert.equal(d.engine.balance(alice, 'usdt')?.frozen, 20 * USDT, "the cancelled bid's hold is released");
  });

  test('a shortfall: the insurance fund pays what it holds, the rest is bad debt written off against the lender', () => {
    const { d, alice, bob, carol } = longAlice();
    must(d, order(bob, BUY, 2_340_000, 100)); // 0.01 btc inside the band: most of the 0.13 btc …
    gap(d, bob, carol);
    // … then the market crashes: 16 btc trade at 16,000 (16 trades, the mark 1 % each, to some
    // 20,480), and the first bid inside the band is at 20,000, far below her debt.
    crash(d, bob, carol);
    const [rec] = d.engine.liquidations();
    assert.equal(rec?.status, 'done');
    const q = rec?.coins.find((c) => c.coin === 'usdt');
    assert.ok(q !== undefined && q.shortfall > 0, 'sold far below the debt');
    assert.equal(q.badDebt, q.shortfall - q.insurance);
    assert.equal(q.fee, 0, 'no fee on a shortfall');
    const usdt = d.engine.margin.account(alice, 1, 'btc_usdt')?.coins.find((c) => c.coin === 'usdt');
    assert.equal((usdt?.borrowed ?? 0) + (usdt?.interest ?? 0), 0, 'nothing owed after the write-off');
  });
});

/** A crash after the gap: 16 trades of 1 btc at 16,000 (the mark 1 % each), then a bid of 0.2 at 20,000. */
function crash(d: EngineDriver, bob: number, carol: number): void {
  assert.equal(d.engine.liquidations()[0]?.status, 'running');
  for (let i = 0; i < 16; i++) must(d, order(bob, BUY, 1_600_000, 2 * WINDOW));
  must(d, order(carol, SELL, 1_600_000, 32 * WINDOW, { kind: 'ioc' }));
  assert.equal(d.engine.liquidations()[0]?.status, 'running', 'no bid inside the band');
  must(d, order(bob, BUY, 2_000_000, 2000));
}

describe('notice, cascades, restore', () => {
  test('a slow slide: flagged at the notice line (level 2, no liquidation yet), then liquidated at the line', () => {
    const { d, alice, bob, carol } = longAlice();
    assert.deepEqual(d.engine.risk.accountRisk(alice, 'btc_usdt'), {
      markPrice: 3_000_000,
      riskRateBp: d.engine.risk.accountRisk(alice, 'btc_usdt')?.riskRateBp,
      unwindPrice: d.engine.risk.accountRisk(alice, 'btc_usdt')?.unwindPrice,
      notice: false,
      repayLock: false,
      level: 1,
    });
    const first = d.engine.risk.accountRisk(alice, 'btc_usdt');
    assert.ok((first?.riskRateBp ?? 0) > 13_000);
    assert.equal(first?.unwindPrice?.side, 'below');
    let flaggedAt: number | undefined;
    for (let p = 2_990_000; p > 1_000_000 && d.engine.liquidations().length === 0; p -= 10_000) {
      must(d, order(bob, BUY, p, WINDOW));
      must(d, order(carol, SELL, p, WINDOW, { kind: 'ioc' }));
      const risk = d.engine.risk.accountRisk(alice, 'btc_usdt');
      if (flaggedAt === undefined && risk?.notice === true) {
        flaggedAt = risk.markPrice;
        assert.equal(risk.level, 2);
        assert.equal(d.engine.liquidations().length, 0, 'flagged before any liquidation');
        assert.ok((risk.riskRateBp ?? 0) <= 11_300 && (risk.riskRateBp ?? 0) > 10_800);
      }
    }
    assert.ok(flaggedAt !== undefined, 'the notice line was crossed first');
    const [rec] = d.engine.liquidations();
    assert.ok(rec !== undefined);
    assert.ok(rec.riskRateBp <= 10_800, `started at ${rec.riskRateBp}`);
    assert.ok(rec.markAtStart <= (first?.unwindPrice?.priceTicks ?? 0));
    // No bid was left inside the band: it waits, locked (level 3), for liquidity.
    assert.equal(d.engine.risk.accountRisk(alice, 'btc_usdt')?.level, 3);
    must(d, order(bob, BUY, rec.markAtStart, 2000));
    assert.equal(rec.status, 'done');
    assert.equal(d.engine.risk.accountRisk(alice, 'btc_usdt')?.level, 1);
  });

  test('a cascade: two accounts crossed by one move are liquidated in the same step, lowest risk rate first', () => {
    const { d, alice, bob, carol } = longAlice();
    const dave = d.fund('dave', 'usdt', '2000');
    // Dave holds a little more btc and less usdt: his line (near 23,972) is below alice's (near 24,203); the gap crosses both.
    must(d, transferUsdt(dave, 'in', 1050 * USDT));
    must(d, borrowUsdt(dave, 3000 * USDT));
    must(d, order(bob, SELL, 3_000_000, 1333));
    must(d, order(dave, BUY, 3_000_000, 1333, { acctType: 1 }));
    must(d, order(bob, BUY, 2_340_000, 4000));
    const r = gap(d, bob, carol, 30); // the mark 1 % a trade, then 23,500 itself: through both lines
    const recs = d.engine.liquidations();
    assert.equal(recs.length, 2);
    assert.ok(recs.every((x) => x.status === 'done' && x.startMs === d.time));
    assert.ok((recs[0]?.riskRateBp ?? 0) <= (recs[1]?.riskRateBp ?? 0), 'lowest risk rate first');
    assert.deepEqual(
      recs.map((x) => (x.account.kind === 'isolated' ? x.account.userId : 0)).sort(),
      [alice, dave].sort(),
    );
    assert.equal(r.events.filter((e) => e.type === 'OrderAccepted' && e.acctType === 1).length, 2);
  });

  test('a snapshot taken while a liquidation runs restores to an engine that ends in the same state', () => {
    const { d, bob, carol } = longAlice();
    must(d, order(bob, BUY, 2_340_000, 500));
    gap(d, bob, carol);
    assert.equal(d.engine.liquidations()[0]?.status, 'running');
    const restored = Engine.restore(d.engine.snapshot());
    assert.equal(restored.stateHash(), d.engine.stateHash());
    for (const cmd of [order(bob, BUY, 2_340_000, 2000), { type: 'FireTimers' } as Command]) {
      const seq = d.seq + 1;
      const time = d.time + 1;
      must(d, cmd);
      assert.equal(restored.apply({ ...cmd, seq, time }).result, 'OK');
    }
    assert.equal(d.engine.liquidations()[0]?.status, 'done');
    assert.equal(restored.stateHash(), d.engine.stateHash());
  });

  test('margin’s caches stay right through a liquidation: the same commands after it give the same state as on an engine restored (fresh caches) just after it', () => {
    const { d, alice, bob, carol } = longAlice();
    // Warm every cache of alice's account before the liquidation: a resting margin order (order
    // account, resting account), auto-repay on (its per-account flag), a second borrow (the loan
    // book's per-account records) — then the gap liquidates her.
    must(d, {
      type: 'SetMarginPreferences',
      userId: alice,
      acctType: 1,
      market: 'btc_usdt',
      express: false,
      autoRepay: true,
    } as Command);
    must(d, order(alice, SELL, 3_500_000, 100, { acctType: 1 }));
    must(d, borrowUsdt(alice, 100 * USDT));
    must(d, order(bob, BUY, 2_340_000, 2000));
    gap(d, bob, carol);
    assert.equal(d.engine.liquidations()[0]?.status, 'done');
    assert.equal(d.engine.openOrders(alice).length, 0, 'her resting order was cancelled');
    const restored = Engine.restore(d.engine.snapshot());
    // After it: she funds the account again, borrows, buys on margin, sells (auto-repay repays from
    // the fill), takes some out; bob and carol trade around her. Every step: same replies, same state.
    const after: Command[] = [
      transferUsdt(alice, 'in', 500 * USDT),
      borrowUsdt(alice, 1000 * USDT),
      order(carol, SELL, 2_360_000, 300),
      order(alice, BUY, 2_360_000, 300, { acctType: 1 }),
      // Into what is left of bob's bid at 23,400.
      order(alice, SELL, 2_340_000, 200, { acctType: 1 }),
      transferUsdt(alice, 'out', 10 * USDT),
      { type: 'FireTimers' } as Command,
    ];
    for (const cmd of after) {
      const seq = d.seq + 1;
      const time = d.time + 1;
      const live = d.apply(cmd);
      assert.equal(live.result, 'OK', `${cmd.type}: ${live.message ?? ''}`);
      const fresh = restored.apply({ ...cmd, seq, time } as Parameters<Engine['apply']>[0]);
      assert.deepEqual(fresh, live, `${cmd.type}: the same reply`);
      restored.assertInvariants();
      assert.equal(restored.stateHash(), d.engine.stateHash(), `${cmd.type}: the same state`);
    }
    const acct = d.engine.margin.account(alice, 1, 'btc_usdt');
    assert.deepEqual(acct, restored.margin.account(alice, 1, 'btc_usdt'));
    assert.ok(
      (acct?.coins.find((c) => c.coin === 'btc')?.available ?? 0) > 0,
      'her margin buy settled in the account',
    );
  });
});

describe('deferred mark steps', () => {
  test('quiet commands whose step is deferred end in the same replies and state as when a read takes every step at once', () => {
    // Two identical venues; `read` asks for the mark and alice's risk after every command (which
    // takes any deferred step then), `idle` reads nothing until the end.
    const read = longAlice();
    const idle = longAlice();
    const { alice, bob, carol } = read;
    const MINUTES_6 = 6 * 60_000;
    // Quiet trades near 30,000 (far above alice's line near 24,154), some after six minutes (the
    // window empties), a refused command after a gap (a later time that takes no step), then a
    // gap through her line: the deferred steps must leave the window that the gap's step sees.
    const script: [Command, number][] = [];
    for (let i = 0; i < 30; i++) {
      const p = 2_990_000 + (i % 5) * 2_000;
      script.push([order(bob, BUY, p, 10), i % 10 === 9 ? MINUTES_6 : 1]);
      script.push([order(carol, SELL, p, 10, { kind: 'ioc' }), 1]);
      if (i % 7 === 3) script.push([order(carol, SELL, 3_100_000, 5), 1]);
    }
    // A refused command six minutes on: no step at its time (checked: the state at that point).
    script.push([order(bob, BUY, 2_990_000, 10, { market: 'no_such' }), MINUTES_6]);
    const checkAt = script.length;
    script.push([order(bob, BUY, 2_340_000, 500), 1]);
    for (let i = 0; i < 22; i++) script.push([order(bob, BUY, 2_350_000, WINDOW), 1]);
    script.push([order(carol, SELL, 2_350_000, 22 * WINDOW, { kind: 'ioc' }), 1]);
    script.push([order(bob, BUY, 2_995_000, 10, { market: 'no_such' }), MINUTES_6]);
    for (const [k, [cmd, gapMs]] of script.entries()) {
      if (k === checkAt) assert.equal(idle.d.engine.stateHash(), read.d.engine.stateHash());
      read.d.time += gapMs - 1;
      idle.d.time += gapMs - 1;
      const a = read.d.apply(cmd);
      read.d.engine.risk.markPrice('btc_usdt');
      read.d.engine.risk.accountRisk(alice, 'btc_usdt');
      const b = idle.d.apply(cmd);
      assert.deepEqual(b, a, `${cmd.type} at seq ${read.d.seq}: the same reply`);
    }
    assert.equal(idle.d.engine.liquidations().length, 1, 'the gap liquidated alice');
    assert.equal(idle.d.engine.stateHash(), read.d.engine.stateHash());
    assert.equal(idle.d.engine.risk.markPrice('btc_usdt'), read.d.engine.risk.markPrice('btc_usdt'));
  });
});
