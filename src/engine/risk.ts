/**
 * @module engine/risk — issue 15's risk side wired into the engine: the mark price of every market
 * where something is owed, the liquidation index of the isolated margin accounts with their notice flags, and forced
 * liquidation with the insurance fund and bad debt, all inside the engine step that moved the
 * price. The rules are the pure modules' (src/margin/mark-price.ts, liquidation-index.ts,
 * liquidation.ts); this module only feeds them and carries out what they decide, through a small
 * interface to matching and margin (`RiskHooks`).
 *
 * ## Active markets: the cost where nothing is owed is nothing
 * A market is **active** while an isolated account owes something there or a liquidation runs
 * there (`ActiveMarkets`). Only active markets take mark steps. Under the median rule only they
 * have a mark: the first account to owe something starts the market's mark from its last trade
 * (one trade in the window at that command's time) and its book; when the last debt there is gone
 * the mark is dropped (so a spot-only venue's snapshot and state hash are what they were before
 * issue 15). Under the depth rule (the default venue's) a market's mark does not depend on whether
 * anything is owed there: settlement feeds an inactive market's mark with each trade directly
 * (`MarketState.idleMark`, one `DepthMark.take` per trade, no step), activation takes it over as
 * the running mark and deactivation hands it back; it is in the snapshot either way. With no
 * active market, no account changed and nothing queued, `afterCommand` returns at once.
 * Settlement collects the trades of active markets for their steps (`MarketState.stepTrades`);
 * the risk step reads no event.
 *
 * ## After every command (`afterCommand`), in this order
 * 1. **Marks.** Every active market takes one mark step: the trades since its last step with the
 *    command's time, the best bid and ask now (a step whose inputs did not change is a memo).
 *    Markets in index order. Everything read is journaled, so a replay computes the same marks;
 *    the marks' windows are in the snapshot (so in the state hash). A quiet move costs little:
 *    with no liquidation running or waiting, the step keeps the window (L and A) and the book and
 *    leaves the mark to be computed when read (`MarkPrice.advance`); the mark lies between L and
 *    A, so while both lie strictly inside the market's quiet interval (no trigger of its index, no
 *    cross account's bound there, cached by their versions) steps 2–4 have nothing of it to do.
 *    When, besides, nothing changed in a margin account and every trade in the window and of the
 *    command lies inside that interval, the whole step is deferred (`#defers`): the trades wait in
 *    `StepTrades` with their times and the next step taken, or a read (`#sync`), takes them.
 * 2. **Index.** Every isolated account whose balances or debts changed in the command (the ledger
 *    tracks them: fills, transfers, borrows, repayments, interest) gets its triggers re-computed
 *    at the market's mark, unless it is locked by a running liquidation.
 * 3. **Moves.** Each market whose mark changed moves its index: flags set and cleared, accounts
 *    at or below the liquidation line queued (`LiquidationQueue`, lowest risk rate first).
 * 4. **Liquidations.** Running liquidations continue (oldest first) and queued ones begin, at most
 *    `maxPerStep` per command in all: cancel the account's orders, lock it (status 3), one IOC order
 *    within the band without trading fee, settle (repay, insurance, bad debt, fee, status 4). What a
 *    liquidation's trades do to the marks is taken in again (steps 1–3) while the budget lasts:
 *    that is the cascade, bounded per step. What is left waits for the next command that moves a
 *    mark, brings liquidity inside a running isolated liquidation's band, or fires the timers —
 *    a running liquidation's own retry deadline among them (`nextDeadline`, issue 29).
 *
 * Locked accounts (`isLocked`): the engine refuses their owner's orders, transfers, borrows and
 * repayments on them until the liquidation ends (`repayLock`).
 */
import { BUY, SELL, type SequencedCommand } from '../domain/commands.ts';
import type { CoinUnits, PriceTicks } from '../domain/money.ts';
import {
  LiquidationIndex,
  NOTHING_CROSSED,
  triggersAt,
  type Crossed,
  type IndexEntry,
} from '../margin/liquidation-index.ts';
import {
  DEFAULT_LIQUIDATION_SETTINGS,
  LiquidationQueue,
  Liquidations,
  stepPlan,
  type LiquidationMarket,
  type LiquidationOrder,
  type LiquidationRecord,
  type LiquidationsSnapshot,
} from '../margin/liquidation.ts';
import {
  riskRateBp,
  unitPrice,
  unwindPrice,
  valuateIsolated,
  type CoinPosition,
  type Ratio,
} from '../margin/lines.ts';
import type { LoanBook, RepaymentRecord } from '../margin/loans.ts';
import { DepthMark, depthMarkSettings, depthTickLots, type DepthMarkSnapshot } from '../margin/depth-mark.ts';
import { MarkPrice, StepTrades, type MarkPriceSnapshot } from '../margin/mark-price.ts';
import type { MarkRule, VenueSettings } from '../domain/specs.ts';
import { accountKey, type AccountRef, type Effects } from '../margin/movement.ts';
import { DEFAULT_MARGIN_SETTINGS } from '../margin/settings.ts';
import { refused, type CommandContext } from './command-context.ts';
import type { ApplyResult } from './results.ts';
import type { Margin } from './margin.ts';
import type { Matching } from './matching.ts';
import {
  claimAccountSlot,
  cross,
  INSURANCE,
  isolated,
  system,
  TouchedAccounts,
  type Ledger,
  type LedgerAccount,
} from './ledger.ts';
import type { CoinState, MarketState, Registry } from './registry.ts';
import { ActiveMarkets } from './risk-markets.ts';
import { CrossAccounts, type CrossRisk } from './risk-cross.ts';

/** An isolated account's entry in its market's liquidation index, once the risk step made it: on the account, this module's alone. */
const INDEX_ENTRY = claimAccountSlot<IndexEntry>('the liquidation index entry (risk.ts)');

/** What the risk module needs of matching and margin. */
export interface RiskHooks {
  /** The current loan book (margin's; replaced when a snapshot loads). */
  loanBook(): LoanBook;
  /** Applies ledger effects as margin applies its own (bills, debts, interest totals). */
  applyEffects(e: Effects): void;
  /** Cancels every resting order held in the account. */
  cancelAccountOrders(account: LedgerAccount): void;
  /**
   * Sends an IOC order without trading fee from the account, after cancelling the owner's resting
   * orders in the market that it could reach (self-trade prevention); returns the lots filled.
   */
  liquidationOrder(
    account: LedgerAccount,
    market: MarketState,
    side: 'buy' | 'sell',
    price: PriceTicks,
    lots: number,
  ): number;
  /** What auto-repayment owes the fills of a liquidation order's makers. */
  afterOrder(): void;
  /** Lists a liquidation's repayments with the account's others (getRepayments, getCrossRepayRecords). */
  recordRepayments(repayments: readonly RepaymentRecord[]): void;
}

/** The risk side's part of a snapshot: marks, notice flags, liquidation records, the queue. */
export interface RiskSnapshot {
  /** [market, mark window] for the markets that ever traded, by name (the venue's `markRule`'s). */
  readonly marks: [string, MarkPriceSnapshot | DepthMarkSnapshot][];
  /** [market, flagged account keys] where any is flagged, by name. */
  readonly flags: [string, string[]][];
  readonly liquidations: LiquidationsSnapshot;
  readonly queue: { account: AccountRef; riskRateBp: number }[];
  /** Cross accounts flagged at the notice line, by user id; absent when none. */
  readonly crossFlags?: number[];
}

/** The operator's and the owner's reads of the risk side. */
export interface RiskView {
  /** A market's mark price in ticks while it is active (something is owed there), else `undefined`. */
  markPrice(market: string): PriceTicks | undefined;
  /**
   * A market's mark whether or not anything is owed there: under the depth rule every traded
   * market's (the idle mark where nothing is owed); under the median rule `markPrice`'s.
   */
  runningMark(market: string): PriceTicks | undefined;
  /** Whether an isolated account is at or past its notice line (the flag, with its hysteresis). */
  isFlagged(userId: number, market: string): boolean;
  /** Whether an isolated account is locked by a running liquidation (`repayLock`). */
  isLocked(userId: number, market: string): boolean;
  /** Liquidation records, oldest first; of one user's accounts when `userId` is given. */
  liquidations(userId?: number): LiquidationRecord[];
  /** The risk fields of an isolated account for the margin answers; undefined for an unknown market. */
  accountRisk(userId: number, market: string): IsolatedRisk | undefined;
  /** The risk fields of a user's cross account (flag, lock, level, risk rate at the marks). */
  crossRisk(userId: number): CrossRisk;
}

/**
 * What `getLeverAssetsInfo` shows of the risk side (issue 15): `riskRate` from `riskRateBp`,
 * `unwindPrice` from `unwindPrice`, `repayLock`, and `level` (1 normal, 2 flagged at the notice
 * line, 3 locked for liquidation).
 */
export interface IsolatedRisk {
  /** The market's mark price in ticks; undefined before its first trade. */
  readonly markPrice: PriceTicks | undefined;
  /** Assets ÷ debt at the mark price, basis points rounded down; undefined without debt or mark. */
  readonly riskRateBp: number | undefined;
  /** The mark at or beyond which the account reaches the liquidation line (1.08); undefined: none. */
  readonly unwindPrice: { side: 'below' | 'above'; priceTicks: PriceTicks } | undefined;
  /** Flagged at the notice line (1.13; cleared above 1.15). */
  readonly notice: boolean;
  /** Locked by a running liquidation. */
  readonly repayLock: boolean;
  readonly level: 1 | 2 | 3;
}

/**
 * A market's quiet interval (`Risk.#quiet`): (lo, hi) with the versions of its index and of the
 * cross bound it was computed from (-2: never), in one object so that the check after every
 * command reads one cache line.
 */
interface QuietInterval {
  lo: number;
  hi: number;
  indexAt: number;
  crossAt: number;
  /**
   * The market's window (and its `StepTrades`) was found strictly inside (lo, hi), and those
   * trades' bounds were set to it: `afterCommand` may defer the market's steps.
   */
  ok: boolean;
}

/** A start mark `Risk.limitMark` computed, with what it was computed from (a memo, not state). */
interface StartMarkMemo {
  readonly time: number;
  readonly last: PriceTicks;
  readonly bid: PriceTicks | undefined;
  readonly ask: PriceTicks | undefined;
  readonly mark: PriceTicks | undefined;
}

/** A market's mark under either rule (`VenueSettings.markRule`). */
type Mark = MarkPrice | DepthMark;

/** The venue's mark rule (`VenueSettings.markRule`; absent: issue 15's median); throws on another value. */
export function markRuleOf(settings: VenueSettings): MarkRule {
  const rule = settings.markRule;
  if (rule === undefined) return 'median';
  if (rule !== 'depth' && rule !== 'median')
    throw new Error(`invalid setting markRule ${String(rule)}: 'depth' or 'median'`);
  return rule;
}

/** Trades of one market a deferred step may hold (more: the step is taken). */
const MAX_DEFERRED_TRADES = 64;

export class Risk implements RiskView {
  readonly #ctx: CommandContext;
  readonly #ledger: Ledger;
  readonly #registry: Registry;
  readonly #hooks: RiskHooks;
  /** By market index. */
  readonly #marks: (Mark | undefined)[] = [];
  /** The venue's mark rule: `median` (mark-price.ts) unless the venue asks for `depth` (depth-mark.ts). */
  readonly #markRule: MarkRule;
  readonly #indexes: LiquidationIndex[] = [];
  /** Markets where an isolated account owes something or a liquidation runs: the only ones marked. */
  readonly #active = new ActiveMarkets();
  /** By market index: the value of one base unit at one tick, and the spec it was computed for. */
  readonly #perTicks: ({ spec: MarketState['spec']; perTick: Ratio } | undefined)[] = [];
  #liquidations: Liquidations;
  #queue = new LiquidationQueue();
  /** Cross accounts: valuation at the marks, flags, their liquidations (risk-cross.ts). */
  #cross: CrossAccounts;
  /** While a snapshot loads: markets a cross account depends on become active with the snapshot's mark. */
  #loading = false;
  /** Counts every mark set, started or dropped (the cross side caches prices per version). */
  #marksVersion = 0;
  /** The markets whose mark moved in the last `#takeMarks` (its first entries; reused). */
  readonly #moved: MarketState[] = [];
  /**
   * By market index, the quiet interval (lo, hi): a mark strictly inside crosses no trigger of
   * the market's index and reaches no cross account's bound there; kept with the versions of the
   * index and of the bound it was computed from.
   */
  readonly #quietOf: (QuietInterval | undefined)[] = [];
  /**
   * Commands since the last mark step whose steps were deferred (`afterCommand`), and the time of
   * the last of them: `#sync` takes the step at that time before anything reads a mark.
   */
  #deferred = false;
  #deferredAt = 0;
  /** By market index: the last start mark `limitMark` computed for an inactive market, with its inputs. */
  readonly #startMarks: (StartMarkMemo | undefined)[] = [];
  /** How many of the registry's markets have their idle mark (`#feedNewMarkets`, the depth rule). */
  #fed = 0;

  constructor(
    ctx: CommandContext,
    ledger: Ledger,
    registry: Registry,
    hooks: RiskHooks,
    markRule: MarkRule = 'median',
  ) {
    this.#ctx = ctx;
    this.#markRule = markRule;
    this.#ledger = ledger;
    this.#registry = registry;
    this.#hooks = hooks;
    this.#liquidations = new Liquidations(hooks.loanBook(), DEFAULT_LIQUIDATION_SETTINGS);
    this.#cross = this.#newCross([]);
    ledger.touched = new TouchedAccounts();
    this.#feedNewMarkets();
  }

  /**
   * Under the depth rule every market's mark is fed by every trade, whether anything is owed
   * there or not (issue 29: a market's mark must not depend on it, or a lone print just before
   * the first borrow would be the mark the borrow is valued at). An inactive market's mark is its
   * `idleMark`, which settlement feeds; a market that has none yet (new, or loaded from a snapshot
   * without its mark) gets one here, started from its last trade price when it has one.
   */
  #feedNewMarkets(): void {
    const markets = this.#registry.marketStates();
    if (this.#markRule === 'depth')
      for (let i = this.#fed; i < markets.length; i++) {
        const m = markets[i] as MarketState;
        if (this.#active.has(i) || m.idleMark !== undefined) continue;
        const mp = this.#newMark(m) as DepthMark;
        if (m.lastPrice > 0) mp.seed(m.lastPrice);
        m.idleMark = mp;
      }
    this.#fed = markets.length;
  }

  #newCross(flagged: readonly number[]): CrossAccounts {
    const ctx = this.#ctx;
    return new CrossAccounts(
      this.#ledger,
      this.#registry,
      {
        mark: (m) => this.#marks[m.index]?.mark,
        marksVersion: () => this.#marksVersion,
        activate: (m) => {
          if (this.#active.has(m.index)) return;
          if (!this.#loading) this.#activate(m);
          else {
            this.#active.add(m.index);
            m.stepTrades = new StepTrades();
          }
        },
        release: (m) => {
          if (!this.#loading) this.#deactivateIfIdle(m);
        },
        queue: (ref, rr) => {
          if (!this.#liquidations.isLocked(ref)) this.#queue.add(ref, rr);
        },
        liquidations: () => this.#liquidations,
        market: (m) => this.#market(m),
        hooks: this.#hooks,
        get time() {
          return ctx.time;
        },
      },
      flagged,
    );
  }

  #mark(m: MarketState): Mark {
    let mp = this.#marks[m.index];
    if (mp === undefined) this.#marks[m.index] = mp = this.#newMark(m);
    return mp;
  }

  /**
   * A fresh mark of market `m` under the venue's rule (restored from `snap`): issue 29's window
   * holds 2,000 minimum order values of the market (`depthTickLots`).
   */
  #newMark(m: MarketState, snap?: MarkPriceSnapshot | DepthMarkSnapshot): Mark {
    if (this.#markRule !== 'depth') return new MarkPrice(undefined, snap as MarkPriceSnapshot | undefined);
    const settings = depthMarkSettings(depthTickLots(m.spec.minSize, m.quoteUnitsPerTickLot));
    return new DepthMark(settings, snap as DepthMarkSnapshot | undefined);
  }

  #index(m: MarketState): LiquidationIndex {
    let ix = this.#indexes[m.index];
    if (ix === undefined) this.#indexes[m.index] = ix = new LiquidationIndex();
    return ix;
  }

  // ───────────────────────────── after every command ─────────────────────────────

  /** Runs steps 1–4 of the module comment. `timers`: the command was FireTimers. */
  afterCommand(timers: boolean): void {
    // A market the command listed gets its idle mark before its first trade.
    if (this.#fed !== this.#registry.marketStates().length) this.#feedNewMarkets();
    // Nothing owed anywhere, nothing changed in an isolated account, nothing waiting: no work (a
    // small method, so that the engine's call inlines it; the step is `#step`).
    if (this.#active.count === 0 && this.#ledger.touched?.size === 0 && this.#queue.size === 0) return;
    if (!timers && this.#defers()) {
      this.#deferred = true;
      this.#deferredAt = this.#ctx.time;
      return;
    }
    this.#step(timers);
  }

  /**
   * Whether this command's step can be deferred: nothing changed in a margin account, nothing
   * waits or runs, and in every active market L, the window and the trades since lie strictly
   * inside the quiet interval. Then every mark this command can have made lies there too (the
   * median lies between L and A, whatever the book), so the step would only take the window and
   * the book and find nothing to do: the window's trades wait in `StepTrades` with their times,
   * and the book, which nothing changes before the next step, is read then (`#sync`, `#takeMarks`).
   */
  #defers(): boolean {
    if (this.#ledger.touched?.size !== 0 || this.#queue.size !== 0 || this.#liquidations.busy) return false;
    const markets = this.#registry.marketStates();
    const list = this.#active.indexes();
    for (let k = 0; k < list.length; k++) {
      const i = list[k] as number;
      const m = markets[i] as MarketState;
      const st = m.stepTrades as StepTrades;
      const mp = this.#marks[i];
      if (st.outside || st.count >= MAX_DEFERRED_TRADES || mp?.last === undefined) return false;
      const q = this.#interval(m);
      if (!q.ok) {
        if (!mp.within(q.lo, q.hi) || !st.within(q.lo, q.hi)) return false;
        q.ok = true;
        st.lo = q.lo;
        st.hi = q.hi;
      }
    }
    return true;
  }

  /**
   * Takes the deferred steps' mark step (at the last deferred command's time, with the book now,
   * which is that step's: only steps and commands change it) before a read of a mark.
   */
  #sync(): void {
    if (!this.#deferred) return;
    this.#deferred = false;
    const markets = this.#registry.marketStates();
    for (const i of this.#active.indexes()) {
      const m = markets[i] as MarketState;
      if (this.#advance(m, this.#mark(m), this.#deferredAt)) this.#marksVersion++;
    }
  }

  /**
   * One mark step of market `m` at `time`: the trades settlement collected since its last step
   * (then cleared) and its book now (`MarkPrice.advance`); whether anything changed. A trade
   * collected outside the quiet interval is in the window now: the window is checked again
   * before a step is deferred (`#defers`).
   */
  #advance(m: MarketState, mp: Mark, time: number): boolean {
    const trades = m.stepTrades as StepTrades;
    const changed =
      mp instanceof DepthMark
        ? mp.advance(trades.prices, trades.lots, trades.count)
        : mp.advance(
            time,
            trades.prices,
            trades.times,
            trades.count,
            m.book.bids.best()?.price,
            m.book.asks.best()?.price,
          );
    trades.count = 0;
    if (trades.outside) {
      trades.outside = false;
      const q = this.#quietOf[m.index];
      if (q !== undefined) q.ok = false;
    }
    return changed;
  }

  #step(timers: boolean): void {
    let moved = this.#takeMarks();
    this.#takeAccounts();
    this.#moveAll(moved);
    // Running liquidations continue when a price moved, the timers fired (their own retry deadline
    // among them) or the book now holds something inside one's band; new ones at once.
    if (this.#queue.size === 0 && !this.#liquidations.busy) return;
    let budget = this.#liquidations.settings.maxPerStep;
    let go = timers || moved > 0 || this.#queue.size > 0 || this.#liquidityInBand();
    while (go && budget > 0 && (this.#liquidations.busy || this.#queue.size > 0)) {
      budget -= this.#runLiquidations(budget);
      moved = this.#takeMarks();
      this.#takeAccounts();
      this.#moveAll(moved);
      go = moved > 0 || this.#queue.size > 0;
    }
  }

  /**
   * Whether a running isolated liquidation's order would trade now: the book has something inside
   * its band (issue 29: liquidity that enters the band is taken in the command that brings it, not
   * only at the next mark move); a cross one's likewise (`CrossAccounts.inBand`).
   */
  #liquidityInBand(): boolean {
    if (!this.#liquidations.busy) return false;
    for (const r of this.#liquidations.running()) {
      if (r.account.kind === 'cross') {
        if (this.#cross.inBand(r.account)) return true;
        continue;
      }
      if (r.account.kind !== 'isolated') continue;
      const m = this.#registry.market(r.account.market) as MarketState;
      const mark = this.#marks[m.index]?.mark;
      const a = this.#ledger.account(r.account);
      if (mark === undefined || a === undefined) continue;
      const [base, quote] = this.#positions(a, m);
      if (this.#inBand(m, this.#liquidations.nextOrder(this.#market(m), base, quote, mark))) return true;
    }
    return false;
  }

  /** Whether the book has something the order can trade against (inside its limit). */
  #inBand(m: MarketState, order: LiquidationOrder | undefined): order is LiquidationOrder {
    if (order === undefined) return false;
    const best = (order.side === 'sell' ? m.book.bids : m.book.asks).best()?.price;
    return (
      best !== undefined && (order.side === 'sell' ? best >= order.priceTicks : best <= order.priceTicks)
    );
  }

  /**
   * The earliest retry deadline of a running liquidation (`retryMs` after it was last taken up),
   * or `undefined`: the scheduler fires the timers then, and the liquidation goes on.
   */
  nextDeadline(): number | undefined {
    return this.#liquidations.busy ? this.#liquidations.nextRetry() : undefined;
  }

  /**
   * Step 1: every active market (`ActiveMarkets`) takes one mark step with the trades settlement
   * collected for it since the last step (`MarketState.stepTrades`), its book now and the command's
   * time; leaves the markets whose mark changed in `#moved` and returns how many. Reads no event
   * and allocates nothing.
   */
  #takeMarks(): number {
    const active = this.#active;
    // The deferred steps' trades are in `StepTrades` with their times: this step takes them.
    this.#deferred = false;
    if (active.count === 0) return 0;
    const markets = this.#registry.marketStates();
    const time = this.#ctx.time;
    const moved = this.#moved;
    // With no liquidation running or waiting, a market whose new mark can only lie between L and
    // A (`MarkPrice.advance`), inside its quiet interval, is left with its mark uncomputed: no
    // trigger or bound lies there, so nothing else happens in this step, and a read later computes
    // the same mark from the same window and book.
    const lazy = this.#queue.size === 0 && !this.#liquidations.busy;
    let count = 0;
    const list = active.indexes();
    for (let k = 0; k < list.length; k++) {
      const i = list[k] as number;
      const m = markets[i] as MarketState;
      const mp = this.#mark(m);
      // The lazy way needs a mark before the step (the first mark re-values every cross account).
      const lazyHere = lazy && mp.last !== undefined;
      const before = lazyHere ? undefined : mp.mark;
      if (!this.#advance(m, mp, time)) continue;
      if (lazyHere) {
        this.#marksVersion++;
        if (this.#quiet(m, mp.last as number, mp.average as number)) continue;
        // A trigger or a bound may lie in between: the exact mark, taken as a move (at a mark
        // where nothing changed, a move finds nothing: every trigger holding there was handled
        // when it began to hold).
        const mark = mp.mark as number;
        moved[count++] = m;
        this.#cross.drift(m, mark, mark);
        continue;
      }
      const after = mp.mark;
      if (after !== undefined && after !== before) {
        this.#marksVersion++;
        moved[count++] = m;
        this.#cross.drift(m, before, after);
      }
    }
    return count;
  }

  /**
   * Whether every mark between `l` and `a` lies strictly inside market `m`'s quiet interval,
   * recomputed when its index or cross bound changed since.
   */
  #quiet(m: MarketState, l: number, a: number): boolean {
    const q = this.#interval(m);
    return q.lo < Math.min(l, a) && Math.max(l, a) < q.hi;
  }

  /** Market `m`'s quiet interval, recomputed when its index or cross bound changed since. */
  #interval(m: MarketState): QuietInterval {
    const i = m.index;
    const ix = this.#indexes[i];
    const ixAt = ix?.version ?? 0;
    const crossAt = this.#cross.edgesVersion(m);
    let q = this.#quietOf[i];
    if (q === undefined) this.#quietOf[i] = q = { lo: 0, hi: 0, indexAt: -2, crossAt: -2, ok: false };
    if (q.indexAt !== ixAt || q.crossAt !== crossAt) {
      q.lo = Math.max(ix?.lowEdge() ?? -Infinity, this.#cross.lowEdge(m));
      q.hi = Math.min(ix?.highEdge() ?? Infinity, this.#cross.highEdge(m));
      q.indexAt = ixAt;
      q.crossAt = crossAt;
      q.ok = false;
    }
    return q;
  }

  /** Step 3 for the first `count` markets of `#moved` (and each that still has a mark). */
  #moveAll(count: number): void {
    if (count === 0) return;
    const moved = this.#moved;
    for (let k = 0; k < count; k++) {
      const m = moved[k] as MarketState;
      const mark = this.#marks[m.index]?.mark;
      if (mark !== undefined) this.#queueCrossed(m, this.#index(m).move(mark));
    }
    this.#cross.revalue();
  }

  /** Step 2: re-indexes the isolated accounts the ledger saw change. */
  #takeAccounts(): void {
    const touched = this.#ledger.touched as TouchedAccounts;
    if (touched.size === 0) return;
    for (let k = 0; k < touched.length; k++) {
      const a = touched.at(k);
      if (a === undefined) continue;
      if (a.kind === 'cross') this.#cross.account(a);
      if (a.kind !== 'isolated' || (this.#liquidations.busy && this.#liquidations.isLocked(a.key))) continue;
      const m = this.#registry.market((a.key as Extract<AccountRef, { kind: 'isolated' }>).market);
      if (m === undefined) continue;
      this.#queueCrossed(m, this.#reindex(a, m));
    }
    touched.clear();
  }

  /**
   * The account's triggers at its market's mark. The first account to owe something in a market
   * makes it active (its mark starts from the last trade and the book: `#activate`); the last to
   * leave, with no liquidation running there, makes it inactive (its mark is dropped).
   */
  #reindex(a: LedgerAccount, m: MarketState, activate = true): Crossed {
    const b = m.base.index;
    const q = m.quote.index;
    const triggers = triggersAt(
      a.available(b) + a.frozen(b),
      a.owed(b),
      a.available(q) + a.frozen(q),
      a.owed(q),
      DEFAULT_MARGIN_SETTINGS,
      this.#perTick(m),
    );
    if (activate && triggers !== undefined && !this.#active.has(m.index)) this.#activate(m);
    const ix = this.#index(m);
    let e = INDEX_ENTRY.get(a);
    if (e?.index !== ix) INDEX_ENTRY.set(a, (e = ix.entry(a.name)));
    const crossed = ix.updateEntry(e, triggers, this.#marks[m.index]?.mark);
    if (activate && ix.size === 0 && this.#active.has(m.index)) this.#deactivateIfIdle(m);
    return crossed;
  }

  /**
   * A market becomes active. Under the depth rule its mark is the running one every trade fed
   * (`MarketState.idleMark`); under the median rule it starts afresh from the market's last trade
   * (one trade in the window at this command's time) and its book, as if that trade had just
   * happened. Before the market's first trade it has no mark until then. All of it is journaled
   * state, so a replay agrees.
   */
  #activate(m: MarketState): void {
    this.#active.add(m.index);
    this.#marksVersion++;
    this.#quietOf[m.index] = undefined;
    m.stepTrades = new StepTrades();
    const idle = m.idleMark;
    m.idleMark = undefined;
    this.#marks[m.index] = idle ?? this.#startMark(m);
  }

  /**
   * The mark a market starts with when it becomes active now (`#activate`) without a running
   * mark: from its last trade (the median rule: one trade in the window at this command's time,
   * and its book; the depth rule, for a market without an idle mark: the last price as a full
   * window); no mark before its first trade.
   */
  #startMark(m: MarketState): Mark {
    const mp = this.#newMark(m);
    if (mp instanceof DepthMark) {
      if (m.lastPrice > 0) mp.seed(m.lastPrice);
    } else if (m.lastPrice > 0)
      mp.step({
        timeMs: this.#ctx.time,
        trades: [m.lastPrice],
        bestBid: m.book.bids.best()?.price,
        bestAsk: m.book.asks.best()?.price,
      });
    return mp;
  }

  /**
   * Drops a market's mark once no account owes anything there and no liquidation runs there; under
   * the depth rule the mark, with the trades collected for it, goes on as the idle mark.
   */
  #deactivateIfIdle(m: MarketState): void {
    if ((this.#indexes[m.index]?.size ?? 0) > 0 || this.#cross.uses(m)) return;
    if (this.#liquidations.running().some((r) => r.market === m.spec.name)) return;
    this.#active.delete(m.index);
    this.#marksVersion++;
    this.#quietOf[m.index] = undefined;
    const mp = this.#marks[m.index];
    const st = m.stepTrades;
    if (mp instanceof DepthMark) {
      if (st !== undefined) mp.advance(st.prices, st.lots, st.count);
      m.idleMark = mp;
    }
    this.#marks[m.index] = undefined;
    m.stepTrades = undefined;
  }

  /** Step 3: queues the accounts at or below the liquidation line (flags are the index's). */
  #queueCrossed(m: MarketState, crossed: Crossed): void {
    if (crossed === NOTHING_CROSSED || crossed.liquidate.length === 0) return;
    const mark = this.#marks[m.index]?.mark as number;
    for (const key of crossed.liquidate) {
      const [, userId] = key.split(':');
      const ref = isolated(Number(userId), m.spec.name);
      const a = this.#ledger.account(ref);
      if (a === undefined || this.#liquidations.isLocked(ref)) continue;
      const [base, quote] = this.#positions(a, m);
      const rr = riskRateBp(valuateIsolated(base, quote, this.#basePrice(m, mark))) ?? 0;
      this.#queue.add(ref, rr);
    }
  }

  /** Step 4: continues and begins liquidations within `budget`; returns how many it handled. */
  #runLiquidations(budget: number): number {
    const s = this.#liquidations.settings;
    const plan = stepPlan(this.#liquidations, this.#queue);
    const cont = plan.continueRecords.slice(0, budget);
    const begin = plan.begin.slice(0, Math.max(0, Math.min(budget, s.maxPerStep) - cont.length));
    // Accounts taken beyond the budget go back to wait.
    for (const w of plan.begin.slice(begin.length)) this.#queue.add(w.account, w.riskRateBp);
    for (const r of cont) this.#continue(r.account);
    for (const w of begin) this.#begin(w.account, w.riskRateBp);
    return cont.length + begin.length;
  }

  #begin(ref: AccountRef, riskRateBpAtStart: number): void {
    if (ref.kind === 'cross') this.#cross.begin(ref, riskRateBpAtStart);
    if (ref.kind !== 'isolated') return;
    const m = this.#registry.market(ref.market) as MarketState;
    const mark = this.#marks[m.index]?.mark;
    const a = this.#ledger.account(ref);
    if (mark === undefined || a === undefined) return;
    this.#index(m).remove(accountKey(ref));
    this.#hooks.cancelAccountOrders(a);
    const b = this.#liquidations.begin(ref, this.#market(m), mark, riskRateBpAtStart, this.#ctx.time);
    this.#hooks.applyEffects(b.effects);
    this.#continue(ref);
  }

  /** One order within the band, then settle; when done the account is indexed again. */
  #continue(ref: AccountRef): void {
    if (ref.kind === 'cross') this.#cross.continue(ref);
    if (ref.kind !== 'isolated') return;
    const m = this.#registry.market(ref.market) as MarketState;
    const mark = this.#marks[m.index]?.mark as number;
    const a = this.#ledger.account(ref) as LedgerAccount;
    const lm = this.#market(m);
    const [base, quote] = this.#positions(a, m);
    const order = this.#liquidations.nextOrder(lm, base, quote, mark);
    // Sent only when the book has something inside the band: an order that cannot trade is no step.
    if (this.#inBand(m, order)) {
      const lots = order.amount / m.baseUnitsPerLot;
      const filled = this.#hooks.liquidationOrder(a, m, order.side, order.priceTicks, lots);
      this.#liquidations.recordOrder(ref, order, filled * m.baseUnitsPerLot, this.#ctx.time);
    }
    const [base2, quote2] = this.#positions(a, m);
    const ins = this.#ledger.account(system(INSURANCE));
    const settled = this.#liquidations.settle(
      ref,
      lm,
      base2,
      quote2,
      mark,
      (coin) => ins?.available((this.#registry.coin(coin) as CoinState).index) ?? 0,
      this.#ctx.time,
    );
    this.#hooks.applyEffects(settled.effects);
    this.#hooks.recordRepayments(settled.repayments);
    this.#hooks.afterOrder();
    if (settled.done) {
      this.#ledger.touched?.delete(a);
      this.#queueCrossed(m, this.#reindex(a, m));
    } else this.#ledger.touched?.delete(a);
  }

  // ───────────────────────────── the lock ─────────────────────────────

  /**
   * An isolated account locked by a running liquidation (`repayLock`) takes no order, transfer,
   * borrow or repayment of its owner until the liquidation ends: the refusal, or `undefined`.
   */
  lockedRefusal(cmd: SequencedCommand): ApplyResult | undefined {
    return this.#liquidations.busy ? this.#lockedRefusal(cmd) : undefined;
  }

  #lockedRefusal(cmd: SequencedCommand): ApplyResult | undefined {
    let market: string | undefined;
    switch (cmd.type) {
      case 'PlaceOrder':
      case 'PlaceOrderBatch':
      case 'MarginTransfer':
      case 'Borrow':
      case 'RepayAll':
        if (cmd.acctType === 1) market = cmd.market;
        else if (cmd.acctType === 2) market = '';
        break;
      case 'RepayLoan': {
        const b = this.#hooks.loanBook().loan(cmd.loanId)?.borrower;
        if (b?.kind === 'isolated' && b.userId === cmd.userId) market = b.market;
        else if (b?.kind === 'cross' && b.userId === cmd.userId) market = '';
        break;
      }
      default:
        return undefined;
    }
    if (market === '') {
      if (!this.#liquidations.isLocked(cross(cmd.userId))) return undefined;
      return refused('INVALID_STATE', 'the cross account is locked by its liquidation (repayLock)');
    }
    if (market === undefined || !this.isLocked(cmd.userId, market)) return undefined;
    return refused(
      'INVALID_STATE',
      `the isolated ${market} account is locked by its liquidation (repayLock)`,
    );
  }

  // ───────────────────────────── helpers ─────────────────────────────

  #positions(a: LedgerAccount, m: MarketState): [CoinPosition, CoinPosition] {
    const pos = (c: CoinState): CoinPosition => ({
      coin: c.spec.name,
      available: a.available(c.index),
      frozen: a.frozen(c.index),
      principal: a.borrowed(c.index),
      interest: a.interest(c.index),
    });
    return [pos(m.base), pos(m.quote)];
  }

  #perTick(m: MarketState): Ratio {
    let c = this.#perTicks[m.index];
    if (c === undefined || c.spec !== m.spec)
      this.#perTicks[m.index] = c = {
        spec: m.spec,
        perTick: unitPrice(1, m.spec.priceScale, m.base.spec.unitDecimal, m.quote.spec.unitDecimal),
      };
    return c.perTick;
  }

  #basePrice(m: MarketState, mark: PriceTicks): ReturnType<typeof unitPrice> {
    return unitPrice(mark, m.spec.priceScale, m.base.spec.unitDecimal, m.quote.spec.unitDecimal);
  }

  #market(m: MarketState): LiquidationMarket {
    return {
      name: m.spec.name,
      base: m.base.spec.name,
      quote: m.quote.spec.name,
      perTick: this.#perTick(m),
      lotUnits: m.baseUnitsPerLot,
    };
  }

  // ───────────────────────────── reads ─────────────────────────────

  /**
   * The mark every margin limit reads (src/engine/limit-prices.ts): the market's mark while it is
   * active; otherwise, under the depth rule, its running idle mark, and under the median rule the
   * mark it would start with if it became active now (`#startMark`): either way the mark the risk
   * step values the account at once a borrow makes it owe something there. Undefined before the
   * market's first trade. Changes nothing the state hash sees.
   */
  limitMark(m: MarketState): PriceTicks | undefined {
    this.#sync();
    if (this.#active.has(m.index)) return this.#marks[m.index]?.mark;
    if (m.idleMark !== undefined) return m.idleMark.mark;
    if (m.lastPrice <= 0) return undefined;
    const memo = this.#startMarks[m.index];
    const bid = m.book.bids.best()?.price;
    const ask = m.book.asks.best()?.price;
    if (
      memo !== undefined &&
      memo.time === this.#ctx.time &&
      memo.last === m.lastPrice &&
      memo.bid === bid &&
      memo.ask === ask
    )
      return memo.mark;
    const mark = this.#startMark(m).mark;
    this.#startMarks[m.index] = { time: this.#ctx.time, last: m.lastPrice, bid, ask, mark };
    return mark;
  }

  /**
   * Takes a deferred mark step now, before a command that checks a margin limit changes the book
   * (the step is the previous command's: its book is the book now).
   */
  syncMarks(): void {
    this.#sync();
  }

  markPrice(market: string): PriceTicks | undefined {
    this.#sync();
    const m = this.#registry.market(market);
    return m === undefined ? undefined : this.#marks[m.index]?.mark;
  }

  runningMark(market: string): PriceTicks | undefined {
    this.#sync();
    const m = this.#registry.market(market);
    return m === undefined ? undefined : (this.#marks[m.index]?.mark ?? m.idleMark?.mark);
  }

  isFlagged(userId: number, market: string): boolean {
    const m = this.#registry.market(market);
    return (
      m !== undefined && (this.#indexes[m.index]?.isFlagged(accountKey(isolated(userId, market))) ?? false)
    );
  }

  isLocked(userId: number, market: string): boolean {
    return this.#liquidations.isLocked(isolated(userId, market));
  }

  liquidations(userId?: number): LiquidationRecord[] {
    const all = this.#liquidations.records();
    return userId === undefined
      ? all
      : all.filter((r) => r.account.kind !== 'system' && r.account.userId === userId);
  }

  accountRisk(userId: number, market: string): IsolatedRisk | undefined {
    this.#sync();
    const m = this.#registry.market(market);
    if (m === undefined) return undefined;
    const ref = isolated(userId, m.spec.name);
    const a = this.#ledger.account(ref);
    const mark = this.#marks[m.index]?.mark;
    const repayLock = this.#liquidations.isLocked(ref);
    const notice = this.#indexes[m.index]?.isFlagged(accountKey(ref)) ?? false;
    let rate: number | undefined;
    let unwind: IsolatedRisk['unwindPrice'];
    if (a !== undefined) {
      const [base, quote] = this.#positions(a, m);
      if (mark !== undefined) rate = riskRateBp(valuateIsolated(base, quote, this.#basePrice(m, mark)));
      unwind = unwindPrice(base, quote, DEFAULT_MARGIN_SETTINGS, this.#perTick(m));
    }
    return {
      markPrice: mark,
      riskRateBp: rate,
      unwindPrice: unwind,
      notice,
      repayLock,
      level: repayLock ? 3 : notice ? 2 : 1,
    };
  }

  crossRisk(userId: number): CrossRisk {
    this.#sync();
    return this.#cross.risk(userId);
  }

  /** The insurance fund's available balance per coin (every coin, in the registry's order). */
  insurance(): { coin: string; available: CoinUnits }[] {
    const ins = this.#ledger.account(system(INSURANCE));
    return this.#registry
      .coinStates()
      .map((c) => ({ coin: c.spec.name, available: ins?.available(c.index) ?? 0 }));
  }

  // ───────────────────────────── snapshots ─────────────────────────────

  /** Whether nothing of the risk side exists yet (no trade anywhere): the snapshot leaves it out. */
  get isEmpty(): boolean {
    this.#sync();
    return (
      this.#marks.every((mp) => mp === undefined || mp.mark === undefined) &&
      this.#registry.marketStates().every((m) => m.idleMark?.mark === undefined) &&
      this.#liquidations.records().length === 0
    );
  }

  snapshot(): RiskSnapshot {
    this.#sync();
    const markets = this.#registry.marketStates();
    const marks: [string, MarkPriceSnapshot | DepthMarkSnapshot][] = [];
    const flags: [string, string[]][] = [];
    for (const m of markets) {
      const mp = this.#marks[m.index] ?? m.idleMark;
      if (mp !== undefined && mp.snapshot().last !== undefined) marks.push([m.spec.name, mp.snapshot()]);
      const f = this.#indexes[m.index]?.snapshot() ?? [];
      if (f.length > 0) flags.push([m.spec.name, f]);
    }
    const byName = <T>(xs: [string, T][]): [string, T][] =>
      xs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    const crossFlags = this.#cross.flagged();
    return {
      marks: byName(marks),
      flags: byName(flags),
      liquidations: this.#liquidations.snapshot(),
      queue: this.#queue.snapshot(),
      ...(crossFlags.length > 0 ? { crossFlags } : {}),
    };
  }

  /**
   * Loads the risk side (after margin's part: the loan book is margin's). The index's triggers are
   * not in the snapshot: every isolated account that owes something and is not locked is
   * re-indexed at its market's mark, with its restored flag.
   */
  load(s: RiskSnapshot | undefined): void {
    const registry = this.#registry;
    const flagsOf = new Map(s?.flags ?? []);
    this.#active.clear();
    this.#marks.length = 0;
    this.#quietOf.length = 0;
    this.#deferred = false;
    for (const m of registry.marketStates()) {
      m.stepTrades = undefined;
      m.idleMark = undefined;
    }
    for (const m of registry.marketStates())
      this.#indexes[m.index] = new LiquidationIndex(flagsOf.get(m.spec.name) ?? []);
    for (const [name, snap] of s?.marks ?? []) {
      const m = registry.market(name);
      if (m === undefined) throw new Error(`risk snapshot: unknown market ${name}`);
      this.#marks[m.index] = this.#newMark(m, snap);
    }
    this.#liquidations = new Liquidations(
      this.#hooks.loanBook(),
      DEFAULT_LIQUIDATION_SETTINGS,
      s?.liquidations,
    );
    this.#queue = new LiquidationQueue(s?.queue ?? []);
    this.#cross = this.#newCross(s?.crossFlags ?? []);
    this.#marksVersion++;
    this.#loading = true;
    try {
      this.#cross.load();
    } finally {
      this.#loading = false;
    }
    for (const a of this.#ledger.marginAccounts()) {
      if (a.key.kind !== 'isolated' || this.#liquidations.isLocked(a.key)) continue;
      const m = registry.market(a.key.market);
      if (m !== undefined) this.#reindex(a, m, false);
    }
    // Active: what `#reindex` and `#deactivateIfIdle` would have left (the marks are the snapshot's).
    const running = new Set(this.#liquidations.running().map((r) => r.market));
    for (const m of registry.marketStates())
      if ((this.#indexes[m.index]?.size ?? 0) > 0 || running.has(m.spec.name)) {
        this.#active.add(m.index);
        m.stepTrades = new StepTrades();
      }
    // Under the depth rule the other markets' marks go on as their idle marks (`#feedNewMarkets`).
    if (this.#markRule === 'depth')
      for (const m of registry.marketStates()) {
        const mp = this.#marks[m.index];
        if (this.#active.has(m.index) || mp === undefined) continue;
        m.idleMark = mp as DepthMark;
        this.#marks[m.index] = undefined;
      }
    this.#fed = 0;
    this.#feedNewMarkets();
    this.#ledger.touched?.clear();
  }

  /**
   * The risk side's own rules: a locked account is exactly one with a running record, and is not
   * in the index; a running record's account still owes something or holds something to sell.
   */
  assertInvariants(): void {
    for (const m of this.#registry.marketStates())
      if (this.#marks[m.index]?.mark !== undefined && !this.#active.has(m.index))
        throw new Error(`invariant broken: market ${m.spec.name} has a mark but no debt or liquidation`);
    for (const r of this.#liquidations.running()) {
      if (r.account.kind === 'cross') {
        if (this.#cross.watched(r.account.userId))
          throw new Error(`invariant broken: locked account ${accountKey(r.account)} still watched`);
        continue;
      }
      if (r.account.kind !== 'isolated') throw new Error(`liquidation ${r.id} of a system account`);
      const m = this.#registry.market(r.account.market);
      if (m === undefined) throw new Error(`liquidation ${r.id} in unknown market`);
      if (this.#indexes[m.index]?.triggers(accountKey(r.account)) !== undefined)
        throw new Error(`invariant broken: locked account ${accountKey(r.account)} still in the index`);
    }
  }
}

/** The hooks as the engine wires them: margin's loan book and effects, matching's orders. */
export function riskHooks(margin: Margin, matching: Matching): RiskHooks {
  return {
    loanBook: () => margin.loanBook,
    applyEffects: (e) => margin.applyEffects(e),
    cancelAccountOrders: (account) => matching.cancelAccountOrders(account, 'liquidation'),
    liquidationOrder: (account, market, side, price, lots) =>
      matching.liquidationOrder(account, market, side === 'buy' ? BUY : SELL, price, lots),
    afterOrder: () => margin.autoRepay(),
    recordRepayments: (rs) => margin.recordRepayments(rs),
  };
}
