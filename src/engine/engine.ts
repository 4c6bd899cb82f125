/**
 * @module engine — the deterministic exchange state machine: `apply(command) → result + events`.
 *
 * Pure and synchronous: no I/O, no clock, no randomness. Time and sequence arrive in the command.
 * Replaying the same commands gives the same state, which `stateHash()` proves. Money rules are
 * in src/domain/money.ts; the order of events for each command is in src/domain/events.ts.
 *
 * It dispatches each command to the module that owns it and answers reads from them (docs/engine.md
 * draws them: ledger, registry, matching and settlement, dead-man switch, funds, demo, snapshot).
 *
 * Business outcomes are result names (src/domain/result-codes.ts). A thrown exception means a
 * broken invariant: the caller must stop taking commands and recover from snapshot + journal.
 */
import { createHash } from 'node:crypto';
import { BUY, SELL, type SequencedCommand, type UserStatus } from '../domain/commands.ts';
import type { RestoreSandbox, Stamp } from '../domain/commands.ts';
import type { CoinUnits, Lots, PriceTicks } from '../domain/money.ts';
import type { CoinSpec, MarketSpec, VenueConfig, VenueSettings } from '../domain/specs.ts';
import { CommandContext, refused } from './command-context.ts';
import { DeadManSwitch, earliest } from './dead-man.ts';
import type { EventPool } from './event-pool.ts';
import { Demo, isDemoCommand, type DemoView } from './demo-state.ts';
import { Funds, isFundsCommand, type FundsView } from './funds.ts';
import { spotFundsLedger } from './funds-ledger.ts';
import { Ledger } from './ledger.ts';
import { checksLimits, LimitPrices } from './limit-prices.ts';
import { isMarginCommand, Margin, type MarginView } from './margin.ts';
import { Matching } from './matching.ts';
import { isRegistryCommand, Registry, type ApiKeyRecord } from './registry.ts';
import { Settlement } from './settlement.ts';
import { isSubAccountCommand, SubAccounts, type SubAccountsView } from './sub-accounts.ts';
import { markRuleOf, Risk, riskHooks, type RiskView } from './risk.ts';
import { coinBooks, type CoinBooks } from './books.ts';
import type { LiquidationRecord } from '../margin/liquidation.ts';
import {
  checkSnapshotVersion,
  decodeSnapshot,
  encodeSnapshot,
  snapshotConfig,
  type EngineSnapshot,
  type SnapshotParts,
} from './snapshot.ts';
import { isVenueChangeCommand, VenueChanges } from './venue-changes.ts';
import { loadVenueConfig } from './venue-config.ts';
import { carryCounters } from './restore-counters.ts';
import { assertEngineInvariants } from './invariants.ts';
import type { ApplyResult, OrderView } from './results.ts';

export { MAX_BATCH_ORDERS } from './matching.ts';
export type { ApiKeyRecord } from './registry.ts';
export type { ApplyResult, CancelledOrder, OrderView } from './results.ts';

export class Engine {
  #settings!: VenueSettings;
  /** The command being applied: its time and events, shared by every module. */
  readonly #ctx = new CommandContext();
  #ledger!: Ledger;
  #registry!: Registry;
  #settlement!: Settlement;
  #matching!: Matching;
  #deadMan!: DeadManSwitch;
  /** Deposits, addresses, fund passwords and withdrawals (src/engine/funds.ts). */
  #funds!: Funds;
  /** The demo market: demo users, the faucet, whether the bots were stopped (src/engine/demo-state.ts). */
  #demo!: Demo;
  /** The operator's runtime changes: coins, markets, user status and limits, key rotation. */
  #changes!: VenueChanges;
  /** Margin accounts, lending, loans and interest (src/engine/margin.ts). */
  #margin!: Margin;
  /** Main users' sub-accounts and the transfers among a family (src/engine/sub-accounts.ts). */
  #subAccounts!: SubAccounts;
  /** Mark prices, the liquidation index, forced liquidations (src/engine/risk.ts). */
  #risk!: Risk;
  /** Sequence number of the last command applied (0 before any). */
  #lastSeq = 0;

  /** A fresh engine with the given coins, markets and settings. Throws on an invalid config. */
  constructor(config: VenueConfig) {
    this.#build(config);
  }

  /** Builds every module afresh for `config` (the constructor; a sandbox's restore). */
  #build(config: VenueConfig): void {
    const ctx = this.#ctx;
    this.#settings = { ...config.settings };
    const ledger = (this.#ledger = new Ledger(ctx));
    const registry = (this.#registry = new Registry(ctx, this.#ledger));
    loadVenueConfig(registry, config);
    this.#settlement = new Settlement(ctx, this.#ledger, registry, this.#settings);
    const prices = new LimitPrices(registry, { limitMark: (m) => this.#risk.limitMark(m) });
    this.#margin = new Margin(ctx, this.#ledger, registry, prices, (coin) => this.#funds.netCredited(coin));
    const matching = (this.#matching = new Matching(ctx, ledger, registry, this.#settlement, this.#margin));
    this.#deadMan = new DeadManSwitch(ctx, this.#settings, {
      hasUser: (userId) => registry.hasUser(userId),
      hasMarket: (market) => registry.market(market) !== undefined,
      cancelAllIn: (userId, market, reason) => matching.cancelAllIn(userId, market, reason),
    });
    const fundsLedger = spotFundsLedger(registry, ledger, (coin) => this.#margin.poolFunded(coin));
    this.#funds = new Funds(config.funds ?? [], fundsLedger);
    this.#demo = new Demo({ ...fundsLedger, credit: (cmd) => this.#funds.apply(cmd, ctx.time, ctx.events) });
    this.#changes = new VenueChanges(ctx, registry, this.#funds, matching);
    this.#subAccounts = new SubAccounts(ctx, registry, ledger, {
      setFundPassword: (userId, hash) =>
        this.#funds.apply({ type: 'SetFundPassword', userId, hash }, ctx.time, ctx.events),
    });
    const rule = markRuleOf(config.settings);
    this.#risk = new Risk(ctx, ledger, registry, riskHooks(this.#margin, matching), rule);
  }

  // ───────────────────────────── commands ─────────────────────────────

  /**
   * Applies one sequenced command. Commands must arrive in sequence order; the result's events
   * describe every state change, in order. A refused command changes nothing.
   */
  apply(cmd: SequencedCommand): ApplyResult {
    if (cmd.seq <= this.#lastSeq)
      throw new Error(`command seq ${cmd.seq} after ${this.#lastSeq}: out of order`);
    this.#lastSeq = cmd.seq;
    const ctx = this.#ctx.begin(cmd.time);
    // A limit is valued at the marks of the last step: a deferred step is taken before this
    // command's orders move the book (src/engine/limit-prices.ts).
    if (checksLimits(cmd)) this.#risk.syncMarks();
    const r = this.#risk.lockedRefusal(cmd) ?? this.#dispatch(cmd);
    if (r.result !== 'OK') return r;
    const before = ctx.events.length;
    this.#risk.afterCommand(cmd.type === 'FireTimers');
    // A result with events of its own (an idempotent duplicate's empty list) still reports what
    // the risk step did after it (a liquidation's orders, trades and balance changes).
    if (r.events !== ctx.events && ctx.events.length > before)
      return { ...r, events: [...r.events, ...ctx.events.slice(before)] };
    return r;
  }

  #dispatch(cmd: SequencedCommand): ApplyResult {
    const ctx = this.#ctx;
    switch (cmd.type) {
      case 'PlaceOrder':
      case 'PlaceOrderBatch':
      case 'CancelOrder':
        return this.#matching.apply(cmd);
      case 'CancelAllOrdersAfter':
        return this.#deadMan.arm(cmd);
      case 'RestoreSandbox':
        return this.#restoreSandbox(cmd);
      case 'FireTimers': {
        const fired = this.#deadMan.fire();
        this.#margin.fire();
        return fired;
      }
      default:
        // The registry, funds and demo modules take their own commands (src/domain/commands.ts lists them).
        if (isRegistryCommand(cmd)) return this.#registry.apply(cmd);
        if (isFundsCommand(cmd)) return this.#funds.apply(cmd, ctx.time, ctx.events);
        if (isDemoCommand(cmd)) return this.#demo.apply(cmd, ctx.time, ctx.events);
        if (isVenueChangeCommand(cmd)) return this.#changes.apply(cmd);
        if (isMarginCommand(cmd)) return this.#margin.apply(cmd);
        if (isSubAccountCommand(cmd)) return this.#subAccounts.apply(cmd);
        return refused('INVALID_PARAMETER', `unknown command type ${(cmd as { type: unknown }).type}`);
    }
  }

  /**
   * RestoreSandbox: the state the command carries replaces this one whole, in place (every reader
   * keeps this engine), its id counters carried on (restore-counters.ts). Checked on a throwaway
   * engine first, so a state that does not load changes nothing.
   */
  #restoreSandbox(cmd: RestoreSandbox & Stamp): ApplyResult {
    const s = carryCounters(
      { ...(cmd.state as unknown as EngineSnapshot), lastSeq: cmd.seq },
      this.snapshot(),
    );
    try {
      Engine.restore(s);
    } catch (error) {
      return refused('INVALID_PARAMETER', `the state to restore does not load: ${(error as Error).message}`);
    }
    this.#build(snapshotConfig(s));
    decodeSnapshot(s, this.#parts());
    this.#ctx.events.push({ type: 'SandboxRestored', name: cmd.name, time: cmd.time });
    return { result: 'OK', events: this.#ctx.events };
  }

  // ───────────────────────────── reads ─────────────────────────────

  get lastSeq(): number {
    return this.#lastSeq;
  }

  /** The hot events' pool (src/engine/event-pool.ts): a feed whose readers copy what they keep reuses them. */
  get eventPool(): EventPool {
    return this.#ctx.pool;
  }

  get settings(): VenueSettings {
    return this.#settings;
  }

  /** Deposits, deposit and withdrawal addresses, fund passwords and withdrawals, read-only. */
  get funds(): FundsView {
    return this.#funds;
  }

  get demo(): DemoView {
    return this.#demo;
  }

  /** Which users are whose sub-accounts, read-only. */
  get subAccounts(): SubAccountsView {
    return this.#subAccounts;
  }

  /** Margin accounts, lending offers, loan records, repayments and margin settings, read-only. */
  get margin(): MarginView {
    return this.#margin;
  }

  /** Mark prices, notice flags, locks and liquidation records, read-only (src/engine/risk.ts). */
  get risk(): RiskView {
    return this.#risk;
  }

  /** Every liquidation record, oldest first: the operator's list (`bourse liquidations`). */
  liquidations(): LiquidationRecord[] {
    return this.#risk.liquidations();
  }

  /** The insurance fund's available balance per coin (`bourse insurance`). */
  insurance(): { coin: string; available: CoinUnits }[] {
    return this.#risk.insurance();
  }

  /**
   * One coin's books over every kind of account, with the loans outstanding, bad debt and the
   * insurance fund's movements (src/engine/books.ts; `bourse solvency`); undefined for an unknown coin.
   */
  books(coin: string): CoinBooks | undefined {
    const c = this.#registry.coin(coin);
    return c === undefined ? undefined : coinBooks(this.#parts(), c);
  }

  coins(): CoinSpec[] {
    return this.#registry.coinStates().map((c) => c.spec);
  }

  coin(name: string): CoinSpec | undefined {
    return this.#registry.coin(name)?.spec;
  }

  markets(): MarketSpec[] {
    return this.#registry.marketStates().map((m) => m.spec);
  }

  market(name: string): MarketSpec | undefined {
    return this.#registry.market(name)?.spec;
  }

  /** Last trade price of a market in ticks (0 before its first trade). */
  lastPrice(market: string): PriceTicks {
    return this.#registry.market(market)?.lastPrice ?? 0;
  }

  /**
   * The user with this name, ignoring case: the exact name first (a history from before names
   * were unique regardless of case may hold `alice` and `Alice`), else the first user registered
   * with a name equal to it ignoring case.
   */
  userId(name: string): number | undefined {
    return this.#registry.userId(name);
  }

  userName(userId: number): string | undefined {
    return this.#registry.user(userId)?.name;
  }

  /** A user's spot balance of one coin, or `undefined` for an unknown user or coin. */
  balance(userId: number, coin: string): { available: CoinUnits; frozen: CoinUnits } | undefined {
    const user = this.#registry.user(userId);
    const c = this.#registry.coin(coin);
    if (user === undefined || c === undefined) return undefined;
    return { available: user.spot.available(c.index), frozen: user.spot.frozen(c.index) };
  }

  /** An API key by its access key. */
  apiKey(accessKey: string): ApiKeyRecord | undefined {
    return this.#registry.apiKey(accessKey);
  }

  /** Every API key, by user id (in the order each user's were created). */
  apiKeys(): ApiKeyRecord[] {
    return [...this.#registry.apiKeys()].map(([, k]) => k).sort((a, b) => a.userId - b.userId);
  }

  /** The keys of one user. */
  apiKeysOf(userId: number): ApiKeyRecord[] {
    return [...this.#registry.apiKeys()].map(([, k]) => k).filter((k) => k.userId === userId);
  }

  /** A user's registration time (ms; 0 where unknown) and status, or undefined for an unknown id. */
  userRecord(userId: number): { created: number; status: UserStatus } | undefined {
    const user = this.#registry.user(userId);
    return user === undefined ? undefined : { created: user.created, status: user.status };
  }

  /** Every user's id, in registration order. */
  userIds(): number[] {
    return [...this.#registry.users()].map((u) => u.userId);
  }

  usesPlatformCoin(userId: number): boolean {
    return this.#registry.user(userId)?.usePlatformCoin ?? false;
  }

  feeIncome(coin: string): CoinUnits {
    const c = this.#registry.coin(coin);
    return c === undefined ? 0 : this.#ledger.feeIncome(c);
  }

  /** A resting order by id. */
  openOrder(orderId: number): OrderView | undefined {
    return this.#matching.openOrder(orderId);
  }

  /** The user's resting orders (in one market, or all), oldest first. */
  openOrders(userId: number, market?: string): OrderView[] {
    return this.#matching.openOrders(userId, market);
  }

  /** The latest order id a user gave a client order id in a market, open or not. */
  orderIdForClientId(userId: number, market: string, clientOrderId: string): number | undefined {
    return this.#matching.orderIdForClientId(userId, market, clientOrderId);
  }

  /** Aggregated depth: `[price, lots]` per level, best first. */
  depth(
    market: string,
    limit: number,
  ): { bids: [PriceTicks, Lots][]; asks: [PriceTicks, Lots][] } | undefined {
    const m = this.#registry.market(market);
    if (m === undefined) return undefined;
    return { bids: m.book.depth(BUY, limit), asks: m.book.depth(SELL, limit) };
  }

  /** Per coin: Σ over spot accounts of the available and frozen balances, in the coin's units. */
  spotHoldings(): Map<string, { available: bigint; frozen: bigint }> {
    return this.#registry.spotHoldingsByName(this.#ledger);
  }

  /** Resting orders per market name (a market without any is absent). */
  openOrdersByMarket(): Map<string, number> {
    return this.#registry.openOrdersByMarket();
  }

  /** Number of resting orders over all markets. */
  get openOrderCount(): number {
    return this.#matching.openOrderCount;
  }

  /**
   * The earliest timer: an armed dead-man deadline, the next hour of an open loan's interest or
   * a running liquidation's retry (issue 29), or `undefined`. The scheduler fires timers then.
   */
  nextDeadline(): number | undefined {
    return earliest([this.#deadMan.nextDeadline(), this.#margin.nextDeadline(), this.#risk.nextDeadline()]);
  }

  // ───────────────────────────── snapshots and checks ─────────────────────────────

  /**
   * The whole state as plain data in a canonical order (ids, names and keys sorted), so that two
   * engines in the same state give identical snapshots however they got there (src/engine/snapshot.ts).
   */
  snapshot(): EngineSnapshot {
    return encodeSnapshot({ lastSeq: this.#lastSeq, settings: this.#settings, ...this.#parts() });
  }

  /** Rebuilds an engine from a snapshot. Throws if the snapshot is inconsistent. */
  static restore(s: EngineSnapshot): Engine {
    checkSnapshotVersion(s);
    const engine = new Engine(snapshotConfig(s));
    engine.#lastSeq = s.lastSeq;
    decodeSnapshot(s, engine.#parts());
    engine.assertInvariants();
    return engine;
  }

  /** The modules whose states make up a snapshot (src/engine/snapshot.ts). */
  #parts(): Omit<SnapshotParts, 'lastSeq' | 'settings'> {
    return {
      registry: this.#registry,
      ledger: this.#ledger,
      matching: this.#matching,
      settlement: this.#settlement,
      deadMan: this.#deadMan,
      funds: this.#funds,
      demo: this.#demo,
      margin: this.#margin,
      risk: this.#risk,
      subAccounts: this.#subAccounts,
    };
  }

  /**
   * SHA-256 (hex) of the canonical snapshot: equal states, equal hashes. Pass a snapshot just
   * taken of this engine to avoid building it twice.
   */
  stateHash(snapshot: EngineSnapshot = this.snapshot()): string {
    return createHash('sha256').update(JSON.stringify(snapshot)).digest('hex');
  }

  /** Checks every invariant and throws on the first broken one (src/engine/invariants.ts). */
  assertInvariants(): void {
    assertEngineInvariants(this.#parts());
  }

  /** Per coin: Σ users' available + frozen (every user account), fee income, credits and settled withdrawals. */
  totals(
    coin: string,
  ): { users: bigint; feeIncome: CoinUnits; credited: bigint; withdrawn: bigint } | undefined {
    const c = this.#registry.coin(coin);
    if (c === undefined) return undefined;
    return {
      users: this.#ledger.userHoldings(this.#registry.coinCount)[c.index] as bigint,
      feeIncome: this.#ledger.feeIncome(c),
      credited: this.#funds.credited(coin),
      withdrawn: this.#funds.withdrawn(coin),
    };
  }
}
