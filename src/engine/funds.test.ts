import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { EngineDriver } from '../../test/fixtures/engine-driver.ts';
import { DAY_MS, FUND_PASSWORD_LOCK_MS } from '../domain/chains.ts';
import type { Command } from '../domain/commands.ts';
import type { EngineEvent } from '../domain/events.ts';
import { Engine } from './engine.ts';

const ERC20_ADDR = (n: number): string => `0x${String(n).padStart(40, '0')}`;
const TRC20_ADDR = (n: number): string => `T${String(n).padStart(33, '1')}`;
const stateOf = (e: Engine): string => JSON.stringify({ ...e.snapshot(), lastSeq: 0 });
const types = (events: readonly EngineEvent[]): string[] => events.map((e) => e.type);

/** alice and bob with usdt deposit addresses on ERC20 (alice) and TRC20 (both), a fund password each. */
function venue(): { d: EngineDriver; alice: number; bob: number } {
  const d = new EngineDriver();
  const alice = d.user('alice');
  const bob = d.user('bob');
  const must = (cmd: Command): void => assert.equal(d.apply(cmd).result, 'OK', JSON.stringify(cmd));
  must({
    type: 'AssignDepositAddress',
    userId: alice,
    coin: 'usdt',
    chain: 'ERC20',
    address: ERC20_ADDR(1),
    memo: '',
  });
  must({
    type: 'AssignDepositAddress',
    userId: alice,
    coin: 'usdt',
    chain: 'TRC20',
    address: TRC20_ADDR(1),
    memo: '',
  });
  must({
    type: 'AssignDepositAddress',
    userId: bob,
    coin: 'usdt',
    chain: 'TRC20',
    address: TRC20_ADDR(2),
    memo: '',
  });
  must({ type: 'SetFundPassword', userId: alice, hash: 'hash-a' });
  must({ type: 'SetFundPassword', userId: bob, hash: 'hash-b' });
  return { d, alice, bob };
}

const report = (
  confirmations: number,
  extra: Partial<Extract<Command, { type: 'ReportDeposit' }>> = {},
): Command => ({
  type: 'ReportDeposit',
  coin: 'usdt',
  chain: 'ERC20',
  txHash: '0xaaaaaaaaaaaaaaaa',
  output: 0,
  address: ERC20_ADDR(1),
  memo: '',
  amount: 100_000_000,
  confirmations,
  failed: false,
  ...extra,
});

/** Adds and verifies `address` in the user's usdt book. */
function book(d: EngineDriver, userId: number, chain: string, address: string, coin = 'usdt'): void {
  assert.equal(d.apply({ type: 'AddWithdrawAddress', userId, coin, chain, address }).result, 'OK');
  assert.equal(d.apply({ type: 'VerifyWithdrawAddress', userId, coin, address }).result, 'OK');
}

const withdraw = (
  userId: number,
  address: string,
  amount: number,
  fee: number,
  itransfer = false,
): Command => ({ type: 'RequestWithdrawal', userId, coin: 'usdt', address, amount, fee, itransfer });

describe('chain deposits', () => {
  test('confirming with rising confirmations, credited once at the required number', () => {
    const { d, alice } = venue();
    const first = d.apply(report(0));
    assert.deepEqual(types(first.events), ['DepositUpdated']);
    assert.equal(d.engine.funds.deposit('chain:usdt/ERC20/0xaaaaaaaaaaaaaaaa/0')?.state, 'confirming');
    assert.equal(d.apply(report(0)).duplicate, true);
    assert.equal(d.apply(report(5)).events.length, 1);
    assert.deepEqual(d.engine.balance(alice, 'usdt'), { available: 0, frozen: 0 });
    const credit = d.apply(report(12));
    assert.deepEqual(types(credit.events), ['BalanceChanged', 'DepositUpdated']);
    assert.deepEqual(d.engine.balance(alice, 'usdt'), { available: 100_000_000, frozen: 0 });
    for (const again of [report(12), report(13), report(40), report(3, { failed: true })]) {
      assert.equal(d.apply(again).duplicate, true, 'a final deposit is never applied again');
    }
    assert.equal(d.apply(report(13, { amount: 1 })).result, 'DUPLICATE_REFERENCE');
    assert.equal(d.engine.totals('usdt')?.credited, 100_000_000n);
    d.engine.assertInvariants();
  });

  test('credited at once when first seen past the required confirmations; another output is another deposit', () => {
    const { d, alice } = venue();
    assert.equal(d.apply(report(30)).events.length, 2);
    assert.equal(d.apply(report(30, { output: 1 })).events.length, 2);
    assert.deepEqual(d.engine.balance(alice, 'usdt'), { available: 200_000_000, frozen: 0 });
  });

  test('failed on chain: never credited', () => {
    const { d, alice } = venue();
    d.apply(report(3));
    const failed = d.apply(report(3, { failed: true }));
    assert.deepEqual(types(failed.events), ['DepositUpdated']);
    assert.equal(d.engine.funds.deposit('chain:usdt/ERC20/0xaaaaaaaaaaaaaaaa/0')?.state, 'failed');
    assert.equal(d.apply(report(3, { txHash: '0xbbbbbbbbbbbbbbbb', failed: true })).result, 'OK');
    assert.equal(
      d.engine.funds.deposit('chain:usdt/ERC20/0xbbbbbbbbbbbbbbbb/0')?.note,
      'the transaction failed on chain',
    );
    assert.deepEqual(d.engine.balance(alice, 'usdt'), { available: 0, frozen: 0 });
    d.engine.assertInvariants();
  });

  test('memo chains: one account, a memo per user; the report names both', () => {
    const d = new EngineDriver();
    const a = d.user('a');
    const b = d.user('b');
    const assign = (userId: number, memo: string): string =>
      d.apply({
        type: 'AssignDepositAddress',
        userId,
        coin: 'xwc',
        chain: 'XWC',
        address: 'bourse.xwc',
        memo,
      }).result;
    assert.equal(assign(a, '100001'), 'OK');
    assert.equal(assign(b, '100001'), 'DUPLICATE_REFERENCE');
    assert.equal(assign(b, ''), 'INVALID_PARAMETER');
    assert.equal(assign(b, '100002'), 'OK');
    const r = d.apply({
      type: 'ReportDeposit',
      coin: 'xwc',
      chain: 'XWC',
      txHash: 'abcdef0123456789',
      output: 0,
      address: 'bourse.xwc',
      memo: '100002',
      amount: 5 * 1e8,
      confirmations: 3,
      failed: false,
    });
    assert.equal(r.result, 'OK');
    assert.deepEqual(d.engine.balance(b, 'xwc'), { available: 5e8, frozen: 0 });
    assert.equal(d.engine.funds.deposit('chain:xwc/XWC/abcdef0123456789/0')?.address, 'bourse.xwc_100002');
  });

  test('bad reports and assignments are refused and change nothing', () => {
    const { d, alice, bob } = venue();
    const cases: [Command, string][] = [
      [report(1, { address: ERC20_ADDR(9) }), 'UNKNOWN_REFERENCE'],
      [report(1, { chain: 'OMNI' }), 'INVALID_PARAMETER'],
      [report(1, { coin: 'doge' }), 'UNKNOWN_COIN'],
      [report(1, { txHash: 'x' }), 'INVALID_PARAMETER'],
      [report(1, { output: -1 }), 'INVALID_PARAMETER'],
      [report(-1), 'INVALID_PARAMETER'],
      [report(1, { amount: 0 }), 'INVALID_AMOUNT'],
      [report(1, { amount: 1.5 }), 'INVALID_AMOUNT'],
      [report(1, { failed: 'yes' as unknown as boolean }), 'INVALID_PARAMETER'],
      [
        {
          type: 'AssignDepositAddress',
          userId: bob,
          coin: 'usdt',
          chain: 'ERC20',
          address: ERC20_ADDR(1),
          memo: '',
        },
        'DUPLICATE_REFERENCE',
      ],
      [
        {
          type: 'AssignDepositAddress',
          userId: alice,
          coin: 'usdt',
          chain: 'ERC20',
          address: ERC20_ADDR(3),
          memo: '',
        },
        'INVALID_STATE',
      ],
      [
        { type: 'AssignDepositAddress', userId: bob, coin: 'usdt', chain: 'ERC20', address: 'a_b', memo: '' },
        'INVALID_PARAMETER',
      ],
      [
        {
          type: 'AssignDepositAddress',
          userId: bob,
          coin: 'usdt',
          chain: 'ERC20',
          address: ERC20_ADDR(4),
          memo: '7',
        },
        'INVALID_PARAMETER',
      ],
      [
        {
          type: 'AssignDepositAddress',
          userId: 99,
          coin: 'usdt',
          chain: 'ERC20',
          address: ERC20_ADDR(4),
          memo: '',
        },
        'USER_NOT_FOUND',
      ],
      [
        { type: 'AssignDepositAddress', userId: bob, coin: 'bchabc', chain: 'BCH', address: 'q1', memo: '' },
        'RETIRED_COIN_NAME',
      ],
      [
        {
          type: 'CreditDeposit',
          depositId: 'chain:usdt/x',
          userId: bob,
          coin: 'usdt',
          amount: 1,
          remark: '',
        },
        'INVALID_PARAMETER',
      ],
      [
        { type: 'CreditDeposit', depositId: 'internal:1', userId: bob, coin: 'usdt', amount: 1, remark: '' },
        'INVALID_PARAMETER',
      ],
    ];
    for (const [cmd, expected] of cases) {
      const before = stateOf(d.engine);
      const r = d.apply(cmd);
      assert.equal(r.result, expected, JSON.stringify(cmd));
      assert.deepEqual(r.events, []);
      assert.equal(stateOf(d.engine), before, `${JSON.stringify(cmd)} changed state`);
    }
  });
});

describe('withdrawals', () => {
  /** alice with 50,000 usdt and a verified external TRC20 address. */
  function funded(): { d: EngineDriver; alice: number; bob: number; to: string } {
    const v = venue();
    v.d.apply(report(12, { amount: 50_000_000_000 }));
    const to = TRC20_ADDR(7);
    book(v.d, v.alice, 'TRC20', to);
    return { ...v, to };
  }

  test('the happy path: auto-approved, claimed, sent, confirmed, succeeded; fee becomes income', () => {
    const { d, alice, to } = funded();
    const r = d.apply(withdraw(alice, to, 100_000_000, 1_000_000));
    assert.equal(r.withdrawalId, '1');
    assert.deepEqual(types(r.events), ['BalanceChanged', 'WithdrawalUpdated']);
    const w = (): string | undefined => d.engine.funds.withdrawal('1')?.state;
    assert.equal(w(), 'approved', 'under the auto-approve limit');
    assert.deepEqual(d.engine.balance(alice, 'usdt'), { available: 49_899_000_000, frozen: 101_000_000 });
    assert.equal(d.apply({ type: 'SendWithdrawal', withdrawalId: '1' }).result, 'OK');
    assert.equal(
      d.apply({ type: 'CancelWithdrawal', withdrawalId: '1', userId: alice }).result,
      'INVALID_STATE',
    );
    assert.equal(
      d.apply({ type: 'MarkWithdrawalSent', withdrawalId: '1', txHash: 'feedfeedfeedfeed' }).result,
      'OK',
    );
    assert.equal(
      d.apply({ type: 'MarkWithdrawalSent', withdrawalId: '1', txHash: 'feedfeedfeedfeed' }).duplicate,
      true,
    );
    assert.equal(d.apply({ type: 'ConfirmWithdrawal', withdrawalId: '1', confirmations: 1 }).result, 'OK');
    assert.equal(w(), 'confirmed');
    d.engine.assertInvariants();
    const done = d.apply({ type: 'ConfirmWithdrawal', withdrawalId: '1', confirmations: 20 });
    assert.deepEqual(types(done.events), ['BalanceChanged', 'BalanceChanged', 'WithdrawalUpdated']);
    assert.equal(w(), 'succeeded');
    assert.deepEqual(d.engine.balance(alice, 'usdt'), { available: 49_899_000_000, frozen: 0 });
    assert.equal(d.engine.feeIncome('usdt'), 1_000_000);
    assert.equal(d.engine.totals('usdt')?.withdrawn, 100_000_000n);
    assert.equal(
      d.apply({ type: 'ConfirmWithdrawal', withdrawalId: '1', confirmations: 25 }).duplicate,
      true,
    );
    assert.equal(
      d.apply({ type: 'FailWithdrawal', withdrawalId: '1', reason: 'late' }).result,
      'INVALID_STATE',
    );
    d.engine.assertInvariants();
  });

  test('over the auto-approve limit it waits for the operator; cancels release the funds', () => {
    const { d, alice, to } = funded();
    const big = 20_000_000_000;
    assert.equal(d.apply(withdraw(alice, to, big, 1_000_000)).result, 'OK');
    assert.equal(d.engine.funds.withdrawal('1')?.state, 'submitted');
    assert.equal(d.apply({ type: 'SendWithdrawal', withdrawalId: '1' }).result, 'INVALID_STATE');
    assert.equal(d.apply({ type: 'ApproveWithdrawal', withdrawalId: '1' }).result, 'OK');
    assert.equal(d.apply({ type: 'ApproveWithdrawal', withdrawalId: '1' }).duplicate, true);
    const cancel = d.apply({ type: 'CancelWithdrawal', withdrawalId: '1' });
    assert.deepEqual(types(cancel.events), ['BalanceChanged', 'WithdrawalUpdated']);
    assert.equal(d.engine.funds.withdrawal('1')?.reason, 'cancelled by the operator');
    assert.equal(d.apply(withdraw(alice, to, big, 1_000_000)).withdrawalId, '2');
    assert.equal(
      d.apply({ type: 'CancelWithdrawal', withdrawalId: '2', userId: 999 }).result,
      'UNKNOWN_REFERENCE',
    );
    assert.equal(d.apply({ type: 'CancelWithdrawal', withdrawalId: '2', userId: alice }).result, 'OK');
    assert.equal(d.engine.funds.withdrawal('2')?.state, 'cancelled');
    assert.deepEqual(d.engine.balance(alice, 'usdt'), { available: 50_000_000_000, frozen: 0 });
    assert.equal(
      d.engine.funds.withdrawnOnDay(alice, 'usdt', d.time),
      0,
      'cancelled withdrawals give the day back',
    );
    d.engine.assertInvariants();
  });

  test('a failed transaction releases the funds, from sent or confirmed', () => {
    const { d, alice, to } = funded();
    d.apply(withdraw(alice, to, 100_000_000, 1_000_000));
    d.apply({ type: 'SendWithdrawal', withdrawalId: '1' });
    d.apply({ type: 'MarkWithdrawalSent', withdrawalId: '1', txHash: 'feedfeedfeedfeed' });
    d.apply({ type: 'ConfirmWithdrawal', withdrawalId: '1', confirmations: 2 });
    const failed = d.apply({
      type: 'FailWithdrawal',
      withdrawalId: '1',
      reason: 'the transaction failed on chain',
    });
    assert.deepEqual(types(failed.events), ['BalanceChanged', 'WithdrawalUpdated']);
    assert.deepEqual(d.engine.balance(alice, 'usdt'), { available: 50_000_000_000, frozen: 0 });
    assert.equal(d.apply({ type: 'FailWithdrawal', withdrawalId: '1', reason: 'again' }).duplicate, true);
    d.engine.assertInvariants();
  });

  test('itransfer to another user: at once, no fee, a transfer on both sides', () => {
    const { d, alice, bob } = funded();
    const bobs = TRC20_ADDR(2);
    book(d, alice, 'TRC20', bobs);
    const r = d.apply(withdraw(alice, bobs, 300_000_000, 1_000_000, true));
    assert.deepEqual(types(r.events), [
      'BalanceChanged',
      'BalanceChanged',
      'WithdrawalUpdated',
      'DepositUpdated',
    ]);
    assert.deepEqual(d.engine.balance(alice, 'usdt'), { available: 49_700_000_000, frozen: 0 });
    assert.deepEqual(d.engine.balance(bob, 'usdt'), { available: 300_000_000, frozen: 0 });
    const w = d.engine.funds.withdrawal('1');
    assert.deepEqual([w?.state, w?.fee, w?.itransfer], ['succeeded', 0, true]);
    assert.equal(d.engine.funds.deposit('internal:1')?.userId, bob);
    assert.equal(d.engine.feeIncome('usdt'), 0);
    assert.equal(
      d.apply(withdraw(alice, bobs, 300_000_000, 0, true)).result,
      'OK',
      'fee 0 is fine internally',
    );
    // Without itransfer the same address is paid on chain, fee and all.
    assert.equal(d.apply(withdraw(alice, bobs, 300_000_000, 0)).result, 'WRONG_WITHDRAW_FEE');
    assert.equal(
      d.engine.funds.withdrawal(String(d.apply(withdraw(alice, bobs, 300_000_000, 1_000_000)).withdrawalId))
        ?.state,
      'approved',
    );
    d.engine.assertInvariants();
  });

  test('each rule of a request, in order, refusing without a change', () => {
    const { d, alice, bob, to } = funded();
    d.apply({
      type: 'AddWithdrawAddress',
      userId: alice,
      coin: 'usdt',
      chain: 'ERC20',
      address: ERC20_ADDR(8),
    });
    book(d, alice, 'TRC20', TRC20_ADDR(1));
    const cases: [Command, string, RegExp?][] = [
      [withdraw(99, to, 100_000_000, 1_000_000), 'USER_NOT_FOUND'],
      [{ ...withdraw(alice, to, 100_000_000, 1_000_000), coin: 'doge' } as Command, 'UNKNOWN_COIN'],
      [withdraw(alice, to, 0, 1_000_000), 'INVALID_AMOUNT'],
      [withdraw(alice, to, 100_000_000, -1), 'INVALID_PARAMETER'],
      [
        withdraw(alice, TRC20_ADDR(9), 100_000_000, 1_000_000),
        'WITHDRAW_ADDRESS_UNVERIFIED',
        /提币地址有误.*not in this account/,
      ],
      [
        withdraw(alice, ERC20_ADDR(8), 100_000_000, 15_000_000),
        'WITHDRAW_ADDRESS_UNVERIFIED',
        /not verified/,
      ],
      [withdraw(alice, TRC20_ADDR(1), 100_000_000, 1_000_000, true), 'INVALID_PARAMETER', /your own/],
      [withdraw(alice, to, 100_000_000, 15_000_000), 'WRONG_WITHDRAW_FEE', /fees must be 1 usdt, the TRC20/],
      [withdraw(alice, to, 100_000_000, 0, true), 'WRONG_WITHDRAW_FEE'],
      [withdraw(alice, to, 9_999_999, 1_000_000), 'BELOW_MIN_WITHDRAW', /10 usdt/],
      [withdraw(alice, to, 50_000_000_000, 1_000_000), 'INSUFFICIENT_BALANCE'],
      [withdraw(bob, to, 10_000_000, 1_000_000), 'WITHDRAW_ADDRESS_UNVERIFIED'],
      [{ type: 'ApproveWithdrawal', withdrawalId: '42' }, 'UNKNOWN_REFERENCE'],
      [{ type: 'MarkWithdrawalSent', withdrawalId: '42', txHash: '' }, 'INVALID_PARAMETER'],
      [{ type: 'ConfirmWithdrawal', withdrawalId: '42', confirmations: 1.5 }, 'INVALID_PARAMETER'],
      [{ type: 'FailWithdrawal', withdrawalId: '42', reason: '' }, 'INVALID_PARAMETER'],
      [
        { type: 'AddWithdrawAddress', userId: alice, coin: 'usdt', chain: 'TRC20', address: 'has space' },
        'INVALID_PARAMETER',
      ],
      [
        { type: 'AddWithdrawAddress', userId: alice, coin: 'usdt', chain: 'ERC20', address: TRC20_ADDR(1) },
        'DUPLICATE_REFERENCE',
      ],
      [
        {
          type: 'AddWithdrawAddress',
          userId: alice,
          coin: 'xwc',
          chain: 'XWC',
          address: 'account-without-memo',
        },
        'INVALID_PARAMETER',
      ],
      [
        { type: 'VerifyWithdrawAddress', userId: alice, coin: 'usdt', address: TRC20_ADDR(5) },
        'UNKNOWN_REFERENCE',
      ],
      [{ type: 'RecordFundPasswordFailure', userId: 99 }, 'USER_NOT_FOUND'],
      [{ type: 'SetFundPassword', userId: alice, hash: '' }, 'INVALID_PARAMETER'],
    ];
    for (const [cmd, expected, message] of cases) {
      const before = stateOf(d.engine);
      const r = d.apply(cmd);
      assert.equal(r.result, expected, JSON.stringify(cmd));
      if (message !== undefined) assert.match(r.message ?? '', message);
      assert.equal(stateOf(d.engine), before, `${JSON.stringify(cmd)} changed state`);
    }
  });

  test('the daily limit counts per UTC day, and a released withdrawal gives its amount back', () => {
    const { d, alice, to } = funded();
    const limit = 1_000_000_000_000;
    d.apply(report(12, { txHash: '0xcccccccccccccccc', amount: 2 * limit }));
    d.time = Math.floor(d.time / DAY_MS) * DAY_MS + DAY_MS - 100; // just before midnight UTC
    assert.equal(d.apply(withdraw(alice, to, limit - 10_000_000, 1_000_000)).result, 'OK');
    assert.equal(d.apply(withdraw(alice, to, 20_000_000, 1_000_000)).result, 'DAILY_WITHDRAW_LIMIT');
    assert.equal(d.apply(withdraw(alice, to, 10_000_000, 1_000_000)).result, 'OK');
    d.apply({ type: 'CancelWithdrawal', withdrawalId: '2', userId: alice });
    assert.equal(d.apply(withdraw(alice, to, 10_000_000, 1_000_000)).result, 'OK');
    d.time += 200; // the next day
    assert.equal(d.apply(withdraw(alice, to, 20_000_000, 1_000_000)).result, 'OK');
    assert.equal(d.engine.funds.withdrawnOnDay(alice, 'usdt', d.time), 20_000_000);
    d.engine.assertInvariants();
  });

  test('switches: a coin or chain closed to withdrawals refuses them', () => {
    const { d, alice, to } = funded();
    const usdt = d.engine.coin('usdt');
    assert.ok(usdt);
    d.apply({ type: 'UpsertCoin', coin: { ...usdt, canWithdraw: false } });
    assert.equal(d.apply(withdraw(alice, to, 100_000_000, 1_000_000)).result, 'WITHDRAW_DISABLED');
    d.apply({ type: 'UpsertCoin', coin: { ...usdt, canDeposit: false } });
    const assign = d.apply({
      type: 'AssignDepositAddress',
      userId: alice,
      coin: 'usdt',
      chain: 'ERC20',
      address: ERC20_ADDR(5),
      memo: '',
    });
    assert.equal(assign.result, 'DEPOSIT_DISABLED');
  });
});

describe('fund password', () => {
  test('five wrong in 24 hours lock withdrawals for 24 hours; older failures do not count', () => {
    const { d, alice } = venue();
    const fail = (): EngineEvent | undefined =>
      d.apply({ type: 'RecordFundPasswordFailure', userId: alice }).events[0];
    for (let i = 1; i <= 4; i++)
      assert.deepEqual(fail(), {
        type: 'FundPasswordFailed',
        userId: alice,
        failures: i,
        lockedUntil: 0,
        time: d.time,
      });
    d.time += 24 * 3_600_000; // the four fall out of the window
    assert.equal((fail() as { failures: number }).failures, 1);
    for (let i = 0; i < 3; i++) fail();
    const lock = fail() as { failures: number; lockedUntil: number };
    assert.equal(lock.failures, 5);
    assert.equal(lock.lockedUntil, d.time + FUND_PASSWORD_LOCK_MS);
    assert.equal(d.apply({ type: 'RecordFundPasswordFailure', userId: alice }).result, 'INVALID_STATE');
    book(d, alice, 'TRC20', TRC20_ADDR(7));
    assert.equal(
      d.apply(withdraw(alice, TRC20_ADDR(7), 10_000_000, 1_000_000)).result,
      'FUND_PASSWORD_LOCKED',
    );
    d.time = lock.lockedUntil;
    assert.equal(
      d.apply(withdraw(alice, TRC20_ADDR(7), 10_000_000, 1_000_000)).result,
      'INSUFFICIENT_BALANCE',
    );
    assert.equal(d.engine.funds.fundPassword(alice)?.failures.length, 0);
  });

  test('attempts count when they begin: at most five are checked in 24 hours, concurrent or not', () => {
    const { d, alice } = venue();
    const attempt = (step: 'begin' | 'wrong' | 'right') =>
      d.apply({ type: 'RecordFundPasswordFailure', userId: alice, attempt: step });
    // Five begin (five hash checks may run at once); the sixth is refused before any ends.
    for (let i = 0; i < 5; i++) assert.equal(attempt('begin').result, 'OK');
    const sixth = attempt('begin');
    assert.equal(sixth.result, 'FUND_PASSWORD_LOCKED');
    assert.match(
      sixth.message ?? '',
      /5 fund password attempts within 24 hours are wrong or still being checked/,
    );
    assert.equal(d.engine.funds.fundPassword(alice)?.pending.length, 5);
    // One was right: it gives its place back, and another attempt may begin.
    assert.deepEqual(attempt('right').events, []);
    assert.equal(attempt('begin').result, 'OK');
    // Five end wrong: the fifth failure locks, as five wrong passwords always did.
    for (let i = 1; i <= 4; i++) {
      assert.deepEqual(attempt('wrong').events[0], {
        type: 'FundPasswordFailed',
        userId: alice,
        failures: i,
        lockedUntil: 0,
        time: d.time,
      });
    }
    const lock = attempt('wrong').events[0] as { failures: number; lockedUntil: number };
    assert.equal(lock.failures, 5);
    assert.equal(lock.lockedUntil, d.time + FUND_PASSWORD_LOCK_MS);
    assert.deepEqual(d.engine.funds.fundPassword(alice)?.pending, []);
    const locked = attempt('begin');
    assert.equal(locked.result, 'FUND_PASSWORD_LOCKED');
    assert.equal(locked.message, undefined, 'the registry text: locked, retry after 24 hours');
    assert.equal(
      d.apply({ type: 'RecordFundPasswordFailure', userId: alice, attempt: 'later' as 'right' }).result,
      'INVALID_PARAMETER',
    );
  });

  test('an attempt that never ends (a crash mid-check) counts for 24 hours, then not', () => {
    const { d, alice } = venue();
    const begin = () => d.apply({ type: 'RecordFundPasswordFailure', userId: alice, attempt: 'begin' });
    const first = d.time + 1;
    for (let i = 0; i < 5; i++) begin();
    d.time = first + 24 * 3_600_000 - 2; // the next command comes 1 ms before the first expires
    assert.equal(begin().result, 'FUND_PASSWORD_LOCKED');
    assert.equal(begin().result, 'OK', 'the first attempt no longer counts');
    assert.deepEqual(d.engine.funds.fundPassword(alice)?.pending, [
      first + 1,
      first + 2,
      first + 3,
      first + 4,
      d.time,
    ]);
    // The operator's reset clears attempts in flight too.
    d.apply({ type: 'SetFundPassword', userId: alice, hash: 'scrypt$x' });
    assert.deepEqual(d.engine.funds.fundPassword(alice)?.pending, []);
  });

  test('attempts in flight survive a snapshot; a state without any hashes as before', () => {
    const { d, alice } = venue();
    const before = d.engine.stateHash();
    const plain = JSON.stringify(d.engine.snapshot());
    assert.doesNotMatch(plain, /"passwords":\[\[\d+,"[^"]*",\[\],0,/, 'no empty pending list is written');
    d.apply({ type: 'RecordFundPasswordFailure', userId: alice, attempt: 'begin' });
    assert.notEqual(d.engine.stateHash(), before);
    const restored = Engine.restore(JSON.parse(JSON.stringify(d.engine.snapshot())));
    assert.equal(restored.stateHash(), d.engine.stateHash());
    assert.deepEqual(restored.funds.fundPassword(alice)?.pending, [d.time]);
  });

  test('without a fund password there is no withdrawal', () => {
    const d = new EngineDriver();
    const u = d.fund('carol', 'usdt', '100');
    book(d, u, 'TRC20', TRC20_ADDR(7));
    const r = d.apply(withdraw(u, TRC20_ADDR(7), 10_000_000, 1_000_000));
    assert.equal(r.result, 'FUND_PASSWORD_WRONG');
    assert.match(r.message ?? '', /no fund password/);
  });
});

test('funds state survives snapshot and restore mid-flight, and continues identically', () => {
  const { d, alice, bob } = venue();
  d.apply(report(3));
  d.apply(report(12, { txHash: '0xdddddddddddddddd', amount: 30_000_000_000 }));
  book(d, alice, 'TRC20', TRC20_ADDR(2));
  book(d, alice, 'TRC20', TRC20_ADDR(7));
  d.apply({ type: 'RecordFundPasswordFailure', userId: bob });
  d.apply(withdraw(alice, TRC20_ADDR(7), 20_000_000_000, 1_000_000));
  d.apply(withdraw(alice, TRC20_ADDR(7), 100_000_000, 1_000_000));
  d.apply({ type: 'SendWithdrawal', withdrawalId: '2' });
  d.apply(withdraw(alice, TRC20_ADDR(2), 100_000_000, 0, true));
  const restored = Engine.restore(JSON.parse(JSON.stringify(d.engine.snapshot())));
  assert.equal(restored.stateHash(), d.engine.stateHash());
  const next: Command[] = [
    report(12),
    { type: 'ApproveWithdrawal', withdrawalId: '1' },
    { type: 'MarkWithdrawalSent', withdrawalId: '2', txHash: 'feedfeedfeedfeed' },
    { type: 'ConfirmWithdrawal', withdrawalId: '2', confirmations: 20 },
    { type: 'RecordFundPasswordFailure', userId: bob },
  ];
  let seq = d.seq;
  for (const cmd of next) {
    const time = ++d.time;
    assert.deepEqual(restored.apply({ ...cmd, seq: ++seq, time }), d.engine.apply({ ...cmd, seq, time }));
  }
  assert.equal(restored.stateHash(), d.engine.stateHash());
  restored.assertInvariants();
});
