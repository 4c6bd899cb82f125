/**
 * @module liquidation — the plan of a forced liquidation of an isolated margin account, the
 * insurance fund's cover of a shortfall, bad debt against the lenders, the cascade queue, and the
 * liquidation record. Pure and deterministic: it reads positions, the mark and the fund's balance
 * as arguments, and returns ledger effects, the order to send through the book, and records.
 *
 * ## Steps (the engine's glue calls them in this order)
 * 1. **Begin** (`begin`), in the engine step whose price move put the account at or below its
 *    liquidation line: the account is locked (`repayLock`: no order, transfer, borrow or repayment
 *    of its owner until the end), its open orders are cancelled (an effect for the engine), its
 *    loan records become status 3, and a record opens.
 * 2. **Order** (`nextOrder`): one immediate-or-cancel limit order that closes the position,
 *    bounded by the price band: a long (owes quote, holds base) sells all the base it does not
 *    owe, at no less than ⌈mark × (1 − bandBp)⌉; a short (owes base) buys what it owes beyond what
 *    it holds, rounded up to a lot, at no more than ⌊mark × (1 + bandBp)⌋, as much as its quote
 *    beyond its quote debt affords at that limit (rounded down to a lot). Amounts are whole lots.
 *    The engine matches it like a taker order without a trading fee (the liquidation fee replaces it).
 * 3. **Settle** (`settle`), after the order's fills are in the account: what the account holds of
 *    each coin it owes repays it (interest first, then principal, as `repayAll`). If another order
 *    would still trade (the band stopped the order half-way), the liquidation stays open and
 *    continues at the next price change, at the next command that brings liquidity inside its
 *    band, or at its own timer deadline, `retryMs` after it was last taken up (`nextRetry`). Otherwise it ends:
 *    - **Shortfall**: what is still owed in a coin. The insurance fund (`system:insurance`, fed by
 *      liquidation fees and the venue's share of interest, `loans.ts`) covers it as far as its
 *      available balance of that coin goes (it moves to the account, which repays with it).
 *    - **Bad debt** = shortfall − insurance paid, written off against the lenders of the account's
 *      records pro rata (`LoanBook.writeOff`, exact largest-remainder rounding). No money is
 *      created: the lenders' claims shrink by exactly that.
 *    - **Fee**: in each coin repaid, floor(repaid from the account's own money × feeBp ÷ 10,000),
 *      capped by what the account still holds of that coin, paid to the insurance fund. So the fee
 *      never makes a shortfall, and an account with a shortfall pays none in that coin.
 *    - The loan records close as 4 (liquidated and repaid); what remains stays in the isolated
 *      account, available, and the lock is lifted.
 *
 * ## Cascades
 * Liquidations sell into the book and move the mark, which can put more accounts at their line.
 * `LiquidationQueue` orders waiting accounts by risk rate (lowest first) then account key, and one
 * engine step processes at most `maxPerStep` of them (running ones first, oldest record first);
 * the rest wait for the next step (another price change or the timer tick). The order depends only
 * on journaled state, so a replay runs the same liquidations.
 */
import type { PriceTicks } from '../domain/money.ts';
import type { CoinPosition, Ratio } from './lines.ts';
import type { LoanBook, RepaymentRecord } from './loans.ts';
import { accountKey, system, type AccountRef, type Effects, type TimeMs, type Units } from './movement.ts';
import { BP } from './settings.ts';

export interface LiquidationSettings {
  /** How far from the mark a liquidation order may trade, BP of the mark. */
  readonly bandBp: number;
  /** The liquidation fee, BP of the debt the account repaid with its own money. */
  readonly feeBp: number;
  /** The most liquidations one engine step processes. */
  readonly maxPerStep: number;
  /**
   * How long after it was last taken up a running liquidation is retried at the latest, ms: its
   * own timer deadline (`nextRetry`; absent: `DEFAULT_RETRY_MS`).
   */
  readonly retryMs?: number;
}

/** A running liquidation is taken up again at least once a second. */
export const DEFAULT_RETRY_MS = 1_000;

export const DEFAULT_LIQUIDATION_SETTINGS: LiquidationSettings = Object.freeze({
  bandBp: 300,
  feeBp: 100,
  maxPerStep: 32,
  retryMs: DEFAULT_RETRY_MS,
});

/** The market an isolated account trades in, as the liquidation needs it. */
export interface LiquidationMarket {
  readonly name: string;
  readonly base: string;
  readonly quote: string;
  /** Value of one base unit at one tick, in quote units (`unitPrice(1, …)` of `lines.ts`). */
  readonly perTick: Ratio;
  /** Base units per lot: order amounts are whole lots. */
  readonly lotUnits: Units;
}

/** The order a liquidation sends: immediate-or-cancel, limit at the band's edge. */
export interface LiquidationOrder {
  readonly side: 'sell' | 'buy';
  readonly priceTicks: PriceTicks;
  /** Base units, a whole number of lots. */
  readonly amount: Units;
}

/** A coin's outcome in a liquidation record. */
export interface CoinOutcome {
  readonly coin: string;
  /** Repaid with the account's own money. */
  repaid: Units;
  /** Owed after the account's money ran out. */
  shortfall: Units;
  /** Covered by the insurance fund (also repaid to the lenders). */
  insurance: Units;
  /** Written off against the lenders: shortfall − insurance. */
  badDebt: Units;
  /** The liquidation fee, to the insurance fund. */
  fee: Units;
}

/** One liquidation, for the owner's bills and the operator (`bourse liquidations`). */
export interface LiquidationRecord {
  readonly id: number;
  readonly account: AccountRef;
  readonly market: string;
  readonly startMs: TimeMs;
  readonly markAtStart: PriceTicks;
  /** The risk rate that triggered it, BP, rounded down. */
  readonly riskRateBp: number;
  /** Orders sent, with what filled. */
  readonly orders: {
    timeMs: TimeMs;
    side: 'sell' | 'buy';
    priceTicks: PriceTicks;
    amount: Units;
    filled: Units;
  }[];
  readonly coins: CoinOutcome[];
  status: 'running' | 'done';
  endMs: TimeMs;
}

/** What the engine must do beside applying the effects. */
export interface BeginResult {
  readonly record: LiquidationRecord;
  readonly effects: Effects;
  /** Cancel every open order of this account (before the liquidation's first order). */
  readonly cancelOrdersOf: AccountRef;
}

export interface SettleResult {
  readonly effects: Effects;
  /** The loan book's repayment records of this step (for getRepayments / getCrossRepayRecords). */
  readonly repayments: readonly RepaymentRecord[];
  readonly done: boolean;
}

export interface LiquidationsSnapshot {
  readonly nextId: number;
  readonly records: readonly LiquidationRecord[];
  /** [account key, retry deadline] of the running liquidations (issue 29); absent when none. */
  readonly retryAt?: readonly (readonly [string, number])[];
}

const held = (p: CoinPosition): Units => p.available + p.frozen;

/** The book-side orders, records and queue of forced liquidations. See the module comment. */
export class Liquidations {
  readonly #s: LiquidationSettings;
  readonly #loans: LoanBook;
  readonly #running = new Map<string, LiquidationRecord>();
  readonly #records: LiquidationRecord[] = [];
  /** Account key → when the running liquidation is retried at the latest (`nextRetry`). */
  readonly #retryAt = new Map<string, TimeMs>();
  #nextId = 1;

  constructor(
    loans: LoanBook,
    settings: LiquidationSettings = DEFAULT_LIQUIDATION_SETTINGS,
    snapshot?: LiquidationsSnapshot,
  ) {
    this.#loans = loans;
    this.#s = settings;
    if (snapshot !== undefined) {
      this.#nextId = snapshot.nextId;
      for (const r of structuredClone(snapshot.records)) {
        this.#records.push(r);
        if (r.status === 'running') this.#running.set(accountKey(r.account), r);
      }
      const retry = new Map(snapshot.retryAt ?? []);
      // A snapshot from before the retry deadline: retried at the first timer tick.
      for (const [key, r] of this.#running)
        this.#retryAt.set(key, retry.get(key) ?? r.startMs + this.#retryMs);
    }
  }

  get #retryMs(): number {
    return this.#s.retryMs ?? DEFAULT_RETRY_MS;
  }

  /** The earliest retry deadline of a running liquidation, or `undefined` when none runs. */
  nextRetry(): TimeMs | undefined {
    let next: TimeMs | undefined;
    for (const t of this.#retryAt.values()) if (next === undefined || t < next) next = t;
    return next;
  }

  get settings(): LiquidationSettings {
    return this.#s;
  }

  /** Whether an account is locked by a running liquidation (`repayLock`). */
  isLocked(account: AccountRef): boolean {
    return this.#running.has(accountKey(account));
  }

  /** Whether any liquidation runs. */
  get busy(): boolean {
    return this.#running.size > 0;
  }

  /** Running liquidations, oldest record first. */
  running(): LiquidationRecord[] {
    return [...this.#running.values()];
  }

  /** Every record, oldest first (the operator's list); `of` an account for its owner's bills. */
  records(of?: AccountRef): LiquidationRecord[] {
    if (of === undefined) return [...this.#records];
    const key = accountKey(of);
    return this.#records.filter((r) => accountKey(r.account) === key);
  }

  /** Step 1: lock, cancel orders, loan records to status 3, open a record. */
  begin(
    account: AccountRef,
    market: LiquidationMarket,
    mark: PriceTicks,
    riskRateBp: number,
    nowMs: TimeMs,
  ): BeginResult {
    return this.beginCoins(account, market.name, [market.base, market.quote], mark, riskRateBp, nowMs);
  }

  /**
   * Step 1 for any account: `coins` are the coins the record follows (an isolated account's base
   * and quote; a cross account's coins held or owed, in name order), `market` the record's market
   * ('' for a cross account, whose `markAtStart` is 0: it has no single mark).
   */
  beginCoins(
    account: AccountRef,
    market: string,
    coins: readonly string[],
    mark: PriceTicks,
    riskRateBp: number,
    nowMs: TimeMs,
  ): BeginResult {
    const key = accountKey(account);
    if (this.#running.has(key)) throw new Error(`${key} is already being liquidated`);
    const record: LiquidationRecord = {
      id: this.#nextId++,
      account,
      market,
      startMs: nowMs,
      markAtStart: mark,
      riskRateBp,
      orders: [],
      coins: coins.map((coin) => ({
        coin,
        repaid: 0,
        shortfall: 0,
        insurance: 0,
        badDebt: 0,
        fee: 0,
      })),
      status: 'running',
      endMs: 0,
    };
    this.#running.set(key, record);
    this.#retryAt.set(key, nowMs + this.#retryMs);
    this.#records.push(record);
    const effects = this.#loans.beginLiquidation(account, coins, nowMs);
    return { record, effects, cancelOrdersOf: account };
  }

  /**
   * Step 2: the order that closes the position within the band around `mark`, or `undefined` when
   * nothing more can trade (closed, nothing to sell, nothing affordable, or less than a lot).
   * `base` and `quote` are the account's positions with its orders cancelled and debts advanced.
   */
  nextOrder(
    market: LiquidationMarket,
    base: CoinPosition,
    quote: CoinPosition,
    mark: PriceTicks,
  ): LiquidationOrder | undefined {
    const owedB = base.principal + base.interest;
    const owedQ = quote.principal + quote.interest;
    const lot = market.lotUnits;
    if (owedQ > held(quote) && held(base) > owedB) {
      const amount = Math.floor((held(base) - owedB) / lot) * lot;
      const priceTicks = Number((BigInt(mark) * BigInt(BP - this.#s.bandBp) + BigInt(BP - 1)) / BigInt(BP));
      return amount > 0 && priceTicks > 0 ? { side: 'sell', priceTicks, amount } : undefined;
    }
    if (owedB > held(base) && held(quote) > owedQ) {
      const priceTicks = Number((BigInt(mark) * BigInt(BP + this.#s.bandBp)) / BigInt(BP));
      const need = Math.ceil((owedB - held(base)) / lot) * lot;
      // Quote per base unit at the limit: priceTicks × perTick; lots affordable, rounded down.
      const spare = BigInt(held(quote) - owedQ);
      const perLot = BigInt(priceTicks) * market.perTick.num * BigInt(lot);
      const lots = perLot === 0n ? 0n : (spare * market.perTick.den) / perLot;
      const amount = Math.min(need, Number(lots) * lot);
      return amount > 0 ? { side: 'buy', priceTicks, amount } : undefined;
    }
    return undefined;
  }

  /** Records an order sent for a running liquidation and what of it filled. */
  recordOrder(account: AccountRef, order: LiquidationOrder, filled: Units, nowMs: TimeMs): void {
    const r = this.#runningOf(account);
    r.orders.push({
      timeMs: nowMs,
      side: order.side,
      priceTicks: order.priceTicks,
      amount: order.amount,
      filled,
    });
  }

  /**
   * Step 3: repays what the account holds of each coin it owes; ends the liquidation (shortfall,
   * insurance, bad debt, fee, records closed as 4, lock lifted) when `nextOrder` has nothing more
   * to trade. `base` and `quote` are the account's positions after the order's fills (debts as the
   * ledger holds them; interest is brought to `nowMs` here). `insuranceAvailable` is the fund's
   * available balance of a coin.
   */
  settle(
    account: AccountRef,
    market: LiquidationMarket,
    base: CoinPosition,
    quote: CoinPosition,
    mark: PriceTicks,
    insuranceAvailable: (coin: string) => Units,
    nowMs: TimeMs,
  ): SettleResult {
    return this.settleCoins(
      account,
      [base, quote],
      ([b, q]) => this.nextOrder(market, b as CoinPosition, q as CoinPosition, mark) !== undefined,
      insuranceAvailable,
      nowMs,
    );
  }

  /**
   * Step 3 for any account: `positions` are the record's coins after the order's fills; `more`
   * tells, from the positions after this step's repayments, whether another order would still
   * trade (then the liquidation stays open).
   */
  settleCoins(
    account: AccountRef,
    positions: readonly CoinPosition[],
    more: (after: CoinPosition[]) => boolean,
    insuranceAvailable: (coin: string) => Units,
    nowMs: TimeMs,
  ): SettleResult {
    const r = this.#runningOf(account);
    const effects: Effects = { movements: [], debts: [] };
    const repayments: RepaymentRecord[] = [];
    const add = (e: Effects): void => {
      effects.movements.push(...e.movements);
      effects.debts.push(...e.debts);
    };
    const repay = (coin: string, amount: Units, available: Units): void => {
      const res = this.#repay(account, coin, amount, available, nowMs);
      add(res.effects);
      repayments.push(...res.repayments);
    };
    const left = new Map<string, { available: Units; owed: Units }>();
    for (const p of positions) {
      const o = this.#loans.owedAt(account, p.coin, nowMs);
      const owed = o.principal + o.interest;
      const pay = Math.min(p.available, owed);
      if (pay > 0) repay(p.coin, pay, p.available);
      this.#outcome(r, p.coin).repaid += pay;
      left.set(p.coin, { available: p.available - pay, owed: owed - pay });
    }
    const after = (p: CoinPosition): CoinPosition => {
      const l = left.get(p.coin) as { available: Units; owed: Units };
      return { coin: p.coin, available: l.available, frozen: p.frozen, principal: l.owed, interest: 0 };
    };
    if (more(positions.map(after))) {
      this.#retryAt.set(accountKey(account), nowMs + this.#retryMs);
      return { effects, repayments, done: false };
    }
    for (const p of positions) {
      const l = left.get(p.coin) as { available: Units; owed: Units };
      const out = this.#outcome(r, p.coin);
      if (l.owed > 0) {
        const cover = Math.min(l.owed, Math.max(0, insuranceAvailable(p.coin)));
        if (cover > 0) {
          effects.movements.push({
            kind: 'insuranceCover',
            coin: p.coin,
            amount: cover,
            from: system('insurance'),
            fromPocket: 'available',
            to: account,
            toPocket: 'available',
            ref: r.id,
          });
          repay(p.coin, cover, cover);
        }
        const bad = l.owed - cover;
        if (bad > 0) add(this.#loans.writeOff(account, p.coin, bad, nowMs).effects);
        out.shortfall += l.owed;
        out.insurance += cover;
        out.badDebt += bad;
      }
      const fee = Math.min(Math.floor((out.repaid * this.#s.feeBp) / BP), l.available);
      if (fee > 0) {
        effects.movements.push({
          kind: 'liquidationFee',
          coin: p.coin,
          amount: fee,
          from: account,
          fromPocket: 'available',
          to: system('insurance'),
          toPocket: 'available',
          ref: r.id,
        });
        out.fee += fee;
      }
    }
    r.status = 'done';
    r.endMs = nowMs;
    this.#running.delete(accountKey(account));
    this.#retryAt.delete(accountKey(account));
    return { effects, repayments, done: true };
  }

  snapshot(): LiquidationsSnapshot {
    const retryAt = [...this.#retryAt].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return {
      nextId: this.#nextId,
      records: structuredClone(this.#records),
      ...(retryAt.length > 0 ? { retryAt } : {}),
    };
  }

  #repay(
    account: AccountRef,
    coin: string,
    amount: Units,
    available: Units,
    nowMs: TimeMs,
  ): { effects: Effects; repayments: RepaymentRecord[] } {
    const res = this.#loans.repayAll(coin, { borrower: account, amount, available, timeMs: nowMs });
    if (!res.ok) throw new Error(`liquidation repayment refused: ${res.message}`);
    return res;
  }

  #outcome(r: LiquidationRecord, coin: string): CoinOutcome {
    const o = r.coins.find((c) => c.coin === coin);
    if (o === undefined) throw new Error(`liquidation ${r.id}: no coin ${coin}`);
    return o;
  }

  #runningOf(account: AccountRef): LiquidationRecord {
    const r = this.#running.get(accountKey(account));
    if (r === undefined) throw new Error('no running liquidation of this account');
    return r;
  }
}

/**
 * Accounts waiting for a liquidation slot: a cascade's order. `take` hands out the lowest risk rate
 * first, ties by account key; an account already waiting keeps its latest risk rate.
 */
export class LiquidationQueue {
  readonly #waiting = new Map<string, { account: AccountRef; riskRateBp: number }>();

  constructor(snapshot: readonly { account: AccountRef; riskRateBp: number }[] = []) {
    for (const w of snapshot) this.add(w.account, w.riskRateBp);
  }

  /** The waiting accounts, in cascade order, without removing them. */
  snapshot(): { account: AccountRef; riskRateBp: number }[] {
    return [...this.#sorted()].map(([, v]) => ({ ...v }));
  }

  get size(): number {
    return this.#waiting.size;
  }

  add(account: AccountRef, riskRateBp: number): void {
    this.#waiting.set(accountKey(account), { account, riskRateBp });
  }

  /** Removes an account (repaid or recovered before its turn). */
  delete(account: AccountRef): void {
    this.#waiting.delete(accountKey(account));
  }

  /** The next `n` accounts in cascade order, removed from the queue. */
  take(n: number): { account: AccountRef; riskRateBp: number }[] {
    const out = this.#sorted().slice(0, Math.max(0, n));
    for (const [k] of out) this.#waiting.delete(k);
    return out.map(([, v]) => v);
  }

  #sorted(): [string, { account: AccountRef; riskRateBp: number }][] {
    return [...this.#waiting.entries()].sort(([ka, a], [kb, b]) =>
      a.riskRateBp !== b.riskRateBp ? a.riskRateBp - b.riskRateBp : ka < kb ? -1 : ka > kb ? 1 : 0,
    );
  }
}

/**
 * One engine step's liquidation budget: the running liquidations to continue (oldest first) and
 * the waiting accounts to begin, `maxPerStep` in all.
 */
export function stepPlan(
  liquidations: Liquidations,
  queue: LiquidationQueue,
): { continueRecords: LiquidationRecord[]; begin: { account: AccountRef; riskRateBp: number }[] } {
  const max = liquidations.settings.maxPerStep;
  const continueRecords = liquidations.running().slice(0, max);
  return { continueRecords, begin: queue.take(max - continueRecords.length) };
}
