/**
 * @module engine/risk — issue 15's risk side wired into the engine: the mark price of every market,
 * the liquidation index of the isolated margin accounts with their notice flags, and forced
 * liquidation with the insurance fund and bad debt, all inside the engine step that moved the
 * price. The rules are the pure modules' (src/margin/mark-price.ts, liquidation-index.ts,
 * liquidation.ts); this module only feeds them and carries out what they decide, through a small
 * interface to matching and margin (`RiskHooks`).
 *
 * ## After every command (`afterCommand`), in this order
 * 1. **Marks.** Every market the command traded in or changed the book of (its `TradeExecuted`,
 *    `OrderAccepted`, `OrderUpdated` events), and on `FireTimers` every market with a mark, takes
 *    one mark step: the command's trades in that market with the command's time, the best bid and
 *    ask after it. Markets in index order. Everything read is journaled, so a replay computes the
 *    same marks; the marks' windows are in the snapshot (so in the state hash).
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
 *    mark or fires the timers.
 *
 * Locked accounts (`isLocked`): the engine refuses their owner's orders, transfers, borrows and
 * repayments on them until the liquidation ends (`repayLock`).
 */
import { BUY, SELL } from '../domain/commands.ts';
import type { EngineEvent } from '../domain/events.ts';
import type { CoinUnits, PriceTicks } from '../domain/money.ts';
import { LiquidationIndex, triggersOf, type Crossed } from '../margin/liquidation-index.ts';
import {
  DEFAULT_LIQUIDATION_SETTINGS,
  LiquidationQueue,
  Liquidations,
  stepPlan,
  type LiquidationMarket,
  type LiquidationRecord,
  type LiquidationsSnapshot,
} from '../margin/liquidation.ts';
import { riskRateBp, unitPrice, unwindPrice, valuateIsolated, type CoinPosition } from '../margin/lines.ts';
import { LoanBook } from '../margin/loans.ts';
import { MarkPrice, type MarkPriceSnapshot } from '../margin/mark-price.ts';
import { accountKey, type AccountRef, type Effects } from '../margin/movement.ts';
import { DEFAULT_MARGIN_SETTINGS } from '../margin/settings.ts';
import type { CommandContext } from './command-context.ts';
import { INSURANCE, isolated, system, type Ledger, type LedgerAccount } from './ledger.ts';
import type { CoinState, MarketState, Registry } from './registry.ts';

/** What the risk module needs of matching and margin. */
export interface RiskHooks {
  /** The current loan book (margin's; replaced when a snapshot loads). */
  loanBook(): LoanBook;
  /** Applies ledger effects as margin applies its own (bills, debts, interest totals). */
  applyEffects(e: Effects): void;
  /** Cancels every resting order held in the account. */
  cancelAccountOrders(account: LedgerAccount): void;
  /** Sends an IOC order without trading fee from the account; returns the lots filled. */
  liquidationOrder(
    account: LedgerAccount,
    market: MarketState,
    side: 'buy' | 'sell',
    price: PriceTicks,
    lots: number,
  ): number;
  /** What auto-repayment owes the fills of a liquidation order's makers. */
  afterOrder(): void;
}

/** The risk side's part of a snapshot: marks, notice flags, liquidation records, the queue. */
export interface RiskSnapshot {
  /** [market, mark window] for the markets that ever traded, by name. */
  readonly marks: [string, MarkPriceSnapshot][];
  /** [market, flagged account keys] where any is flagged, by name. */
  readonly flags: [string, string[]][];
  readonly liquidations: LiquidationsSnapshot;
  readonly queue: { account: AccountRef; riskRateBp: number }[];
}

/** The operator's and the owner's reads of the risk side. */
export interface RiskView {
  /** A market's mark price in ticks, `undefined` before its first trade. */
  markPrice(market: string): PriceTicks | undefined;
  /** Whether an isolated account is at or past its notice line (the flag, with its hysteresis). */
  isFlagged(userId: number, market: string): boolean;
  /** Whether an isolated account is locked by a running liquidation (`repayLock`). */
  isLocked(userId: number, market: string): boolean;
  /** Liquidation records, oldest first; of one user's accounts when `userId` is given. */
  liquidations(userId?: number): LiquidationRecord[];
  /** The risk fields of an isolated account for the margin answers; undefined for an unknown market. */
  accountRisk(userId: number, market: string): IsolatedRisk | undefined;
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

const NO_CROSSED: Crossed = { liquidate: [], flagged: [], cleared: [] };

export class Risk implements RiskView {
  readonly #ctx: CommandContext;
  readonly #ledger: Ledger;
  readonly #registry: Registry;
  readonly #hooks: RiskHooks;
  /** By market index. */
  readonly #marks: MarkPrice[] = [];
  readonly #indexes: LiquidationIndex[] = [];
  #liquidations: Liquidations;
  #queue = new LiquidationQueue();
  /** Events of the current command already taken into the marks. */
  #seen = 0;

  constructor(ctx: CommandContext, ledger: Ledger, registry: Registry, hooks: RiskHooks) {
    this.#ctx = ctx;
    this.#ledger = ledger;
    this.#registry = registry;
    this.#hooks = hooks;
    this.#liquidations = new Liquidations(hooks.loanBook(), DEFAULT_LIQUIDATION_SETTINGS);
    ledger.touched = new Set();
  }

  #mark(m: MarketState): MarkPrice {
    let mp = this.#marks[m.index];
    if (mp === undefined) this.#marks[m.index] = mp = new MarkPrice();
    return mp;
  }

  #index(m: MarketState): LiquidationIndex {
    let ix = this.#indexes[m.index];
    if (ix === undefined) this.#indexes[m.index] = ix = new LiquidationIndex();
    return ix;
  }

  // ───────────────────────────── after every command ─────────────────────────────

  /** Runs steps 1–4 of the module comment. `timers`: the command was FireTimers. */
  afterCommand(timers: boolean): void {
    this.#seen = 0;
    let budget = this.#liquidations.settings.maxPerStep;
    let moved = this.#takeMarks(timers);
    const plan = (): boolean => this.#liquidations.running().length > 0 || this.#queue.size > 0;
    this.#takeAccounts();
    for (const m of moved) this.#queueCrossed(m, this.#index(m).move(this.#mark(m).mark as number));
    // Running liquidations continue only when a price moved or the timers fired; new ones at once.
    let go = timers || moved.length > 0 || this.#queue.size > 0;
    while (go && budget > 0 && plan()) {
      budget -= this.#runLiquidations(budget);
      moved = this.#takeMarks(false);
      this.#takeAccounts();
      for (const m of moved) this.#queueCrossed(m, this.#index(m).move(this.#mark(m).mark as number));
      go = moved.length > 0 || this.#queue.size > 0;
      if (!go) break;
    }
  }

  /** Step 1 over the events since `#seen`; returns the markets whose mark changed. */
  #takeMarks(timers: boolean): MarketState[] {
    const events: EngineEvent[] = this.#ctx.events;
    const touched = new Map<number, number[]>();
    const registry = this.#registry;
    const note = (name: string): number[] | undefined => {
      const m = registry.market(name);
      if (m === undefined) return undefined;
      let xs = touched.get(m.index);
      if (xs === undefined) touched.set(m.index, (xs = []));
      return xs;
    };
    for (let i = this.#seen; i < events.length; i++) {
      const e = events[i] as EngineEvent;
      if (e.type === 'TradeExecuted') note(e.market)?.push(e.price);
      else if (e.type === 'OrderAccepted' || e.type === 'OrderUpdated') note(e.market);
    }
    this.#seen = events.length;
    if (timers)
      for (const [i, mp] of this.#marks.entries())
        if (mp?.mark !== undefined && !touched.has(i)) touched.set(i, []);
    const moved: MarketState[] = [];
    const markets = registry.marketStates();
    for (const i of [...touched.keys()].sort((a, b) => a - b)) {
      const m = markets[i] as MarketState;
      const trades = touched.get(i) as number[];
      const mp = this.#marks[i];
      if (mp === undefined && trades.length === 0) continue;
      const before = mp?.mark;
      const after = this.#mark(m).step({
        timeMs: this.#ctx.time,
        trades,
        bestBid: m.book.bids.best()?.price,
        bestAsk: m.book.asks.best()?.price,
      });
      if (after !== undefined && after !== before) moved.push(m);
    }
    return moved;
  }

  /** Step 2: re-indexes the isolated accounts the ledger saw change. */
  #takeAccounts(): void {
    const touched = this.#ledger.touched as Set<LedgerAccount>;
    if (touched.size === 0) return;
    const accounts = [...touched];
    touched.clear();
    for (const a of accounts) {
      if (a.key.kind !== 'isolated' || this.#liquidations.isLocked(a.key)) continue;
      const m = this.#registry.market(a.key.market);
      if (m === undefined) continue;
      this.#queueCrossed(m, this.#reindex(a, m));
    }
  }

  #reindex(a: LedgerAccount, m: MarketState): Crossed {
    const [base, quote] = this.#positions(a, m);
    const triggers = triggersOf(base, quote, DEFAULT_MARGIN_SETTINGS, this.#perTick(m));
    return this.#index(m).update(accountKey(a.key), triggers, this.#marks[m.index]?.mark);
  }

  /** Step 3: queues the accounts at or below the liquidation line (flags are the index's). */
  #queueCrossed(m: MarketState, crossed: Crossed): void {
    if (crossed === NO_CROSSED || crossed.liquidate.length === 0) return;
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
    if (ref.kind !== 'isolated') return;
    const m = this.#registry.market(ref.market) as MarketState;
    const mark = this.#marks[m.index]?.mark as number;
    const a = this.#ledger.account(ref) as LedgerAccount;
    const lm = this.#market(m);
    const [base, quote] = this.#positions(a, m);
    const order = this.#liquidations.nextOrder(lm, base, quote, mark);
    // Sent only when the book has something inside the band: an order that cannot trade is no step.
    const best = (order?.side === 'sell' ? m.book.bids : m.book.asks).best()?.price;
    const inBand =
      order !== undefined &&
      best !== undefined &&
      (order.side === 'sell' ? best >= order.priceTicks : best <= order.priceTicks);
    if (order !== undefined && inBand) {
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
      (coin) => ins?.available[(this.#registry.coin(coin) as CoinState).index] ?? 0,
      this.#ctx.time,
    );
    this.#hooks.applyEffects(settled.effects);
    this.#hooks.afterOrder();
    if (settled.done) {
      this.#ledger.touched?.delete(a);
      this.#queueCrossed(m, this.#reindex(a, m));
    } else this.#ledger.touched?.delete(a);
  }

  // ───────────────────────────── helpers ─────────────────────────────

  #positions(a: LedgerAccount, m: MarketState): [CoinPosition, CoinPosition] {
    const pos = (c: CoinState): CoinPosition => ({
      coin: c.spec.name,
      available: a.available[c.index] ?? 0,
      frozen: a.frozen[c.index] ?? 0,
      principal: a.borrowed[c.index] ?? 0,
      interest: a.interest[c.index] ?? 0,
    });
    return [pos(m.base), pos(m.quote)];
  }

  #perTick(m: MarketState): ReturnType<typeof unitPrice> {
    return unitPrice(1, m.spec.priceScale, m.base.spec.unitDecimal, m.quote.spec.unitDecimal);
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

  markPrice(market: string): PriceTicks | undefined {
    const m = this.#registry.market(market);
    return m === undefined ? undefined : this.#marks[m.index]?.mark;
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

  /** The insurance fund's available balance per coin (every coin, in the registry's order). */
  insurance(): { coin: string; available: CoinUnits }[] {
    const ins = this.#ledger.account(system(INSURANCE));
    return this.#registry
      .coinStates()
      .map((c) => ({ coin: c.spec.name, available: ins?.available[c.index] ?? 0 }));
  }

  // ───────────────────────────── snapshots ─────────────────────────────

  /** Whether nothing of the risk side exists yet (no trade anywhere): the snapshot leaves it out. */
  get isEmpty(): boolean {
    return (
      this.#marks.every((mp) => mp === undefined || mp.mark === undefined) &&
      this.#liquidations.records().length === 0
    );
  }

  snapshot(): RiskSnapshot {
    const markets = this.#registry.marketStates();
    const marks: [string, MarkPriceSnapshot][] = [];
    const flags: [string, string[]][] = [];
    for (const m of markets) {
      const mp = this.#marks[m.index];
      if (mp !== undefined && mp.snapshot().last !== undefined) marks.push([m.spec.name, mp.snapshot()]);
      const f = this.#indexes[m.index]?.snapshot() ?? [];
      if (f.length > 0) flags.push([m.spec.name, f]);
    }
    const byName = <T>(xs: [string, T][]): [string, T][] =>
      xs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    return {
      marks: byName(marks),
      flags: byName(flags),
      liquidations: this.#liquidations.snapshot(),
      queue: this.#queue.snapshot(),
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
    for (const m of registry.marketStates())
      this.#indexes[m.index] = new LiquidationIndex(flagsOf.get(m.spec.name) ?? []);
    for (const [name, snap] of s?.marks ?? []) {
      const m = registry.market(name);
      if (m === undefined) throw new Error(`risk snapshot: unknown market ${name}`);
      this.#marks[m.index] = new MarkPrice(undefined, snap);
    }
    this.#liquidations = new Liquidations(
      this.#hooks.loanBook(),
      DEFAULT_LIQUIDATION_SETTINGS,
      s?.liquidations,
    );
    this.#queue = new LiquidationQueue(s?.queue ?? []);
    for (const a of this.#ledger.marginAccounts()) {
      if (a.key.kind !== 'isolated' || this.#liquidations.isLocked(a.key)) continue;
      const m = registry.market(a.key.market);
      if (m !== undefined) this.#reindex(a, m);
    }
    this.#ledger.touched?.clear();
  }

  /**
   * The risk side's own rules: a locked account is exactly one with a running record, and is not
   * in the index; a running record's account still owes something or holds something to sell.
   */
  assertInvariants(): void {
    for (const r of this.#liquidations.running()) {
      if (r.account.kind !== 'isolated') throw new Error(`liquidation ${r.id} of a non-isolated account`);
      const m = this.#registry.market(r.account.market);
      if (m === undefined) throw new Error(`liquidation ${r.id} in unknown market`);
      if (this.#indexes[m.index]?.triggers(accountKey(r.account)) !== undefined)
        throw new Error(`invariant broken: locked account ${accountKey(r.account)} still in the index`);
    }
  }
}

// Sides as the book knows them (kept here so the hooks speak the liquidation module's words).
export const sideOf = (side: 'buy' | 'sell'): typeof BUY | typeof SELL => (side === 'buy' ? BUY : SELL);
