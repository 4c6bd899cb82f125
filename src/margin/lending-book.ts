/**
 * @module lending-book — lending offers per coin and the cheapest-first taking of a borrow from
 * them. Lenders are users' spot accounts and the platform lending pool (`system:lendingPool`),
 * which the operator funds and which lends like any other lender.
 *
 * ## Rules
 * - An offer names a coin, an amount, a daily rate (ppm), a term (days) and a roll-over flag
 *   (`isLoop`). Placing it freezes the amount in the lender's account (available → frozen).
 * - `remaining` is the unlent part, held frozen in the lender's account; what is lent out is in
 *   loan records (`loans.ts`). An offer's remaining grows when a loan's principal comes back and
 *   the loan record is marked to re-invest (`investMark`, which starts as the offer's `isLoop`).
 * - Taking a borrow: the offers of the coin, cheapest daily rate first, ties by offer id (older
 *   first), skipping the borrower's own offers and, when given, offers above the borrower's rate or
 *   of another term. All or nothing: if the offers cannot cover the whole amount, nothing is taken
 *   (LENDING_SHORT).
 * - Cancelling releases the unlent remaining (frozen → available); lent-out principal still comes
 *   back when repaid, then to the lender's available.
 */
import { formatUnitsTrim, type RatePpm } from '../domain/money.ts';
import {
  accountKey,
  ownerOf,
  refuse,
  type AccountRef,
  type Effects,
  type Outcome,
  type TimeMs,
  type Units,
} from './movement.ts';
import { checkLendingOpen, checkLoanAmount, checkRate, checkTerm, type LendingSettings } from './settings.ts';

export type OfferStatus = 'open' | 'cancelled';

export interface LoanOffer {
  readonly id: number;
  readonly lender: AccountRef;
  readonly coin: string;
  readonly dailyRatePpm: RatePpm;
  readonly days: number;
  /** The amount first offered. */
  readonly amount: Units;
  /** The unlent part, frozen in the lender's account. */
  remaining: Units;
  /** Principal of this offer's loans not yet returned. */
  lentOut: Units;
  /** `isLoop`: new loan records of this offer re-invest their principal when it comes back. */
  loop: boolean;
  status: OfferStatus;
  readonly createdMs: TimeMs;
}

/** A slice of a borrow taken from one offer. */
export interface OfferFill {
  readonly offerId: number;
  readonly lender: AccountRef;
  readonly coin: string;
  readonly amount: Units;
  readonly dailyRatePpm: RatePpm;
  readonly days: number;
  /** The loan record's first `investMark`: the offer's `isLoop` when taken. */
  readonly investMark: boolean;
}

export interface PlaceOfferInput {
  readonly lender: AccountRef;
  readonly coin: string;
  readonly amount: Units;
  readonly dailyRatePpm: RatePpm;
  readonly days: number;
  readonly loop: boolean;
  readonly timeMs: TimeMs;
  /** The lender's available balance of the coin, which the offer freezes. */
  readonly available: Units;
}

export interface TakeInput {
  readonly coin: string;
  readonly amount: Units;
  /** The borrower's user, whose own offers are skipped. */
  readonly borrowerUserId: number;
  /** Only offers at or below this daily rate (the borrow's `interestRateOfDay`), when given. */
  readonly maxDailyRatePpm?: RatePpm;
  /** Only offers of this term (the borrow's `repaymentDay`), when given. */
  readonly days?: number;
}

export interface LendingBookSnapshot {
  readonly nextOfferId: number;
  readonly offers: readonly LoanOffer[];
}

const byPrice = (a: LoanOffer, b: LoanOffer): number => a.dailyRatePpm - b.dailyRatePpm || a.id - b.id;

export class LendingBook {
  readonly #settings: (coin: string) => LendingSettings | undefined;
  readonly #offers = new Map<number, LoanOffer>();
  /** Open offers per coin, cheapest first then oldest. */
  readonly #open = new Map<string, LoanOffer[]>();
  #nextOfferId = 1;

  constructor(settings: (coin: string) => LendingSettings | undefined, snapshot?: LendingBookSnapshot) {
    this.#settings = settings;
    if (snapshot !== undefined) {
      this.#nextOfferId = snapshot.nextOfferId;
      for (const o of snapshot.offers) {
        const copy = { ...o };
        this.#offers.set(copy.id, copy);
        if (copy.status === 'open') this.#insertOpen(copy);
      }
    }
  }

  /**
   * Places an offer. Refusals: MARGIN_NOT_OPEN (coin not lendable), INVALID_LOAN_TERM,
   * LOAN_RATE_OUT_OF_RANGE, INVALID_AMOUNT / BELOW_MIN_LOAN, INSUFFICIENT_BALANCE (the lender's
   * available is short). Effects: one `loanOffer` movement, available → frozen of the lender.
   */
  place(input: PlaceOfferInput): Outcome<{ offer: LoanOffer; effects: Effects }> {
    const open = checkLendingOpen(this.#settings(input.coin), input.coin);
    if (!open.ok) return open;
    const s = open.settings;
    const checks = [
      checkTerm(s, input.days),
      checkRate(s, input.dailyRatePpm),
      checkLoanAmount(s, input.amount),
    ];
    for (const c of checks) if (!c.ok) return c;
    if (input.amount > input.available)
      return refuse(
        'INSUFFICIENT_BALANCE',
        `available ${formatUnitsTrim(input.available, s.unitDecimal)} ${input.coin}, the offer needs ${formatUnitsTrim(input.amount, s.unitDecimal)}`,
      );
    const offer: LoanOffer = {
      id: this.#nextOfferId++,
      lender: input.lender,
      coin: input.coin,
      dailyRatePpm: input.dailyRatePpm,
      days: input.days,
      amount: input.amount,
      remaining: input.amount,
      lentOut: 0,
      loop: input.loop,
      status: 'open',
      createdMs: input.timeMs,
    };
    this.#offers.set(offer.id, offer);
    this.#insertOpen(offer);
    const effects: Effects = {
      movements: [
        {
          kind: 'loanOffer',
          coin: offer.coin,
          amount: offer.amount,
          from: offer.lender,
          fromPocket: 'available',
          to: offer.lender,
          toPocket: 'frozen',
          ref: offer.id,
        },
      ],
      debts: [],
    };
    return { ok: true, offer, effects };
  }

  /**
   * Cancels the unlent part of an offer of `lender` (LOAN_NOT_FOUND for another's or an unknown
   * offer, INVALID_STATE if already cancelled). Effects: a `loanCancel` movement of the remaining
   * (none when nothing is unlent).
   */
  cancel(offerId: number, lender: AccountRef): Outcome<{ offer: LoanOffer; effects: Effects }> {
    const offer = this.#own(offerId, lender);
    if (!offer.ok) return offer;
    const o = offer.offer;
    if (o.status !== 'open') return refuse('INVALID_STATE', `lending offer ${offerId} is already cancelled`);
    o.status = 'cancelled';
    this.#removeOpen(o);
    const released = o.remaining;
    o.remaining = 0;
    const effects: Effects = { movements: [], debts: [] };
    if (released > 0)
      effects.movements.push({
        kind: 'loanCancel',
        coin: o.coin,
        amount: released,
        from: o.lender,
        fromPocket: 'frozen',
        to: o.lender,
        toPocket: 'available',
        ref: o.id,
      });
    return { ok: true, offer: o, effects };
  }

  /** `changeLoop`: sets an open offer's `isLoop` (for loan records taken from now on). */
  changeLoop(offerId: number, lender: AccountRef, loop: boolean): Outcome<{ offer: LoanOffer }> {
    const offer = this.#own(offerId, lender);
    if (!offer.ok) return offer;
    if (offer.offer.status !== 'open')
      return refuse('INVALID_STATE', `lending offer ${offerId} is cancelled`);
    offer.offer.loop = loop;
    return { ok: true, offer: offer.offer };
  }

  /**
   * Takes `amount` from the cheapest offers (see the module's rules). Refusals: MARGIN_NOT_OPEN,
   * INVALID_AMOUNT / BELOW_MIN_LOAN, LENDING_SHORT (nothing taken). The fills' movements are made
   * by the loan book, which records who owes what to whom.
   */
  take(input: TakeInput): Outcome<{ fills: OfferFill[] }> {
    const open = checkLendingOpen(this.#settings(input.coin), input.coin);
    if (!open.ok) return open;
    const amount = checkLoanAmount(open.settings, input.amount);
    if (!amount.ok) return amount;
    const eligible = (this.#open.get(input.coin) ?? []).filter(
      (o) =>
        o.remaining > 0 &&
        ownerOf(o.lender) !== input.borrowerUserId &&
        (input.maxDailyRatePpm === undefined || o.dailyRatePpm <= input.maxDailyRatePpm) &&
        (input.days === undefined || o.days === input.days),
    );
    let supply = 0;
    for (const o of eligible) {
      supply += o.remaining;
      if (supply >= input.amount) break;
    }
    if (supply < input.amount)
      return refuse(
        'LENDING_SHORT',
        `offers can lend ${formatUnitsTrim(supply, open.settings.unitDecimal)} ${input.coin} at these terms, the borrow needs ${formatUnitsTrim(input.amount, open.settings.unitDecimal)}`,
      );
    const fills: OfferFill[] = [];
    let need = input.amount;
    for (const o of eligible) {
      if (need === 0) break;
      const take = Math.min(need, o.remaining);
      o.remaining -= take;
      o.lentOut += take;
      need -= take;
      fills.push({
        offerId: o.id,
        lender: o.lender,
        coin: o.coin,
        amount: take,
        dailyRatePpm: o.dailyRatePpm,
        days: o.days,
        investMark: o.loop,
      });
    }
    return { ok: true, fills };
  }

  /**
   * Principal of one of the offer's loans comes back. When `reinvest` and the offer is open it
   * rejoins the offer's remaining and the answer is true (the money goes to the lender's frozen);
   * otherwise false (it goes to the lender's available).
   */
  principalReturned(offerId: number, amount: Units, reinvest: boolean): boolean {
    const o = this.#offers.get(offerId);
    if (o === undefined) throw new Error(`principal returned to unknown offer ${offerId}`);
    if (amount > o.lentOut)
      throw new Error(`offer ${offerId}: ${amount} returned, only ${o.lentOut} lent out`);
    o.lentOut -= amount;
    if (!reinvest || o.status !== 'open') return false;
    o.remaining += amount;
    return true;
  }

  offer(id: number): LoanOffer | undefined {
    return this.#offers.get(id);
  }

  /** The open offers of a coin with something to lend, cheapest first (what `getLoans` lists). */
  openOffers(coin: string): readonly LoanOffer[] {
    return (this.#open.get(coin) ?? []).filter((o) => o.remaining > 0);
  }

  /** Every offer of one lender, newest first. */
  offersOf(lender: AccountRef): LoanOffer[] {
    const key = accountKey(lender);
    return [...this.#offers.values()].filter((o) => accountKey(o.lender) === key).reverse();
  }

  /** Σ remaining of a coin: what lenders hold frozen for offers (part of their frozen). */
  frozenFor(lender: AccountRef, coin: string): Units {
    const key = accountKey(lender);
    let sum = 0;
    for (const o of this.#open.get(coin) ?? []) if (accountKey(o.lender) === key) sum += o.remaining;
    return sum;
  }

  snapshot(): LendingBookSnapshot {
    return { nextOfferId: this.#nextOfferId, offers: [...this.#offers.values()].map((o) => ({ ...o })) };
  }

  /** Throws if an index or an amount is inconsistent (a broken invariant, never a user error). */
  assertInvariants(): void {
    for (const o of this.#offers.values()) {
      if (!(o.remaining >= 0 && o.lentOut >= 0)) throw new Error(`offer ${o.id}: negative amount`);
      if (o.status === 'cancelled' && o.remaining !== 0)
        throw new Error(`offer ${o.id}: cancelled with remaining`);
      const listed = (this.#open.get(o.coin) ?? []).includes(o);
      if (listed !== (o.status === 'open')) throw new Error(`offer ${o.id}: open index out of step`);
    }
    for (const list of this.#open.values())
      for (let i = 1; i < list.length; i++)
        if (byPrice(list[i - 1] as LoanOffer, list[i] as LoanOffer) >= 0)
          throw new Error('open offers out of order');
  }

  #own(offerId: number, lender: AccountRef): Outcome<{ offer: LoanOffer }> {
    const o = this.#offers.get(offerId);
    if (o === undefined || accountKey(o.lender) !== accountKey(lender))
      return refuse('LOAN_NOT_FOUND', `no lending offer ${offerId} of this account`);
    return { ok: true, offer: o };
  }

  #insertOpen(o: LoanOffer): void {
    let list = this.#open.get(o.coin);
    if (list === undefined) this.#open.set(o.coin, (list = []));
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (byPrice(list[mid] as LoanOffer, o) < 0) lo = mid + 1;
      else hi = mid;
    }
    list.splice(lo, 0, o);
  }

  #removeOpen(o: LoanOffer): void {
    const list = this.#open.get(o.coin);
    const i = list?.indexOf(o) ?? -1;
    if (list !== undefined && i >= 0) list.splice(i, 1);
  }
}
