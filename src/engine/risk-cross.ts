/**
 * @module engine/risk-cross — cross margin accounts in the engine's risk step (issue 15): their
 * valuation at mark prices through `valuation-path.ts`, the notice flag (1.13, cleared above 1.15),
 * the liquidation line (1.08) and their forced liquidation, with the isolated accounts' lock,
 * cancel, band, fee, insurance and bad-debt rules (`liquidation.ts`). The rules are the pure
 * modules' (src/margin/cross-risk.ts); src/engine/risk.ts calls this module at its steps:
 * - step 1 (marks): `drift` for every mark move of a market a cross account depends on;
 * - step 2 (accounts): `account` for every cross account the command changed;
 * - step 3 (moves): `revalue` re-values the accounts the drift made due (`CrossBound`);
 * - step 4 (liquidations): `begin` and `continue` for the cross accounts queued.
 *
 * ## Markets a cross account depends on
 * The markets on the valuation paths of the coins it holds or owes, while it owes something or is
 * being liquidated. They are kept active (marked) by the risk step as long as one cross account
 * depends on them (`uses`), as an isolated account keeps its market active.
 */
import type { PriceTicks } from '../domain/money.ts';
import {
  crossNextOrder,
  crossState,
  CrossBound,
  fastDecision,
  tolerance,
  type CrossMarket,
  type CrossOrder,
  type Watch,
  type WatchHolder,
} from '../margin/cross-risk.ts';
import { riskRate, riskRateBp, valuate, type CoinPosition, type Ratio } from '../margin/lines.ts';
import type { LiquidationMarket, Liquidations } from '../margin/liquidation.ts';
import { cross, type AccountRef } from '../margin/movement.ts';
import { DEFAULT_MARGIN_SETTINGS } from '../margin/settings.ts';
import { ValuationPaths } from '../margin/valuation-path.ts';
import type { RiskHooks } from './risk.ts';
import { claimAccountSlot, INSURANCE, system, type Ledger, type LedgerAccount } from './ledger.ts';
import type { CoinState, MarketState, Registry } from './registry.ts';

/** A cross account's valuation coin: usdt when the venue has it, else the first market's quote. */
export function crossValuationCoin(registry: Registry): CoinState | undefined {
  return registry.coin('usdt') ?? registry.marketStates()[0]?.quote;
}

/** The valuation paths of the venue's markets now, into `crossValuationCoin`. */
export function venuePaths(registry: Registry): ValuationPaths {
  return new ValuationPaths(
    registry.marketStates().map((m) => ({
      name: m.spec.name,
      base: m.base.spec.name,
      quote: m.quote.spec.name,
      priceScale: m.spec.priceScale,
      baseDecimal: m.base.spec.unitDecimal,
      quoteDecimal: m.quote.spec.unitDecimal,
    })),
    crossValuationCoin(registry)?.spec.name ?? '',
  );
}

/** What the cross side needs of the risk step. */
export interface CrossHost {
  /** A market's mark now, undefined before it has one. */
  mark(m: MarketState): PriceTicks | undefined;
  /** Changes whenever any market's mark is set, started or dropped (for cached prices). */
  marksVersion(): number;
  /** Makes a market active (marked) if it is not. */
  activate(m: MarketState): void;
  /** A market no cross account depends on any more: inactive unless something else keeps it. */
  release(m: MarketState): void;
  /** Queues an account for liquidation with its risk rate. */
  queue(ref: AccountRef, riskRateBp: number): void;
  liquidations(): Liquidations;
  market(m: MarketState): LiquidationMarket;
  readonly hooks: RiskHooks;
  readonly time: number;
}

/** What `getCrossAssets` shows of the risk side. */
export interface CrossRisk {
  readonly riskRateBp: number | undefined;
  readonly notice: boolean;
  readonly repayLock: boolean;
  readonly level: 1 | 2 | 3;
}

/**
 * A cross account's own risk state, kept on the account (`CROSS_SLOT`, this module's own account
 * slot): the step reads it at every fill of the account without a lookup by user id.
 */
export class CrossSlot implements WatchHolder {
  /** The coins (bit per coin index) `uses` was computed for; -1: not computed. */
  mask = -1;
  /** `CrossAccounts`' paths generation `mask` belongs to. */
  maskAt = -1;
  /** Flagged at the notice line. */
  flagged = false;
  /** The market indexes its valuation depends on, ascending. */
  uses: readonly number[] = [];
  /** Its interval in the bound (`CrossBound.set`). */
  watch: Watch | undefined;
  /** The `CrossAccounts` it belongs to (a snapshot's load makes a new one). */
  readonly owner: CrossAccounts;

  constructor(owner: CrossAccounts) {
    this.owner = owner;
  }
}

/** Each cross account's `CrossSlot`, on the account: this module's alone. */
const CROSS_SLOT = claimAccountSlot<CrossSlot>('the cross risk slot (risk-cross.ts)');

export class CrossAccounts {
  readonly #ledger: Ledger;
  readonly #registry: Registry;
  readonly #host: CrossHost;
  readonly #bound = new CrossBound();
  /** Per market index: how many cross accounts depend on it. */
  readonly #uses: number[] = [];
  #paths: { paths: ValuationPaths; markets: number } | undefined;
  /** A market a cross account depends on got its first mark: every account is re-valued. */
  #all = false;
  /** Changes when the valuation paths do: every slot's `mask` is stale then. */
  #pathsAt = 0;
  /** Coin prices in doubles by coin index at the marks of `#pricesAt` (the marks version); null: none. */
  readonly #pricesD: (number | null | undefined)[] = [];
  #pricesAt = -1;
  /** Whether the account `#scan` read owes anything. */
  #scanOwes = false;
  /** Markets whose mark moved in this step, for `revalue`. */
  readonly #moved: MarketState[] = [];

  constructor(ledger: Ledger, registry: Registry, host: CrossHost, flagged: readonly number[] = []) {
    this.#ledger = ledger;
    this.#registry = registry;
    this.#host = host;
    for (const u of flagged) {
      const a = ledger.account(cross(u));
      if (a !== undefined) this.#slot(a).flagged = true;
    }
  }

  /** Whether a cross account depends on the market (it must stay marked). */
  uses(m: MarketState): boolean {
    return (this.#uses[m.index] ?? 0) > 0;
  }

  isFlagged(userId: number): boolean {
    return this.#slotOf(this.#ledger.account(cross(userId)))?.flagged ?? false;
  }

  /** Flagged user ids, ascending (the snapshot's). */
  flagged(): number[] {
    const out: number[] = [];
    for (const a of this.#ledger.marginAccounts())
      if (a.kind === 'cross' && this.#slotOf(a)?.flagged === true) out.push(a.userId);
    return out.sort((x, y) => x - y);
  }

  /** The valuation coin: usdt when the venue has it, else the first market's quote (margin's). */
  valuationCoin(): CoinState | undefined {
    return crossValuationCoin(this.#registry);
  }

  /** Step 1: a mark move of market `m` (before: the mark before it, undefined: none). */
  drift(m: MarketState, before: PriceTicks | undefined, after: PriceTicks): void {
    if (!this.uses(m)) return;
    if (before === undefined) this.#all = true;
    else if (this.#bound.anyDue(m.index, after)) this.#moved.push(m);
  }

  /**
   * For the risk step's quiet check: a mark of `m` strictly between `lowEdge(m)` and `highEdge(m)`
   * gives `drift` nothing to do (no cross account depends on `m`, or none of their intervals
   * there ends in between); `edgesVersion(m)` changes whenever the edges may have.
   */
  edgesVersion(m: MarketState): number {
    return this.uses(m) ? this.#bound.version(m.index) : -1;
  }

  lowEdge(m: MarketState): number {
    return this.uses(m) ? this.#bound.lowEdge(m.index) : -Infinity;
  }

  highEdge(m: MarketState): number {
    return this.uses(m) ? this.#bound.highEdge(m.index) : Infinity;
  }

  /** Step 3: re-values the accounts the drift made due, by user id. */
  revalue(): void {
    if (!this.#all && this.#moved.length === 0) return;
    let due: number[];
    if (this.#all) due = this.#bound.all();
    else {
      const set = new Set<number>();
      for (const m of this.#moved) {
        const mark = this.#host.mark(m);
        if (mark !== undefined) this.#bound.due(m.index, mark, set);
      }
      due = [...set].sort((a, b) => a - b);
    }
    this.#all = false;
    this.#moved.length = 0;
    for (const userId of due) {
      const a = this.#ledger.account(cross(userId));
      if (a !== undefined) this.account(a);
    }
  }

  /**
   * Step 2 (and after a liquidation ends): re-values a cross account exactly, sets or clears its
   * flag, queues it at the liquidation line, and re-keys it in the bound. Skips a locked account.
   */
  account(a: LedgerAccount): void {
    const liq = this.#host.liquidations();
    if (liq.busy && liq.isLocked(cross(a.userId))) {
      // While locked it depends on the markets of its record's coins (fixed at the start).
      this.#depend(
        a,
        liq
          .records(cross(a.userId))
          .at(-1)
          ?.coins.map((c) => c.coin) ?? [],
      );
      return;
    }
    // Read off the balances (`#scan`): a fill into an account that owes and holds the same coins
    // as before builds no positions and is decided in doubles.
    const u = a.userId;
    const mask = this.#scan(a);
    let positions: CoinPosition[] | undefined;
    const owes =
      mask !== -1
        ? this.#scanOwes
        : (positions = this.positions(a)).some((p) => p.principal + p.interest > 0);
    if (!owes) {
      this.#release(a);
      return;
    }
    // The markets it depends on change only with the set of coins it holds or owes.
    const slot = this.#slot(a);
    if (mask === -1 || slot.mask !== mask || slot.maskAt !== this.#pathsAt) {
      // `#depend` takes the paths first (`#valuation`): `#pathsAt` below is theirs.
      this.#depend(a, (positions ??= this.positions(a)));
      slot.mask = mask;
      slot.maskAt = this.#pathsAt;
    }
    // Doubles first (a fill comes with every trade of the account); exact near a line.
    const rateD = this.#scanRate(a);
    const fast = rateD === undefined ? undefined : fastDecision(rateD, slot.flagged, DEFAULT_MARGIN_SETTINGS);
    if (fast !== undefined) {
      slot.flagged = fast.state.flagged;
      this.#bound.set(u, fast.tol, this.#marksOf(slot), slot);
      return;
    }
    const v = valuate((positions ??= this.positions(a)), (c) => this.#price(c));
    const rate = v === undefined ? undefined : riskRate(v);
    const st = crossState(rate, slot.flagged, DEFAULT_MARGIN_SETTINGS);
    slot.flagged = st.flagged;
    // Without a valuation (a debt coin without a price) it is looked at again at the next move.
    this.#bound.set(
      u,
      rate === undefined ? 0 : tolerance(rate, st.flagged, DEFAULT_MARGIN_SETTINGS),
      this.#marksOf(slot),
      slot,
    );
    if (st.liquidate && v !== undefined) this.#host.queue(cross(u), riskRateBp(v) ?? 0);
  }

  /** Step 4: locks the account, cancels its orders, opens the record, sends the first order. */
  begin(ref: Extract<AccountRef, { kind: 'cross' }>, riskRateBp: number): void {
    const a = this.#ledger.account(ref);
    if (a === undefined) return;
    this.#bound.set(ref.userId, undefined, []);
    const v = this.valuationCoin()?.spec.name ?? '';
    const coins = new Set(
      this.positions(a)
        .filter((p) => p.available + p.frozen + p.principal + p.interest > 0)
        .map((p) => p.coin),
    );
    if (v !== '') coins.add(v);
    this.#host.hooks.cancelAccountOrders(a);
    const sorted = [...coins].sort();
    this.#depend(a, sorted);
    const b = this.#host.liquidations().beginCoins(ref, '', sorted, 0, riskRateBp, this.#host.time);
    this.#host.hooks.applyEffects(b.effects);
    this.continue(ref);
  }

  /**
   * The running liquidation's next order and its market, when the book has something inside its
   * band (the order would trade now); else `undefined`.
   */
  #tradableOrder(
    ref: Extract<AccountRef, { kind: 'cross' }>,
    a: LedgerAccount,
  ): { order: CrossOrder; m: MarketState } | undefined {
    const liq = this.#host.liquidations();
    const record = liq.records(ref).at(-1);
    if (record === undefined) return undefined;
    const coins = record.coins.map((c) => c.coin);
    const vCoin = this.valuationCoin()?.spec.name ?? '';
    const order = crossNextOrder(liq, this.positions(a, coins), this.#crossMarket, vCoin);
    const m = order === undefined ? undefined : this.#registry.market(order.market);
    if (order === undefined || m === undefined) return undefined;
    const best = (order.side === 'sell' ? m.book.bids : m.book.asks).best()?.price;
    const inBand =
      best !== undefined && (order.side === 'sell' ? best >= order.priceTicks : best <= order.priceTicks);
    return inBand ? { order, m } : undefined;
  }

  /**
   * Whether a running cross liquidation's next order would trade now: liquidity that enters its
   * band is taken in the command that brings it (issue 29 §4), as an isolated one's.
   */
  inBand(ref: Extract<AccountRef, { kind: 'cross' }>): boolean {
    const a = this.#ledger.account(ref);
    return a !== undefined && this.#tradableOrder(ref, a) !== undefined;
  }

  /** One order within the band (when the book has liquidity there), then settle. */
  continue(ref: Extract<AccountRef, { kind: 'cross' }>): void {
    const liq = this.#host.liquidations();
    const a = this.#ledger.account(ref) as LedgerAccount;
    const record = liq.records(ref).at(-1);
    if (record === undefined) return;
    const coins = record.coins.map((c) => c.coin);
    const vCoin = this.valuationCoin()?.spec.name ?? '';
    const next = this.#tradableOrder(ref, a);
    if (next !== undefined) {
      const { order, m } = next;
      const lots = order.amount / m.baseUnitsPerLot;
      const filled = this.#host.hooks.liquidationOrder(a, m, order.side, order.priceTicks, lots);
      liq.recordOrder(ref, order, filled * m.baseUnitsPerLot, this.#host.time);
    }
    const ins = this.#ledger.account(system(INSURANCE));
    const settled = liq.settleCoins(
      ref,
      this.positions(a, coins),
      (after) => crossNextOrder(liq, after, this.#crossMarket, vCoin) !== undefined,
      (coin) => ins?.available((this.#registry.coin(coin) as CoinState).index) ?? 0,
      this.#host.time,
    );
    this.#host.hooks.applyEffects(settled.effects);
    this.#host.hooks.recordRepayments(settled.repayments);
    this.#host.hooks.afterOrder();
    this.#ledger.touched?.delete(a);
    if (settled.done) this.account(a);
  }

  /** The risk fields of a user's cross account. */
  risk(userId: number): CrossRisk {
    const ref = cross(userId);
    const a = this.#ledger.account(ref);
    let rate: number | undefined;
    if (a !== undefined) {
      const v = valuate(this.positions(a), (c) => this.#price(c));
      rate = v === undefined ? undefined : riskRateBp(v);
    }
    const repayLock = this.#host.liquidations().isLocked(ref);
    const notice = this.#slotOf(a)?.flagged ?? false;
    return { riskRateBp: rate, notice, repayLock, level: repayLock ? 3 : notice ? 2 : 1 };
  }

  /** The account's positions, every coin it holds or owes (or `coins`), in coin order. */
  positions(a: LedgerAccount, coins?: readonly string[]): CoinPosition[] {
    const states =
      coins === undefined
        ? this.#registry.coinStates()
        : coins.map((c) => this.#registry.coin(c) as CoinState);
    const out: CoinPosition[] = [];
    for (const c of states) {
      const i = c.index;
      const p = {
        coin: c.spec.name,
        available: a.available(i),
        frozen: a.frozen(i),
        principal: a.borrowed(i),
        interest: a.interest(i),
      };
      if (coins !== undefined || p.available + p.frozen + p.principal + p.interest > 0) out.push(p);
    }
    return out;
  }

  /** Re-indexes every cross account after a snapshot loads (flags are the snapshot's). */
  load(): void {
    for (const a of this.#ledger.marginAccounts()) if (a.key.kind === 'cross') this.account(a);
  }

  /** The user ids with a running or queued liquidation are not in the bound: for invariants. */
  watched(userId: number): boolean {
    return this.#bound.has(userId);
  }

  // ───────────────────────────── helpers ─────────────────────────────

  /**
   * [market index, mark] of the marked markets the account depends on: the list its interval was
   * placed at when none of them moved since (the usual case, a fill between moves), else a new one.
   */
  #marksOf(slot: CrossSlot): readonly (readonly [number, number])[] {
    const w = slot.watch;
    if (w?.live === true && this.#unmoved(slot.uses, w.marks)) return w.marks;
    const markets = this.#registry.marketStates();
    const out: [number, number][] = [];
    for (const i of slot.uses) {
      const mark = this.#host.mark(markets[i] as MarketState);
      if (mark !== undefined) out.push([i, mark]);
    }
    return out;
  }

  /** Whether `marks` is what `#marksOf` would build now for markets `uses`. */
  #unmoved(uses: readonly number[], marks: readonly (readonly [number, number])[]): boolean {
    const markets = this.#registry.marketStates();
    let k = 0;
    for (const i of uses) {
      const mark = this.#host.mark(markets[i] as MarketState);
      if (mark === undefined) continue;
      const e = marks[k++];
      if (e === undefined || e[0] !== i || e[1] !== mark) return false;
    }
    return k === marks.length;
  }

  #valuation(): ValuationPaths {
    const markets = this.#registry.marketStates();
    if (this.#paths === undefined || this.#paths.markets !== markets.length) {
      const paths = venuePaths(this.#registry);
      this.#paths = { paths, markets: markets.length };
      // New markets, new paths: every account's markets are computed again.
      this.#pathsAt++;
    }
    return this.#paths.paths;
  }

  /**
   * A bit per coin index the account holds or owes, read off its balances, building nothing (-1
   * past coin index 30: no cache, the slow way); whether it owes anything is left in `#scanOwes`.
   */
  #scan(a: LedgerAccount): number {
    const coins = this.#registry.coinStates();
    let mask = 0;
    let owes = false;
    for (let k = 0; k < coins.length; k++) {
      const i = (coins[k] as CoinState).index;
      const owed = a.owed(i);
      if (a.available(i) + a.frozen(i) + owed <= 0) continue;
      if (i > 30) return -1;
      mask |= 1 << i;
      if (owed > 0) owes = true;
    }
    this.#scanOwes = owes;
    return mask;
  }

  /**
   * The risk rate in doubles (assets ÷ debt) read off the balances, building nothing; undefined
   * without debt or when a debt coin has no price.
   */
  #scanRate(a: LedgerAccount): number | undefined {
    const coins = this.#registry.coinStates();
    let assets = 0;
    let debt = 0;
    for (let k = 0; k < coins.length; k++) {
      const c = coins[k] as CoinState;
      const i = c.index;
      const held = a.available(i) + a.frozen(i);
      const owed = a.owed(i);
      if (held + owed <= 0) continue;
      const price = this.#priceD(c);
      if (price === null) {
        if (owed > 0) return undefined;
        continue;
      }
      assets += held * price;
      debt += owed * price;
    }
    return debt > 0 ? assets / debt : undefined;
  }

  /** A coin's price in doubles at the current marks (cached per marks version); null: none. */
  #priceD(c: CoinState): number | null {
    const version = this.#host.marksVersion();
    if (this.#pricesAt !== version) {
      this.#pricesD.length = 0;
      this.#pricesAt = version;
    }
    let price = this.#pricesD[c.index];
    if (price === undefined) {
      price = this.#valuation().priceD(c.spec.name, this.#markOf);
      this.#pricesD[c.index] = price;
    }
    return price;
  }

  /** An account that owes nothing: no markets, flag or interval of its own any more. */
  #release(a: LedgerAccount): void {
    const slot = this.#slot(a);
    if (slot.uses.length > 0) this.#depend(a, []);
    slot.mask = -1;
    this.#bound.set(a.userId, undefined, [], slot);
    slot.flagged = false;
  }

  /** The account's `CrossSlot` (made for this instance: a slot of an earlier one is not kept). */
  #slot(a: LedgerAccount): CrossSlot {
    let slot = this.#slotOf(a);
    if (slot === undefined) CROSS_SLOT.set(a, (slot = new CrossSlot(this)));
    return slot;
  }

  /** The account's `CrossSlot` if this instance made one. */
  #slotOf(a: LedgerAccount | undefined): CrossSlot | undefined {
    const slot = a === undefined ? undefined : CROSS_SLOT.get(a);
    return slot?.owner === this ? slot : undefined;
  }

  #price(coin: string): Ratio | undefined {
    return this.#valuation().price(coin, this.#markOf);
  }

  readonly #markOf = (name: string): number | undefined => {
    const m = this.#registry.market(name);
    return m === undefined ? undefined : this.#host.mark(m);
  };

  /**
   * Keeps `#uses` in step with the markets on the paths of `coins`; a market no other account
   * uses any more is released at once (its mark dropped unless something else keeps it).
   */
  #depend(a: LedgerAccount, coins: readonly (string | CoinPosition)[]): void {
    const slot = this.#slot(a);
    slot.mask = -1;
    const paths = this.#valuation();
    const now = new Set<number>();
    for (const c of coins)
      for (const leg of paths.path(typeof c === 'string' ? c : c.coin) ?? []) {
        const m = this.#registry.market(leg.market);
        if (m !== undefined) now.add(m.index);
      }
    const before = slot.uses;
    const markets = this.#registry.marketStates();
    for (const i of now)
      if (!before.includes(i)) {
        this.#uses[i] = (this.#uses[i] ?? 0) + 1;
        this.#host.activate(markets[i] as MarketState);
      }
    for (const i of before)
      if (!now.has(i)) {
        this.#uses[i] = (this.#uses[i] ?? 0) - 1;
        if (this.#uses[i] === 0) this.#host.release(markets[i] as MarketState);
      }
    slot.uses = now.size === 0 ? [] : [...now].sort((x, y) => x - y);
  }

  readonly #crossMarket = (base: string, quote: string): CrossMarket | undefined => {
    const m = this.#registry.market(`${base}_${quote}`);
    if (m === undefined || m.base.spec.name !== base || m.quote.spec.name !== quote) return undefined;
    return { ...this.#host.market(m), mark: this.#host.mark(m) };
  };
}
