import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CheckedDriver, limitOrder, mustApply } from '../../test/fixtures/engine-driver.ts';
import { BUY, type Command } from '../domain/commands.ts';
import type { BalanceChanged } from '../domain/events.ts';
import { Engine } from './engine.ts';
import { MAX_SUB_USERS } from './sub-accounts.ts';

const USDT = 1_000_000;

/** The state without the sequence position, which every command advances. */
const stateOf = (e: Engine): string => JSON.stringify({ ...e.snapshot(), lastSeq: 0 });

function refusedUnchanged(d: CheckedDriver, cmd: Command, result: string, message?: RegExp): void {
  const before = stateOf(d.engine);
  const r = d.apply(cmd);
  assert.equal(r.result, result, `${cmd.type}: ${r.message ?? ''}`);
  if (message !== undefined) assert.match(r.message ?? '', message);
  assert.deepEqual(r.events, []);
  assert.equal(stateOf(d.engine), before, 'state changed');
}

const addSub = (mainUserId: number, name: string, memo = ''): Command => ({
  type: 'AddSubUser',
  mainUserId,
  name,
  memo,
  passwordHash: 'scrypt-hash',
});

const transfer = (mainUserId: number, fromUserId: number, toUserId: number, amount: number): Command => ({
  type: 'TransferFunds',
  mainUserId,
  fromUserId,
  toUserId,
  coin: 'usdt',
  amount,
});

/** alice (100 usdt) with two sub-accounts; bob (10 usdt) with one. */
function family(): { d: CheckedDriver; alice: number; a1: number; a2: number; bob: number; b1: number } {
  const d = new CheckedDriver();
  const alice = d.fund('alice', 'usdt', '100');
  const bob = d.fund('bob', 'usdt', '10');
  const a1 = mustApply(d, addSub(alice, 'alice-desk1', 'desk one')).userId as number;
  const a2 = mustApply(d, addSub(alice, 'alice-desk2')).userId as number;
  const b1 = mustApply(d, addSub(bob, 'bob-sub')).userId as number;
  return { d, alice, a1, a2, bob, b1 };
}

describe('sub-accounts', () => {
  test('AddSubUser registers a user of its own, owned by the main user, with its fund password', () => {
    const d = new CheckedDriver();
    const alice = d.user('alice');
    const r = mustApply(d, addSub(alice, 'alice-desk1', 'desk one'));
    assert.deepEqual(
      r.events.map((e) => e.type),
      ['UserRegistered', 'SubUserAdded', 'FundPasswordSet'],
    );
    const sub = r.userId as number;
    assert.equal(d.engine.userName(sub), 'alice-desk1');
    assert.equal(d.engine.subAccounts.mainOf(sub), alice);
    assert.equal(d.engine.subAccounts.mainOf(alice), undefined);
    assert.deepEqual(d.engine.subAccounts.subsOf(alice), [
      { userId: sub, mainUserId: alice, memo: 'desk one' },
    ]);
    assert.equal(d.engine.funds.fundPassword(sub)?.hash, 'scrypt-hash');
    // The tree survives a snapshot, and the hash with it.
    const restored = Engine.restore(d.engine.snapshot());
    assert.equal(restored.stateHash(), d.engine.stateHash());
    assert.equal(restored.subAccounts.mainOf(sub), alice);
  });

  test('AddSubUser refusals change nothing', () => {
    const { d, alice, a1 } = family();
    refusedUnchanged(d, addSub(999, 'x-sub'), 'USER_NOT_FOUND');
    refusedUnchanged(d, addSub(a1, 'deeper'), 'INVALID_STATE', /cannot have sub-accounts/);
    refusedUnchanged(d, addSub(alice, 'alice'), 'INVALID_PARAMETER', /taken/);
    refusedUnchanged(d, addSub(alice, 'ALICE-DESK1'), 'INVALID_PARAMETER', /regardless of case/);
    refusedUnchanged(d, addSub(alice, 'bad name!'), 'INVALID_PARAMETER', /user name/);
    refusedUnchanged(d, addSub(alice, 'ok-name', 'x'.repeat(65)), 'INVALID_PARAMETER', /memo/);
    refusedUnchanged(d, addSub(alice, 'ok-name', 'line\nbreak'), 'INVALID_PARAMETER', /memo/);
    refusedUnchanged(d, { ...addSub(alice, 'ok-name'), passwordHash: '' } as Command, 'INVALID_PARAMETER');
    mustApply(d, { type: 'SetUserStatus', userId: alice, status: 'frozen' });
    refusedUnchanged(d, addSub(alice, 'ok-name'), 'ACCOUNT_FROZEN');
  });

  test(`at most ${MAX_SUB_USERS} sub-accounts per main user`, () => {
    const d = new CheckedDriver();
    const alice = d.user('alice');
    for (let i = 0; i < MAX_SUB_USERS; i++) mustApply(d, addSub(alice, `s${i}`));
    refusedUnchanged(d, addSub(alice, 'one-more'), 'INVALID_STATE', /at most 100/);
  });

  test('TransferFunds: main → sub, sub → sub, sub → main; a bill on both sides; totals conserved', () => {
    const { d, alice, a1, a2 } = family();
    const total = (): bigint => d.engine.totals('usdt')?.users ?? -1n;
    const before = total();
    const r = mustApply(d, transfer(alice, alice, a1, 30 * USDT));
    const bills = r.events.filter((e): e is BalanceChanged => e.type === 'BalanceChanged');
    assert.deepEqual(
      bills.map((b) => [b.userId, b.billType, b.deltaAvailable, b.deltaFrozen, b.available, b.ref]),
      [
        [alice, 'subTransferOut', -30 * USDT, 0, 70 * USDT, 'alice-desk1'],
        [a1, 'subTransferIn', 30 * USDT, 0, 30 * USDT, 'alice'],
      ],
    );
    mustApply(d, transfer(alice, a1, a2, 12 * USDT));
    mustApply(d, transfer(alice, a2, alice, 2 * USDT));
    assert.equal(d.engine.balance(alice, 'usdt')?.available, 72 * USDT);
    assert.equal(d.engine.balance(a1, 'usdt')?.available, 18 * USDT);
    assert.equal(d.engine.balance(a2, 'usdt')?.available, 10 * USDT);
    assert.equal(total(), before);
  });

  test('TransferFunds refusals change nothing: outside the family, the same user, beyond the balance', () => {
    const { d, alice, a1, a2, bob, b1 } = family();
    mustApply(d, transfer(alice, alice, a1, 5 * USDT));
    refusedUnchanged(
      d,
      transfer(alice, alice, b1, USDT),
      'USER_NOT_FOUND',
      /this user or one of its sub-accounts/,
    );
    refusedUnchanged(d, transfer(alice, alice, bob, USDT), 'USER_NOT_FOUND');
    refusedUnchanged(d, transfer(alice, b1, a1, USDT), 'USER_NOT_FOUND');
    refusedUnchanged(d, transfer(alice, alice, 999, USDT), 'USER_NOT_FOUND');
    refusedUnchanged(d, transfer(bob, a1, b1, USDT), 'USER_NOT_FOUND');
    // Only the main user asks: a sub-account is not the head of a family.
    refusedUnchanged(d, transfer(a1, a1, a2, USDT), 'INVALID_STATE');
    refusedUnchanged(d, transfer(alice, a1, a1, USDT), 'INVALID_PARAMETER', /two different users/);
    refusedUnchanged(d, transfer(alice, a1, a2, 0), 'INVALID_AMOUNT');
    refusedUnchanged(d, transfer(alice, a1, a2, -1), 'INVALID_AMOUNT');
    refusedUnchanged(d, transfer(alice, a1, a2, 0.5), 'INVALID_AMOUNT');
    refusedUnchanged(d, { ...transfer(alice, a1, a2, 1), coin: 'nope' } as Command, 'UNKNOWN_COIN');
    refusedUnchanged(
      d,
      transfer(alice, a1, a2, 5 * USDT + 1),
      'INSUFFICIENT_BALANCE',
      /alice-desk1 has 5 usdt available, the transfer is 5.000001 usdt/,
    );
    // Frozen funds (an order) are not available to move.
    mustApply(d, limitOrder(a1, BUY, 50_000, 100)); // 0.01 btc at 500 usdt: all of its 5 usdt frozen
    assert.equal(d.engine.balance(a1, 'usdt')?.available, 0);
    refusedUnchanged(d, transfer(alice, a1, a2, 1), 'INSUFFICIENT_BALANCE');
  });

  test('freezing a main user freezes its sub-accounts; each keeps its own status', () => {
    const { d, alice, a1, a2 } = family();
    mustApply(d, transfer(alice, alice, a1, 50 * USDT));
    mustApply(d, { type: 'SetUserStatus', userId: alice, status: 'frozen' });
    refusedUnchanged(d, limitOrder(a1, BUY, 100_000, 100), 'ACCOUNT_FROZEN');
    refusedUnchanged(d, transfer(alice, a1, a2, USDT), 'ACCOUNT_FROZEN');
    assert.equal(d.engine.userRecord(a1)?.status, 'active');
    mustApply(d, { type: 'SetUserStatus', userId: alice, status: 'active' });
    mustApply(d, limitOrder(a1, BUY, 100_000, 100));
    // A frozen sub-account alone: its main user may not move money to or from it.
    mustApply(d, { type: 'SetUserStatus', userId: a2, status: 'frozen' });
    refusedUnchanged(d, transfer(alice, alice, a2, USDT), 'ACCOUNT_FROZEN');
    mustApply(d, transfer(alice, alice, a1, USDT));
  });
});
