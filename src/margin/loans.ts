/**
 * @module loans — loan records: borrowing from the lending book, hourly interest, repayment and
 * the end of a term. Every operation returns the ledger movements and debt changes to apply.
 *
 * ## A loan record
 * One borrower (an isolated or a cross account), one lender (the offer's account), one coin, a
 * daily rate in ppm and a term in days. A borrow that takes from several offers makes one record
 * per offer, so every unit of principal is owed by one borrower to one lender.
 *
 * ## Interest (hourly)
 * - A loan's hours are counted from its start: hour k begins at start + k h. Every hour begun is
 *   charged, on the principal outstanding when it begins: the first at the borrow itself, the
 *   next ones when anything touches the loan at or after their beginning — the hourly timer
 *   command (`accrue(now)`), a repayment, the end of the term. So what a loan owes at time t does
 *   not depend on when the timer ran, and a replay charges the same units.
 * - One hour's interest is principal × dailyRatePpm ÷ (24 × 10^6) units. Rounding: floor per loan,
 *   the remainder (a numerator below 24 × 10^6) carried to the loan's next hour. Over its life a
 *   loan is charged exactly floor(Σ exact hourly interest); the last fraction of a unit left when
 *   it closes is never charged. No unit is created or lost: interest is a debt until paid, and a
 *   paid unit moves from the borrower to the lender or the insurance fund.
 * - Venue share: of every loan's interest paid so far, floor(paid × venueSharePpm ÷ 10^6) has gone
 *   to the insurance fund and the rest to the lender. Each payment moves the difference, so the
 *   split does not depend on how the interest was paid in parts.
 *
 * ## Repayment
 * - Interest first, then principal. A repayment of one record (`repay`) pays that record; a
 *   repayment of an account's coin (`repayAll`: doAllRepay, doCrossRepay) pays the interest of every
 *   open record of that coin oldest first (by record id), then principal, highest daily rate first,
 *   ties oldest first, so the dearest debt goes first.
 * - Repaid principal goes back to its lender: into the offer again (lender's frozen) when the
 *   record's `investMark` is set and the offer is still open, else to the lender's available.
 * - Refused, changing nothing: an amount above what is owed (REPAY_OVER_OWED), above the account's
 *   available (INSUFFICIENT_BALANCE), not a positive integer (INVALID_AMOUNT), a record that is not
 *   an open one of this account (LOAN_NOT_FOUND: the book holds open records only; the API edge
 *   finds a closed one in the history store and answers INVALID_STATE, as before issue 29).
 *
 * ## Closed records (issue 29)
 * A record that closes (2, 4 or 6) leaves the book at once: it is handed to the `onClose` callback
 * (the engine emits it as LoanClosed, the history store keeps it) and the book keeps only its coin's
 * interest totals and, per kind of lender, what bad debt wrote off (`lenderTotals`, for the
 * engine's invariants and the operator's books). So the book, its
 * snapshot and every walk over it grow with the open records only, however long the venue runs.
 *
 * ## End of term
 * At start + days × 24 h: the record rolls over for another term of the same length, rate and
 * lender if the borrower asked (`isLoop`) and the lender's `investMark` allows it; otherwise it
 * becomes status 5 (auto-repaying) and each hourly timer repays what the borrower's account has
 * available of the coin, until status 6 (auto-repaid). Interest keeps accruing meanwhile.
 *
 * ## Liquidation (issue 15, driven by `liquidation.ts`)
 * `beginLiquidation` puts an account's open records in status 3; a record repaid in status 3
 * closes as 4. `writeOff` cancels bad debt pro rata (its doc gives the rounding); the interest it
 * cancels leaves `interestCharged` too, so charged = paid + owed still holds.
 *
 * ## Statuses (the reference's list)
 * 1 repaying (open), 2 repaid, 3 needs liquidation, 4 liquidated and repaid (issue 15),
 * 5 auto-repaying (term ended, not yet repaid), 6 auto-repaid.
 */
import { formatUnitsTrim, mulDivFloor, PPM, type RatePpm } from '../domain/money.ts';
import type { LendingBook } from './lending-book.ts';
import {
  accountKey,
  DAY_MS,
  HOUR_MS,
  refuse,
  system,
  type AccountRef,
  type DebtChange,
  type Effects,
  type Movement,
  type Outcome,
  type TimeMs,
  type Units,
} from './movement.ts';
import type { LendingSettings } from './settings.ts';

export const LOAN_STATUS = {
  REPAYING: 1,
  REPAID: 2,
  NEEDS_LIQUIDATION: 3,
  LIQUIDATED: 4,
  AUTO_REPAYING: 5,
  AUTO_REPAID: 6,
} as const;
export type LoanStatus = (typeof LOAN_STATUS)[keyof typeof LOAN_STATUS];

const isOpen = (s: LoanStatus): boolean =>
  s === LOAN_STATUS.REPAYING || s === LOAN_STATUS.NEEDS_LIQUIDATION || s === LOAN_STATUS.AUTO_REPAYING;

/** The denominator of one hour's interest: 24 hours × ppm. */
export const HOURLY_DENOMINATOR = 24 * PPM;

export interface LoanRecord {
  readonly id: number;
  readonly offerId: number;
  readonly lender: AccountRef;
  readonly borrower: AccountRef;
  readonly coin: string;
  readonly dailyRatePpm: RatePpm;
  readonly days: number;
  /** Principal first lent. */
  readonly amount: Units;
  /** Principal outstanding. */
  principal: Units;
  /** Interest charged and not yet paid. */
  interestOwed: Units;
  /** The carried fraction of a unit of interest, as a numerator over HOURLY_DENOMINATOR. */
  interestRemainder: number;
  /** Interest charged over the loan's life (paid or owed). */
  interestCharged: Units;
  /** Interest paid over the loan's life (to the lender and to the insurance fund). */
  interestPaid: Units;
  /** The part of `interestPaid` that went to the insurance fund. */
  venueShare: Units;
  readonly createdMs: TimeMs;
  termStartMs: TimeMs;
  termEndMs: TimeMs;
  /** The beginning of the next hour not yet charged. */
  nextHourMs: TimeMs;
  /** The borrower's `isLoop`: roll over at the end of the term. */
  rollOver: boolean;
  /** The lender's mark: re-invest returned principal, and allow roll-over. */
  investMark: boolean;
  status: LoanStatus;
  /** When it closed, 0 while open. */
  closedMs: TimeMs;
}

/** One payment on one loan record (what `getRepayments` lists). */
export interface RepaymentRecord {
  readonly id: number;
  readonly loanId: number;
  readonly coin: string;
  readonly borrower: AccountRef;
  /** Principal paid (`benJin`). */
  readonly principal: Units;
  /** Interest paid (`liXi`), venue share included. */
  readonly interest: Units;
  /** The part of `interest` that went to the insurance fund. */
  readonly venueShare: Units;
  readonly timeMs: TimeMs;
  /** Paid by the term-end timer rather than asked for. */
  readonly auto: boolean;
}

export interface BorrowInput {
  readonly borrower: AccountRef;
  readonly coin: string;
  readonly amount: Units;
  readonly timeMs: TimeMs;
  /** `isLoop`: roll over at the end of the term. */
  readonly rollOver: boolean;
  readonly maxDailyRatePpm?: RatePpm;
  readonly days?: number;
}

export interface RepayInput {
  readonly borrower: AccountRef;
  /** A whole number of units, or everything owed. */
  readonly amount: Units | 'all';
  readonly timeMs: TimeMs;
  /** The borrower account's available balance of the coin. */
  readonly available: Units;
}

export interface LoanBookSnapshot {
  readonly nextLoanId: number;
  readonly nextRepaymentId: number;
  /** The open records (a snapshot written before issue 29 may carry closed ones too: dropped on load). */
  readonly loans: readonly LoanRecord[];
  /**
   * Per coin and kind of lender (`pool`, `users`): interest paid and its venue share over the closed
   * records, and the principal and interest written off as bad debt over every record, sorted.
   * Absent when empty (and in a snapshot written before issue 29).
   */
  readonly lenderTotals?: readonly LenderTotalsEntry[];
}

/** The lending pool or users' offers. */
export type LenderKind = 'pool' | 'users';

/** [coin, lender kind, closed records' interest paid, their venue share, principal written off, interest written off]. */
export type LenderTotalsEntry = [string, LenderKind, Units, Units, Units, Units];

/** What one kind of lender's records of a coin came to, open and closed. */
export interface LenderTotals {
  /** Interest paid to the lenders (the venue's share excluded). */
  readonly interestReceived: Units;
  /** Principal outstanding on the open records. */
  readonly principal: Units;
  /** Written off as bad debt (issue 15), lifetime. */
  readonly principalWrittenOff: Units;
  readonly interestWrittenOff: Units;
}

const lenderKind = (l: LoanRecord): LenderKind => (l.lender.kind === 'system' ? 'pool' : 'users');

/** What a borrower account owes in one coin. */
export interface Owed {
  readonly principal: Units;
  readonly interest: Units;
}

/** Loan records and their interest, repayment and term end. See the module comment for the rules. */
export class LoanBook {
  readonly #lending: LendingBook;
  readonly #settings: (coin: string) => LendingSettings | undefined;
  /**
   * Open records by id (ascending: ids only grow). A record that closes leaves the book (issue 29):
   * it is handed to `#onClose` (the engine's LoanClosed event, which the history store keeps) and
   * only its interest totals stay (`#totals`).
   */
  readonly #open = new Map<number, LoanRecord>();
  readonly #onClose: (loan: LoanRecord) => void;
  /**
   * Per "<coin>|<lender kind>": [closed records' interest paid, their venue share, principal written
   * off, interest written off] (the last two over every record, counted as they are written off).
   */
  readonly #totals = new Map<string, [Units, Units, Units, Units]>();
  /**
   * Open records per borrower account and coin ("<account>|<coin>"), ascending id. An entry, once
   * made, stays (empty when the account owes nothing in the coin), so that `#debtCache` can hold it.
   */
  readonly #openByDebtor = new Map<string, Map<number, LoanRecord>>();
  /**
   * `#openByDebtor`'s entries by account object and coin: an auto-repayment after a fill names the
   * account by the same object every time, and finds its records without building the text key.
   */
  readonly #debtCache = new WeakMap<AccountRef, Map<string, Map<number, LoanRecord>>>();
  #nextLoanId = 1;
  #nextRepaymentId = 1;

  constructor(
    lending: LendingBook,
    settings: (coin: string) => LendingSettings | undefined,
    snapshot?: LoanBookSnapshot,
    onClose: (loan: LoanRecord) => void = () => {},
    /**
     * A snapshot written before issue 29 carries every record and the repayments, but no written-off
     * totals: the principal repaid per record (from those repayments) lets the book work out the
     * principal each record had written off (amount − principal − repaid). Interest written off
     * before then cannot be told apart by lender and is not counted.
     */
    repaidPrincipal?: ReadonlyMap<number, Units>,
  ) {
    this.#lending = lending;
    this.#settings = settings;
    this.#onClose = onClose;
    if (snapshot !== undefined) {
      this.#nextLoanId = snapshot.nextLoanId;
      this.#nextRepaymentId = snapshot.nextRepaymentId;
      for (const [coin, kind, paid, share, principal, interest] of snapshot.lenderTotals ?? [])
        this.#totals.set(`${coin}|${kind}`, [paid, share, principal, interest]);
      for (const l of [...snapshot.loans].sort((a, b) => a.id - b.id)) {
        if (isOpen(l.status)) this.#index({ ...l });
        else this.#countClosed(l);
        const writtenOff =
          repaidPrincipal === undefined ? 0 : l.amount - l.principal - (repaidPrincipal.get(l.id) ?? 0);
        if (writtenOff > 0) this.#total(l.coin, lenderKind(l))[2] += writtenOff;
      }
    }
  }

  /**
   * Borrows `amount` for a margin account from the cheapest offers (the lending book's refusals:
   * MARGIN_NOT_OPEN, INVALID_AMOUNT, BELOW_MIN_LOAN, LENDING_SHORT). The caller has checked the
   * account's borrowing limit (`lines.ts`). Effects, per record: a `borrow` movement (lender's
   * frozen → borrower's available), the principal owed, and the first hour's interest.
   */
  borrow(input: BorrowInput): Outcome<{ loans: LoanRecord[]; effects: Effects }> {
    if (input.borrower.kind !== 'isolated' && input.borrower.kind !== 'cross')
      return refuse('INVALID_PARAMETER', 'only a margin account borrows');
    const take = this.#lending.take({
      coin: input.coin,
      amount: input.amount,
      borrowerUserId: input.borrower.userId,
      ...(input.maxDailyRatePpm === undefined ? {} : { maxDailyRatePpm: input.maxDailyRatePpm }),
      ...(input.days === undefined ? {} : { days: input.days }),
    });
    if (!take.ok) return take;
    const effects: Effects = { movements: [], debts: [] };
    const loans: LoanRecord[] = [];
    for (const f of take.fills) {
      const loan: LoanRecord = {
        id: this.#nextLoanId++,
        offerId: f.offerId,
        lender: f.lender,
        borrower: input.borrower,
        coin: f.coin,
        dailyRatePpm: f.dailyRatePpm,
        days: f.days,
        amount: f.amount,
        principal: f.amount,
        interestOwed: 0,
        interestRemainder: 0,
        interestCharged: 0,
        interestPaid: 0,
        venueShare: 0,
        createdMs: input.timeMs,
        termStartMs: input.timeMs,
        termEndMs: input.timeMs + f.days * DAY_MS,
        nextHourMs: input.timeMs,
        rollOver: input.rollOver,
        investMark: f.investMark,
        status: LOAN_STATUS.REPAYING,
        closedMs: 0,
      };
      this.#index(loan);
      loans.push(loan);
      effects.movements.push({
        kind: 'borrow',
        coin: loan.coin,
        amount: loan.amount,
        from: loan.lender,
        fromPocket: 'frozen',
        to: loan.borrower,
        toPocket: 'available',
        ref: loan.id,
      });
      effects.debts.push({
        kind: 'borrow',
        account: loan.borrower,
        coin: loan.coin,
        principal: loan.amount,
        interest: 0,
        ref: loan.id,
      });
      this.#commitAdvance(loan, input.timeMs, effects);
    }
    return { ok: true, loans, effects };
  }

  /**
   * The hourly timer command: charges every open record's hours begun by `nowMs`, ends the terms
   * reached (roll over, or status 5), then repays records in status 5 from what their account has
   * available (`availableOf`, read before this command), oldest record first.
   */
  accrue(
    nowMs: TimeMs,
    availableOf: (account: AccountRef, coin: string) => Units,
  ): { effects: Effects; repayments: RepaymentRecord[] } {
    const effects: Effects = { movements: [], debts: [] };
    const repayments: RepaymentRecord[] = [];
    for (const loan of this.#open.values()) this.#commitAdvance(loan, nowMs, effects);
    const spent = new Map<string, Units>();
    for (const loan of [...this.#open.values()]) {
      if (loan.status !== LOAN_STATUS.AUTO_REPAYING) continue;
      const key = `${accountKey(loan.borrower)}|${loan.coin}`;
      const budget = availableOf(loan.borrower, loan.coin) - (spent.get(key) ?? 0);
      const pay = Math.min(budget, loan.principal + loan.interestOwed);
      if (pay <= 0) continue;
      const r = this.#pay(loan, pay, pay, nowMs, true, effects);
      spent.set(key, (spent.get(key) ?? 0) + pay);
      repayments.push(r);
    }
    return { effects, repayments };
  }

  /** `repay`: pays part or all of one record, interest first. See the module comment for refusals. */
  repay(loanId: number, input: RepayInput): Outcome<{ effects: Effects; repayment: RepaymentRecord }> {
    const loan = this.#open.get(loanId);
    if (loan === undefined || accountKey(loan.borrower) !== accountKey(input.borrower))
      return refuse('LOAN_NOT_FOUND', `no open loan record ${loanId} of this account`);
    const owed = loan.principal + loan.interestOwed + this.#advance(loan, input.timeMs, false);
    const amount = input.amount === 'all' ? owed : input.amount;
    const bad = checkRepayAmount(amount, owed, input.available, loan.coin, this.#settings(loan.coin));
    if (bad !== undefined) return bad;
    const effects: Effects = { movements: [], debts: [] };
    this.#commitAdvance(loan, input.timeMs, effects);
    const repayment = this.#pay(loan, amount, amount, input.timeMs, false, effects);
    return { ok: true, effects, repayment };
  }

  /**
   * `doAllRepay` / `doCrossRepay`: pays `amount` (or everything) of what an account owes in one
   * coin across its open records: interest of each, oldest first, then principal, dearest first.
   * LOAN_NOT_FOUND when the account owes nothing in the coin.
   */
  repayAll(coin: string, input: RepayInput): Outcome<{ effects: Effects; repayments: RepaymentRecord[] }> {
    const debts = this.#debts(input.borrower, coin);
    if (debts === undefined || debts.size === 0)
      return refuse('LOAN_NOT_FOUND', `this account owes no ${coin}`);
    let owed = 0;
    for (const l of debts.values())
      owed += l.principal + l.interestOwed + this.#advance(l, input.timeMs, false);
    const amount = input.amount === 'all' ? owed : input.amount;
    const bad = checkRepayAmount(amount, owed, input.available, coin, this.#settings(coin));
    if (bad !== undefined) return bad;
    const effects: Effects = { movements: [], debts: [] };
    if (debts.size === 1) {
      // One record (the usual case, auto-repayment after a fill): the plan below comes down to
      // interest first, then principal, with no ordering to do.
      const l = debts.values().next().value as LoanRecord;
      this.#commitAdvance(l, input.timeMs, effects);
      const repayment = this.#pay(l, amount, Math.min(amount, l.interestOwed), input.timeMs, false, effects);
      return { ok: true, effects, repayments: [repayment] };
    }
    const open = [...debts.values()];
    for (const l of open) this.#commitAdvance(l, input.timeMs, effects);
    // Plan: interest oldest first, then principal dearest first (ties oldest first).
    const interests: Units[] = [];
    const principals: Units[] = [];
    let left = amount;
    for (const l of open) {
      const i = Math.min(left, l.interestOwed);
      left -= i;
      interests.push(i);
      principals.push(0);
    }
    const dearest = open.map((_, k) => k);
    dearest.sort((a, b) => {
      const x = open[a] as LoanRecord;
      const y = open[b] as LoanRecord;
      return y.dailyRatePpm - x.dailyRatePpm || x.id - y.id;
    });
    for (const k of dearest) {
      const p = Math.min(left, (open[k] as LoanRecord).principal);
      left -= p;
      principals[k] = p;
    }
    const repayments: RepaymentRecord[] = [];
    for (let k = 0; k < open.length; k++) {
      const interest = interests[k] as Units;
      const total = interest + (principals[k] as Units);
      if (total === 0) continue;
      repayments.push(this.#pay(open[k] as LoanRecord, total, interest, input.timeMs, false, effects));
    }
    return { ok: true, effects, repayments };
  }

  /**
   * What an account owes in a coin at `nowMs`: the hours begun by then charged, nothing committed
   * (a liquidation's plan reads it before it repays).
   */
  owedAt(borrower: AccountRef, coin: string, nowMs: TimeMs): Owed {
    let principal = 0;
    let interest = 0;
    for (const l of this.#debts(borrower, coin)?.values() ?? []) {
      principal += l.principal;
      interest += l.interestOwed + this.#advance(l, nowMs, false);
    }
    return { principal, interest };
  }

  /**
   * A forced liquidation begins (issue 15): every open record of the borrower in `coins` is charged
   * the hours begun by `nowMs` and becomes status 3 (needs liquidation); repaid while in status 3 it
   * closes as 4 (liquidated and repaid) instead of 2. Its term no longer ends or rolls over.
   */
  beginLiquidation(borrower: AccountRef, coins: readonly string[], nowMs: TimeMs): Effects {
    const effects: Effects = { movements: [], debts: [] };
    for (const coin of coins)
      for (const l of this.#debts(borrower, coin)?.values() ?? []) {
        this.#commitAdvance(l, nowMs, effects);
        l.status = LOAN_STATUS.NEEDS_LIQUIDATION;
      }
    return effects;
  }

  /**
   * Bad debt (issue 15): writes `amount` of what a liquidated account owes in `coin` off against
   * the lenders of its open records, pro rata of what each record is owed (interest + principal).
   * Rounding: each record first takes floor(amount × owed ÷ total); the units left (fewer than the
   * records) go one each to the records with the largest remainders, ties to the lower record id,
   * so the shares add up to `amount` exactly and none exceeds what its record is owed. A share
   * cancels the record's unpaid interest first, then principal; no money moves (the lender simply
   * never receives it), the offer's lent-out amount falls by the principal written off, and a
   * record left owing nothing closes as 4. Throws when `amount` exceeds what is owed (a caller's bug).
   */
  writeOff(
    borrower: AccountRef,
    coin: string,
    amount: Units,
    nowMs: TimeMs,
  ): { effects: Effects; shares: { loanId: number; lender: AccountRef; amount: Units }[] } {
    const effects: Effects = { movements: [], debts: [] };
    const open = [...(this.#debts(borrower, coin)?.values() ?? [])];
    for (const l of open) this.#commitAdvance(l, nowMs, effects);
    const owed = open.map((l) => BigInt(l.principal + l.interestOwed));
    const total = owed.reduce((a, b) => a + b, 0n);
    if (!Number.isSafeInteger(amount) || amount < 0 || BigInt(amount) > total)
      throw new Error(`write-off of ${amount} ${coin}, ${total} owed`);
    const B = BigInt(amount);
    const parts = owed.map((o, i) => ({
      i,
      share: total === 0n ? 0n : (B * o) / total,
      rem: total === 0n ? 0n : (B * o) % total,
    }));
    let left = B - parts.reduce((a, p) => a + p.share, 0n);
    for (const p of [...parts].sort((a, b) => (b.rem > a.rem ? 1 : b.rem < a.rem ? -1 : a.i - b.i))) {
      if (left === 0n) break;
      p.share += 1n;
      left -= 1n;
    }
    const shares: { loanId: number; lender: AccountRef; amount: Units }[] = [];
    for (const p of parts) {
      const loan = open[p.i] as LoanRecord;
      const share = Number(p.share);
      if (share === 0) continue;
      const interest = Math.min(share, loan.interestOwed);
      const principal = share - interest;
      const t = this.#total(coin, lenderKind(loan));
      t[2] += principal;
      t[3] += interest;
      loan.interestOwed -= interest;
      loan.interestCharged -= interest;
      loan.principal -= principal;
      if (principal > 0) this.#lending.principalReturned(loan.offerId, principal, false);
      effects.debts.push({
        kind: 'writeOff',
        account: loan.borrower,
        coin,
        principal: -principal,
        interest: -interest,
        ref: loan.id,
      });
      shares.push({ loanId: loan.id, lender: loan.lender, amount: share });
      if (loan.principal === 0 && loan.interestOwed === 0) this.#close(loan, LOAN_STATUS.LIQUIDATED, nowMs);
    }
    return { effects, shares };
  }

  /** `changeInvestMark`: the lender sets an open record's mark (LOAN_NOT_FOUND, INVALID_STATE). */
  changeInvestMark(loanId: number, lender: AccountRef, investMark: boolean): Outcome<{ loan: LoanRecord }> {
    const loan = this.#open.get(loanId);
    if (loan === undefined || accountKey(loan.lender) !== accountKey(lender))
      return refuse('LOAN_NOT_FOUND', `no open loan record ${loanId} lent by this account`);
    loan.investMark = investMark;
    return { ok: true, loan };
  }

  /** An open record (closed ones are in the history store). */
  loan(id: number): LoanRecord | undefined {
    return this.#open.get(id);
  }

  /** Open records borrowed by an account, newest first. */
  loansOf(borrower: AccountRef): LoanRecord[] {
    const key = accountKey(borrower);
    return [...this.#open.values()].filter((l) => accountKey(l.borrower) === key).reverse();
  }

  /** Open records lent by an account, newest first. */
  loansLentBy(lender: AccountRef): LoanRecord[] {
    const key = accountKey(lender);
    return [...this.#open.values()].filter((l) => accountKey(l.lender) === key).reverse();
  }

  /** Interest paid and its venue share in `coin` over every record, open and closed. */
  interestPaid(coin: string): { readonly paid: Units; readonly share: Units } {
    let paid = 0;
    let share = 0;
    for (const kind of ['pool', 'users'] as const) {
      const t = this.#totals.get(`${coin}|${kind}`);
      paid += t?.[0] ?? 0;
      share += t?.[1] ?? 0;
    }
    for (const l of this.#open.values())
      if (l.coin === coin) {
        paid += l.interestPaid;
        share += l.venueShare;
      }
    return { paid, share };
  }

  /** What the pool's records and users' records of `coin` came to, open and closed. */
  lenderTotals(coin: string): Readonly<Record<LenderKind, LenderTotals>> {
    const of = (kind: LenderKind): LenderTotals => {
      const [paid, share, principalWrittenOff, interestWrittenOff] = this.#totals.get(`${coin}|${kind}`) ?? [
        0, 0, 0, 0,
      ];
      let interestReceived = paid - share;
      let principal = 0;
      for (const l of this.#open.values())
        if (l.coin === coin && lenderKind(l) === kind) {
          interestReceived += l.interestPaid - l.venueShare;
          principal += l.principal;
        }
      return { interestReceived, principal, principalWrittenOff, interestWrittenOff };
    };
    return { pool: of('pool'), users: of('users') };
  }

  /** The coins some record (open or closed) was borrowed in. */
  coinsLent(): Set<string> {
    const out = new Set([...this.#totals.keys()].map((k) => k.slice(0, k.indexOf('|'))));
    for (const l of this.#open.values()) out.add(l.coin);
    return out;
  }

  /** Open records, oldest first. */
  openLoans(): IterableIterator<LoanRecord> {
    return this.#open.values();
  }

  /** What an account owes in a coin as charged so far (the timer's last charge). */
  owed(borrower: AccountRef, coin: string): Owed {
    let principal = 0;
    let interest = 0;
    for (const l of this.#debts(borrower, coin)?.values() ?? []) {
      principal += l.principal;
      interest += l.interestOwed;
    }
    return { principal, interest };
  }

  snapshot(): LoanBookSnapshot {
    const totals = [...this.#totals]
      .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
      .map(([key, t]): LenderTotalsEntry => {
        const at = key.indexOf('|');
        return [key.slice(0, at), key.slice(at + 1) as LenderKind, ...t];
      });
    return {
      nextLoanId: this.#nextLoanId,
      nextRepaymentId: this.#nextRepaymentId,
      loans: [...this.#open.values()].map((l) => ({ ...l })),
      ...(totals.length > 0 && { lenderTotals: totals }),
    };
  }

  /** Throws on a broken invariant (never a user error). */
  assertInvariants(): void {
    for (const [key, t] of this.#totals)
      if (!t.every((v) => Number.isSafeInteger(v) && v >= 0) || t[1] > t[0])
        throw new Error(`loan totals of ${key}: bad amounts ${t.join(', ')}`);
    for (const l of this.#open.values()) {
      const fields = [l.principal, l.interestOwed, l.interestCharged, l.interestPaid, l.venueShare];
      if (!fields.every((v) => Number.isSafeInteger(v) && v >= 0))
        throw new Error(`loan ${l.id}: bad amount`);
      if (l.principal > l.amount) throw new Error(`loan ${l.id}: principal above the amount lent`);
      if (l.interestCharged !== l.interestPaid + l.interestOwed)
        throw new Error(`loan ${l.id}: interest charged ≠ paid + owed`);
      if (l.venueShare > l.interestPaid) throw new Error(`loan ${l.id}: venue share above interest paid`);
      if (!(l.interestRemainder >= 0 && l.interestRemainder < HOURLY_DENOMINATOR))
        throw new Error(`loan ${l.id}: interest remainder out of range`);
      if (!isOpen(l.status)) throw new Error(`loan ${l.id}: closed but still in the book`);
      if (l.id >= this.#nextLoanId) throw new Error(`loan ${l.id}: id not yet given`);
      const mine = this.#openByDebtor.get(`${accountKey(l.borrower)}|${l.coin}`);
      if (mine?.get(l.id) !== l) throw new Error(`loan ${l.id}: debtor index out of step`);
      if (l.lender.kind !== 'spot' && l.lender.kind !== 'system') throw new Error(`loan ${l.id}: bad lender`);
    }
  }

  #close(loan: LoanRecord, status: LoanStatus, timeMs: TimeMs): void {
    loan.status = status;
    loan.closedMs = timeMs;
    this.#open.delete(loan.id);
    this.#debts(loan.borrower, loan.coin)?.delete(loan.id);
    this.#countClosed(loan);
    this.#onClose(loan);
  }

  #countClosed(loan: LoanRecord): void {
    const t = this.#total(loan.coin, lenderKind(loan));
    t[0] += loan.interestPaid;
    t[1] += loan.venueShare;
  }

  #total(coin: string, kind: LenderKind): [Units, Units, Units, Units] {
    const key = `${coin}|${kind}`;
    let t = this.#totals.get(key);
    if (t === undefined) this.#totals.set(key, (t = [0, 0, 0, 0]));
    return t;
  }

  /**
   * The open records of an account in a coin (see `#openByDebtor`), undefined if it never borrowed
   * it; with `make`, made (empty) when missing.
   */
  #debts(borrower: AccountRef, coin: string, make: true): Map<number, LoanRecord>;
  #debts(borrower: AccountRef, coin: string, make?: false): Map<number, LoanRecord> | undefined;
  #debts(borrower: AccountRef, coin: string, make = false): Map<number, LoanRecord> | undefined {
    let byCoin = this.#debtCache.get(borrower);
    const cached = byCoin?.get(coin);
    if (cached !== undefined) return cached;
    const key = `${accountKey(borrower)}|${coin}`;
    let debts = this.#openByDebtor.get(key);
    if (debts === undefined && make) this.#openByDebtor.set(key, (debts = new Map()));
    if (debts !== undefined) {
      if (byCoin === undefined) this.#debtCache.set(borrower, (byCoin = new Map()));
      byCoin.set(coin, debts);
    }
    return debts;
  }

  /**
   * Indexes an open record; by its borrower object too (`#debtCache`), so that a caller naming the
   * account by that same object (the margin engine passes the ledger account's key) finds it at once.
   */
  #index(loan: LoanRecord): void {
    this.#open.set(loan.id, loan);
    this.#debts(loan.borrower, loan.coin, true).set(loan.id, loan);
  }

  /**
   * Charges `loan`'s hours begun by `nowMs` and ends the terms reached (roll over, or status 5);
   * returns the interest charged. With `commit` false the loan is left untouched (what it would
   * owe); with `commit` true the loan is advanced in place. No copy, no allocation: this runs for
   * every open loan at every hourly timer and for every record an auto-repayment touches.
   */
  #advance(loan: LoanRecord, nowMs: TimeMs, commit: boolean): Units {
    const { principal, dailyRatePpm } = loan;
    let status = loan.status;
    let termStartMs = loan.termStartMs;
    let termEndMs = loan.termEndMs;
    let nextHourMs = loan.nextHourMs;
    let remainder = loan.interestRemainder;
    let charged = 0;
    while (isOpen(status)) {
      if (status === LOAN_STATUS.REPAYING && termEndMs <= nowMs && termEndMs <= nextHourMs) {
        if (loan.rollOver && loan.investMark) {
          termStartMs = termEndMs;
          termEndMs += loan.days * DAY_MS;
        } else status = LOAN_STATUS.AUTO_REPAYING;
        continue;
      }
      if (nextHourMs > nowMs) break;
      // hourInterest, inlined: floor((remainder + principal × rate) ÷ (24 × 10^6)), split so
      // that no intermediate leaves the safe range.
      const q = Math.floor(principal / HOURLY_DENOMINATOR);
      const num = remainder + (principal - q * HOURLY_DENOMINATOR) * dailyRatePpm;
      const extra = Math.floor(num / HOURLY_DENOMINATOR);
      remainder = num - extra * HOURLY_DENOMINATOR;
      charged += q * dailyRatePpm + extra;
      nextHourMs += HOUR_MS;
    }
    if (commit) {
      loan.status = status;
      loan.termStartMs = termStartMs;
      loan.termEndMs = termEndMs;
      loan.nextHourMs = nextHourMs;
      loan.interestRemainder = remainder;
      loan.interestOwed += charged;
      loan.interestCharged += charged;
    }
    return charged;
  }

  #commitAdvance(loan: LoanRecord, nowMs: TimeMs, effects: Effects): void {
    const charged = this.#advance(loan, nowMs, true);
    if (charged > 0)
      effects.debts.push({
        kind: 'accrue',
        account: loan.borrower,
        coin: loan.coin,
        principal: 0,
        interest: charged,
        ref: loan.id,
      });
  }

  /**
   * Pays `total` on an advanced loan, of which at most `interestPart` (and at least what interest
   * is owed, when total covers it) goes to interest: interest first, then principal.
   */
  #pay(
    loan: LoanRecord,
    total: Units,
    interestPart: Units,
    timeMs: TimeMs,
    auto: boolean,
    effects: Effects,
  ): RepaymentRecord {
    const interest = Math.min(total, interestPart, loan.interestOwed);
    const principal = total - interest;
    if (principal > loan.principal) throw new Error(`loan ${loan.id}: paying more principal than owed`);
    const sharePpm = this.#settings(loan.coin)?.venueSharePpm ?? 0;
    const shareTotal = mulDivFloor(loan.interestPaid + interest, sharePpm, PPM) as number;
    const share = shareTotal - loan.venueShare;
    if (interest - share > 0)
      effects.movements.push(
        repayMovement(loan, 'repayInterest', interest - share, loan.lender, 'available'),
      );
    if (share > 0)
      effects.movements.push(repayMovement(loan, 'interestShare', share, INSURANCE, 'available'));
    if (principal > 0) {
      const reinvested = this.#lending.principalReturned(loan.offerId, principal, loan.investMark);
      effects.movements.push(
        repayMovement(loan, 'repayPrincipal', principal, loan.lender, reinvested ? 'frozen' : 'available'),
      );
    }
    loan.interestOwed -= interest;
    loan.interestPaid += interest;
    loan.venueShare = shareTotal;
    loan.principal -= principal;
    if (interest !== 0) effects.debts.push(repayDebt(loan, 'repayInterest', 0, -interest));
    if (principal !== 0) effects.debts.push(repayDebt(loan, 'repayPrincipal', -principal, 0));
    if (loan.principal === 0 && loan.interestOwed === 0)
      this.#close(
        loan,
        loan.status === LOAN_STATUS.NEEDS_LIQUIDATION
          ? LOAN_STATUS.LIQUIDATED
          : auto
            ? LOAN_STATUS.AUTO_REPAID
            : LOAN_STATUS.REPAID,
        timeMs,
      );
    return {
      id: this.#nextRepaymentId++,
      loanId: loan.id,
      coin: loan.coin,
      borrower: loan.borrower,
      principal,
      interest,
      venueShare: share,
      timeMs,
      auto,
    };
  }
}

const INSURANCE = system('insurance');

/** A repayment's movement out of the borrower's available (what `#pay` moves). */
function repayMovement(
  loan: LoanRecord,
  kind: 'repayInterest' | 'interestShare' | 'repayPrincipal',
  amount: Units,
  to: AccountRef,
  toPocket: Movement['toPocket'],
): Movement {
  return {
    kind,
    amount,
    to,
    toPocket,
    coin: loan.coin,
    from: loan.borrower,
    fromPocket: 'available',
    ref: loan.id,
  };
}

/** A repayment's change of what the borrower owes. */
function repayDebt(
  loan: LoanRecord,
  kind: 'repayInterest' | 'repayPrincipal',
  principal: Units,
  interest: Units,
): DebtChange {
  return { kind, account: loan.borrower, coin: loan.coin, principal, interest, ref: loan.id };
}

/**
 * One hour's interest on `principal` at `dailyRatePpm`, with the carried `remainder`:
 * floor((remainder + principal × rate) ÷ (24 × 10^6)) and the new remainder, exact for every safe
 * principal (the product is split so that no intermediate leaves the safe range).
 */
export function hourInterest(
  principal: Units,
  dailyRatePpm: RatePpm,
  remainder: number,
): { interest: Units; remainder: number } {
  const q = Math.floor(principal / HOURLY_DENOMINATOR);
  const r = principal - q * HOURLY_DENOMINATOR;
  const num = remainder + r * dailyRatePpm;
  const extra = Math.floor(num / HOURLY_DENOMINATOR);
  return { interest: q * dailyRatePpm + extra, remainder: num - extra * HOURLY_DENOMINATOR };
}

function checkRepayAmount(
  amount: Units,
  owed: Units,
  available: Units,
  coin: string,
  settings: LendingSettings | undefined,
): ReturnType<typeof refuse> | undefined {
  const show = (u: Units): string => `${formatUnitsTrim(u, settings?.unitDecimal ?? 0)} ${coin}`;
  if (!Number.isSafeInteger(amount) || amount <= 0)
    return refuse('INVALID_AMOUNT', 'repay amount must be positive');
  if (amount > owed) return refuse('REPAY_OVER_OWED', `repay ${show(amount)}, owed ${show(owed)}`);
  if (amount > available)
    return refuse(
      'INSUFFICIENT_BALANCE',
      `available ${show(available)}, the repayment needs ${show(amount)}`,
    );
  return undefined;
}
