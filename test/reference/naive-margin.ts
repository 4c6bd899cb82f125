/**
 * @module naive-margin — the reference engine's margin: written from docs/margin.md and the
 * command comments, sharing no code with src/margin or src/engine. Every amount is a bigint,
 * offers and loans are plain arrays scanned linearly, valuations are exact fractions.
 *
 * Accounts are named by text: `spot` is the user's spot account (kept by the reference engine),
 * `i:<user>:<market>` an isolated account, `c:<user>` a cross account, `pool` the lending pool.
 */
import type { ResultName } from '../../src/domain/result-codes.ts';
import { ValuationPaths } from '../../src/margin/valuation-path.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const PPM = 1_000_000n;
const HOURLY = 24n * PPM;
const BP = 10_000n;
/** The real venue's numbers: 5× multiple, opening line 1.25. */
const LEVER = 50_000n;
const START_LINE = 12_500n;
const TERMS = [10, 20, 30];
const MIN_RATE = 500;
const MAX_RATE = 2_000;
const VENUE_SHARE = 100_000n;
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

export interface Pocket {
  available: bigint;
  frozen: bigint;
  borrowed: bigint;
  interest: bigint;
}

interface Offer {
  readonly id: number;
  /** A user id, or 0 for the pool. */
  readonly lender: number;
  readonly coin: string;
  readonly rate: number;
  readonly days: number;
  remaining: bigint;
  lentOut: bigint;
  loop: boolean;
  open: boolean;
}

interface Loan {
  readonly id: number;
  readonly offer: Offer;
  readonly borrower: string;
  readonly userId: number;
  readonly coin: string;
  readonly rate: number;
  readonly days: number;
  principal: bigint;
  owed: bigint;
  carry: bigint;
  paid: bigint;
  share: bigint;
  termEnd: number;
  nextHour: number;
  readonly rollOver: boolean;
  investMark: boolean;
  /** 1 repaying, 2 repaid, 3 needs liquidation, 4 liquidated, 5 auto-repaying, 6 auto-repaid. */
  status: number;
}

/** A fraction n/d, d > 0. */
interface Frac {
  readonly n: bigint;
  readonly d: bigint;
}

/** What the margin reference needs of the reference engine. */
export interface NaiveMarginHost {
  hasUser(userId: number): boolean;
  decimals(coin: string): number | undefined;
  /** A market's coins, price scale and last price (ticks), or undefined. */
  market(name: string): { base: string; quote: string; priceScale: number; lastPrice: bigint } | undefined;
  /** The mark the limits read (naive-risk.ts `limitMark`), ticks; undefined: none. */
  limitMark(market: string): bigint | undefined;
  /** Deposits credited less settled withdrawals of a coin (the exact range of the pool's funding). */
  fundsHeld(coin: string): bigint;
  /** Every market's name, base and quote in configuration order (the cross valuation paths). */
  marketList(): readonly { name: string; base: string; quote: string; priceScale: number }[];
  /** The first market's quote coin. */
  firstQuote(): string | undefined;
  /** A user's spot pocket of a coin (created empty if need be). */
  spot(userId: number, coin: string): { available: bigint; frozen: bigint };
  coins(): readonly string[];
  /** The orders resting in a margin account, in any market (their remaining lots). */
  resting(account: string): readonly NaiveLossOrder[];
}

type Outcome = ResultName | { ok: true; loanIds?: number[]; offerId?: number; duplicate?: true };

const isOpen = (l: Loan): boolean => l.status === 1 || l.status === 3 || l.status === 5;
const okay = (extra: { loanIds?: number[]; offerId?: number; duplicate?: true } = {}): Outcome => ({
  ok: true,
  ...extra,
});
const safe = (x: unknown): x is number => typeof x === 'number' && Number.isSafeInteger(x);
const minLoan = (decimals: number): bigint => (decimals >= 2 ? 10n ** BigInt(decimals - 2) : 1n);

/** An order as `orderLossOk` weighs it: its market and quote coin, side, price, lots and tick·lot value. */
export interface NaiveLossOrder {
  readonly market: string;
  readonly quote: string;
  readonly buy: boolean;
  readonly price: bigint;
  readonly lots: bigint;
  readonly tickLotQuote: bigint;
}

export class NaiveMargin {
  readonly #host: NaiveMarginHost;
  /** account → coin → pocket */
  readonly #accounts = new Map<string, Map<string, Pocket>>();
  readonly #insurance = new Map<string, bigint>();
  readonly #funded = new Map<string, bigint>();
  readonly #fundingIds = new Set<string>();
  readonly #offers: Offer[] = [];
  readonly #loans: Loan[] = [];
  readonly #prefs = new Map<string, { express: boolean; autoRepay: boolean }>();
  /** [account, coin, units] a fill brought into a margin account during this command. */
  #received: [string, string, bigint][] = [];
  time = 0;

  constructor(host: NaiveMarginHost) {
    this.#host = host;
  }

  /** The pocket of a margin account or the pool ('pool'), created empty. */
  pocket(account: string, coin: string): Pocket {
    let m = this.#accounts.get(account);
    if (m === undefined) this.#accounts.set(account, (m = new Map()));
    let p = m.get(coin);
    if (p === undefined) m.set(coin, (p = { available: 0n, frozen: 0n, borrowed: 0n, interest: 0n }));
    return p;
  }

  /** The account text of (user, acctType, market), or why it cannot be named. */
  accountOf(userId: number, acctType: number, market: string): ResultName | string {
    if (!this.#host.hasUser(userId)) return 'USER_NOT_FOUND';
    if (acctType === 1)
      return this.#host.market(market) === undefined ? 'UNKNOWN_MARKET' : `i:${userId}:${market}`;
    if (acctType === 2) return market === '' ? `c:${userId}` : 'INVALID_PARAMETER';
    return 'INVALID_PARAMETER';
  }

  #coinFor(account: string, coin: string): ResultName | undefined {
    if (this.#host.decimals(coin) === undefined) return 'UNKNOWN_COIN';
    if (account.startsWith('i:')) {
      const m = this.#host.market(account.slice(account.indexOf(':', 2) + 1));
      if (m !== undefined && coin !== m.base && coin !== m.quote) return 'INVALID_PARAMETER';
    }
    return undefined;
  }

  // ───────────── valuation ─────────────

  /**
   * Quote units one unit of `coin` is worth in the account's valuation coin, at the marks the
   * limits read (issue 29: never the last trade); undefined without a price. An isolated account
   * values its base at its market's mark; a cross account every coin along its valuation path
   * (the coin's market against usdt, else the inverse, else two legs through an intermediate).
   */
  #price(account: string, coin: string): Frac | undefined {
    const unit = (m: { name: string; priceScale: number }, from: string, to: string): Frac | undefined => {
      const mark = this.#host.limitMark(m.name);
      if (mark === undefined || mark <= 0n) return undefined;
      const shift =
        (this.#host.decimals(to) as number) - m.priceScale - (this.#host.decimals(from) as number);
      return shift >= 0 ? { n: mark * 10n ** BigInt(shift), d: 1n } : { n: mark, d: 10n ** BigInt(-shift) };
    };
    if (account.startsWith('i:')) {
      const name = account.slice(account.indexOf(':', 2) + 1);
      const m = this.#host.market(name);
      if (m === undefined) return undefined;
      if (coin === m.quote) return { n: 1n, d: 1n };
      return coin === m.base ? unit({ name, priceScale: m.priceScale }, m.base, m.quote) : undefined;
    }
    const quote = this.#host.decimals('usdt') !== undefined ? 'usdt' : this.#host.firstQuote();
    if (quote === undefined) return undefined;
    const markets = this.#host.marketList();
    const paths = new ValuationPaths(
      markets.map((m) => ({ ...m, baseDecimal: 0, quoteDecimal: 0 })),
      quote,
    );
    const legs = paths.path(coin);
    if (legs === undefined) return undefined;
    let price: Frac = { n: 1n, d: 1n };
    for (const leg of legs) {
      const m = markets.find((x) => x.name === leg.market);
      if (m === undefined) return undefined;
      const p = unit(m, m.base, m.quote);
      if (p === undefined) return undefined;
      price = leg.invert ? { n: price.n * p.d, d: price.d * p.n } : { n: price.n * p.n, d: price.d * p.d };
    }
    return price;
  }

  #coinsOf(account: string): string[] {
    if (account.startsWith('i:')) {
      const m = this.#host.market(account.slice(account.indexOf(':', 2) + 1));
      return m === undefined ? [] : [m.base, m.quote];
    }
    return [...this.#host.coins()];
  }

  /** Assets and debt in the valuation coin, or undefined when a debt has no price. */
  #value(account: string): { a: Frac; d: Frac } | undefined {
    let a: Frac = { n: 0n, d: 1n };
    let d: Frac = { n: 0n, d: 1n };
    const add = (x: Frac, p: Frac, k: bigint): Frac => ({ n: x.n * p.d + p.n * k * x.d, d: x.d * p.d });
    for (const coin of this.#coinsOf(account)) {
      const p = this.#accounts.get(account)?.get(coin);
      if (p === undefined) continue;
      const held = p.available + p.frozen;
      const owed = p.borrowed + p.interest;
      if (held === 0n && owed === 0n) continue;
      const price = this.#price(account, coin);
      if (price === undefined) {
        if (owed > 0n) return undefined;
        continue;
      }
      a = add(a, price, held);
      d = add(d, price, owed);
    }
    return { a, d };
  }

  /** floor(x ÷ price) units, 0 when x ≤ 0 or there is no price; capped at the safe range. */
  #units(x: Frac, price: Frac | undefined): bigint {
    if (x.n <= 0n || price === undefined || price.n <= 0n) return 0n;
    const u = (x.n * price.d) / (x.d * price.n);
    return u > MAX_SAFE ? MAX_SAFE : u;
  }

  /** What one order can hand its counterparty beyond the mark, in its quote coin's units. */
  #lossOf(o: NaiveLossOrder): bigint {
    const mark = this.#host.limitMark(o.market);
    if (mark === undefined) return 0n;
    const gap = o.buy ? o.price - mark : mark - o.price;
    return gap > 0n ? gap * o.lots * o.tickLotQuote : 0n;
  }

  /** Σ `#lossOf` over `orders` in the account's valuation coin; undefined when one has no price. */
  #lossValue(account: string, orders: readonly NaiveLossOrder[]): Frac | undefined {
    let loss: Frac = { n: 0n, d: 1n };
    for (const o of orders) {
      const units = this.#lossOf(o);
      if (units === 0n) continue;
      const p = this.#price(account, o.quote);
      if (p === undefined) return undefined;
      loss = { n: loss.n * p.d + units * p.n * loss.d, d: loss.d * p.d };
    }
    return loss;
  }

  /**
   * What the limits value the account at: its assets less what its resting orders could hand
   * their counterparties beyond the mark (issue 29: an order placed while nothing was owed is not
   * checked at placement), never below 0; no assets when such a loss has no price.
   */
  #limitValue(account: string): { a: Frac; d: Frac } | undefined {
    const v = this.#value(account);
    if (v === undefined) return undefined;
    const loss = this.#lossValue(account, this.#host.resting(account));
    if (loss === undefined) return { a: { n: 0n, d: 1n }, d: v.d };
    const left = { n: v.a.n * loss.d - loss.n * v.a.d, d: v.a.d * loss.d };
    return { a: left.n > 0n ? left : { n: 0n, d: 1n }, d: v.d };
  }

  /** How much of `coin` the account may still borrow. */
  borrowLimit(account: string, coin: string): bigint {
    const v = this.#limitValue(account);
    if (v === undefined) return 0n;
    // x ≤ (B·A − S·D) ÷ (S − B) and x ≤ ((L − B)(A − D) − B·D) ÷ B, over a common denominator.
    const den = v.a.d * v.d.d;
    const A = v.a.n * v.d.d;
    const D = v.d.n * v.a.d;
    const line = { n: BP * A - START_LINE * D, d: den * (START_LINE - BP) };
    const multiple = { n: (LEVER - BP) * (A - D) - BP * D, d: den * BP };
    const best = line.n * multiple.d <= multiple.n * line.d ? line : multiple;
    return this.#units(best, this.#price(account, coin));
  }

  /**
   * How much of `coin` may leave the account: its available without debt, else the most that
   * keeps assets ÷ debt at the opening line; undefined when a debt has no price.
   */
  transferLimit(account: string, coin: string): bigint | undefined {
    const available = this.#accounts.get(account)?.get(coin)?.available ?? 0n;
    const v = this.#limitValue(account);
    if (v === undefined) return undefined;
    if (v.d.n === 0n) return available;
    const room = { n: v.a.n * v.d.d * BP - v.d.n * v.a.d * START_LINE, d: v.a.d * v.d.d * BP };
    const u = this.#units(room, this.#price(account, coin));
    return u < available ? u : available;
  }

  /**
   * Issue 29, the slow way: whether margin orders `orders` (new, of one market and side, with an
   * express borrow of `borrow` units of `payCoin`), with the account's `resting` orders, keep the
   * account at its opening line at the marks after losing what each can hand its counterparty
   * beyond the mark: (price − mark) × lots of a buy above it, (mark − price) × lots of a sell under
   * it, × the market's quote units per tick·lot. Always true when the new orders lose nothing, and
   * when the account owes nothing and borrows nothing. Refusal: OVER_ORDER_LIMIT.
   */
  orderLossOk(
    account: string,
    orders: readonly NaiveLossOrder[],
    resting: readonly NaiveLossOrder[],
    payCoin: string,
    borrow: bigint,
  ): boolean {
    if (orders.every((o) => this.#lossOf(o) === 0n)) return true;
    const owes = this.#coinsOf(account).some((c) => {
      const p = this.#accounts.get(account)?.get(c);
      return p !== undefined && p.borrowed + p.interest > 0n;
    });
    if (!owes && borrow === 0n) return true;
    const v = this.#value(account);
    if (v === undefined) return false;
    // Everything over one denominator: L = Σ loss × price(quote), x = borrow × price(pay).
    const loss = this.#lossValue(account, [...orders, ...resting]);
    if (loss === undefined) return false;
    let x: Frac = { n: 0n, d: 1n };
    if (borrow > 0n) {
      const p = this.#price(account, payCoin);
      if (p === undefined) return false;
      x = { n: borrow * p.n, d: p.d };
    }
    // (A + x − L) × BP ≥ S × (D + x)
    const A = v.a.n * v.d.d * x.d * loss.d;
    const D = v.d.n * v.a.d * x.d * loss.d;
    const X = x.n * v.a.d * v.d.d * loss.d;
    const L = loss.n * v.a.d * v.d.d * x.d;
    if (D + X === 0n) return true;
    return (A + X - L) * BP >= START_LINE * (D + X);
  }

  // ───────────── commands ─────────────

  transfer(
    userId: number,
    direction: string,
    acctType: number,
    market: string,
    coin: string,
    amount: number,
  ): Outcome {
    const account = this.accountOf(userId, acctType, market);
    if (!account.includes(':')) return account as ResultName;
    const bad = this.#coinFor(account, coin);
    if (bad !== undefined) return bad;
    if (!safe(amount) || amount <= 0) return 'INVALID_AMOUNT';
    const x = BigInt(amount);
    const spot = this.#host.spot(userId, coin);
    if (direction === 'in') {
      if (spot.available < x) return 'INSUFFICIENT_BALANCE';
      spot.available -= x;
      this.pocket(account, coin).available += x;
      return okay();
    }
    if (direction !== 'out') return 'INVALID_PARAMETER';
    const available = this.#accounts.get(account)?.get(coin)?.available ?? 0n;
    if (x > available) return 'INSUFFICIENT_BALANCE';
    const limit = this.transferLimit(account, coin);
    if (limit === undefined || x > limit) return 'OVER_TRANSFER_LIMIT';
    this.pocket(account, coin).available -= x;
    spot.available += x;
    return okay();
  }

  #checkOffer(coin: string, amount: number, rate: number, days: number): ResultName | undefined {
    const dec = this.#host.decimals(coin);
    if (dec === undefined) return 'UNKNOWN_COIN';
    if (!TERMS.includes(days)) return 'INVALID_LOAN_TERM';
    if (!Number.isInteger(rate) || rate < MIN_RATE || rate > MAX_RATE) return 'LOAN_RATE_OUT_OF_RANGE';
    if (!safe(amount) || amount <= 0) return 'INVALID_AMOUNT';
    if (BigInt(amount) < minLoan(dec)) return 'BELOW_MIN_LOAN';
    return undefined;
  }

  fundPool(fundingId: string, coin: string, amount: number, rate: number, days: number): Outcome {
    if (typeof fundingId !== 'string' || fundingId === '' || fundingId.length > 128)
      return 'INVALID_PARAMETER';
    if (this.#fundingIds.has(fundingId)) return okay({ duplicate: true });
    const bad = this.#checkOffer(coin, amount, rate, days);
    if (bad !== undefined) return bad;
    // The venue's holdings from outside (deposits less withdrawals, plus the pool's funding) stay exact.
    if (this.#host.fundsHeld(coin) + this.funded(coin) + BigInt(amount) > MAX_SAFE)
      return 'VALUE_OUT_OF_RANGE';
    this.#fundingIds.add(fundingId);
    this.#funded.set(coin, (this.#funded.get(coin) ?? 0n) + BigInt(amount));
    this.pocket('pool', coin).frozen += BigInt(amount);
    return okay({ offerId: this.#newOffer(0, coin, amount, rate, days, true).id });
  }

  #newOffer(lender: number, coin: string, amount: number, rate: number, days: number, loop: boolean): Offer {
    const o: Offer = {
      id: this.#offers.length + 1,
      lender,
      coin,
      rate,
      days,
      remaining: BigInt(amount),
      lentOut: 0n,
      loop,
      open: true,
    };
    this.#offers.push(o);
    return o;
  }

  placeOffer(
    userId: number,
    coin: string,
    amount: number,
    rate: number,
    days: number,
    loop: unknown,
  ): Outcome {
    if (!this.#host.hasUser(userId)) return 'USER_NOT_FOUND';
    if (this.#host.decimals(coin) === undefined) return 'UNKNOWN_COIN';
    const bad = this.#checkOffer(coin, amount, rate, days);
    if (bad !== undefined) return bad;
    const spot = this.#host.spot(userId, coin);
    if (spot.available < BigInt(amount)) return 'INSUFFICIENT_BALANCE';
    spot.available -= BigInt(amount);
    spot.frozen += BigInt(amount);
    return okay({ offerId: this.#newOffer(userId, coin, amount, rate, days, loop === true).id });
  }

  #ownOffer(userId: number, offerId: number): Offer | ResultName {
    const o = this.#offers.find((x) => x.id === offerId);
    if (o === undefined || o.lender !== userId || userId === 0) return 'LOAN_NOT_FOUND';
    return o.open ? o : 'INVALID_STATE';
  }

  cancelOffer(userId: number, offerId: number): Outcome {
    const o = this.#ownOffer(userId, offerId);
    if (typeof o === 'string') return o;
    o.open = false;
    const spot = this.#host.spot(userId, o.coin);
    spot.frozen -= o.remaining;
    spot.available += o.remaining;
    o.remaining = 0n;
    return okay();
  }

  changeLoop(userId: number, offerId: number, loop: unknown): Outcome {
    const o = this.#ownOffer(userId, offerId);
    if (typeof o === 'string') return o;
    o.loop = loop === true;
    return okay();
  }

  changeInvestMark(userId: number, loanId: number, mark: unknown): Outcome {
    const l = this.#loans.find((x) => x.id === loanId);
    // The engine keeps open records only (issue 29): a closed one is not found there.
    if (l === undefined || l.offer.lender !== userId || userId === 0 || !isOpen(l)) return 'LOAN_NOT_FOUND';
    l.investMark = mark === true;
    return okay();
  }

  borrow(
    userId: number,
    acctType: number,
    market: string,
    coin: string,
    amount: number,
    maxRate: number | undefined,
    days: number | undefined,
    rollOver: unknown,
  ): Outcome {
    const account = this.accountOf(userId, acctType, market);
    if (!account.includes(':')) return account as ResultName;
    const bad = this.#coinFor(account, coin);
    if (bad !== undefined) return bad;
    if (!safe(amount) || amount <= 0) return 'INVALID_AMOUNT';
    if (BigInt(amount) < minLoan(this.#host.decimals(coin) as number)) return 'BELOW_MIN_LOAN';
    if (days !== undefined && !TERMS.includes(days)) return 'INVALID_LOAN_TERM';
    if (maxRate !== undefined && !(Number.isInteger(maxRate) && maxRate >= MIN_RATE && maxRate <= MAX_RATE))
      return 'LOAN_RATE_OUT_OF_RANGE';
    if (BigInt(amount) > this.borrowLimit(account, coin)) return 'OVER_BORROW_LIMIT';
    const ids = this.#take(account, userId, coin, BigInt(amount), maxRate, days, rollOver === true);
    return typeof ids === 'string' ? ids : okay({ loanIds: ids });
  }

  /** Takes a borrow from the cheapest offers, oldest first among equals, all or nothing. */
  #take(
    account: string,
    userId: number,
    coin: string,
    amount: bigint,
    maxRate: number | undefined,
    days: number | undefined,
    rollOver: boolean,
  ): number[] | ResultName {
    const eligible = this.#offers
      .filter(
        (o) =>
          o.open &&
          o.coin === coin &&
          o.remaining > 0n &&
          o.lender !== userId &&
          (maxRate === undefined || o.rate <= maxRate) &&
          (days === undefined || o.days === days),
      )
      .sort((a, b) => a.rate - b.rate || a.id - b.id);
    if (eligible.reduce((s, o) => s + o.remaining, 0n) < amount) return 'LENDING_SHORT';
    const ids: number[] = [];
    let need = amount;
    for (const o of eligible) {
      if (need === 0n) break;
      const x = need < o.remaining ? need : o.remaining;
      need -= x;
      o.remaining -= x;
      o.lentOut += x;
      (o.lender === 0 ? this.pocket('pool', coin) : this.#host.spot(o.lender, coin)).frozen -= x;
      const mine = this.pocket(account, coin);
      mine.available += x;
      mine.borrowed += x;
      const loan: Loan = {
        id: this.#loans.length + 1,
        offer: o,
        borrower: account,
        userId,
        coin,
        rate: o.rate,
        days: o.days,
        principal: x,
        owed: 0n,
        carry: 0n,
        paid: 0n,
        share: 0n,
        termEnd: this.time + o.days * DAY,
        nextHour: this.time,
        rollOver,
        investMark: o.loop,
        status: 1,
      };
      this.#loans.push(loan);
      this.#advance(loan, this.time);
      ids.push(loan.id);
    }
    return ids;
  }

  /** Charges every hour begun by `now` (and ends the term when it is reached first). */
  #advance(l: Loan, now: number): void {
    while (isOpen(l)) {
      if (l.status === 1 && l.termEnd <= now && l.termEnd <= l.nextHour) {
        if (l.rollOver && l.investMark) l.termEnd += l.days * DAY;
        else l.status = 5;
        continue;
      }
      if (l.nextHour > now) return;
      const total = l.carry + l.principal * BigInt(l.rate);
      const charge = total / HOURLY;
      l.carry = total - charge * HOURLY;
      l.owed += charge;
      this.pocket(l.borrower, l.coin).interest += charge;
      l.nextHour += HOUR;
    }
  }

  /** Pays `interest` then `principal` of a loan from its account. */
  #pay(l: Loan, interest: bigint, principal: bigint, auto: boolean): void {
    const mine = this.pocket(l.borrower, l.coin);
    mine.available -= interest + principal;
    mine.interest -= interest;
    mine.borrowed -= principal;
    const shareTotal = ((l.paid + interest) * VENUE_SHARE) / PPM;
    const share = shareTotal - l.share;
    l.paid += interest;
    l.share = shareTotal;
    l.owed -= interest;
    l.principal -= principal;
    this.#insurance.set(l.coin, (this.#insurance.get(l.coin) ?? 0n) + share);
    const lender =
      l.offer.lender === 0 ? this.pocket('pool', l.coin) : this.#host.spot(l.offer.lender, l.coin);
    lender.available += interest - share;
    l.offer.lentOut -= principal;
    if (l.investMark && l.offer.open) {
      l.offer.remaining += principal;
      lender.frozen += principal;
    } else lender.available += principal;
    if (l.principal === 0n && l.owed === 0n) l.status = l.status === 3 ? 4 : auto ? 6 : 2;
  }

  #amountOf(amount: unknown, owed: bigint, available: bigint): bigint | ResultName {
    const x = amount === 'all' ? owed : safe(amount) && amount > 0 ? BigInt(amount) : undefined;
    if (x === undefined || x <= 0n) return 'INVALID_AMOUNT';
    if (x > owed) return 'REPAY_OVER_OWED';
    if (x > available) return 'INSUFFICIENT_BALANCE';
    return x;
  }

  repayLoan(userId: number, loanId: number, amount: unknown): Outcome {
    if (!this.#host.hasUser(userId)) return 'USER_NOT_FOUND';
    const l = this.#loans.find((x) => x.id === loanId);
    if (l === undefined || l.userId !== userId || !isOpen(l)) return 'LOAN_NOT_FOUND';
    // What it owes now: a copy advanced, so that a refusal changes nothing.
    const owedNow = this.#owedAt(l);
    const x = this.#amountOf(amount, owedNow, this.#accounts.get(l.borrower)?.get(l.coin)?.available ?? 0n);
    if (typeof x === 'string') return x;
    this.#advance(l, this.time);
    const interest = x < l.owed ? x : l.owed;
    this.#pay(l, interest, x - interest, false);
    return okay();
  }

  /** Principal + interest a loan owes at this command's time (the loan untouched). */
  #owedAt(l: Loan): bigint {
    const copy = { ...l };
    const before = this.pocket(l.borrower, l.coin).interest;
    this.#advance(copy, this.time);
    this.pocket(l.borrower, l.coin).interest = before;
    return copy.principal + copy.owed;
  }

  repayAll(userId: number, acctType: number, market: string, coin: string, amount: unknown): Outcome {
    const account = this.accountOf(userId, acctType, market);
    if (!account.includes(':')) return account as ResultName;
    const bad = this.#coinFor(account, coin);
    if (bad !== undefined) return bad;
    return this.#repayAll(account, coin, amount, false);
  }

  #repayAll(account: string, coin: string, amount: unknown, fromFill: boolean): Outcome {
    const open = this.#loans.filter((l) => isOpen(l) && l.borrower === account && l.coin === coin);
    if (open.length === 0) return 'LOAN_NOT_FOUND';
    const owed = open.reduce((s, l) => s + this.#owedAt(l), 0n);
    const x = this.#amountOf(amount, owed, this.#accounts.get(account)?.get(coin)?.available ?? 0n);
    if (typeof x === 'string') {
      if (fromFill) throw new Error(`reference auto-repay refused: ${x}`);
      return x;
    }
    for (const l of open) this.#advance(l, this.time);
    let left = x;
    const plan = new Map<Loan, [bigint, bigint]>();
    for (const l of open) {
      const i = left < l.owed ? left : l.owed;
      left -= i;
      plan.set(l, [i, 0n]);
    }
    for (const l of [...open].sort((a, b) => b.rate - a.rate || a.id - b.id)) {
      const p = left < l.principal ? left : l.principal;
      left -= p;
      (plan.get(l) as [bigint, bigint])[1] = p;
    }
    for (const l of open) {
      const [i, p] = plan.get(l) as [bigint, bigint];
      if (i + p > 0n) this.#pay(l, i, p, false);
    }
    return okay();
  }

  setPreferences(
    userId: number,
    acctType: number,
    market: string,
    express: unknown,
    autoRepay: unknown,
  ): Outcome {
    const account = this.accountOf(userId, acctType, market);
    if (!account.includes(':')) return account as ResultName;
    const given = [express, autoRepay].filter((v) => v !== undefined);
    if (given.length === 0 || !given.every((v) => typeof v === 'boolean')) return 'INVALID_PARAMETER';
    const now = this.#prefs.get(account) ?? { express: false, autoRepay: false };
    this.#prefs.set(account, {
      express: (express as boolean | undefined) ?? now.express,
      autoRepay: (autoRepay as boolean | undefined) ?? now.autoRepay,
    });
    return okay();
  }

  /** FireTimers: every open loan charged up to now, terms ended, loans past their term repaid from what is available. */
  fire(): void {
    const open = this.#loans.filter(isOpen);
    if (open.length === 0) return;
    for (const l of open) this.#advance(l, this.time);
    for (const l of open) {
      if (l.status !== 5) continue;
      const pocket = this.pocket(l.borrower, l.coin);
      // What the account had before this timer, less what it already repaid (charges move no coins).
      const budget = pocket.available;
      const due = l.principal + l.owed;
      const pay = budget < due ? budget : due;
      if (pay <= 0n) continue;
      const interest = pay < l.owed ? pay : l.owed;
      this.#pay(l, interest, pay - interest, true);
    }
  }

  // ───────────── margin orders ─────────────

  /** Whether a margin order of this account borrows by default. */
  expressDefault(account: string): boolean {
    return this.#prefs.get(account)?.express ?? false;
  }

  /** The amount an express order short of `short` borrows, or why it cannot. */
  expressAmount(account: string, userId: number, coin: string, short: bigint): bigint | ResultName {
    const min = minLoan(this.#host.decimals(coin) as number);
    const amount = short > min ? short : min;
    if (amount > this.borrowLimit(account, coin)) return 'OVER_BORROW_LIMIT';
    const supply = this.#offers
      .filter((o) => o.open && o.coin === coin && o.lender !== userId)
      .reduce((s, o) => s + o.remaining, 0n);
    return supply < amount ? 'LENDING_SHORT' : amount;
  }

  expressBorrow(account: string, userId: number, coin: string, amount: bigint): void {
    const r = this.#take(account, userId, coin, amount, undefined, undefined, false);
    if (typeof r === 'string') throw new Error(`reference express borrow refused: ${r}`);
  }

  noteReceived(account: string, coin: string, units: bigint): void {
    this.#received.push([account, coin, units]);
  }

  /** After an order command: fills into auto-repay accounts repay that coin's debt. */
  autoRepay(): void {
    const sums = new Map<string, [string, string, bigint]>();
    for (const [account, coin, units] of this.#received) {
      const k = `${account}|${coin}`;
      const s = sums.get(k);
      if (s === undefined) sums.set(k, [account, coin, units]);
      else s[2] += units;
    }
    this.#received = [];
    for (const [account, coin, units] of sums.values()) {
      if (!(this.#prefs.get(account)?.autoRepay ?? false)) continue;
      const p = this.pocket(account, coin);
      const owed = p.borrowed + p.interest;
      let x = units < owed ? units : owed;
      if (p.available < x) x = p.available;
      if (x > 0n) this.#repayAll(account, coin, Number(x), true);
    }
  }

  // ───────────── forced liquidation (naive-risk.ts drives it) ─────────────

  /** The isolated account a loan was borrowed into, or undefined. */
  borrowerOf(loanId: number): string | undefined {
    return this.#loans.find((x) => x.id === loanId)?.borrower;
  }

  /** Every open loan of the account in `coins` charged up to now and put in status 3. */
  beginLiquidation(account: string, coins: readonly string[]): void {
    for (const l of this.#loans)
      if (isOpen(l) && l.borrower === account && coins.includes(l.coin)) {
        this.#advance(l, this.time);
        l.status = 3;
      }
  }

  /** What the account owes in a coin now (principal and interest, hours begun charged; nothing changed). */
  owedNow(account: string, coin: string): bigint {
    return this.#loans
      .filter((l) => isOpen(l) && l.borrower === account && l.coin === coin)
      .reduce((s, l) => s + this.#owedAt(l), 0n);
  }

  /** Repays `amount` of the account's debt in a coin from its available, as `repayAll` does. */
  liquidationRepay(account: string, coin: string, amount: bigint): void {
    this.#repayAll(account, coin, Number(amount), true);
  }

  insurance(coin: string): bigint {
    return this.#insurance.get(coin) ?? 0n;
  }

  /** The insurance fund pays `amount` of a coin into the account, which repays its debt with it. */
  insuranceCover(account: string, coin: string, amount: bigint): void {
    this.#insurance.set(coin, this.insurance(coin) - amount);
    this.pocket(account, coin).available += amount;
    this.liquidationRepay(account, coin, amount);
  }

  /** The liquidation fee: from the account's available to the insurance fund. */
  liquidationFee(account: string, coin: string, amount: bigint): void {
    this.pocket(account, coin).available -= amount;
    this.#insurance.set(coin, this.insurance(coin) + amount);
  }

  /**
   * Bad debt: `amount` written off the account's open loans in a coin, pro rata of what each is
   * owed (floor, then one unit each to the largest remainders, ties to the older loan), each share
   * cancelling unpaid interest first, then principal. No money moves; a loan left owing nothing is 4.
   */
  writeOff(account: string, coin: string, amount: bigint): void {
    const open = this.#loans.filter((l) => isOpen(l) && l.borrower === account && l.coin === coin);
    for (const l of open) this.#advance(l, this.time);
    const owed = open.map((l) => l.principal + l.owed);
    const total = owed.reduce((a, b) => a + b, 0n);
    if (amount > total) throw new Error(`reference write-off of ${amount} ${coin}, ${total} owed`);
    const shares = owed.map((o) => (amount * o) / total);
    const rems = owed.map((o) => (amount * o) % total);
    let left = amount - shares.reduce((a, b) => a + b, 0n);
    const order = open
      .map((_, i) => i)
      .sort((a, b) => {
        const x = rems[a] as bigint;
        const y = rems[b] as bigint;
        return x !== y ? (y > x ? 1 : -1) : a - b;
      });
    for (const i of order) {
      if (left === 0n) break;
      shares[i] = (shares[i] as bigint) + 1n;
      left -= 1n;
    }
    open.forEach((l, i) => {
      const share = shares[i] as bigint;
      if (share === 0n) return;
      const interest = share < l.owed ? share : l.owed;
      const principal = share - interest;
      l.owed -= interest;
      l.principal -= principal;
      l.offer.lentOut -= principal;
      const mine = this.pocket(account, coin);
      mine.interest -= interest;
      mine.borrowed -= principal;
      if (l.principal === 0n && l.owed === 0n) l.status = 4;
    });
  }

  // ───────────── reads and checks ─────────────

  /** Margin account names (not the pool), sorted. */
  accounts(): string[] {
    return [...this.#accounts.keys()].filter((k) => k !== 'pool').sort();
  }

  pocketOf(account: string, coin: string): Pocket {
    const p = this.#accounts.get(account)?.get(coin);
    return p === undefined ? { available: 0n, frozen: 0n, borrowed: 0n, interest: 0n } : { ...p };
  }

  funded(coin: string): bigint {
    return this.#funded.get(coin) ?? 0n;
  }

  loanIds(): number[] {
    return this.#loans.filter(isOpen).map((l) => l.id);
  }

  /** [id, lender] of open offers. */
  offers(): [number, number][] {
    return this.#offers.filter((o) => o.open).map((o) => [o.id, o.lender]);
  }

  /** Units of `coin` a user's spot account holds frozen for open offers. */
  offerHolds(userId: number, coin: string): bigint {
    return this.#offers
      .filter((o) => o.open && o.lender === userId && o.coin === coin)
      .reduce((s, o) => s + o.remaining, 0n);
  }

  /**
   * Per coin, what margin adds to the venue's holdings: margin accounts, the pool and insurance.
   * Checks: no negative pocket; the pool's frozen equals its offers; every debt equals its loans;
   * interest paid = the lenders' part + the venue's share.
   */
  holdings(coin: string): bigint {
    let held = this.#insurance.get(coin) ?? 0n;
    for (const [account, coins] of this.#accounts) {
      const p = coins.get(coin);
      if (p === undefined) continue;
      if (p.available < 0n || p.frozen < 0n || p.borrowed < 0n || p.interest < 0n)
        throw new Error(`reference ${account} ${coin} negative`);
      held += p.available + p.frozen;
      if (account === 'pool') {
        const offers = this.offerHolds(0, coin);
        if (p.frozen !== offers)
          throw new Error(`reference pool ${coin} frozen ${p.frozen}, offers ${offers}`);
        continue;
      }
      let principal = 0n;
      let interest = 0n;
      for (const l of this.#loans)
        if (isOpen(l) && l.borrower === account && l.coin === coin) {
          principal += l.principal;
          interest += l.owed;
        }
      if (p.borrowed !== principal || p.interest !== interest)
        throw new Error(
          `reference ${account} ${coin} owes ${p.borrowed}+${p.interest}, loans ${principal}+${interest}`,
        );
    }
    return held;
  }
}
