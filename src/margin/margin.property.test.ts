/**
 * Property tests of the lending book and the loan book together, over random offers, borrows,
 * hourly accruals, term ends and repayments, applied to a naive ledger that refuses to go negative:
 * money is conserved per coin, interest charged = interest paid to lenders + venue share + owed,
 * every unit of principal is owed by one borrower to one lender, and the ledger's debts equal the
 * loan book's.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { ToyLedger } from '../../test/fixtures/margin-ledger.ts';
import { LendingBook } from './lending-book.ts';
import { LoanBook, type LoanRecord } from './loans.ts';
import {
  accountKey,
  cross,
  HOUR_MS,
  isolated,
  spot,
  system,
  type AccountRef,
  type Effects,
} from './movement.ts';
import { defaultLendingSettings, type LendingSettings } from './settings.ts';

const COINS = ['usdt', 'btc'] as const;
const SETTINGS = new Map<string, LendingSettings>([
  ['usdt', { ...defaultLendingSettings('usdt', 2), minAmount: 1 }],
  ['btc', { ...defaultLendingSettings('btc', 8), minAmount: 1, venueSharePpm: 333_333 }],
]);
const settings = (c: string): LendingSettings | undefined => SETTINGS.get(c);
const LENDERS: AccountRef[] = [spot(1), spot(2), spot(3), system('lendingPool')];
const BORROWERS: AccountRef[] = [isolated(1, 'btc_usdt'), isolated(2, 'btc_usdt'), cross(3), cross(4)];

const coin = fc.constantFrom(...COINS);
const op = fc.oneof(
  fc.record({
    type: fc.constant('offer' as const),
    lender: fc.nat(LENDERS.length - 1),
    coin,
    amount: fc.integer({ min: 1, max: 5_000_000 }),
    rate: fc.integer({ min: 500, max: 2_000 }),
    days: fc.constantFrom(10, 20, 30),
    loop: fc.boolean(),
  }),
  fc.record({ type: fc.constant('cancel' as const), pick: fc.nat() }),
  fc.record({ type: fc.constant('changeLoop' as const), pick: fc.nat(), loop: fc.boolean() }),
  fc.record({
    type: fc.constant('borrow' as const),
    borrower: fc.nat(BORROWERS.length - 1),
    coin,
    amount: fc.integer({ min: 1, max: 8_000_000 }),
    rollOver: fc.boolean(),
    maxRate: fc.option(fc.integer({ min: 500, max: 2_000 }), { nil: undefined }),
  }),
  fc.record({
    type: fc.constant('repay' as const),
    pick: fc.nat(),
    part: fc.option(fc.integer({ min: 1, max: 3_000_000 }), { nil: undefined }),
    credit: fc.nat(100_000),
  }),
  fc.record({
    type: fc.constant('repayAll' as const),
    borrower: fc.nat(BORROWERS.length - 1),
    coin,
    part: fc.option(fc.integer({ min: 1, max: 3_000_000 }), { nil: undefined }),
  }),
  fc.record({ type: fc.constant('accrue' as const), hours: fc.integer({ min: 0, max: 400 }) }),
  fc.record({ type: fc.constant('investMark' as const), pick: fc.nat(), mark: fc.boolean() }),
);

/** How often each outcome happened over all runs, so that the test shows it exercised them. */
const seen = new Map<string, number>();
const count = (what: string): void => void seen.set(what, (seen.get(what) ?? 0) + 1);

function run(ops: readonly Op[]): void {
  const lending = new LendingBook(settings);
  // Closed records leave the book (issue 29); kept here, as the history store keeps them.
  const closed = new Map<number, LoanRecord>();
  const loans = new LoanBook(lending, settings, undefined, (l) => closed.set(l.id, l));
  const everyLoan = (): LoanRecord[] =>
    [...closed.values(), ...loans.snapshot().loans].sort((a, b) => a.id - b.id);
  const ledger = new ToyLedger();
  const paid = new Map<string, number>(); // interest moved (lender part + share) per coin
  let now = 0;
  const apply = (e: Effects): void => {
    ledger.apply(e);
    for (const m of e.movements)
      if (m.kind === 'repayInterest' || m.kind === 'interestShare')
        paid.set(m.coin, (paid.get(m.coin) ?? 0) + m.amount);
  };
  for (const o of ops) check(o);

  function check(o: Op): void {
    const allLoans = everyLoan();
    const offers = lending.snapshot().offers;
    const pick = <T>(list: readonly T[], n: number): T | undefined =>
      list.length === 0 ? undefined : list[n % list.length];
    switch (o.type) {
      case 'offer': {
        const lender = LENDERS[o.lender] as AccountRef;
        ledger.credit(lender, o.coin, o.amount);
        const r = lending.place({
          lender,
          coin: o.coin,
          amount: o.amount,
          dailyRatePpm: o.rate,
          days: o.days,
          loop: o.loop,
          timeMs: now,
          available: ledger.get(lender, o.coin),
        });
        assert.ok(r.ok);
        apply(r.effects);
        break;
      }
      case 'cancel': {
        const offer = pick(offers, o.pick);
        if (offer === undefined) break;
        const r = lending.cancel(offer.id, offer.lender);
        if (r.ok) apply(r.effects);
        break;
      }
      case 'changeLoop': {
        const offer = pick(offers, o.pick);
        if (offer !== undefined) lending.changeLoop(offer.id, offer.lender, o.loop);
        break;
      }
      case 'borrow': {
        const r = loans.borrow({
          borrower: BORROWERS[o.borrower] as AccountRef,
          coin: o.coin,
          amount: o.amount,
          timeMs: now,
          rollOver: o.rollOver,
          ...(o.maxRate === undefined ? {} : { maxDailyRatePpm: o.maxRate }),
        });
        if (r.ok) {
          apply(r.effects);
          count(r.loans.length > 1 ? 'borrow across offers' : 'borrow');
        } else assert.equal(r.result, 'LENDING_SHORT');
        break;
      }
      case 'repay': {
        const loan = pick(allLoans, o.pick);
        if (loan === undefined) break;
        ledger.credit(loan.borrower, loan.coin, o.credit);
        const r = loans.repay(loan.id, {
          borrower: loan.borrower,
          amount: o.part ?? 'all',
          timeMs: now,
          available: ledger.get(loan.borrower, loan.coin),
        });
        count(r.ok ? 'repay' : `repay refused ${r.result}`);
        if (r.ok) apply(r.effects);
        break;
      }
      case 'repayAll': {
        const borrower = BORROWERS[o.borrower] as AccountRef;
        const r = loans.repayAll(o.coin, {
          borrower,
          amount: o.part ?? 'all',
          timeMs: now,
          available: ledger.get(borrower, o.coin),
        });
        count(r.ok ? 'repayAll' : `repayAll refused ${r.result}`);
        if (r.ok) apply(r.effects);
        break;
      }
      case 'accrue': {
        now += o.hours * HOUR_MS;
        const r = loans.accrue(now, (a, c) => ledger.get(a, c));
        apply(r.effects);
        for (const p of r.repayments) {
          assert.ok(p.interest >= p.venueShare && p.venueShare >= 0);
          count('auto repayment');
        }
        break;
      }
      case 'investMark': {
        const loan = pick(allLoans, o.pick);
        if (loan !== undefined) loans.changeInvestMark(loan.id, loan.lender, o.mark);
        break;
      }
    }
    verify();
  }

  function verify(): void {
    lending.assertInvariants();
    loans.assertInvariants();
    const all = everyLoan();
    for (const c of COINS) {
      assert.equal(ledger.total(c), ledger.credited(c), `${c}: money conserved`);
      const charged = all.filter((l) => l.coin === c).reduce((s, l) => s + l.interestCharged, 0);
      const owed = all.filter((l) => l.coin === c).reduce((s, l) => s + l.interestOwed, 0);
      assert.equal(charged, (paid.get(c) ?? 0) + owed, `${c}: interest charged = paid + owed`);
      for (const b of BORROWERS)
        assert.deepEqual(ledger.owed(b, c), loans.owed(b, c), `${accountKey(b)} ${c} debts`);
      for (const l of LENDERS)
        assert.equal(
          ledger.get(l, c, 'frozen'),
          lending.frozenFor(l, c),
          `${accountKey(l)} ${c} frozen = offers`,
        );
    }
    for (const offer of lending.snapshot().offers) {
      const out = all.filter((l) => l.offerId === offer.id).reduce((s, l) => s + l.principal, 0);
      assert.equal(out, offer.lentOut, `offer ${offer.id}: lent out = principal of its records`);
    }
    for (const l of all) {
      if (l.termStartMs > l.createdMs) count('rolled over');
      assert.ok(l.borrower.kind === 'isolated' || l.borrower.kind === 'cross');
      assert.equal(accountKey(l.lender), accountKey(lending.offer(l.offerId)?.lender ?? spot(-1)));
    }
  }
}

type Op = typeof op extends fc.Arbitrary<infer T> ? T : never;

test('margin lending: conservation, interest split and debts over random histories', () => {
  fc.assert(
    fc.property(fc.array(op, { minLength: 20, maxLength: 150, size: 'max' }), (ops) => run(ops)),
    { numRuns: 300 },
  );
  for (const what of ['borrow', 'borrow across offers', 'repay', 'repayAll', 'auto repayment', 'rolled over'])
    assert.ok((seen.get(what) ?? 0) > 10, `${what}: ${seen.get(what) ?? 0} times`);
});
