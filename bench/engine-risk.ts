/**
 * @module engine-risk — the risk part of `npm run bench:engine` (issue 15): an engine holding
 * 100,000 open isolated margin accounts (longs on btc_usdt that borrowed usdt and bought btc with
 * it), then
 * 1. **moves that cross none**: trades near the price that move the mark (so every one steps the
 *    mark and moves the liquidation index) but reach no account's line, timed per command against
 *    the same commands on an engine with the same book and no margin account (spot: no mark, no
 *    index), interleaved in turns of 10,000 commands;
 * 2. **a move that crosses 1%**: after five quiet minutes (the mark's window empties), one trade at
 *    the price that puts exactly 1% of the accounts at or below their liquidation line, then timer
 *    trades at that price until every liquidation has ended (32 per engine step): the time per
 *    liquidated account (it includes flagging the accounts the move put past their notice line).
 *
 * With `acctType: 2` the same positions are held in **cross** accounts (one per user, valued at
 * the marks through valuation-path.ts): the quiet moves then cost the cross drift bound
 * (src/margin/cross-risk.ts) instead of the isolated index, and the crash its re-valuations.
 *
 * The venue keeps issue 15's median mark (`markRule: 'median'`): this bench measures what a mark
 * move costs the risk step, and moves the mark with lone trades, which issue 29's depth mark by
 * design does not follow (src/margin/depth-mark.ts).
 *
 * Deterministic: the accounts' sizes come from a seeded generator; every command's result is
 * checked, and the liquidation records are counted.
 */
import { performance } from 'node:perf_hooks';
import { MEDIAN_MARK_VENUE } from '../test/fixtures/median-venue.ts';
import { BUY, SELL, type Command, type SequencedCommand, type Side } from '../src/domain/commands.ts';
import { Engine } from '../src/engine/engine.ts';
import { MARKET, sfc32, START_PRICE_TICKS } from './engine-stream.ts';
import { unitPrice, unwindPrice, type CoinPosition } from '../src/margin/lines.ts';
import { DEFAULT_MARGIN_SETTINGS } from '../src/margin/settings.ts';

/** 30,000.00 usdt in ticks (priceScale 2); one lot is 0.0001 btc, one tick × lot one usdt unit. */
const P0 = START_PRICE_TICKS;
const START_TIME_MS = 1_800_000_000_000;
/** Each account's own btc: 0.1 btc (1,000 lots) moved into its isolated account. */
const OWN_BTC_UNITS = 10_000_000;
const OWN_BTC_LOTS = 1_000;

export interface RiskBenchOptions {
  readonly accounts: number;
  /** Timed commands per run of part 1 (each engine). */
  readonly quietCommands: number;
  /** Interleaved runs of part 1. */
  readonly runs: number;
  readonly runGc: () => void;
  /** 1 isolated accounts (the default), 2 cross accounts. */
  readonly acctType?: 1 | 2;
}

export interface RiskBenchFigures {
  readonly accounts: number;
  readonly acctType: 1 | 2;
  readonly setupSeconds: number;
  readonly quiet: {
    readonly commands: number;
    readonly runs: number;
    /** Of 2,000 such commands, how many moved the mark. */
    readonly markMoves: number;
    readonly riskUsPerCommand: number;
    /** The same commands on the same book in a venue with only the makers. */
    readonly spotUsPerCommand: number;
    /** The same commands on the same book in a spot venue of the same users, who bought the same btc with their own usdt. */
    readonly sizedSpotUsPerCommand: number;
    readonly ratio: number;
    readonly ratioSized: number;
  };
  readonly crash: {
    readonly fromTicks: number;
    readonly toTicks: number;
    readonly liquidated: number;
    /** Accounts flagged at the notice line by the move (and not liquidated). */
    readonly flagged: number;
    readonly commands: number;
    readonly firstCommandMs: number;
    readonly totalMs: number;
    readonly usPerLiquidatedAccount: number;
  };
}

/** An engine fed command by command, with sequence and time, that insists on OK. */
class Feed {
  readonly engine = new Engine(MEDIAN_MARK_VENUE);
  seq = 0;
  time = START_TIME_MS;

  at(cmd: Command, advanceMs = 1): SequencedCommand {
    this.time += advanceMs;
    return { ...cmd, seq: ++this.seq, time: this.time } as SequencedCommand;
  }

  must(cmd: Command, advanceMs = 1): number | undefined {
    const s = this.at(cmd, advanceMs);
    const r = this.engine.apply(s);
    if (r.result !== 'OK') throw new Error(`risk bench: ${cmd.type} refused: ${r.result} ${r.message ?? ''}`);
    return r.orderId ?? r.userId;
  }
}

const order = (
  userId: number,
  side: Side,
  kind: 'limit' | 'ioc',
  price: number,
  amount: number,
  acctType: 0 | 1 | 2 = 0,
): Command => ({
  type: 'PlaceOrder',
  userId,
  market: MARKET,
  side,
  kind,
  price,
  amount,
  acctType,
  clientOrderId: '',
});

/**
 * Two market makers (users 1 and 2) and a first trade at P0; with `accounts` > 0, the lending pool
 * and the accounts: each moves 0.1 btc into its isolated btc_usdt account, borrows k × its value
 * in usdt (k from 1 to 3.9, seeded) and buys btc with it from maker 1 at P0.
 */
export function build(accounts: number, acctType: 0 | 1 | 2 = 1): Feed {
  const market = acctType === 1 ? MARKET : '';
  const f = new Feed();
  const mm1 = f.must({ type: 'RegisterUser', name: 'maker1' } as Command) as number;
  const mm2 = f.must({ type: 'RegisterUser', name: 'maker2' } as Command) as number;
  const credit = (userId: number, coin: string, amount: number): void =>
    void f.must({ type: 'CreditDeposit', depositId: `${coin}-${userId}`, userId, coin, amount, remark: '' });
  credit(mm1, 'btc', 1e14);
  credit(mm1, 'usdt', 1e14);
  credit(mm2, 'btc', 1e14);
  credit(mm2, 'usdt', 1e14);
  f.must(order(mm2, BUY, 'limit', P0, 10));
  f.must(order(mm1, SELL, 'ioc', P0, 10));
  // Maker 1 sells what the accounts buy at P0; both makers quote around P0 for part 1.
  f.must(order(mm1, SELL, 'limit', P0, 500_000_000));
  // acctType 0: the same users and the same buys with their own usdt, in spot (a venue of the
  // same size); 1 or 2: in margin accounts, with the difference borrowed from the lending pool.
  if (accounts > 0 && acctType !== 0)
    f.must({
      type: 'FundLendingPool',
      fundingId: 'pool',
      coin: 'usdt',
      amount: 1e15,
      dailyRatePpm: 500,
      days: 30,
    });
  const r = sfc32(20_261_124);
  for (let i = 0; i < accounts; i++) {
    const u = f.must({ type: 'RegisterUser', name: `long${i}` } as Command) as number;
    credit(u, 'btc', OWN_BTC_UNITS);
    const lots = Math.floor(OWN_BTC_LOTS * (1 + r() * 2.9));
    if (acctType === 0) credit(u, 'usdt', lots * P0);
    else {
      const account = { userId: u, acctType, market };
      f.must({ type: 'MarginTransfer', ...account, direction: 'in', coin: 'btc', amount: OWN_BTC_UNITS });
      f.must({ type: 'Borrow', ...account, coin: 'usdt', amount: lots * P0, rollOver: false } as Command);
    }
    f.must(order(u, BUY, 'ioc', P0, lots, acctType));
  }
  return f;
}

/**
 * Part 1's commands: makers 1 and 2 trade two lots at P0 − 3 … P0 − 1 in turn, below maker 1's
 * ask at P0 (no account's line is near: the highest is ≈ 0.86 × P0).
 */
export function quietCommands(f: Feed, n: number): SequencedCommand[] {
  const out: SequencedCommand[] = [];
  for (let i = 0; i < n; i++) {
    const price = P0 - 3 + (i % 3);
    // Maker 2 rests a bid, maker 1 sells into it: one trade per pair; the mark follows the trades.
    out.push(f.at(order(2, BUY, 'limit', price, 2)));
    out.push(f.at(order(1, SELL, 'ioc', price, 2)));
  }
  return out;
}

/** Part 1's turn: commands an engine takes before the next engine's turn. */
const QUIET_CHUNK = 10_000;

/** CPU milliseconds of this thread (steadier than wall time on a shared machine). */
const cpuMs = (): number => {
  const u = process.threadCpuUsage();
  return (u.user + u.system) / 1000;
};

export function timeCommands(engine: Engine, cmds: readonly SequencedCommand[]): number {
  const t0 = cpuMs();
  for (const c of cmds) {
    const r = engine.apply(c);
    if (r.result !== 'OK') throw new Error(`risk bench: ${c.type} refused: ${r.result} ${r.message ?? ''}`);
  }
  return cpuMs() - t0;
}

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};

export function riskBenchmark(o: RiskBenchOptions): RiskBenchFigures {
  let t = performance.now();
  const acctType = o.acctType ?? 1;
  const risk = build(o.accounts, acctType);
  const spot = build(0);
  const sized = build(o.accounts, 0);
  const setupSeconds = (performance.now() - t) / 1000;

  // Part 1, interleaved: the same commands (same seq and time) on the three engines, in turns of
  // QUIET_CHUNK commands (the engine going first rotating), so that what the host does to one
  // engine's time it does to the others' within milliseconds; a run sums each engine's turns.
  const feeds = [risk, spot, sized];
  const ms: number[][] = [[], [], []];
  let markMoves = 0;
  for (let r = 0; r < o.runs; r++) {
    // Each engine takes the run's commands at its own sequence numbers and times.
    const cmds = feeds.map((f) => quietCommands(f, o.quietCommands / 2));
    const sums = [0, 0, 0];
    o.runGc();
    for (let from = 0, turn = r; from < o.quietCommands; from += QUIET_CHUNK, turn++) {
      for (let k = 0; k < feeds.length; k++) {
        const e = (turn + k) % feeds.length;
        const chunk = (cmds[e] as SequencedCommand[]).slice(from, from + QUIET_CHUNK);
        sums[e] = (sums[e] as number) + timeCommands((feeds[e] as Feed).engine, chunk);
      }
    }
    for (let e = 0; e < feeds.length; e++) (ms[e] as number[]).push(sums[e] as number);
  }
  const [riskMs, spotMs, sizedMs] = ms as [number[], number[], number[]];
  // How many of those commands move the mark: counted on a further untimed stretch.
  for (const c of quietCommands(risk, 1_000)) {
    const before = risk.engine.risk.markPrice(MARKET);
    risk.engine.apply(c);
    if (risk.engine.risk.markPrice(MARKET) !== before) markMoves++;
  }
  if (risk.engine.liquidations().length !== 0) throw new Error('risk bench: a quiet move liquidated');
  if (spot.engine.risk.markPrice(MARKET) !== undefined)
    throw new Error('risk bench: the spot engine has a mark');

  // Part 2: the price that puts exactly 1% of the accounts at or below their line.
  const lines: number[] = [];
  for (let u = 3; u < 3 + o.accounts; u++) {
    const w =
      acctType === 1 ? risk.engine.risk.accountRisk(u, MARKET)?.unwindPrice : crossUnwind(risk.engine, u);
    if (w?.side === 'below') lines.push(w.priceTicks);
  }
  lines.sort((a, b) => b - a);
  // Accounts of the same size share a line: the move crosses the 1% and its ties.
  const target = lines[Math.floor(o.accounts / 100) - 1] as number;
  const crossed = lines.filter((l) => l >= target).length;
  // Untimed: maker 2 bids enough at the target for every liquidation's sale (within the band).
  risk.must(order(2, BUY, 'limit', target, 10_000_000));
  const fromTicks = risk.engine.risk.markPrice(MARKET) as number;
  // Timed: five quiet minutes and one trade at the target (the window empties: the mark gaps),
  // then timer ticks until no liquidation runs or waits.
  t = cpuMs();
  const first = risk.engine.apply(risk.at(order(1, SELL, 'ioc', target, 2), 6 * 60_000));
  const firstCommandMs = cpuMs() - t;
  if (first.result !== 'OK') throw new Error(`risk bench: the crash trade was refused: ${first.result}`);
  const deadline = risk.engine.nextDeadline();
  if (deadline !== undefined && deadline <= risk.time + 3_600_000)
    console.log(`  (note: a timer is due at ${deadline - risk.time} ms from the crash)`);
  let commands = 1;
  const running = (): boolean => risk.engine.liquidations().some((l) => l.status === 'running');
  let liquidated = risk.engine.liquidations().length;
  while (liquidated < crossed || running()) {
    // The next commands: more trades at the new price (waiting liquidations begin at any command).
    const r = risk.engine.apply(risk.at(order(1, SELL, 'ioc', target, 2), 1_000));
    if (r.result !== 'OK') throw new Error(`risk bench: a trade after the crash was refused: ${r.result}`);
    commands++;
    const now = risk.engine.liquidations().length;
    if (now === liquidated && !running()) break;
    liquidated = now;
  }
  const totalMs = cpuMs() - t;
  liquidated = risk.engine.liquidations().length;
  if (liquidated !== crossed) throw new Error(`risk bench: ${liquidated} liquidated, expected ${crossed}`);
  risk.engine.assertInvariants();
  let flagged = 0;
  for (let u = 3; u < 3 + o.accounts; u++)
    if (acctType === 1 ? risk.engine.risk.isFlagged(u, MARKET) : risk.engine.risk.crossRisk(u).notice)
      flagged++;
  const us = (ms: number): number => (ms * 1000) / o.quietCommands;
  return {
    accounts: o.accounts,
    acctType,
    setupSeconds,
    quiet: {
      commands: o.quietCommands,
      runs: o.runs,
      markMoves,
      riskUsPerCommand: us(median(riskMs)),
      spotUsPerCommand: us(median(spotMs)),
      sizedSpotUsPerCommand: us(median(sizedMs)),
      ratio: median(riskMs) / median(spotMs),
      ratioSized: median(riskMs) / median(sizedMs),
    },
    crash: {
      fromTicks,
      toTicks: target,
      liquidated,
      flagged,
      commands,
      firstCommandMs,
      totalMs,
      usPerLiquidatedAccount: (totalMs * 1000) / liquidated,
    },
  };
}

/** A cross account holding only btc and usdt: its line on btc_usdt's mark (as an isolated account's). */
function crossUnwind(engine: Engine, userId: number): ReturnType<typeof unwindPrice> {
  const view = engine.margin.account(userId, 2, '');
  const pos = (coin: string): CoinPosition => {
    const c = view?.coins.find((x) => x.coin === coin);
    return {
      coin,
      available: c?.available ?? 0,
      frozen: c?.frozen ?? 0,
      principal: c?.borrowed ?? 0,
      interest: c?.interest ?? 0,
    };
  };
  const m = engine.market(MARKET);
  const btc = engine.coin('btc');
  const usdt = engine.coin('usdt');
  if (m === undefined || btc === undefined || usdt === undefined) return undefined;
  const perTick = unitPrice(1, m.priceScale, btc.unitDecimal, usdt.unitDecimal);
  return unwindPrice(pos('btc'), pos('usdt'), DEFAULT_MARGIN_SETTINGS, perTick);
}
