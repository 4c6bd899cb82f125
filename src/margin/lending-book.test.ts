import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { LendingBook, type PlaceOfferInput } from './lending-book.ts';
import { spot, system } from './movement.ts';
import { defaultLendingSettings, type LendingSettings } from './settings.ts';

const SETTINGS = new Map<string, LendingSettings>([['usdt', defaultLendingSettings('usdt', 4)]]);
const book = (): LendingBook => new LendingBook((c) => SETTINGS.get(c));
const ALICE = 1;
const BOB = 2;
const CAROL = 3;

const offer = (b: LendingBook, patch: Partial<PlaceOfferInput> = {}): number => {
  const r = b.place({
    lender: spot(ALICE),
    coin: 'usdt',
    amount: 10_000,
    dailyRatePpm: 1_000,
    days: 10,
    loop: false,
    timeMs: 0,
    available: 1e12,
    ...patch,
  });
  assert.ok(r.ok, JSON.stringify(r));
  return r.offer.id;
};

describe('lending offers', () => {
  test('placing freezes the amount in the lender account', () => {
    const b = book();
    const r = b.place({
      lender: spot(ALICE),
      coin: 'usdt',
      amount: 500,
      dailyRatePpm: 500,
      days: 20,
      loop: true,
      timeMs: 7,
      available: 500,
    });
    assert.ok(r.ok);
    assert.deepEqual(r.effects.movements, [
      {
        kind: 'loanOffer',
        coin: 'usdt',
        amount: 500,
        from: spot(ALICE),
        fromPocket: 'available',
        to: spot(ALICE),
        toPocket: 'frozen',
        ref: r.offer.id,
      },
    ]);
    assert.equal(b.frozenFor(spot(ALICE), 'usdt'), 500);
    b.assertInvariants();
  });

  test('bad offers are refused with their codes and change nothing', () => {
    const b = book();
    const base: PlaceOfferInput = {
      lender: spot(ALICE),
      coin: 'usdt',
      amount: 500,
      dailyRatePpm: 500,
      days: 10,
      loop: false,
      timeMs: 0,
      available: 500,
    };
    const cases: [Partial<PlaceOfferInput>, string][] = [
      [{ coin: 'eth' }, 'MARGIN_NOT_OPEN'],
      [{ days: 15 }, 'INVALID_LOAN_TERM'],
      [{ dailyRatePpm: 2_001 }, 'LOAN_RATE_OUT_OF_RANGE'],
      [{ dailyRatePpm: 499 }, 'LOAN_RATE_OUT_OF_RANGE'],
      [{ amount: 0 }, 'INVALID_AMOUNT'],
      [{ amount: 0.5 }, 'INVALID_AMOUNT'],
      [{ amount: 0, available: 0 }, 'INVALID_AMOUNT'],
      [{ amount: 501 }, 'INSUFFICIENT_BALANCE'],
    ];
    for (const [patch, result] of cases) {
      const r = b.place({ ...base, ...patch });
      assert.equal(r.ok ? 'OK' : r.result, result, JSON.stringify(patch));
    }
    const short = b.place({ ...base, amount: 501 });
    if (!short.ok) assert.equal(short.message, 'available 0.05 usdt, the offer needs 0.0501');
    assert.deepEqual(b.snapshot(), { nextOfferId: 1, offers: [] });
  });

  test('a borrow takes the cheapest offers first, ties by age, across several offers', () => {
    const b = book();
    const dear = offer(b, { dailyRatePpm: 2_000, amount: 10_000 });
    const cheapOld = offer(b, { dailyRatePpm: 500, amount: 300, lender: spot(BOB) });
    const cheapNew = offer(b, { dailyRatePpm: 500, amount: 300, lender: spot(CAROL) });
    const mid = offer(b, { dailyRatePpm: 1_000, amount: 300, lender: system('lendingPool') });
    const r = b.take({ coin: 'usdt', amount: 1_000, borrowerUserId: 9 });
    assert.ok(r.ok);
    assert.deepEqual(
      r.fills.map((f) => [f.offerId, f.amount, f.dailyRatePpm]),
      [
        [cheapOld, 300, 500],
        [cheapNew, 300, 500],
        [mid, 300, 1_000],
        [dear, 100, 2_000],
      ],
    );
    assert.equal(b.offer(dear)?.remaining, 9_900);
    assert.equal(b.offer(dear)?.lentOut, 100);
    assert.deepEqual(
      b.openOffers('usdt').map((o) => o.id),
      [dear],
    );
    b.assertInvariants();
  });

  test('own offers, dearer offers and other terms are skipped; all or nothing', () => {
    const b = book();
    offer(b, { lender: spot(BOB), dailyRatePpm: 500, amount: 1_000 });
    const twenty = offer(b, { dailyRatePpm: 600, amount: 1_000, days: 20 });
    offer(b, { dailyRatePpm: 1_500, amount: 1_000 });
    const r = b.take({ coin: 'usdt', amount: 1_500, borrowerUserId: BOB, maxDailyRatePpm: 1_000 });
    assert.equal(r.ok ? 'OK' : r.result, 'LENDING_SHORT');
    if (!r.ok) assert.equal(r.message, 'offers can lend 0.1 usdt at these terms, the borrow needs 0.15');
    const before = JSON.stringify(b.snapshot());
    assert.equal(JSON.stringify(b.snapshot()), before);
    const t = b.take({ coin: 'usdt', amount: 1_000, borrowerUserId: BOB, days: 20 });
    assert.ok(t.ok);
    assert.deepEqual(
      t.fills.map((f) => f.offerId),
      [twenty],
    );
    const below = b.take({ coin: 'usdt', amount: 99, borrowerUserId: BOB });
    assert.equal(below.ok ? 'OK' : below.result, 'BELOW_MIN_LOAN');
  });

  test('cancel releases only the unlent part; returned principal then goes to available', () => {
    const b = book();
    const id = offer(b, { amount: 1_000, loop: true });
    assert.ok(b.take({ coin: 'usdt', amount: 400, borrowerUserId: BOB }).ok);
    const other = b.cancel(id, spot(BOB));
    assert.equal(other.ok ? 'OK' : other.result, 'LOAN_NOT_FOUND');
    const c = b.cancel(id, spot(ALICE));
    assert.ok(c.ok);
    assert.deepEqual(
      c.effects.movements.map((m) => [m.kind, m.amount, m.fromPocket, m.toPocket]),
      [['loanCancel', 600, 'frozen', 'available']],
    );
    const again = b.cancel(id, spot(ALICE));
    assert.equal(again.ok ? 'OK' : again.result, 'INVALID_STATE');
    assert.equal(b.principalReturned(id, 400, true), false);
    assert.equal(b.offer(id)?.remaining, 0);
    assert.equal(b.offer(id)?.lentOut, 0);
    b.assertInvariants();
  });

  test('re-invested principal rejoins an open offer; changeLoop sets the flag of later loans', () => {
    const b = book();
    const id = offer(b, { amount: 1_000, loop: false });
    const first = b.take({ coin: 'usdt', amount: 400, borrowerUserId: BOB });
    assert.ok(first.ok && first.fills[0]?.investMark === false);
    assert.ok(b.changeLoop(id, spot(ALICE), true).ok);
    const second = b.take({ coin: 'usdt', amount: 100, borrowerUserId: BOB });
    assert.ok(second.ok && second.fills[0]?.investMark === true);
    assert.equal(b.principalReturned(id, 100, true), true);
    assert.equal(b.offer(id)?.remaining, 600);
    assert.equal(b.changeLoop(99, spot(ALICE), true).ok, false);
  });

  test('a snapshot restores the same book', () => {
    const b = book();
    offer(b, { dailyRatePpm: 900 });
    offer(b, { dailyRatePpm: 600, lender: spot(BOB) });
    const c = new LendingBook((coin) => SETTINGS.get(coin), b.snapshot());
    c.assertInvariants();
    assert.deepEqual(c.snapshot(), b.snapshot());
    assert.deepEqual(
      c.openOffers('usdt').map((o) => o.dailyRatePpm),
      [600, 900],
    );
  });
});
