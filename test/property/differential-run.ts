/** @module differential-run — runs one seeded command stream through engine and reference, comparing. */
import { BandBadDebtCheck } from './band-check.ts';
import assert from 'node:assert/strict';
import { DEFAULT_VENUE } from '../../src/config/default-venue.ts';
import type { SequencedCommand, Side } from '../../src/domain/commands.ts';
import { marketFromText, type VenueConfig } from '../../src/domain/specs.ts';
import { Engine, type ApplyResult } from '../../src/engine/engine.ts';
import { NaiveEngine, type NaiveOutcome, type NaiveOrderView } from '../reference/naive-engine.ts';
import { CommandGenerator, type GeneratorOptions } from './command-generator.ts';
import { OpeningLineCheck } from './limit-check.ts';

export interface DifferentialOptions {
  readonly seed: number;
  readonly commands: number;
  /** Compare books, balances and fee income, and check invariants, after every this many commands. */
  readonly checkEvery: number;
  readonly venue?: VenueConfig;
  readonly generator?: GeneratorOptions;
  /**
   * The engine's event pool on (src/engine/event-pool.ts), recycled before each command once the
   * previous command's events were compared and counted: as the server runs it (`reuseEvents`).
   */
  readonly reuseEvents?: boolean;
}

/** What a run exercised, so that tests can check the stream is not degenerate. */
export interface DifferentialStats {
  commands: number;
  trades: number;
  /** Trades whose taker or maker fee was paid in the platform coin for another received coin. */
  platformFeeTrades: number;
  checks: number;
  maxResting: number;
  readonly results: Record<string, number>;
  readonly commandTypes: Record<string, number>;
  readonly cancelReasons: Record<string, number>;
  /** States deposit and withdrawal records entered (from DepositUpdated and WithdrawalUpdated). */
  readonly depositStates: Record<string, number>;
  readonly withdrawalStates: Record<string, number>;
  /** Issue 15: liquidations run, those whose shortfall the insurance fund covered (in part or whole), those that left bad debt. */
  liquidations: number;
  insuranceCovers: number;
  badDebts: number;
  /** Issue 29: liquidations begun and ended in one command after a mark move of at most 2 % (band-check.ts). */
  bandChecked: number;
  /** Commands in which two or more liquidations began (a cascade, or one move crossing several). */
  cascades: number;
  /** Accounts seen flagged at the notice line at a state check (summed over checks). */
  notices: number;
  /** The lowest risk rate (BP) of a cross account seen at a state check; Infinity without one. */
  minCrossRiskRateBp: number;
  /** Issue 29: accepted borrows and transfers out checked at their opening line (limit-check.ts). */
  openingLineChecks: number;
  /** Of those, the ones whose account had resting orders losing against the mark (resting-loss.ts). */
  restingLossChecks: number;
}

/**
 * The default venue with distinct maker and taker fees, another discount and dead-man delay, and a
 * btc_qc market appended, so that btc has two fee paths to zb (via usdt and via qc) and the rule
 * "first market in configuration order" decides between them. Trade it with EXTENDED_MARKETS.
 */
export const EXTENDED_VENUE: VenueConfig = {
  settings: { platformCoin: 'zb', platformFeeDiscount: 200_000, cancelAllAfterMs: 30_000 },
  coins: DEFAULT_VENUE.coins,
  // Tight daily limits, and every withdrawal waiting for approval, so that both rules bite.
  funds: (DEFAULT_VENUE.funds ?? []).map((f) => ({
    ...f,
    dailyWithdrawLimit: Math.floor(f.dailyWithdrawLimit / 200),
    autoApproveLimit: 0,
  })),
  markets: [
    ...DEFAULT_VENUE.markets,
    marketFromText(
      { base: 'btc', quote: 'qc', priceScale: 2, amountScale: 4, minAmount: '0.0001', minSize: '5' },
      6,
    ),
  ].map((m) => ({ ...m, makerFee: 1_000, takerFee: 2_500 })),
};
export const EXTENDED_MARKETS: readonly string[] = ['btc_usdt', 'eth_btc', 'zb_usdt', 'btc_qc', 'zb_qc'];

/** Both sides' view of one command, in one shape and key order, so that it compares as text. */
interface Outcome {
  result: string;
  orderId: number | null;
  orderIds: number[] | null;
  userId: number | null;
  duplicate: boolean;
  deadline: number | null;
  withdrawalId: string | null;
  offerId: number | null;
  loanIds: number[] | null;
  trades: (string | number)[][];
  cancels: [number, string][];
}

function fromEngine(r: ApplyResult): Outcome {
  const trades: (string | number)[][] = [];
  const cancels: [number, string][] = [];
  for (const e of r.events) {
    if (e.type === 'TradeExecuted') {
      trades.push([
        e.tradeId,
        e.market,
        e.price,
        e.amount,
        e.value,
        e.takerSide,
        e.takerOrderId,
        e.makerOrderId,
        e.takerUserId,
        e.makerUserId,
        e.takerFee,
        e.takerFeeCoin,
        e.makerFee,
        e.makerFeeCoin,
        e.time,
      ]);
    } else if (e.type === 'OrderUpdated' && e.cancelReason !== null) {
      cancels.push([e.orderId, e.cancelReason]);
    }
  }
  return {
    result: r.result,
    orderId: r.orderId ?? null,
    orderIds: r.orderIds ?? null,
    userId: r.userId ?? null,
    duplicate: r.duplicate === true,
    deadline: r.deadline ?? null,
    withdrawalId: r.withdrawalId ?? null,
    offerId: r.offerId ?? null,
    loanIds: r.loanIds ?? null,
    trades,
    cancels,
  };
}

function fromReference(r: NaiveOutcome): Outcome {
  return {
    result: r.result,
    orderId: r.orderId ?? null,
    orderIds: r.orderIds ?? null,
    userId: r.userId ?? null,
    duplicate: r.duplicate === true,
    deadline: r.deadline ?? null,
    withdrawalId: r.withdrawalId ?? null,
    offerId: r.offerId ?? null,
    loanIds: r.loanIds ?? null,
    trades: r.trades.map((t) => [
      t.tradeId,
      t.market,
      t.price,
      t.amount,
      t.value,
      t.takerSide,
      t.takerOrderId,
      t.makerOrderId,
      t.takerUserId,
      t.makerUserId,
      t.takerFee,
      t.takerFeeCoin,
      t.makerFee,
      t.makerFeeCoin,
      t.time,
    ]),
    cancels: r.cancels,
  };
}

const bump = (counts: Record<string, number>, key: string): void => {
  counts[key] = (counts[key] ?? 0) + 1;
};

type BookRow = Pick<
  NaiveOrderView,
  'id' | 'userId' | 'price' | 'amount' | 'remaining' | 'filled' | 'filledValue' | 'fees' | 'platformFees'
>;

/** The engine's resting orders of one market side in priority order, from its public reads. */
function engineBook(engine: Engine, userIds: readonly number[], market: string, side: Side): BookRow[] {
  const rows: (BookRow & { side: Side })[] = [];
  for (const u of userIds) {
    for (const o of engine.openOrders(u, market)) {
      if (o.side !== side) continue;
      rows.push({
        id: o.id,
        userId: o.userId,
        side: o.side,
        price: o.price,
        amount: o.amount,
        remaining: o.amount - o.filled,
        filled: o.filled,
        filledValue: o.filledValue,
        fees: o.fees,
        platformFees: o.platformFees,
      });
    }
  }
  rows.sort((a, b) =>
    a.price !== b.price ? (side === 1 ? b.price - a.price : a.price - b.price) : a.id - b.id,
  );
  return rows.map(({ side: _side, ...row }) => row);
}

function referenceBook(naive: NaiveEngine, market: string, side: Side): BookRow[] {
  return naive
    .book(market, side)
    .map(({ id, userId, price, amount, remaining, filled, filledValue, fees, platformFees }) => ({
      id,
      userId,
      price,
      amount,
      remaining,
      filled,
      filledValue,
      fees,
      platformFees,
    }));
}

/** Aggregates a priority-ordered side into `[price, lots]` levels, best first. */
function levels(rows: readonly BookRow[]): [number, number][] {
  const out: [number, number][] = [];
  for (const r of rows) {
    const last = out[out.length - 1];
    if (last !== undefined && last[0] === r.price) last[1] += r.remaining;
    else out.push([r.price, r.remaining]);
  }
  return out;
}

/** The risk side (issue 15): every market's mark, every isolated account's risk rate and notice flag. */
function compareRisk(engine: Engine, naive: NaiveEngine, where: string): void {
  for (const market of naive.marketNames())
    assert.equal(engine.risk.markPrice(market), naive.risk.markPrice(market), `${where}: mark of ${market}`);
  for (const acct of naive.margin.accounts()) {
    const [kind, user, market] = acct.split(':');
    if (kind !== 'i') continue;
    const r = engine.risk.accountRisk(Number(user), market ?? '');
    assert.deepEqual(
      { riskRateBp: r?.riskRateBp, notice: r?.notice, repayLock: r?.repayLock },
      {
        riskRateBp: naive.risk.riskRateBp(acct),
        notice: naive.risk.isFlagged(acct),
        repayLock: naive.risk.isLocked(acct),
      },
      `${where}: risk of ${acct} (mark ${String(r?.markPrice)})`,
    );
  }
  for (const { coin, available } of engine.insurance())
    assert.equal(BigInt(available), naive.margin.insurance(coin), `${where}: insurance fund ${coin}`);
  const theirs = naive.risk.liquidations().map((r) => ({
    id: r.id,
    account: r.account,
    markAtStart: Number(r.markAtStart),
    riskRateBp: r.riskRateBp,
    orders: r.orders.map((o) => [o.side, Number(o.priceTicks), Number(o.amount), Number(o.filled)]),
    coins: [...r.coins].map(([coin, c]) =>
      [coin, c.repaid, c.shortfall, c.insurance, c.badDebt, c.fee].map(String),
    ),
    done: r.done,
  }));
  const mine = engine.liquidations().map((r) => ({
    id: r.id,
    account: r.account.kind === 'isolated' ? `i:${r.account.userId}:${r.account.market}` : '?',
    markAtStart: r.markAtStart,
    riskRateBp: r.riskRateBp,
    orders: r.orders.map((o) => [o.side, o.priceTicks, o.amount, o.filled]),
    coins: r.coins.map((c) => [c.coin, c.repaid, c.shortfall, c.insurance, c.badDebt, c.fee].map(String)),
    done: r.status === 'done',
  }));
  assert.deepEqual(mine, theirs, `${where}: liquidation records`);
}

/** Compares the whole observable state of both engines and runs both self-checks. */
function compareState(engine: Engine, naive: NaiveEngine, where: string): void {
  naive.checkConservation();
  engine.assertInvariants();
  const users = naive.userIds();
  assert.equal(
    engine.userName((users[users.length - 1] ?? 0) + 1),
    undefined,
    `${where}: engine has extra users`,
  );
  for (const u of users) {
    assert.notEqual(engine.userName(u), undefined, `${where}: engine lacks user ${u}`);
    for (const coin of naive.coinNames()) {
      assert.deepEqual(
        engine.balance(u, coin),
        naive.balance(u, coin),
        `${where}: balance of user ${u} in ${coin}`,
      );
    }
  }
  for (const coin of naive.coinNames()) {
    const totals = engine.totals(coin);
    assert.deepEqual(
      {
        feeIncome: BigInt(engine.feeIncome(coin)),
        credited: BigInt(totals?.credited ?? -1),
        withdrawn: BigInt(totals?.withdrawn ?? -1),
      },
      { feeIncome: naive.feeIncome(coin), credited: naive.credited(coin), withdrawn: naive.withdrawn(coin) },
      `${where}: fee income, credits or withdrawals of ${coin}`,
    );
  }
  for (const id of naive.withdrawalIds()) {
    assert.equal(engine.funds.withdrawal(id)?.state, naive.withdrawalState(id), `${where}: withdrawal ${id}`);
  }
  assert.equal(
    engine.funds.withdrawal(String(naive.withdrawalIds().length + 1)),
    undefined,
    `${where}: extra withdrawal`,
  );
  for (const id of naive.depositIds()) {
    assert.equal(engine.funds.deposit(id)?.state, naive.depositState(id), `${where}: deposit ${id}`);
  }
  // Margin accounts: every pocket the reference holds, and what the pool was funded with.
  for (const acct of naive.margin.accounts()) {
    const [kind, user, market] = acct.split(':');
    const view = engine.margin.account(Number(user), kind === 'i' ? 1 : 2, market ?? '');
    for (const coin of naive.coinNames()) {
      const p = naive.margin.pocketOf(acct, coin);
      const e = view?.coins.find((c) => c.coin === coin);
      assert.deepEqual(
        [e?.available ?? 0, e?.frozen ?? 0, e?.borrowed ?? 0, e?.interest ?? 0],
        [p.available, p.frozen, p.borrowed, p.interest].map(Number),
        `${where}: margin account ${acct} ${coin} (available, frozen, borrowed, interest)`,
      );
    }
    // The limits shown (fCanLoanIn, couldTransferOut…, canTransferOut): the reference's, which count
    // the resting orders' loss beyond the mark as the engine must (issue 29).
    for (const c of view?.coins ?? []) {
      assert.deepEqual(
        [c.borrowLimit, c.transferOutLimit],
        [naive.margin.borrowLimit(acct, c.coin), naive.margin.transferLimit(acct, c.coin) ?? 0n].map(Number),
        `${where}: margin account ${acct} ${c.coin} limits shown (borrow, transfer out)`,
      );
    }
  }
  compareRisk(engine, naive, where);
  for (const coin of naive.coinNames()) {
    assert.equal(
      BigInt(engine.margin.poolFunded(coin)),
      naive.margin.funded(coin),
      `${where}: pool funded ${coin}`,
    );
    // The operator's books (bourse solvency) over every kind of account against the reference's.
    const books = engine.books(coin);
    assert.deepEqual(
      [books?.held, books?.imbalance, books?.insuranceImbalance, books?.poolImbalance],
      [naive.held(coin), 0n, 0n, 0n],
      `${where}: books of ${coin} (held, imbalance, insurance and pool imbalance)`,
    );
  }
  assert.equal(engine.openOrderCount, naive.restingCount(), `${where}: number of resting orders`);
  for (const market of naive.marketNames()) {
    assert.equal(engine.lastPrice(market), naive.lastPrice(market), `${where}: last price of ${market}`);
    const bids = referenceBook(naive, market, 1);
    const asks = referenceBook(naive, market, 0);
    assert.deepEqual(engineBook(engine, users, market, 1), bids, `${where}: ${market} bids`);
    assert.deepEqual(engineBook(engine, users, market, 0), asks, `${where}: ${market} asks`);
    assert.deepEqual(
      engine.depth(market, Number.MAX_SAFE_INTEGER),
      { bids: levels(bids), asks: levels(asks) },
      `${where}: ${market} depth`,
    );
  }
}

/**
 * Runs `commands` generated commands for one seed through a fresh Engine and a fresh NaiveEngine.
 * After every command: identical result, order ids, trades (every TradeExecuted field) and
 * cancellations, and no accepted borrow or transfer out below its opening line at the marks its
 * limits read (limit-check.ts). Every `checkEvery` commands and at the end: identical balances, fee income,
 * credits, withdrawals, last prices and books, and both engines' own invariant checks. At the end
 * a snapshot must restore to the same state hash. Throws an AssertionError naming the seed and
 * the command index on the first divergence.
 */
export function runDifferential(options: DifferentialOptions): DifferentialStats {
  const { seed, commands, checkEvery } = options;
  const venue = options.venue ?? DEFAULT_VENUE;
  const engine = new Engine(venue);
  const pool = options.reuseEvents === true ? engine.eventPool : undefined;
  pool?.enable();
  const naive = new NaiveEngine(venue);
  const generator = new CommandGenerator(seed, venue, options.generator);
  const stats = emptyStats();
  const rerun = `rerun with SEED=${seed} CHECK_EVERY=1`;
  const band = new BandBadDebtCheck(engine);
  let liquidationsBefore = 0;
  const openingLine = new OpeningLineCheck();
  for (let i = 1; i <= commands; i++) {
    pool?.recycle();
    const cmd: SequencedCommand = generator.next(naive);
    const where = `seed ${seed}, command #${i}`;
    let mine: ApplyResult;
    let theirs: NaiveOutcome;
    openingLine.before(engine, naive, cmd);
    band.before();
    try {
      mine = engine.apply(cmd);
      theirs = naive.apply(cmd);
    } catch (error) {
      throw new Error(`${where} threw (${JSON.stringify(cmd)}): ${String(error)}`, { cause: error });
    }
    const a = fromEngine(mine);
    const b = fromReference(theirs);
    if (JSON.stringify(a) !== JSON.stringify(b)) {
      assert.deepEqual(a, b, `${where} diverged: ${JSON.stringify(cmd)} (engine first, reference second)`);
    }
    openingLine.after(engine, cmd, a.result, where);
    band.after(cmd, where);
    stats.commands++;
    const began = naive.risk.liquidations().length;
    if (began - liquidationsBefore >= 2) stats.cascades++;
    liquidationsBefore = began;
    stats.trades += a.trades.length;
    bump(stats.results, a.result);
    bump(stats.commandTypes, cmd.type);
    for (const [, reason] of a.cancels) bump(stats.cancelReasons, reason);
    for (const e of mine.events) {
      if (e.type === 'DepositUpdated') bump(stats.depositStates, e.state);
      if (e.type === 'WithdrawalUpdated') bump(stats.withdrawalStates, e.state);
    }
    for (const t of theirs.trades) {
      const base = t.market.slice(0, t.market.indexOf('_'));
      const takerReceived = t.takerSide === 1 ? base : t.market.slice(t.market.indexOf('_') + 1);
      const makerReceived = t.takerSide === 1 ? t.market.slice(t.market.indexOf('_') + 1) : base;
      if (
        (t.takerFeeCoin === venue.settings.platformCoin && takerReceived !== t.takerFeeCoin) ||
        (t.makerFeeCoin === venue.settings.platformCoin && makerReceived !== t.makerFeeCoin)
      )
        stats.platformFeeTrades++;
    }
    const resting = naive.restingCount();
    if (resting > stats.maxResting) stats.maxResting = resting;
    if (i % checkEvery === 0 || i === commands) {
      try {
        compareState(engine, naive, `${where} (state check)`);
      } catch (error) {
        const span = `the divergence arose in commands ${Math.max(1, i - checkEvery + 1)}..${i}; ${rerun}`;
        if (error instanceof assert.AssertionError) {
          error.message = `${error.message}\n${span}`;
          throw error;
        }
        throw new Error(`${where} (state check): ${String(error)}\n${span}`, { cause: error });
      }
      stats.checks++;
      for (const acct of naive.margin.accounts()) {
        if (acct.startsWith('i:') && naive.risk.isFlagged(acct)) stats.notices++;
        if (!acct.startsWith('c:')) continue;
        const rate = engine.margin.account(Number(acct.slice(2)), 2, '')?.riskRateBp;
        if (rate !== undefined && rate < stats.minCrossRiskRateBp) stats.minCrossRiskRateBp = rate;
      }
    }
  }
  for (const r of engine.liquidations()) {
    stats.liquidations++;
    if (r.coins.some((c) => c.insurance > 0)) stats.insuranceCovers++;
    if (r.coins.some((c) => c.badDebt > 0)) stats.badDebts++;
  }
  stats.openingLineChecks = openingLine.checked;
  stats.restingLossChecks = openingLine.withRestingLoss;
  stats.bandChecked = band.checked;
  const hash = engine.stateHash();
  assert.equal(
    Engine.restore(engine.snapshot()).stateHash(),
    hash,
    `seed ${seed}: snapshot does not restore`,
  );
  return stats;
}

/** Adds one run's stats into a running total. */
export function addStats(total: DifferentialStats, run: DifferentialStats): void {
  total.commands += run.commands;
  total.trades += run.trades;
  total.platformFeeTrades += run.platformFeeTrades;
  total.checks += run.checks;
  total.maxResting = Math.max(total.maxResting, run.maxResting);
  total.liquidations += run.liquidations;
  total.insuranceCovers += run.insuranceCovers;
  total.badDebts += run.badDebts;
  total.bandChecked += run.bandChecked;
  total.cascades += run.cascades;
  total.notices += run.notices;
  total.minCrossRiskRateBp = Math.min(total.minCrossRiskRateBp, run.minCrossRiskRateBp);
  total.openingLineChecks += run.openingLineChecks;
  total.restingLossChecks += run.restingLossChecks;
  for (const [from, into] of [
    [run.results, total.results],
    [run.commandTypes, total.commandTypes],
    [run.cancelReasons, total.cancelReasons],
    [run.depositStates, total.depositStates],
    [run.withdrawalStates, total.withdrawalStates],
  ] as const) {
    for (const [k, n] of Object.entries(from)) into[k] = (into[k] ?? 0) + n;
  }
}

/** An empty stats record to add runs into. */
export function emptyStats(): DifferentialStats {
  return {
    commands: 0,
    trades: 0,
    platformFeeTrades: 0,
    checks: 0,
    maxResting: 0,
    results: {},
    commandTypes: {},
    cancelReasons: {},
    depositStates: {},
    withdrawalStates: {},
    liquidations: 0,
    insuranceCovers: 0,
    badDebts: 0,
    bandChecked: 0,
    cascades: 0,
    notices: 0,
    minCrossRiskRateBp: Infinity,
    openingLineChecks: 0,
    restingLossChecks: 0,
  };
}

/** One line on what a run's risk side saw (issue 15). */
export function riskSummary(s: DifferentialStats): string {
  const cross = Number.isFinite(s.minCrossRiskRateBp) ? (s.minCrossRiskRateBp / 10_000).toFixed(4) : '-';
  return (
    `${s.commands} commands: ${s.liquidations} liquidations, ${s.insuranceCovers} with insurance cover, ` +
    `${s.badDebts} with bad debt (${s.bandChecked} closed at once after a move of at most 2 %, none with bad debt), ${s.cascades} commands beginning two or more; ${s.notices} notice flags seen at ${s.checks} checks; lowest cross risk rate ${cross}; ` +
    `${s.openingLineChecks} borrows and transfers out checked at the opening line (${s.restingLossChecks} with resting orders' loss counted)`
  );
}
