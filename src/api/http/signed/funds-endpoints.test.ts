import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Command } from '../../../domain/commands.ts';
import { hashFundPassword } from '../../auth/fund-password.ts';
import {
  ALL_PERMISSIONS,
  SignedApiHarness,
  T0,
  type Credentials,
} from '../../../../test/fixtures/signed-venue.ts';

type Json = Record<string, unknown>;

const EXTERNAL_TRC20 = `T${'1'.repeat(33)}`;

/**
 * alice: a key with every permission, usdt deposit addresses on ERC20 and TRC20 and an xwc memo
 * address, 50,000 usdt deposited on chain, the fund password 'secret1', an external TRC20 address
 * verified and another added; bob: a usdt TRC20 deposit address and a key without moneyPerm.
 */
async function funded(): Promise<{
  h: SignedApiHarness;
  alice: Credentials;
  bob: Credentials;
  aliceId: number;
  bobId: number;
}> {
  const h = new SignedApiHarness();
  const v = h.venue;
  const aliceId = await v.user('alice');
  const bobId = await v.user('bob');
  const commands: Command[] = [
    {
      type: 'AssignDepositAddress',
      userId: aliceId,
      coin: 'usdt',
      chain: 'ERC20',
      address: `0x${'a'.repeat(40)}`,
      memo: '',
    },
    {
      type: 'AssignDepositAddress',
      userId: aliceId,
      coin: 'usdt',
      chain: 'TRC20',
      address: `T${'a'.repeat(33)}`,
      memo: '',
    },
    {
      type: 'AssignDepositAddress',
      userId: aliceId,
      coin: 'xwc',
      chain: 'XWC',
      address: 'bourse.xwc',
      memo: '100001',
    },
    {
      type: 'AssignDepositAddress',
      userId: bobId,
      coin: 'usdt',
      chain: 'TRC20',
      address: `T${'b'.repeat(33)}`,
      memo: '',
    },
    {
      type: 'ReportDeposit',
      coin: 'usdt',
      chain: 'ERC20',
      txHash: `0x${'d'.repeat(64)}`,
      output: 0,
      address: `0x${'a'.repeat(40)}`,
      memo: '',
      amount: 50_000_000_000,
      confirmations: 12,
      failed: false,
    },
    { type: 'SetFundPassword', userId: aliceId, hash: await hashFundPassword('secret1') },
    { type: 'AddWithdrawAddress', userId: aliceId, coin: 'usdt', chain: 'TRC20', address: EXTERNAL_TRC20 },
    { type: 'VerifyWithdrawAddress', userId: aliceId, coin: 'usdt', address: EXTERNAL_TRC20 },
    {
      type: 'AddWithdrawAddress',
      userId: aliceId,
      coin: 'usdt',
      chain: 'TRC20',
      address: `T${'2'.repeat(33)}`,
    },
    {
      type: 'AddWithdrawAddress',
      userId: aliceId,
      coin: 'usdt',
      chain: 'TRC20',
      address: `T${'b'.repeat(33)}`,
    },
    { type: 'VerifyWithdrawAddress', userId: aliceId, coin: 'usdt', address: `T${'b'.repeat(33)}` },
  ];
  for (const c of commands) await v.must(c);
  const bobPermissions = { ...ALL_PERMISSIONS, money: false };
  return { h, alice: await h.key(aliceId), bob: await h.key(bobId, bobPermissions), aliceId, bobId };
}

/** Calls with bad input: the code, the message, and nothing changed (no command journaled). */
async function refused(
  h: SignedApiHarness,
  creds: Credentials,
  method: string,
  params: Record<string, string>,
  code: number,
  message: RegExp,
): Promise<void> {
  const before = h.stateText();
  const submitted = h.venue.submitted;
  const body = (await h.call(method, creds, params)) as Json;
  assert.equal(body.code, code, `${method} ${JSON.stringify(params)} → ${JSON.stringify(body)}`);
  assert.match(String(body.message), message, `${method} ${JSON.stringify(params)}`);
  assert.equal(h.venue.submitted, submitted, `${method} ${JSON.stringify(params)} submitted a command`);
  assert.equal(h.stateText(), before, 'state changed');
}

const withdrawParams = (extra: Record<string, string> = {}): Record<string, string> => ({
  currency: 'usdt',
  amount: '100',
  fees: '1',
  receiveAddr: EXTERNAL_TRC20,
  safePwd: 'secret1',
  ...extra,
});

describe('funds endpoints', () => {
  test('each one needs moneyPerm (1012), and answers nothing else without it', async () => {
    const { h, bob } = await funded();
    for (const method of [
      'getUserAddress',
      'getPayinAddress',
      'getWithdrawAddress',
      'getWithdrawRecord',
      'getChargeRecord',
      'withdraw',
      'cancelWithdraw',
    ]) {
      await refused(h, bob, method, { currency: 'usdt' }, 1012, /lacks moneyPerm/);
    }
  });

  test('deposit addresses: one per coin (memo chains as <account>_<memo>), every chain, any letter case', async () => {
    const { h, alice } = await funded();
    for (const currency of ['usdt', 'USDT', 'Usdt']) {
      assert.deepEqual(await h.call('getUserAddress', alice, { currency }), {
        code: 1000,
        message: { des: 'success', isSuc: true, datas: { key: `0x${'a'.repeat(40)}` } },
      });
    }
    const xwc = (await h.call('getUserAddress', alice, { currency: 'XWC' })) as {
      message: { datas: { key: string } };
    };
    assert.equal(xwc.message.datas.key, 'bourse.xwc_100001');
    const all = (await h.call('getPayinAddress', alice)) as { message: { datas: Json[] } };
    assert.deepEqual(all.message.datas, [
      {
        blockChain: 'erc20',
        isUseMemo: false,
        address: `0x${'a'.repeat(40)}`,
        canDeposit: true,
        canWithdraw: true,
        currency: 'USDT',
      },
      {
        blockChain: 'trc20',
        isUseMemo: false,
        address: `T${'a'.repeat(33)}`,
        canDeposit: true,
        canWithdraw: true,
        currency: 'USDT',
      },
      {
        blockChain: 'xwc',
        isUseMemo: true,
        account: 'bourse.xwc',
        memo: '100001',
        canDeposit: true,
        canWithdraw: true,
        currency: 'XWC',
      },
    ]);
    const one = (await h.call('getPayinAddress', alice, { currency: 'XWC' })) as {
      message: { datas: Json[] };
    };
    assert.equal(one.message.datas.length, 1);
    assert.deepEqual(await h.call('getWithdrawAddress', alice, { currency: 'usdt' }), {
      code: 1000,
      message: { des: 'success', isSuc: true, datas: { key: `T${'b'.repeat(33)}` } },
    });
  });

  test('getAccountInfo says whether the fund password is set (trade_password_enabled)', async () => {
    const { h, alice, bobId } = await funded();
    const info = async (creds: Credentials): Promise<unknown> =>
      ((await h.call('getAccountInfo', creds)) as { result: { base: Json } }).result.base
        .trade_password_enabled;
    assert.equal(await info(alice), true);
    assert.equal(await info(await h.key(bobId)), false);
  });

  test('address endpoints: bad input and missing addresses get their code and a clear message', async () => {
    const { h, alice } = await funded();
    await refused(h, alice, 'getUserAddress', {}, 3005, /currency is required/);
    await refused(h, alice, 'getUserAddress', { currency: 'doge' }, 3005, /unknown coin 'doge'/);
    await refused(h, alice, 'getUserAddress', { currency: 'BCHABC' }, 3005, /retired; use 'bch'/);
    await refused(
      h,
      alice,
      'getUserAddress',
      { currency: 'btc' },
      1001,
      /no btc deposit address yet.*bourse address create alice btc/,
    );
    await refused(h, alice, 'getPayinAddress', { currency: 'eth' }, 1001, /must first be created/);
    await refused(h, alice, 'getPayinAddress', { currency: 'x'.repeat(300) }, 3005, /invalid coin name/);
    await refused(
      h,
      alice,
      'getWithdrawAddress',
      { currency: 'btc' },
      1001,
      /^提币地址有误, 请先添加提币地址。 \(no verified btc/,
    );
    await refused(h, alice, 'getWithdrawAddress', {}, 3005, /currency is required/);
  });

  test('withdraw: frozen at once, approved under the limit; the record follows it', async () => {
    const { h, alice, aliceId } = await funded();
    const body = await h.call('withdraw', alice, withdrawParams({ currency: 'USDT' }));
    assert.deepEqual(body, { code: 1000, message: 'success', id: '1' });
    const submitTime = h.venue.time;
    assert.deepEqual(h.venue.engine.balance(aliceId, 'usdt'), {
      available: 49_899_000_000,
      frozen: 101_000_000,
    });
    const record = (await h.call('getWithdrawRecord', alice, { currency: 'usdt' })) as {
      message: {
        datas: { list: Json[]; totalCount: number; totalPage: number; pageIndex: number; pageSize: number };
      };
    };
    assert.deepEqual(record.message.datas, {
      list: [
        {
          id: 1,
          amount: 100,
          fees: 1,
          status: 0,
          submitTime,
          manageTime: submitTime,
          toAddress: EXTERNAL_TRC20,
          merchantOrderNo: '',
          hash: '',
          currency: 'USDT',
          itransfer: 0,
        },
      ],
      pageIndex: 1,
      pageSize: 10,
      totalCount: 1,
      totalPage: 1,
    });
    assert.equal(h.venue.engine.funds.withdrawal('1')?.state, 'approved');
  });

  test('withdraw with itransfer to another user: at once, no fee, internal on both sides', async () => {
    const { h, alice, aliceId, bobId } = await funded();
    const bobs = `T${'b'.repeat(33)}`;
    const body = await h.call(
      'withdraw',
      alice,
      withdrawParams({ receiveAddr: bobs, itransfer: '1', amount: '250' }),
    );
    assert.equal((body as Json).code, 1000);
    assert.deepEqual(h.venue.engine.balance(aliceId, 'usdt'), { available: 49_750_000_000, frozen: 0 });
    assert.deepEqual(h.venue.engine.balance(bobId, 'usdt'), { available: 250_000_000, frozen: 0 });
    const w = (await h.call('getWithdrawRecord', alice)) as { message: { datas: { list: Json[] } } };
    assert.deepEqual(
      [w.message.datas.list[0]?.status, w.message.datas.list[0]?.fees, w.message.datas.list[0]?.itransfer],
      [2, 0, 1],
    );
    const bob = await h.key(bobId);
    const d = (await h.call('getChargeRecord', bob, { currency: 'usdt' })) as {
      message: { datas: { list: Json[]; total: number } };
    };
    assert.equal(d.message.datas.total, 1);
    assert.deepEqual(
      [
        d.message.datas.list[0]?.itransfer,
        d.message.datas.list[0]?.status,
        d.message.datas.list[0]?.amount,
        d.message.datas.list[0]?.description,
      ],
      [1, 2, '250.000000', 'Internal transfer'],
    );
  });

  test('withdraw: bad input is refused with its code before the password is even checked', async () => {
    const { h, alice } = await funded();
    const cases: [Record<string, string>, number, RegExp][] = [
      [withdrawParams({ currency: '' }), 3005, /currency is required/],
      [withdrawParams({ currency: 'nope' }), 3005, /unknown coin 'nope'/],
      [withdrawParams({ amount: '' }), 3005, /amount is required/],
      [
        withdrawParams({ amount: '-1' }),
        3003,
        /amount '-1' must be a positive decimal with at most 6 decimals/,
      ],
      [withdrawParams({ amount: '0' }), 3003, /positive/],
      [withdrawParams({ amount: '1e-9' }), 3003, /decimal/],
      [withdrawParams({ amount: '10.1234567' }), 3003, /6 decimals/],
      [withdrawParams({ fees: 'one' }), 3005, /fees 'one' must be a decimal/],
      [withdrawParams({ receiveAddr: '' }), 3005, /receiveAddr is required/],
      [withdrawParams({ receiveAddr: 'T'.repeat(201) }), 3005, /longer than 200/],
      [withdrawParams({ safePwd: '' }), 3005, /safePwd is required/],
      [withdrawParams({ itransfer: '2' }), 3005, /itransfer '2' must be one of 0, 1/],
      [
        withdrawParams({ receiveAddr: `T${'9'.repeat(33)}` }),
        1001,
        /^提币地址有误.*not in this account's usdt withdrawal book/,
      ],
      [withdrawParams({ receiveAddr: `T${'2'.repeat(33)}` }), 1001, /not verified yet/],
      [withdrawParams({ fees: '15' }), 3005, /fees must be 1 usdt, the TRC20 withdrawal fee/],
      [withdrawParams({ amount: '9.99' }), 3003, /smallest TRC20 withdrawal is 10 usdt/],
      [withdrawParams({ amount: '60000' }), 2009, /insufficient/],
      [withdrawParams({ currency: 'btc' }), 1001, /not in this account's btc withdrawal book/],
    ];
    for (const [params, code, message] of cases) {
      await refused(
        h,
        alice,
        'withdraw',
        { ...params, safePwd: params.safePwd === '' ? '' : 'wrong-password' },
        code,
        message,
      );
    }
    assert.equal(h.venue.engine.funds.fundPassword(1)?.failures.length, 0, 'no password attempt was spent');
  });

  test('a frozen account (issue 16): withdraw answers 4001 before the password is checked; reads work', async () => {
    const { h, alice, aliceId } = await funded();
    await h.venue.must({ type: 'SetUserStatus', userId: aliceId, status: 'frozen' });
    const before = h.stateText();
    const body = (await h.call('withdraw', alice, withdrawParams({ safePwd: 'wrong-password' }))) as Json;
    assert.equal(body.code, 4001);
    assert.match(String(body.message), /account frozen by the operator/);
    assert.equal(h.stateText(), before);
    assert.equal(
      h.venue.engine.funds.fundPassword(aliceId)?.failures.length,
      0,
      'no password attempt was spent',
    );
    assert.ok('result' in ((await h.call('getAccountInfo', alice, {})) as Json), 'the account is read');
    await h.venue.must({ type: 'SetUserStatus', userId: aliceId, status: 'active' });
    assert.equal(((await h.call('withdraw', alice, withdrawParams())) as Json).code, 1000);
  });

  test('fund password: a wrong one is 1005 and counts; the fifth in 24 hours locks withdrawals (1004) for 24 hours', async () => {
    const { h, alice, aliceId } = await funded();
    for (let left = 4; left >= 1; left--) {
      const body = (await h.call('withdraw', alice, withdrawParams({ safePwd: 'guess' }))) as Json;
      assert.deepEqual(body, {
        code: 1005,
        message: `fund password wrong: ${left} more wrong within 24 hours lock withdrawals`,
      });
    }
    const locking = (await h.call('withdraw', alice, withdrawParams({ safePwd: 'guess' }))) as Json;
    assert.equal(locking.code, 1004);
    assert.match(
      String(locking.message),
      /^您的资金安全密码已经被锁定，请等待24个小时后会自动解锁。 \(locked until /,
    );
    const submitted = h.venue.submitted;
    for (const safePwd of ['secret1', 'guess']) {
      assert.equal(((await h.call('withdraw', alice, withdrawParams({ safePwd }))) as Json).code, 1004);
    }
    assert.equal(h.venue.submitted, submitted, 'nothing is journaled while locked');
    assert.deepEqual(h.venue.engine.balance(aliceId, 'usdt'), { available: 50_000_000_000, frozen: 0 });
    h.venue.time += 24 * 3_600_000;
    assert.equal(((await h.call('withdraw', alice, withdrawParams())) as Json).code, 1000);
  });

  test('concurrent guesses: no more than five are ever checked, and the right one beyond them answers as a wrong one', async () => {
    const { h, alice, aliceId } = await funded();
    const log: Command[] = [];
    const submit = h.venue.submit.bind(h.venue);
    h.venue.submit = (command: Command) => (log.push(command), submit(command));
    const guesses = Array.from({ length: 30 }, (_, i) => (i === 12 ? 'secret1' : `guess${i}`));
    const bodies = (await Promise.all(
      guesses.map((safePwd) => h.call('withdraw', alice, withdrawParams({ safePwd }))),
    )) as Json[];
    // The right password came too late: it was never looked at, and its answer is a wrong one's.
    assert.equal(bodies[12]?.code, 1004);
    assert.deepEqual(bodies[12], bodies[13]);
    const checked = log.filter(
      (c) => c.type === 'RecordFundPasswordFailure' && (c.attempt === 'right' || c.attempt === 'wrong'),
    );
    assert.equal(checked.length, 5, 'five attempts were checked, no more');
    assert.equal(bodies.filter((b) => b.code === 1005).length, 4);
    assert.equal(bodies.filter((b) => b.code === 1004).length, 26);
    assert.equal(log.filter((c) => c.type === 'RequestWithdrawal').length, 0);
    assert.deepEqual(h.venue.engine.balance(aliceId, 'usdt'), { available: 50_000_000_000, frozen: 0 });
    assert.ok((h.venue.engine.funds.fundPassword(aliceId)?.lockedUntil ?? 0) > h.venue.time, 'locked');
  });

  test('concurrent guesses with the right one among the first five: it withdraws; the wrong ones count', async () => {
    const { h, alice, aliceId } = await funded();
    const guesses = Array.from({ length: 12 }, (_, i) => (i === 2 ? 'secret1' : `guess${i}`));
    const bodies = (await Promise.all(
      guesses.map((safePwd) => h.call('withdraw', alice, withdrawParams({ safePwd }))),
    )) as Json[];
    assert.equal(bodies[2]?.code, 1000);
    assert.equal(bodies.filter((b) => b.code === 1005).length, 4);
    assert.equal(bodies.filter((b) => b.code === 1004).length, 7);
    const password = h.venue.engine.funds.fundPassword(aliceId);
    assert.equal(password?.failures.length, 4);
    assert.deepEqual(password?.pending, []);
    assert.equal(password?.lockedUntil, 0, 'four wrong do not lock');
    assert.equal(((await h.call('withdraw', alice, withdrawParams())) as Json).code, 1000);
  });

  test('cancelWithdraw: the owner cancels before sending, with the fund password; its funds come back', async () => {
    const { h, alice, aliceId, bobId } = await funded();
    await h.call('withdraw', alice, withdrawParams({ amount: '20000' })); // waits for the operator
    await h.call('withdraw', alice, withdrawParams()); // approved at once
    const bobKey = await h.key(bobId);
    await refused(
      h,
      bobKey,
      'cancelWithdraw',
      { downloadId: '1', safePwd: 'secret1' },
      3005,
      /no withdrawal '1' of this account/,
    );
    await refused(
      h,
      alice,
      'cancelWithdraw',
      { downloadId: 'abc', safePwd: 'secret1' },
      3005,
      /no withdrawal 'abc'/,
    );
    await refused(h, alice, 'cancelWithdraw', { downloadId: '1' }, 3005, /safePwd is required/);
    await refused(
      h,
      alice,
      'cancelWithdraw',
      { downloadId: '1', safePwd: 'secret1', currency: 'btc' },
      3005,
      /is of usdt, not btc/,
    );
    await h.venue.must({ type: 'SendWithdrawal', withdrawalId: '2' });
    await refused(
      h,
      alice,
      'cancelWithdraw',
      { downloadId: '2', safePwd: 'secret1' },
      3005,
      /sending: it can no longer be cancelled/,
    );
    const wrong = (await h.call('cancelWithdraw', alice, { downloadId: '1', safePwd: 'nope!!' })) as Json;
    assert.equal(wrong.code, 1005);
    assert.deepEqual(
      await h.call('cancelWithdraw', alice, { downloadId: '1', safePwd: 'secret1', currency: 'USDT' }),
      {
        code: 1000,
        message: 'success',
      },
    );
    assert.equal(h.venue.engine.funds.withdrawal('1')?.state, 'cancelled');
    assert.deepEqual(h.venue.engine.balance(aliceId, 'usdt'), {
      available: 49_899_000_000,
      frozen: 101_000_000,
    });
    // The release is a bill of change 0 (the total did not move), typed and remarked for the withdrawal.
    const bills = (await h.call('getSpotBills', alice, { currency: 'usdt' })) as Json;
    const release = (bills.result as Json[]).find((b) => b.typeDesc === 'withdrawal cancelled');
    assert.deepEqual(release && [release.changeAmount, release.remark, release.total], [
      '+0.000000 USDT',
      'withdrawal 1 cancelled: its amount and fee are available again',
      '50000.000000',
    ]);
    await refused(
      h,
      alice,
      'cancelWithdraw',
      { downloadId: '1', safePwd: 'secret1' },
      3005,
      /has ended \(cancelled\)/,
    );
  });

  test('records: deposits as the reference shows them, paging with total; bad paging refused', async () => {
    const { h, alice } = await funded();
    await h.venue.must({
      type: 'ReportDeposit',
      coin: 'xwc',
      chain: 'XWC',
      txHash: 'abcdef0123456789',
      output: 0,
      address: 'bourse.xwc',
      memo: '100001',
      amount: 150_000_000,
      confirmations: 1,
      failed: false,
    });
    const all = (await h.call('getChargeRecord', alice)) as {
      message: { datas: { list: Json[]; total: number } };
    };
    assert.equal(all.message.datas.total, 2);
    assert.deepEqual(all.message.datas.list[0], {
      id: all.message.datas.list[0]?.id,
      address: 'bourse.xwc_100001',
      amount: '1.50000000',
      confirmTimes: 1,
      currency: 'XWC',
      description: 'Confirming (1/3)',
      hash: 'abcdef0123456789',
      itransfer: 0,
      status: 0,
      submit_time: new Date(h.venue.time).toISOString().slice(0, 19).replace('T', ' '),
    });
    assert.deepEqual(
      [
        all.message.datas.list[1]?.status,
        all.message.datas.list[1]?.confirmTimes,
        all.message.datas.list[1]?.description,
      ],
      [2, 12, 'Successfully Confirm'],
    );
    const page2 = (await h.call('getChargeRecord', alice, { pageIndex: '2', pageSize: '1' })) as {
      message: { datas: { list: Json[]; pageIndex: number; pageSize: number; total: number } };
    };
    assert.deepEqual(
      [
        page2.message.datas.list.length,
        page2.message.datas.pageIndex,
        page2.message.datas.pageSize,
        page2.message.datas.total,
      ],
      [1, 2, 1, 2],
    );
    for (const method of ['getChargeRecord', 'getWithdrawRecord']) {
      await refused(
        h,
        alice,
        method,
        { pageSize: '0' },
        3005,
        /pageSize '0' must be an integer from 1 to 100/,
      );
      await refused(h, alice, method, { pageSize: '101' }, 3005, /1 to 100/);
      await refused(h, alice, method, { pageIndex: '0' }, 3005, /pageIndex/);
      await refused(h, alice, method, { pageIndex: 'x' }, 3005, /pageIndex/);
      await refused(h, alice, method, { currency: 'hsr' }, 3005, /retired; use 'hc'/);
    }
    assert.ok(T0 > 0);
  });
});
