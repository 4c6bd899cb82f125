/**
 * @module margin (engine) — the glue between the pure margin domain (src/margin/*) and the
 * ledger: margin accounts' transfers, the lending pool and offers, borrowing, repayment, hourly
 * interest on FireTimers, margin orders' accounts, express borrowing and auto-repayment.
 *
 * The domain modules decide (lines, lending book, loan records) and return movements and debt
 * changes; this module checks who and where, applies those to the ledger (each user-side change a
 * bill), keeps what the domain does not (preferences, pool funding; closed loan records and
 * repayments are LoanClosed and LoanRepaid events, kept by the history store: issue 29), and
 * answers the margin reads. Every limit (borrow, express borrow, transfer out, the limits shown)
 * values the account at the risk step's marks (src/engine/limit-prices.ts), never at a last trade
 * price; the pool's funding keeps the exact range (exact-range.ts). docs/margin.md gives the rules
 * and numbers; docs/engine.md the place of this module.
 *
 * Commands: MarginTransfer, FundLendingPool, PlaceLoanOffer, CancelLoanOffer, ChangeLoanLoop,
 * ChangeInvestMark, Borrow, RepayLoan, RepayAll, SetMarginPreferences (`apply`); the hourly
 * interest rides on FireTimers (`fire`, `nextDeadline`). Every refusal changes nothing.
 */
import {
  CROSS_ACCOUNT,
  ISOLATED_ACCOUNT,
  type AcctType,
  MARGIN_COMMAND_TYPES,
  type Command,
  type MarginCommand,
  type MarginTransfer,
} from '../domain/commands.ts';
import type { BillType } from '../domain/events.ts';
import { formatUnitsTrim, type CoinUnits, type Lots, type PriceTicks } from '../domain/money.ts';
import { LendingBook, type LendingBookSnapshot, type LoanOffer } from '../margin/lending-book.ts';
import {
  checkBorrowLimit,
  checkTransferOut,
  borrowLimit,
  ratio,
  riskRateBp,
  surelyWithinBorrowLimit,
  transferOutLimit,
  valuate,
  type CoinPosition,
  type PricedCoin,
  type Ratio,
  type Valuation,
} from '../margin/lines.ts';
import {
  LoanBook,
  type LenderKind,
  type LenderTotals,
  type LoanBookSnapshot,
  type LoanRecord,
  type RepaymentRecord,
} from '../margin/loans.ts';
import {
  accountKey,
  cross,
  isolated,
  spot,
  system,
  type AccountRef,
  type Effects,
  type MovementKind,
  type Refusal,
} from '../margin/movement.ts';
import {
  checkLendingOpen,
  checkLoanAmount,
  checkRate,
  checkTerm,
  defaultLendingSettings,
  DEFAULT_MARGIN_SETTINGS,
  type LendingSettings,
  type MarginSettings,
} from '../margin/settings.ts';
import { refused, type CommandContext } from './command-context.ts';
import type { ApplyResult } from './results.ts';
import { outsideCreditRefusal, type OutsideHoldings } from './exact-range.ts';
import { claimAccountSlot, LENDING_POOL, type Ledger, type LedgerAccount } from './ledger.ts';
import type { LimitPrices } from './limit-prices.ts';
import { carriesLoss, unitsValue, orderLoss, sum } from '../margin/order-loss.ts';
import { lessRestingLoss, restingLoss, UNVALUED } from './resting-loss.ts';
import type { CoinState, MarketState, Registry, User } from './registry.ts';

const MARGIN_TYPES: ReadonlySet<string> = new Set(MARGIN_COMMAND_TYPES);

export const isMarginCommand = (cmd: Command): cmd is MarginCommand => MARGIN_TYPES.has(cmd.type);

/** A margin account's defaults (setExpressState / setRepayState). */
export interface MarginPreferences {
  readonly express: boolean;
  readonly autoRepay: boolean;
}

const NO_PREFERENCES: MarginPreferences = Object.freeze({ express: false, autoRepay: false });
/** A margin account's preferences, once looked up: on the account, this module's alone. */
const PREFERENCES = claimAccountSlot<MarginPreferences>('the margin preferences (margin.ts)');

/** One coin of a margin account: what it holds and owes (as charged so far). */
export interface MarginCoinView {
  readonly coin: string;
  readonly available: CoinUnits;
  readonly frozen: CoinUnits;
  readonly borrowed: CoinUnits;
  readonly interest: CoinUnits;
  /** What may still be borrowed of the coin (lines.ts `borrowLimit`). */
  readonly borrowLimit: CoinUnits;
  /** What may be transferred out of the coin (lines.ts `transferOutLimit`). */
  readonly transferOutLimit: CoinUnits;
}

/** A margin account as the edge reads it. */
export interface MarginAccountView {
  readonly userId: number;
  readonly acctType: 1 | 2;
  /** The isolated account's market; '' for cross. */
  readonly market: string;
  /** Isolated: base then quote. Cross: every coin the account holds or owes, in coin order. */
  readonly coins: readonly MarginCoinView[];
  /** Assets ÷ debt in basis points, rounded down; undefined without debt (or not valued). */
  readonly riskRateBp: number | undefined;
  /** The coin values are in: the market's quote (isolated) or the cross valuation coin. */
  readonly valuationCoin: string;
  /** Assets and debt in the valuation coin, exact; undefined when a debt cannot be valued. */
  readonly valuation: Valuation | undefined;
  readonly settings: MarginSettings;
  readonly preferences: MarginPreferences;
}

/** What the margin module answers (engine.margin). */
export interface MarginView {
  /** A user's isolated (1, with the market) or cross (2, market '') account; undefined for an unknown user or market. */
  account(userId: number, acctType: 1 | 2, market: string): MarginAccountView | undefined;
  /** Every margin account the user ever opened, isolated (by market) then cross. */
  accountsOf(userId: number): MarginAccountView[];
  /** The open lending offers of a coin with something left to lend, cheapest first (getLoans). */
  openOffers(coin: string): readonly LoanOffer[];
  /** Every offer a user made, newest first. */
  offersOf(userId: number): LoanOffer[];
  /** The lending pool's offers, newest first. */
  poolOffers(): LoanOffer[];
  /**
   * Open loan records borrowed by one margin account, newest first (getLoanRecords). Closed records
   * and every repayment are in the history store (LoanClosed, LoanRepaid events; issue 29).
   */
  loansOf(userId: number, acctType: 1 | 2, market: string): LoanRecord[];
  /** Open loan records lent by a user, newest first. */
  loansLentBy(userId: number): LoanRecord[];
  loan(loanId: number): LoanRecord | undefined;
  /** Every open loan record, oldest first. */
  openLoans(): IterableIterator<LoanRecord>;
  /** What the pool's and users' records of `coin` came to: interest received, principal out, bad debt. */
  lenderTotals(coin: string): Readonly<Record<LenderKind, LenderTotals>>;
  /** An isolated market's settings, or cross's (market ''). Undefined for an unknown market. */
  marginSettings(market: string): MarginSettings | undefined;
  /** A coin's lending settings; undefined for an unknown coin. */
  lendingSettings(coin: string): LendingSettings | undefined;
  preferences(userId: number, acctType: 1 | 2, market: string): MarginPreferences;
  /** What the operator has put into the lending pool, per coin. */
  poolFunded(coin: string): CoinUnits;
  /** Interest paid so far in `coin`: to the lenders, and the venue's share to the insurance fund. */
  interestPaid(coin: string): { readonly lenders: CoinUnits; readonly insurance: CoinUnits };
}

/** The margin part of a snapshot (version 4). */
export interface MarginSnapshot {
  readonly lending: LendingBookSnapshot;
  readonly loans: LoanBookSnapshot;
  /** [accountKey, express, autoRepay], sorted. */
  readonly preferences: [string, boolean, boolean][];
  /**
   * Before issue 29: [accountKey, repayments oldest first]. Repayments are in the history store now;
   * a snapshot that still carries them loads (they are ignored) and none is written.
   */
  readonly repayments?: [string, RepaymentRecord[]][];
  /** [coin, units], sorted. */
  readonly poolFunded: [string, CoinUnits][];
  readonly fundingIds: string[];
  /** [coin, interest paid to lenders, to insurance], sorted. */
  readonly interestPaid: [string, CoinUnits, CoinUnits][];
  readonly nextTimer: number | null;
}

/** What a margin movement's bill is called on the user's side. */
const MOVEMENT_BILL: Readonly<Record<MovementKind, BillType>> = {
  loanOffer: 'loanOffer',
  loanCancel: 'loanCancel',
  borrow: 'borrow',
  repayPrincipal: 'repayPrincipal',
  repayInterest: 'repayInterest',
  interestShare: 'interestShare',
  liquidationFee: 'liquidationFee',
  insuranceCover: 'insuranceCover',
};

/** A resolved margin account name: its key and, for isolated, its market. */
interface Target {
  readonly key: AccountRef;
  readonly market: MarketState | undefined;
  readonly settings: MarginSettings;
}

const fail = (r: Refusal): ApplyResult => refused(r.result, r.message);
const isRefusal = (x: unknown): x is ApplyResult =>
  typeof x === 'object' && x !== null && 'result' in x && 'events' in x;

export class Margin implements MarginView {
  readonly #ctx: CommandContext;
  readonly #ledger: Ledger;
  readonly #registry: Registry;
  /** The prices every limit reads: the risk step's marks (src/engine/limit-prices.ts). */
  readonly #prices: LimitPrices;
  /** The venue's holdings from outside, which the pool's funding must keep within the exact range. */
  readonly #outside: OutsideHoldings;
  readonly #lendingSettings = (coin: string): LendingSettings | undefined => {
    const c = this.#registry.coin(coin);
    if (c === undefined) return undefined;
    // Every repayment reads them: made once per coin (and again should its decimals change).
    let s = this.#lendingSettingsMade.get(c);
    if (s === undefined || s.coin !== coin || s.unitDecimal !== c.spec.unitDecimal) {
      s = defaultLendingSettings(coin, c.spec.unitDecimal);
      this.#lendingSettingsMade.set(c, s);
    }
    return s;
  };
  readonly #lendingSettingsMade = new Map<CoinState, LendingSettings>();
  /**
   * The ledger account of a movement's or debt's account, by the reference object: loan records
   * keep theirs for life, so repaying and charging them finds the account without a text key.
   */
  #ledgerAccounts = new WeakMap<AccountRef, LedgerAccount>();
  #lending: LendingBook;
  #loans: LoanBook;
  /** By account key; each ledger account keeps its own at hand too (`PREFERENCES`). */
  readonly #preferences = new Map<string, MarginPreferences>();
  readonly #poolFunded = new Map<string, CoinUnits>();
  readonly #fundingIds = new Set<string>();
  /** Per coin: interest paid to lenders and to the insurance fund (movement totals). */
  readonly #interestPaid = new Map<string, [CoinUnits, CoinUnits]>();
  /** When the earliest open loan's next hour begins (may be early after a repayment: firing then is harmless). */
  #nextTimer: number | undefined;
  /** Coins fills brought into margin accounts during this command: for auto-repayment. */
  #received: [LedgerAccount, CoinState, CoinUnits][] = [];

  /**
   * `prices`: what every limit is valued at; `fundsHeld`: deposits credited less settled
   * withdrawals of a coin, for the exact range of the pool's funding (exact-range.ts).
   */
  constructor(
    ctx: CommandContext,
    ledger: Ledger,
    registry: Registry,
    prices: LimitPrices,
    fundsHeld: (coin: string) => bigint,
  ) {
    this.#ctx = ctx;
    this.#ledger = ledger;
    this.#registry = registry;
    this.#prices = prices;
    this.#outside = { funds: fundsHeld, pool: (coin) => BigInt(this.poolFunded(coin)) };
    this.#lending = new LendingBook(this.#lendingSettings);
    this.#loans = new LoanBook(this.#lending, this.#lendingSettings, undefined, this.#closed);
  }

  apply(cmd: MarginCommand): ApplyResult {
    // A frozen user (issue 16) moves no money: no transfers, borrowing or new offers. Repaying,
    // cancelling offers and preferences stay open, as cancelling orders does.
    if (
      (cmd.type === 'MarginTransfer' || cmd.type === 'Borrow' || cmd.type === 'PlaceLoanOffer') &&
      this.#isFrozen(cmd.userId)
    )
      return refused('ACCOUNT_FROZEN');
    switch (cmd.type) {
      case 'MarginTransfer':
        return this.#transfer(cmd);
      case 'FundLendingPool':
        return this.#fundPool(cmd.fundingId, cmd.coin, cmd.amount, cmd.dailyRatePpm, cmd.days);
      case 'PlaceLoanOffer': {
        const user = this.#registry.user(cmd.userId);
        if (user === undefined) return refused('USER_NOT_FOUND');
        const coin = this.#registry.coin(cmd.coin);
        if (coin === undefined) return refused('UNKNOWN_COIN', `unknown coin '${cmd.coin}'`);
        const r = this.#lending.place({
          lender: spot(cmd.userId),
          coin: cmd.coin,
          amount: cmd.amount,
          dailyRatePpm: cmd.dailyRatePpm,
          days: cmd.days,
          loop: cmd.loop === true,
          timeMs: this.#ctx.time,
          available: user.spot.available(coin.index),
        });
        if (!r.ok) return fail(r);
        this.#applyEffects(r.effects);
        return this.#ok({ offerId: r.offer.id });
      }
      case 'CancelLoanOffer': {
        const r = this.#lending.cancel(cmd.offerId, spot(cmd.userId));
        if (!r.ok) return fail(r);
        this.#applyEffects(r.effects);
        return this.#ok();
      }
      case 'ChangeLoanLoop': {
        const r = this.#lending.changeLoop(cmd.offerId, spot(cmd.userId), cmd.loop === true);
        return r.ok ? this.#ok() : fail(r);
      }
      case 'ChangeInvestMark': {
        const r = this.#loans.changeInvestMark(cmd.loanId, spot(cmd.userId), cmd.investMark === true);
        return r.ok ? this.#ok() : fail(r);
      }
      case 'Borrow':
        return this.#borrow(cmd);
      case 'RepayLoan':
        return this.#repayLoan(cmd.userId, cmd.loanId, cmd.amount);
      case 'RepayAll':
        return this.#repayAll(cmd);
      case 'SetMarginPreferences': {
        const target = this.#target(cmd.userId, cmd.acctType, cmd.market);
        if (isRefusal(target)) return target;
        const given = [cmd.express, cmd.autoRepay].filter((v) => v !== undefined);
        if (given.length === 0 || !given.every((v) => typeof v === 'boolean'))
          return refused('INVALID_PARAMETER', 'give express and/or autoRepay as true or false');
        const key = accountKey(target.key);
        const now = this.#preferences.get(key) ?? NO_PREFERENCES;
        const next = { express: cmd.express ?? now.express, autoRepay: cmd.autoRepay ?? now.autoRepay };
        if (!next.express && !next.autoRepay) this.#preferences.delete(key);
        else this.#preferences.set(key, next);
        const account = this.#ledger.account(target.key);
        if (account !== undefined) PREFERENCES.set(account, this.#preferences.get(key) ?? NO_PREFERENCES);
        return this.#ok();
      }
    }
  }

  /** Frozen itself or through its main user (Registry.isFrozen). */
  #isFrozen(userId: number): boolean {
    const user = this.#registry.user(userId);
    return user !== undefined && this.#registry.isFrozen(user);
  }

  #ok(extra?: { offerId?: number; loanIds?: number[] }): ApplyResult {
    return { result: 'OK', events: this.#ctx.events, ...extra };
  }

  // ───────────────────────────── accounts and transfers ─────────────────────────────

  /** Resolves (user, acctType, market) to a margin account name, or the refusal. */
  #target(userId: number, acctType: number, market: string): Target | ApplyResult {
    if (!this.#registry.hasUser(userId)) return refused('USER_NOT_FOUND');
    if (acctType === ISOLATED_ACCOUNT) {
      const m = this.#registry.market(market);
      if (m === undefined) return refused('UNKNOWN_MARKET', `unknown market '${market}'`);
      return { key: isolated(userId, m.spec.name), market: m, settings: DEFAULT_MARGIN_SETTINGS };
    }
    if (acctType === CROSS_ACCOUNT) {
      if (market !== '') return refused('INVALID_PARAMETER', 'a cross account names no market');
      return { key: cross(userId), market: undefined, settings: DEFAULT_MARGIN_SETTINGS };
    }
    return refused('INVALID_PARAMETER', 'acctType must be 1 (isolated) or 2 (cross)');
  }

  /** The coin, which must be one of the isolated market's two (any coin for cross). */
  #coinOf(target: Target, name: string): CoinState | ApplyResult {
    const coin = this.#registry.coin(name);
    if (coin === undefined) return refused('UNKNOWN_COIN', `unknown coin '${name}'`);
    const m = target.market;
    if (m !== undefined && coin !== m.base && coin !== m.quote)
      return refused('INVALID_PARAMETER', `${name} is not a coin of ${m.spec.name}`);
    return coin;
  }

  #transfer(cmd: MarginTransfer): ApplyResult {
    const target = this.#target(cmd.userId, cmd.acctType, cmd.market);
    if (isRefusal(target)) return target;
    const coin = this.#coinOf(target, cmd.coin);
    if (isRefusal(coin)) return coin;
    if (!Number.isSafeInteger(cmd.amount) || cmd.amount <= 0)
      return refused('INVALID_AMOUNT', 'amount must be positive');
    const user = this.#registry.user(cmd.userId) as User;
    const i = coin.index;
    const ledger = this.#ledger;
    if (cmd.direction === 'in') {
      if (!target.settings.enabled) return refused('MARGIN_NOT_OPEN', 'margin is switched off here');
      const available = user.spot.available(i);
      if (available < cmd.amount) {
        const show = (u: CoinUnits): string => `${formatUnitsTrim(u, coin.spec.unitDecimal)} ${cmd.coin}`;
        return refused(
          'INSUFFICIENT_BALANCE',
          `available ${show(available)}, the transfer needs ${show(cmd.amount)}`,
        );
      }
      const account = ledger.open(target.key);
      ledger.change(user.spot, coin, -cmd.amount, 0, 'toMargin', accountKey(target.key));
      ledger.change(account, coin, cmd.amount, 0, 'toMargin', 'spot');
      return this.#ok();
    }
    if (cmd.direction !== 'out') return refused('INVALID_PARAMETER', "direction must be 'in' or 'out'");
    const account = ledger.account(target.key);
    const available = account?.available(i) ?? 0;
    const check = checkTransferOut(
      this.#limitValuation(target, account),
      target.settings,
      this.#priced(target, coin),
      available,
      cmd.amount,
    );
    if (!check.ok) return fail(check);
    ledger.change(account as LedgerAccount, coin, -cmd.amount, 0, 'fromMargin', 'spot');
    ledger.change(user.spot, coin, cmd.amount, 0, 'fromMargin', accountKey(target.key));
    return this.#ok();
  }

  // ───────────────────────────── valuation ─────────────────────────────

  /**
   * The value of one unit of `coin` in the target's valuation coin at the marks the risk step
   * reads (src/engine/limit-prices.ts); undefined without a price.
   */
  #priceOf(target: Target, coin: CoinState): Ratio | undefined {
    return this.#prices.price(target.market, coin);
  }

  /** `#priceOf` in doubles. */
  #priceOfD(target: Target, coin: CoinState): number | undefined {
    return this.#prices.priceD(target.market, coin);
  }

  /**
   * Whether borrowing `amount` of `coin` surely keeps the account within its limit, decided in
   * doubles (`surelyWithinBorrowLimit`); false when not sure, and the caller decides exactly.
   */
  #surelyWithinLimit(
    target: Target,
    account: LedgerAccount | undefined,
    coin: CoinState,
    amount: CoinUnits,
  ): boolean {
    if (account === undefined) return false;
    const price = this.#priceOfD(target, coin);
    if (price === undefined) return false;
    const m = target.market;
    const coins = m !== undefined ? [m.base, m.quote] : this.#registry.coinStates();
    let assets = 0;
    let debt = 0;
    for (const c of coins) {
      const held = account.available(c.index) + account.frozen(c.index);
      const owed = account.owed(c.index);
      if (held === 0 && owed === 0) continue;
      const p = this.#priceOfD(target, c);
      // As `valuate`: a coin without a price is worth nothing held, and cannot be valued owed.
      if (p === undefined) {
        if (owed > 0) return false;
        continue;
      }
      assets += held * p;
      debt += owed * p;
    }
    return surelyWithinBorrowLimit(assets, debt, target.settings, amount, price);
  }

  #positions(target: Target, account: LedgerAccount | undefined): CoinPosition[] {
    const m = target.market;
    const coins = m !== undefined ? [m.base, m.quote] : this.#registry.coinStates();
    return coins.map((c) => ({
      coin: c.spec.name,
      available: account?.available(c.index) ?? 0,
      frozen: account?.frozen(c.index) ?? 0,
      principal: account?.borrowed(c.index) ?? 0,
      interest: account?.interest(c.index) ?? 0,
    }));
  }

  #valuation(target: Target, account: LedgerAccount | undefined): Valuation | undefined {
    return valuate(this.#positions(target, account), (name) =>
      this.#priceOf(target, this.#registry.coin(name) as CoinState),
    );
  }

  /**
   * The valuation every limit reads: `#valuation` with its assets less the worst-case loss of the
   * account's resting orders against the marks (src/engine/resting-loss.ts).
   */
  #limitValuation(target: Target, account: LedgerAccount | undefined): Valuation | undefined {
    const v = this.#valuation(target, account);
    if (v === undefined || account === undefined) return v;
    return lessRestingLoss(v, this.#restingLoss(target, account));
  }

  /** The resting orders' worst-case loss of a margin account (src/engine/resting-loss.ts). */
  #restingLoss(target: Target, account: LedgerAccount): Ratio | typeof UNVALUED {
    const user = this.#registry.user(account.userId) as User;
    return restingLoss(this.#prices, this.#registry, user, account, target.market);
  }

  /**
   * The coin priced for a limit. A coin without a price gets an infinite price (nothing can be
   * borrowed or, while a debt is owed, taken out of it beyond what needs no valuation).
   */
  #priced(target: Target, coin: CoinState): PricedCoin {
    return {
      coin: coin.spec.name,
      unitDecimal: coin.spec.unitDecimal,
      price: this.#priceOf(target, coin) ?? { num: 0n, den: 1n },
    };
  }

  // ───────────────────────────── lending and borrowing ─────────────────────────────

  #fundPool(
    fundingId: string,
    coinName: string,
    amount: CoinUnits,
    ratePpm: number,
    days: number,
  ): ApplyResult {
    if (typeof fundingId !== 'string' || fundingId === '' || fundingId.length > 128)
      return refused('INVALID_PARAMETER', 'fundingId must be 1 to 128 characters');
    if (this.#fundingIds.has(fundingId)) return { result: 'OK', events: [], duplicate: true };
    const coin = this.#registry.coin(coinName);
    if (coin === undefined) return refused('UNKNOWN_COIN', `unknown coin '${coinName}'`);
    const open = checkLendingOpen(this.#lendingSettings(coinName), coinName);
    if (!open.ok) return fail(open);
    for (const c of [
      checkTerm(open.settings, days),
      checkRate(open.settings, ratePpm),
      checkLoanAmount(open.settings, amount),
    ])
      if (!c.ok) return fail(c);
    const range = outsideCreditRefusal(this.#outside, coinName, amount);
    if (range !== undefined) return range;
    this.#fundingIds.add(fundingId);
    this.#ledger.creditSystem(LENDING_POOL, coin, amount);
    this.#poolFunded.set(coinName, (this.#poolFunded.get(coinName) ?? 0) + amount);
    const r = this.#lending.place({
      lender: system('lendingPool'),
      coin: coinName,
      amount,
      dailyRatePpm: ratePpm,
      days,
      loop: true,
      timeMs: this.#ctx.time,
      available: amount,
    });
    if (!r.ok) throw new Error(`pool offer refused after its checks: ${r.message}`);
    this.#applyEffects(r.effects);
    return this.#ok({ offerId: r.offer.id });
  }

  #borrow(cmd: Extract<MarginCommand, { type: 'Borrow' }>): ApplyResult {
    const target = this.#target(cmd.userId, cmd.acctType, cmd.market);
    if (isRefusal(target)) return target;
    const coin = this.#coinOf(target, cmd.coin);
    if (isRefusal(coin)) return coin;
    const open = checkLendingOpen(this.#lendingSettings(cmd.coin), cmd.coin);
    if (!open.ok) return fail(open);
    const checks = [checkLoanAmount(open.settings, cmd.amount)];
    if (cmd.days !== undefined) checks.push(checkTerm(open.settings, cmd.days));
    if (cmd.maxDailyRatePpm !== undefined) checks.push(checkRate(open.settings, cmd.maxDailyRatePpm));
    for (const c of checks) if (!c.ok) return fail(c);
    const account = this.#ledger.account(target.key);
    const limit = checkBorrowLimit(
      this.#limitValuation(target, account),
      target.settings,
      this.#priced(target, coin),
      cmd.amount,
    );
    if (!limit.ok) return fail(limit);
    const r = this.#loans.borrow({
      borrower: account?.key ?? target.key,
      coin: cmd.coin,
      amount: cmd.amount,
      timeMs: this.#ctx.time,
      rollOver: cmd.rollOver === true,
      ...(cmd.maxDailyRatePpm === undefined ? {} : { maxDailyRatePpm: cmd.maxDailyRatePpm }),
      ...(cmd.days === undefined ? {} : { days: cmd.days }),
    });
    if (!r.ok) return fail(r);
    this.#applyEffects(r.effects);
    this.#scheduleLoans(r.loans);
    return this.#ok({ loanIds: r.loans.map((l) => l.id) });
  }

  #repayLoan(userId: number, loanId: number, amount: CoinUnits | 'all'): ApplyResult {
    if (!this.#registry.hasUser(userId)) return refused('USER_NOT_FOUND');
    const loan = this.#loans.loan(loanId);
    if (loan === undefined || loan.borrower.kind === 'system' || loan.borrower.userId !== userId)
      return refused('LOAN_NOT_FOUND', `no loan record ${loanId} of this user`);
    const coin = this.#registry.coin(loan.coin) as CoinState;
    const r = this.#loans.repay(loanId, {
      borrower: loan.borrower,
      amount,
      timeMs: this.#ctx.time,
      available: this.#ledger.account(loan.borrower)?.available(coin.index) ?? 0,
    });
    if (!r.ok) return fail(r);
    this.#applyEffects(r.effects);
    this.#record([r.repayment]);
    return this.#ok();
  }

  #repayAll(cmd: Extract<MarginCommand, { type: 'RepayAll' }>): ApplyResult {
    const target = this.#target(cmd.userId, cmd.acctType, cmd.market);
    if (isRefusal(target)) return target;
    const coin = this.#coinOf(target, cmd.coin);
    if (isRefusal(coin)) return coin;
    const r = this.#loans.repayAll(cmd.coin, {
      borrower: target.key,
      amount: cmd.amount,
      timeMs: this.#ctx.time,
      available: this.#ledger.account(target.key)?.available(coin.index) ?? 0,
    });
    if (!r.ok) return fail(r);
    this.#applyEffects(r.effects);
    this.#record(r.repayments);
    return this.#ok();
  }

  /**
   * A loan record that closed leaves the loan book (issue 29): its last state is the LoanClosed
   * event, for the history store.
   */
  readonly #closed = (loan: LoanRecord): void => {
    this.#ctx.events.push({ type: 'LoanClosed', loan, time: this.#ctx.time });
  };

  /** Repayment records are not kept here: each is a LoanRepaid event, for the history store (issue 29). */
  #record(repayments: readonly RepaymentRecord[]): void {
    const ctx = this.#ctx;
    for (const repayment of repayments) ctx.events.push({ type: 'LoanRepaid', repayment, time: ctx.time });
  }

  #scheduleLoans(loans: readonly LoanRecord[]): void {
    for (const l of loans)
      if (this.#nextTimer === undefined || l.nextHourMs < this.#nextTimer) this.#nextTimer = l.nextHourMs;
  }

  /**
   * Applies what the domain decided: coin movements (bills on the user side), then debt changes.
   * `known`: the account the effects most likely name (a borrow's or repayment's), found without a lookup.
   */
  #applyEffects(e: Effects, known?: LedgerAccount): void {
    const ledger = this.#ledger;
    for (const m of e.movements) {
      const coin = this.#registry.coin(m.coin) as CoinState;
      const from = this.#ledgerAccount(m.from, known);
      const to = this.#ledgerAccount(m.to, known);
      const bill = MOVEMENT_BILL[m.kind];
      const ref =
        m.kind === 'loanOffer' || m.kind === 'loanCancel'
          ? `offer:${m.ref}`
          : m.kind === 'liquidationFee' || m.kind === 'insuranceCover'
            ? `liquidation:${m.ref}`
            : `loan:${m.ref}`;
      const outAvailable = m.fromPocket === 'available' ? -m.amount : 0;
      const outFrozen = m.fromPocket === 'available' ? 0 : -m.amount;
      const inAvailable = m.toPocket === 'available' ? m.amount : 0;
      const inFrozen = m.toPocket === 'available' ? 0 : m.amount;
      if (from === to) {
        this.#change(from, coin, outAvailable + inAvailable, outFrozen + inFrozen, bill, ref);
      } else {
        this.#change(from, coin, outAvailable, outFrozen, bill, ref);
        this.#change(to, coin, inAvailable, inFrozen, bill, ref);
      }
      if (m.kind === 'repayInterest' || m.kind === 'interestShare') {
        const paid = this.#interestPaid.get(m.coin) ?? [0, 0];
        paid[m.kind === 'repayInterest' ? 0 : 1] += m.amount;
        this.#interestPaid.set(m.coin, paid);
      }
    }
    for (const d of e.debts)
      ledger.changeDebt(
        this.#ledgerAccount(d.account, known),
        this.#registry.coin(d.coin) as CoinState,
        d.principal,
        d.interest,
      );
  }

  /** `ledger.open(ref)`, remembered per reference object (accounts are never closed); `known` if it is its key. */
  #ledgerAccount(ref: AccountRef, known: LedgerAccount | undefined): LedgerAccount {
    if (known !== undefined && ref === known.key) return known;
    let account = this.#ledgerAccounts.get(ref);
    if (account === undefined) {
      account = this.#ledger.open(ref);
      this.#ledgerAccounts.set(ref, account);
    }
    return account;
  }

  #change(
    account: LedgerAccount,
    coin: CoinState,
    dAvailable: CoinUnits,
    dFrozen: CoinUnits,
    bill: BillType,
    ref: string,
  ): void {
    if (account.key.kind === 'system') this.#ledger.changeSystem(account, coin, dAvailable, dFrozen);
    else this.#ledger.change(account, coin, dAvailable, dFrozen, bill, ref);
  }

  // ───────────────────────────── hooks for the risk module (src/engine/risk.ts) ─────────────────────────────

  /** The loan book (replaced by `load`: take it afresh, never keep it). */
  get loanBook(): LoanBook {
    return this.#loans;
  }

  /** Applies a forced liquidation's effects exactly as the margin commands apply theirs. */
  applyEffects(e: Effects): void {
    this.#applyEffects(e);
  }

  /** Records a forced liquidation's repayments as the margin commands record theirs (LoanRepaid). */
  recordRepayments(repayments: readonly RepaymentRecord[]): void {
    this.#record(repayments);
  }

  // ───────────────────────────── timers ─────────────────────────────

  /**
   * FireTimers (any, also one the dead-man switch asked for): charges every open loan's hours begun,
   * ends the terms reached, and repays loans past their term from their accounts (loans.ts
   * `accrue`). Nothing without open loans (`#nextTimer` is undefined only then).
   */
  fire(): void {
    const time = this.#ctx.time;
    if (this.#nextTimer === undefined) return;
    const ledger = this.#ledger;
    const registry = this.#registry;
    const r = this.#loans.accrue(
      time,
      (account, coin) => ledger.account(account)?.available((registry.coin(coin) as CoinState).index) ?? 0,
    );
    this.#applyEffects(r.effects);
    this.#record(r.repayments);
    this.#nextTimer = undefined;
    this.#scheduleLoans([...this.#loans.openLoans()]);
  }

  /** When the next loan hour begins, or undefined without open loans. */
  nextDeadline(): number | undefined {
    return this.#nextTimer;
  }

  // ───────────────────────────── margin orders ─────────────────────────────

  /**
   * The account an order of `acctType` pays from and settles in: the spot account, or the margin
   * account of (user, market) or (user). A margin account never opened holds nothing: the order
   * is refused as short unless it may borrow (express), which opens nothing before it succeeds.
   */
  orderAccount(user: User, market: MarketState, acctType: AcctType): LedgerAccount | undefined {
    if (acctType === 0) return user.spot;
    // Accounts are never closed, so one found stays valid: kept on the user.
    if (acctType !== ISOLATED_ACCOUNT) return (user.cross ??= this.#ledger.account(cross(user.userId)));
    const i = market.index;
    if (user.lastIsolatedMarket === i) return user.lastIsolated;
    let found = user.isolated.length > i ? user.isolated[i] : undefined;
    if (found === undefined) {
      found = this.#ledger.account(isolated(user.userId, market.spec.name));
      if (found === undefined) return undefined;
      // Filled up to `i` first: the array stays packed, and a read inside it never leaves it.
      while (user.isolated.length < i) user.isolated.push(undefined);
      user.isolated[i] = found;
    }
    user.lastIsolated = found;
    user.lastIsolatedMarket = i;
    return found;
  }

  /** The account a resting order of `acctType` holds its funds in (it exists: the order froze there). */
  restingAccount(user: User, market: string, acctType: AcctType): LedgerAccount {
    if (acctType === 0) return user.spot;
    const a = this.#ledger.account(
      acctType === ISOLATED_ACCOUNT ? isolated(user.userId, market) : cross(user.userId),
    );
    if (a === undefined) throw new Error(`order of user ${user.userId} in a margin account never opened`);
    return a;
  }

  /** Whether orders of this margin account borrow by default (setExpressState). */
  expressByDefault(user: User, market: MarketState, acctType: AcctType): boolean {
    if (acctType === 0) return false;
    const account = this.orderAccount(user, market, acctType);
    if (account !== undefined) return this.#preferencesOf(account).express;
    const key = acctType === ISOLATED_ACCOUNT ? isolated(user.userId, market.spec.name) : cross(user.userId);
    return this.#preferences.get(accountKey(key))?.express ?? false;
  }

  /** A margin account's preferences (`#preferences`, kept on the account once looked up). */
  #preferencesOf(account: LedgerAccount): MarginPreferences {
    let p = PREFERENCES.get(account);
    if (p === undefined)
      PREFERENCES.set(account, (p = this.#preferences.get(accountKey(account.key)) ?? NO_PREFERENCES));
    return p;
  }

  /**
   * Checks that a margin order may borrow `short` units of the coin it pays with (express): the
   * amount borrowed is at least the coin's minimum loan, within the account's limit, and the
   * offers can lend it. Returns the amount to borrow, or the refusal. Changes nothing.
   */
  expressCheck(
    account: LedgerAccount | undefined,
    userId: number,
    market: MarketState,
    acctType: AcctType,
    coin: CoinState,
    short: CoinUnits,
  ): CoinUnits | ApplyResult {
    const target = this.#target(userId, acctType, acctType === ISOLATED_ACCOUNT ? market.spec.name : '');
    if (isRefusal(target)) return target;
    const open = checkLendingOpen(this.#lendingSettings(coin.spec.name), coin.spec.name);
    if (!open.ok) return fail(open);
    const amount = Math.max(short, open.settings.minAmount);
    // Far inside the limit (the usual case) the doubles decide; near it, or unsure, the exact rule.
    const loss = account === undefined ? ratio(0) : this.#restingLoss(target, account);
    if (loss === UNVALUED || loss.num > 0n || !this.#surelyWithinLimit(target, account, coin, amount)) {
      const v = this.#valuation(target, account);
      const limit = checkBorrowLimit(
        v === undefined ? undefined : lessRestingLoss(v, loss),
        target.settings,
        this.#priced(target, coin),
        amount,
      );
      if (!limit.ok) return fail(limit);
    }
    let supply = 0;
    for (const o of this.#lending.openOffers(coin.spec.name)) {
      if (o.lender.kind === 'system' || o.lender.userId !== userId) supply += o.remaining;
      if (supply >= amount) return amount;
    }
    return refused(
      'LENDING_SHORT',
      `offers cannot lend the ${amount} units of ${coin.spec.name} the order needs`,
    );
  }

  /**
   * Issue 29: refuses a margin order priced so far from the mark that its fill would leave the
   * account below its opening line (src/margin/order-loss.ts): the worst-case loss of `orders`
   * (one order, or a batch's, all on one side) against the market's mark, with the account's other
   * resting orders', valued at the marks after the order's express borrow of `borrow` units of
   * `payCoin`. A spot order (`acctType` 0), or one at or better than the mark, adds no loss and
   * is never refused here.
   * Changes nothing; `undefined`: allowed.
   */
  orderLossCheck(
    account: LedgerAccount | undefined,
    user: User,
    market: MarketState,
    acctType: AcctType,
    buy: boolean,
    orders: readonly { readonly price: PriceTicks; readonly amount: Lots }[],
    payCoin: CoinState,
    borrow: CoinUnits,
  ): ApplyResult | undefined {
    if (acctType === 0) return undefined; // a spot order lends nobody's money
    const prices = this.#prices;
    const mark = prices.mark(market);
    let units = 0n;
    for (const o of orders) units += orderLoss(buy, o.price, mark, o.amount, market.quoteUnitsPerTickLot);
    if (units === 0n) return undefined;
    const target = this.#target(user.userId, acctType, acctType === ISOLATED_ACCOUNT ? market.spec.name : '');
    if (isRefusal(target)) return target;
    const owes =
      account !== undefined && this.#positions(target, account).some((p) => p.principal + p.interest > 0);
    if (!owes && borrow === 0) return undefined;
    const quotePrice = this.#priceOf(target, market.quote);
    const v = this.#valuation(target, account);
    const payPrice = this.#priceOf(target, payCoin);
    const show = (u: bigint): string =>
      `${formatUnitsTrim(Number(u), market.quote.spec.unitDecimal)} ${market.quote.spec.name}`;
    if (v === undefined || quotePrice === undefined || (borrow > 0 && payPrice === undefined))
      return refused(
        'OVER_ORDER_LIMIT',
        `the order could hand its counterparty ${show(units)} beyond the mark, which the account cannot be valued to carry`,
      );
    let loss = unitsValue(units, quotePrice);
    if (account !== undefined) {
      const resting = restingLoss(prices, this.#registry, user, account, target.market);
      if (resting === UNVALUED)
        return refused(
          'OVER_ORDER_LIMIT',
          'a resting order of the account cannot be valued against the mark',
        );
      loss = sum(loss, resting);
    }
    const borrowed = borrow > 0 ? unitsValue(BigInt(borrow), payPrice as Ratio) : ratio(0);
    if (carriesLoss(v, target.settings, borrowed, loss)) return undefined;
    // A loss needs a mark (`orderLoss`).
    const at = formatUnitsTrim(mark as number, market.spec.priceScale);
    return refused(
      'OVER_ORDER_LIMIT',
      `the order could hand its counterparty ${show(units)} beyond the mark ${at}: with the account's resting orders that would leave it below its opening line; price it nearer the mark`,
    );
  }

  /**
   * Borrows what `expressCheck` allowed for an order into `account` (the order's, undefined if
   * never opened); returns the account it went to.
   */
  expressBorrow(
    account: LedgerAccount | undefined,
    userId: number,
    market: MarketState,
    acctType: AcctType,
    coin: CoinState,
    amount: CoinUnits,
  ): LedgerAccount {
    const key = acctType === ISOLATED_ACCOUNT ? isolated(userId, market.spec.name) : cross(userId);
    const r = this.#loans.borrow({
      // The ledger account's own key where it exists: loan records and auto-repayments then name
      // the account by one object, which the loan book finds its records by (no text key).
      borrower: account?.key ?? key,
      coin: coin.spec.name,
      amount,
      timeMs: this.#ctx.time,
      rollOver: false,
    });
    if (!r.ok) throw new Error(`express borrow refused after its check: ${r.message}`);
    this.#applyEffects(r.effects, account);
    this.#scheduleLoans(r.loans);
    return account ?? this.#ledger.open(key);
  }

  /**
   * A fill brought `units` of `coin` into a margin account (settled already). Kept only when the
   * account owes that coin (nothing changes a debt between a fill and the end of its command).
   */
  noteReceived(account: LedgerAccount, coin: CoinState, units: CoinUnits): void {
    if (account.owes(coin.index)) this.#received.push([account, coin, units]);
  }

  /**
   * At the end of an order command: what fills brought into margin accounts whose preference is
   * auto-repay repays their debt in that coin (interest first, dearest principal first), up to
   * what came in, what is owed and what is available.
   */
  autoRepay(): void {
    if (this.#received.length === 0) return;
    const received = this.#received;
    this.#received = [];
    if (received.length === 1) {
      // One margin account received one coin (the usual case): nothing to add up.
      const [account, coin, units] = received[0] as [LedgerAccount, CoinState, CoinUnits];
      this.#autoRepayFrom(account, coin, units);
      return;
    }
    const sums = new Map<string, [LedgerAccount, CoinState, CoinUnits]>();
    for (const [account, coin, units] of received) {
      const k = `${accountKey(account.key)}|${coin.index}`;
      const s = sums.get(k);
      if (s === undefined) sums.set(k, [account, coin, units]);
      else s[2] += units;
    }
    for (const [account, coin, units] of sums.values()) this.#autoRepayFrom(account, coin, units);
  }

  /** Auto-repays (when the account's preference says so) up to `units` of what it owes in `coin`. */
  #autoRepayFrom(account: LedgerAccount, coin: CoinState, units: CoinUnits): void {
    if (!this.#preferencesOf(account).autoRepay) return;
    const owed = account.owed(coin.index);
    const amount = Math.min(units, owed, account.available(coin.index));
    if (amount <= 0) return;
    const r = this.#loans.repayAll(coin.spec.name, {
      borrower: account.key,
      amount,
      timeMs: this.#ctx.time,
      available: account.available(coin.index),
    });
    if (!r.ok) throw new Error(`auto-repay refused: ${r.message}`);
    this.#applyEffects(r.effects, account);
    this.#record(r.repayments);
  }

  // ───────────────────────────── reads ─────────────────────────────

  account(userId: number, acctType: 1 | 2, market: string): MarginAccountView | undefined {
    const target = this.#target(userId, acctType, market);
    if (isRefusal(target)) return undefined;
    const account = this.#ledger.account(target.key);
    const v = this.#valuation(target, account);
    // The limits shown are the limits applied: with the resting orders' loss counted.
    const lv =
      v === undefined || account === undefined ? v : lessRestingLoss(v, this.#restingLoss(target, account));
    const coins =
      target.market !== undefined ? [target.market.base, target.market.quote] : this.#registry.coinStates();
    const views: MarginCoinView[] = [];
    for (const c of coins) {
      const available = account?.available(c.index) ?? 0;
      const frozen = account?.frozen(c.index) ?? 0;
      const borrowed = account?.borrowed(c.index) ?? 0;
      const interest = account?.interest(c.index) ?? 0;
      if (target.market === undefined && available + frozen + borrowed + interest === 0) continue;
      const price = this.#priceOf(target, c);
      views.push({
        coin: c.spec.name,
        available,
        frozen,
        borrowed,
        interest,
        borrowLimit: lv === undefined || price === undefined ? 0 : borrowLimit(lv, target.settings, price),
        transferOutLimit:
          lv === undefined
            ? 0
            : transferOutLimit(lv, target.settings, available, price ?? { num: 0n, den: 1n }),
      });
    }
    return {
      userId,
      acctType,
      market: target.market?.spec.name ?? '',
      coins: views,
      riskRateBp: v === undefined ? undefined : riskRateBp(v),
      valuationCoin: this.#prices.valuationCoin(target.market)?.spec.name ?? '',
      valuation: v,
      settings: target.settings,
      preferences: this.preferences(userId, acctType, market),
    };
  }

  accountsOf(userId: number): MarginAccountView[] {
    const out: MarginAccountView[] = [];
    for (const a of this.#ledger.marginAccounts()) {
      if (a.userId !== userId) continue;
      const k = a.key;
      const v = k.kind === 'isolated' ? this.account(userId, 1, k.market) : this.account(userId, 2, '');
      if (v !== undefined) out.push(v);
    }
    return out;
  }

  openOffers(coin: string): readonly LoanOffer[] {
    return this.#lending.openOffers(coin);
  }

  offersOf(userId: number): LoanOffer[] {
    return this.#lending.offersOf(spot(userId));
  }

  poolOffers(): LoanOffer[] {
    return this.#lending.offersOf(system('lendingPool'));
  }

  loansOf(userId: number, acctType: 1 | 2, market: string): LoanRecord[] {
    return this.#loans.loansOf(acctType === ISOLATED_ACCOUNT ? isolated(userId, market) : cross(userId));
  }

  loansLentBy(userId: number): LoanRecord[] {
    return this.#loans.loansLentBy(spot(userId));
  }

  loan(loanId: number): LoanRecord | undefined {
    return this.#loans.loan(loanId);
  }

  openLoans(): IterableIterator<LoanRecord> {
    return this.#loans.openLoans();
  }

  lenderTotals(coin: string): Readonly<Record<LenderKind, LenderTotals>> {
    return this.#loans.lenderTotals(coin);
  }

  marginSettings(market: string): MarginSettings | undefined {
    return market === '' || this.#registry.market(market) !== undefined ? DEFAULT_MARGIN_SETTINGS : undefined;
  }

  lendingSettings(coin: string): LendingSettings | undefined {
    return this.#lendingSettings(coin);
  }

  preferences(userId: number, acctType: 1 | 2, market: string): MarginPreferences {
    const key = acctType === ISOLATED_ACCOUNT ? isolated(userId, market) : cross(userId);
    return this.#preferences.get(accountKey(key)) ?? NO_PREFERENCES;
  }

  poolFunded(coin: string): CoinUnits {
    return this.#poolFunded.get(coin) ?? 0;
  }

  interestPaid(coin: string): { readonly lenders: CoinUnits; readonly insurance: CoinUnits } {
    const [lenders, insurance] = this.#interestPaid.get(coin) ?? [0, 0];
    return { lenders, insurance };
  }

  /** Σ units lent out of `coin` frozen in each lender's account for open offers. */
  forEachOfferHold(hold: (lender: AccountRef, coin: CoinState, units: CoinUnits) => void): void {
    for (const c of this.#registry.coinStates())
      for (const o of this.#lending.openOffers(c.spec.name)) hold(o.lender, c, o.remaining);
  }

  // ───────────────────────────── snapshots and checks ─────────────────────────────

  /** Whether anything margin ever happened (a spot-only venue writes no margin part). */
  get isEmpty(): boolean {
    const l = this.#lending.snapshot();
    const b = this.#loans.snapshot();
    return (
      l.offers.length === 0 &&
      b.loans.length === 0 &&
      b.nextLoanId === 1 &&
      this.#preferences.size === 0 &&
      this.#fundingIds.size === 0
    );
  }

  snapshot(): MarginSnapshot {
    const sorted = <T extends [string, ...unknown[]]>(xs: T[]): T[] =>
      xs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    const lending = this.#lending.snapshot();
    const loans = this.#loans.snapshot();
    return {
      lending: { ...lending, offers: [...lending.offers].sort((a, b) => a.id - b.id) },
      loans: { ...loans, loans: [...loans.loans].sort((a, b) => a.id - b.id) },
      preferences: sorted([...this.#preferences].map(([k, p]) => [k, p.express, p.autoRepay])),
      poolFunded: sorted([...this.#poolFunded]),
      fundingIds: [...this.#fundingIds].sort(),
      interestPaid: sorted([...this.#interestPaid].map(([c, [l, s]]) => [c, l, s])),
      nextTimer: this.#nextTimer ?? null,
    };
  }

  load(s: MarginSnapshot): void {
    this.#lending = new LendingBook(this.#lendingSettings, s.lending);
    // A snapshot written before issue 29 may carry closed records and repayments: the book keeps
    // the open records (and the closed ones' interest totals); `rebuild-history` puts the rest in
    // the history store.
    let repaid: Map<number, CoinUnits> | undefined;
    if (s.repayments !== undefined) {
      repaid = new Map();
      for (const [, rs] of s.repayments)
        for (const r of rs) repaid.set(r.loanId, (repaid.get(r.loanId) ?? 0) + r.principal);
    }
    this.#loans = new LoanBook(this.#lending, this.#lendingSettings, s.loans, this.#closed, repaid);
    this.#ledgerAccounts = new WeakMap();
    for (const [k, express, autoRepay] of s.preferences) this.#preferences.set(k, { express, autoRepay });
    for (const [c, u] of s.poolFunded) this.#poolFunded.set(c, u);
    for (const id of s.fundingIds) this.#fundingIds.add(id);
    for (const [c, l, sh] of s.interestPaid) this.#interestPaid.set(c, [l, sh]);
    this.#nextTimer = s.nextTimer ?? undefined;
  }

  /**
   * The margin invariants (throws on the first broken one): the domain books' own; every open
   * loan's principal and unpaid interest equal, per borrower account and coin, to the ledger's
   * borrowed and interest (and no debt without a loan); the pool's frozen equal to its offers'
   * unlent amounts; per coin, interest paid by borrowers = paid to lenders + the venue's share.
   */
  assertInvariants(): void {
    this.#lending.assertInvariants();
    this.#loans.assertInvariants();
    const registry = this.#registry;
    const owed = new Map<LedgerAccount, [number[], number[]]>();
    for (const l of this.#loans.openLoans()) {
      if (l.principal === 0 && l.interestOwed === 0) continue;
      const a = this.#ledger.account(l.borrower);
      if (a === undefined) throw new Error(`loan ${l.id}: borrower account never opened`);
      let xs = owed.get(a);
      if (xs === undefined) owed.set(a, (xs = [[], []]));
      const i = (registry.coin(l.coin) as CoinState).index;
      xs[0][i] = (xs[0][i] ?? 0) + l.principal;
      xs[1][i] = (xs[1][i] ?? 0) + l.interestOwed;
    }
    for (const a of this.#ledger.marginAccounts()) {
      const xs = owed.get(a);
      for (let i = 0; i < registry.coinCount; i++) {
        if (a.borrowed(i) !== (xs?.[0][i] ?? 0) || a.interest(i) !== (xs?.[1][i] ?? 0))
          throw new Error(
            `${accountKey(a.key)} coin ${i}: ledger owes ${a.borrowed(i)} + ${a.interest(i)}, loans ${xs?.[0][i] ?? 0} + ${xs?.[1][i] ?? 0}`,
          );
      }
    }
    const pool = this.#ledger.account(system('lendingPool')) as LedgerAccount;
    const poolHeld: number[] = [];
    for (const o of this.#lending.snapshot().offers)
      if (o.lender.kind === 'system' && o.status === 'open') {
        const i = (registry.coin(o.coin) as CoinState).index;
        poolHeld[i] = (poolHeld[i] ?? 0) + o.remaining;
      }
    for (let i = 0; i < registry.coinCount; i++)
      if (pool.frozen(i) !== (poolHeld[i] ?? 0))
        throw new Error(`lending pool coin ${i}: frozen ${pool.frozen(i)}, offers hold ${poolHeld[i] ?? 0}`);
    for (const coin of new Set([...this.#loans.coinsLent(), ...this.#interestPaid.keys()])) {
      const { paid: byBorrowers, share } = this.#loans.interestPaid(coin);
      const [toLenders, toInsurance] = this.#interestPaid.get(coin) ?? [0, 0];
      if (byBorrowers !== toLenders + toInsurance || share !== toInsurance)
        throw new Error(
          `${coin}: interest paid ${byBorrowers} ≠ lenders ${toLenders} + venue share ${toInsurance}`,
        );
    }
  }
}
