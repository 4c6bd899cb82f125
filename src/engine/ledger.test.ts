import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { EngineDriver } from '../../test/fixtures/engine-driver.ts';
import { DEFAULT_COINS } from '../config/default-venue.ts';
import type { BalanceChanged } from '../domain/events.ts';
import { CommandContext } from './command-context.ts';
import { Engine } from './engine.ts';
import {
  claimAccountSlot,
  cross,
  FEE_INCOME,
  INSURANCE,
  isolated,
  Ledger,
  LENDING_POOL,
  spot,
  system,
  TouchedAccounts,
  type LedgerAccount,
} from './ledger.ts';
import { SNAPSHOT_VERSION, SNAPSHOT_VERSION_ACCOUNTS, type EngineSnapshot } from './snapshot.ts';

const btc = { index: 0, spec: DEFAULT_COINS[0] as (typeof DEFAULT_COINS)[number] };
const usdt = { index: 2, spec: DEFAULT_COINS[2] as (typeof DEFAULT_COINS)[number] };

describe('ledger', () => {
  test('accounts are keyed by kind: spot, isolated per market, cross, and the system accounts', () => {
    const ledger = new Ledger(new CommandContext());
    const a = ledger.open(spot(1));
    assert.equal(ledger.open(spot(1)), a, 'opening twice gives the same account');
    const iso = ledger.open(isolated(1, 'btc_usdt'));
    assert.notEqual(ledger.open(isolated(1, 'eth_usdt')), iso);
    assert.notEqual(ledger.open(cross(1)), iso);
    assert.equal(ledger.account(isolated(2, 'btc_usdt')), undefined);
    for (const name of [FEE_INCOME, LENDING_POOL, INSURANCE])
      assert.ok(ledger.account(system(name)), `${name} always exists`);
    assert.equal(ledger.spot(1), a);
    assert.deepEqual(
      [...ledger.accounts()].map((x) => x.key.kind),
      ['spot', 'isolated', 'isolated', 'cross', 'system', 'system', 'system'],
    );
  });

  test('the risk step takes owing margin accounts changed since, in the order first changed', () => {
    const ledger = new Ledger(new CommandContext());
    const touched = (ledger.touched = new TouchedAccounts());
    const taken = (): string[] => {
      const out: string[] = [];
      for (let k = 0; k < touched.length; k++) {
        const a = touched.at(k);
        if (a !== undefined) out.push(a.name);
      }
      return out;
    };
    const [a, b, c] = [1, 2, 3].map((u) => ledger.open(cross(u))) as [
      LedgerAccount,
      LedgerAccount,
      LedgerAccount,
    ];
    ledger.change(a, usdt, 100, 0, 'transferIn', 't1');
    assert.equal(touched.size, 0, 'an account that owes nothing has no line to reach');
    for (const x of [a, b, c]) ledger.changeDebt(x, usdt, 10, 0);
    assert.deepEqual(taken(), ['cross:1', 'cross:2', 'cross:3']);
    ledger.change(a, usdt, -5, 5, 'freeze', 'o1');
    ledger.change(b, usdt, 5, 0, 'buy', 'o2');
    assert.deepEqual(taken(), ['cross:1', 'cross:2', 'cross:3'], 'each once');
    touched.delete(b);
    assert.equal(touched.size, 2);
    ledger.change(b, usdt, 5, 0, 'buy', 'o3');
    assert.deepEqual(
      taken(),
      ['cross:1', 'cross:3', 'cross:2'],
      'taken again after deleted: last, as a Set would',
    );
    touched.clear();
    assert.deepEqual([touched.size, taken()], [0, []]);
    ledger.changeDebt(c, usdt, -10, 0);
    assert.deepEqual(taken(), ['cross:3'], 'the change that ends its debt is taken');
    assert.equal(c.debtCoins, 0);
    touched.clear();
    ledger.change(c, usdt, 1, 0, 'buy', 'o4');
    assert.equal(touched.size, 0);
  });

  test('every change of a user account is a bill; a margin account names itself, spot bills keep their form', () => {
    const ctx = new CommandContext();
    ctx.time = 42;
    const ledger = new Ledger(ctx);
    ledger.change(ledger.open(spot(1)), usdt, 100, 0, 'deposit', 'd1');
    ledger.change(ledger.open(isolated(1, 'btc_usdt')), usdt, 40, 0, 'transferIn', 't1');
    ledger.change(ledger.open(cross(1)), btc, 5, 0, 'transferIn', 't2');
    const bills = ctx.events as BalanceChanged[];
    assert.deepEqual(bills[0], {
      type: 'BalanceChanged',
      userId: 1,
      coin: 'usdt',
      available: 100,
      frozen: 0,
      deltaAvailable: 100,
      deltaFrozen: 0,
      billType: 'deposit',
      ref: 'd1',
      time: 42,
    });
    assert.equal('account' in (bills[0] as object), false);
    assert.deepEqual(bills[1]?.account, { kind: 'isolated', market: 'btc_usdt' });
    assert.deepEqual(bills[2]?.account, { kind: 'cross' });
    assert.throws(() => ledger.change(ledger.open(spot(1)), usdt, -101, 0, 'withdraw', 'w1'), /negative/);
    assert.equal(ctx.events.length, 3, 'a refused change emits nothing');
  });

  test('debts: margin accounts borrow and accrue interest; a spot account never owes', () => {
    const ledger = new Ledger(new CommandContext());
    const iso = ledger.open(isolated(1, 'btc_usdt'));
    ledger.changeDebt(iso, usdt, 1_000, 0);
    ledger.changeDebt(iso, usdt, 0, 7);
    assert.equal(iso.borrowed(usdt.index), 1_000);
    assert.equal(iso.interest(usdt.index), 7);
    assert.throws(() => ledger.changeDebt(iso, usdt, -1_001, 0), /negative/);
    assert.throws(() => ledger.changeDebt(ledger.open(spot(1)), usdt, 1, 0), /spot account/);
  });

  test("other modules' state on an account is in slots each module claimed, not in public fields", () => {
    // Engine imports risk, risk-cross and margin, which claimed the three slots at load.
    assert.ok(Engine);
    const a = new Ledger(new CommandContext()).open(isolated(1, 'btc_usdt'));
    assert.deepEqual(
      Object.keys(a),
      ['key', 'kind', 'userId', 'margin', 'touchedAt'],
      "no other module's state (touchedAt: TouchedAccounts')",
    );
    assert.throws(
      () => claimAccountSlot<number>('a fourth module'),
      /no ledger account slot left for a fourth module/,
    );
    assert.equal(a.debtCoins, 0);
    assert.throws(
      () => {
        (a as unknown as { debtCoins: number }).debtCoins = 3;
      },
      TypeError,
      "the debt count is the ledger's to keep",
    );
  });

  test('fee income and the other system accounts', () => {
    const ledger = new Ledger(new CommandContext());
    ledger.addFeeIncome(usdt, 3);
    ledger.creditSystem(FEE_INCOME, usdt, 2);
    ledger.creditSystem(LENDING_POOL, btc, 9);
    assert.equal(ledger.feeIncome(usdt), 5);
    assert.deepEqual(ledger.feeIncomeEntry(3), [0, 0, 5]);
    assert.deepEqual(ledger.systemEntries(3), [[LENDING_POOL, [9, 0, 0], [0, 0, 0], [0, 0, 0], [0, 0, 0]]]);
  });
});

describe('snapshot encoding of the ledger', () => {
  const venue = (): { d: EngineDriver; alice: number } => {
    const d = new EngineDriver();
    const alice = d.fund('alice', 'usdt', '1000');
    d.fund('bob', 'btc', '2');
    return { d, alice };
  };

  test('a spot-only venue writes version 2 with no margin or system fields (the bytes as before)', () => {
    const s = venue().d.engine.snapshot();
    assert.equal(s.version, SNAPSHOT_VERSION);
    assert.equal('marginAccounts' in s, false);
    assert.equal('systemAccounts' in s, false);
  });

  test('margin and system accounts round-trip as version 3, and count in totals and conservation', () => {
    const { d, alice } = venue();
    const s = JSON.parse(JSON.stringify(d.engine.snapshot())) as EngineSnapshot & {
      users: EngineSnapshot['users'];
    };
    // Move 300 usdt of alice's spot balance: 200 to her btc_usdt isolated account, 60 to cross, 40 to the pool.
    const coins = s.coins.length;
    const zeros = (): number[] => new Array<number>(coins).fill(0);
    const user = s.users.find((u) => u[0] === alice) as EngineSnapshot['users'][number];
    (user[3] as number[])[usdt.index] = (user[3][usdt.index] as number) - 300_000_000;
    const with200 = zeros();
    with200[usdt.index] = 200_000_000;
    const with60 = zeros();
    with60[usdt.index] = 60_000_000;
    const with40 = zeros();
    with40[usdt.index] = 40_000_000;
    const owes = zeros();
    owes[usdt.index] = 5_000_000;
    const v3: EngineSnapshot = {
      ...s,
      version: SNAPSHOT_VERSION_ACCOUNTS,
      marginAccounts: [
        ['cross', alice, '', with60, zeros(), zeros(), zeros()],
        ['isolated', alice, 'btc_usdt', with200, zeros(), zeros(), zeros()],
      ],
      systemAccounts: [[LENDING_POOL, with40, zeros(), zeros(), zeros()]],
    };
    const restored = Engine.restore(JSON.parse(JSON.stringify(v3)) as EngineSnapshot);
    const again = restored.snapshot();
    assert.equal(again.version, SNAPSHOT_VERSION_ACCOUNTS);
    assert.equal(JSON.stringify(again), JSON.stringify(v3));
    assert.equal(restored.stateHash(), restored.stateHash(Engine.restore(again).snapshot()));
    assert.equal(restored.balance(alice, 'usdt')?.available, 700_000_000, 'spot keeps the rest');
    assert.equal(restored.totals('usdt')?.users, 960_000_000n, 'users: spot + isolated + cross');
    // Conservation covers every account: dropping the pool's coins breaks it.
    assert.throws(
      () => Engine.restore({ ...v3, systemAccounts: [] }),
      /conservation broken for usdt: held 960000000, net credits 1000000000/,
    );
    // A debt needs its loan records (src/engine/margin.ts): one without is a broken invariant.
    const owing = v3.marginAccounts?.map((e) =>
      e[0] === 'isolated' ? ([...e.slice(0, 5), owes, zeros()] as typeof e) : e,
    );
    assert.throws(
      () => Engine.restore({ ...v3, marginAccounts: owing as NonNullable<typeof owing> }),
      /ledger owes 5000000 \+ 0, loans 0 \+ 0/,
    );
    // A version this code does not know is refused, never half read.
    assert.throws(() => Engine.restore({ ...v3, version: 9 }), /snapshot version 9 is not one of 2, 3, 4/);
  });
});
