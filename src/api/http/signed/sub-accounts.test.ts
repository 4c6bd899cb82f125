import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { hmacMd5Hex, secretHash } from '../../auth/signature.ts';
import type { RequestParam } from '../types.ts';
import {
  ALL_PERMISSIONS,
  SignedApiHarness,
  type Credentials,
} from '../../../../test/fixtures/signed-venue.ts';

type Json = Record<string, unknown>;

const MANAGER = { ...ALL_PERMISSIONS, subUser: true };

/** Calls with bad input and checks the code, the message, and that nothing changed. */
async function refused(
  h: SignedApiHarness,
  creds: Credentials,
  method: string,
  params: Record<string, string>,
  code: number,
  message: RegExp,
): Promise<void> {
  const before = h.stateText();
  const body = (await h.call(method, creds, params)) as Json;
  assert.equal(body.code, code, `${method} ${JSON.stringify(params)} → ${JSON.stringify(body)}`);
  assert.match(String(body.message), message, `${method} ${JSON.stringify(params)}`);
  assert.equal(h.stateText(), before, 'state changed');
}

async function ok(
  h: SignedApiHarness,
  creds: Credentials,
  method: string,
  params: Record<string, string> = {},
): Promise<Json> {
  const body = (await h.call(method, creds, params)) as Json;
  // getAccountInfo answers a bare object (no code), as the real API did.
  assert.equal(body.code ?? 1000, 1000, `${method} ${JSON.stringify(params)} → ${JSON.stringify(body)}`);
  return body;
}

/**
 * ZB's Python SDK's addSubUser: the parameters in the order it sends them (accesskey, memo,
 * password, method, subUserName), signed over that order, not sorted.
 */
function pythonAddSubUser(h: SignedApiHarness, creds: Credentials, name: string, memo: string) {
  const pairs: [string, string][] = [
    ['accesskey', creds.accessKey],
    ['memo', memo],
    ['password', 'sub-pass1'],
    ['method', 'addSubUser'],
    ['subUserName', name],
  ];
  const sign = hmacMd5Hex(secretHash(creds.secret), pairs.map(([k, v]) => `${k}=${v}`).join('&'));
  return h.request('addSubUser', creds, Object.fromEntries(pairs), { sign });
}

/** alice (a main user with a managing key, 1000 usdt) with sub-account alice-a; bob with bob-b. */
async function families(): Promise<{
  h: SignedApiHarness;
  alice: Credentials;
  bob: Credentials;
  aliceId: number;
  subId: number;
}> {
  const h = new SignedApiHarness();
  const aliceId = await h.venue.fund('alice', 'usdt', '1000');
  const bobId = await h.venue.fund('bob', 'usdt', '10');
  const alice = await h.key(aliceId, MANAGER);
  const bob = await h.key(bobId, MANAGER);
  await ok(h, alice, 'addSubUser', { subUserName: 'alice-a', password: 'sub-pass1', memo: 'desk A' });
  await ok(h, bob, 'addSubUser', { subUserName: 'bob-b', password: 'sub-pass1' });
  return { h, alice, bob, aliceId, subId: h.venue.engine.userId('alice-a') as number };
}

describe('sub-account endpoints', () => {
  test("addSubUser signed as ZB's Python SDK signs it (parameters as sent); getSubUserList lists it", async () => {
    const h = new SignedApiHarness();
    const aliceId = await h.venue.user('alice');
    const alice = await h.key(aliceId, MANAGER);
    const reply = await h.send(pythonAddSubUser(h, alice, 'alice-py', 'from python'));
    assert.deepEqual('json' in reply && reply.json, { code: 1000, message: 'success', userName: 'alice-py' });
    const subId = h.venue.engine.userId('alice-py') as number;
    assert.equal(h.venue.engine.subAccounts.mainOf(subId), aliceId);
    // The sub-account's password is its fund password.
    assert.match(h.venue.engine.funds.fundPassword(subId)?.hash ?? '', /^scrypt\$/);
    const list = await ok(h, alice, 'getSubUserList');
    assert.deepEqual(list.message, {
      des: 'success',
      isSuc: true,
      datas: [
        {
          userName: 'alice-py',
          memo: 'from python',
          created: h.venue.engine.userRecord(subId)?.created,
          isFrozen: false,
        },
      ],
    });
    // The same request with a wrong sign is refused, and changes nothing.
    const before = h.stateText();
    const forged = pythonAddSubUser(h, alice, 'alice-py2', 'x');
    const bad = forged.params.map((p): RequestParam =>
      p.name === 'sign' ? { ...p, value: '0'.repeat(32), raw: `sign=${'0'.repeat(32)}` } : p,
    );
    const body = await h.send({ ...forged, params: bad });
    assert.equal('json' in body && (body.json as Json).code, 1003);
    assert.equal(h.stateText(), before);
  });

  test("getAccountInfo's subUserPerm: a main user's key granted subuser; never a sub-account's key", async () => {
    const { h, alice, aliceId } = await families();
    assert.equal((await ok(h, alice, 'getAccountInfo')).subUserPerm, true);
    const plain = await h.key(aliceId);
    assert.equal((await ok(h, plain, 'getAccountInfo')).subUserPerm, false);
    const made = await ok(h, alice, 'createSubUserKey', {
      subUserName: 'alice-a',
      assetPerm: '1',
      entrustPerm: 'true',
    });
    const sub = { accessKey: made.accessKey as string, secret: made.secretKey as string };
    const info = await ok(h, sub, 'getAccountInfo');
    assert.equal(info.subUserPerm, false);
    assert.equal(info.assetPerm, true);
    assert.equal(info.entrustPerm, true);
    assert.equal(info.moneyPerm, false);
    assert.equal(info.leverPerm, false);
    assert.equal((info.result as { base: Json }).base.username, 'alice-a');
    // Without the permission: 1012, nothing changes.
    await refused(
      h,
      plain,
      'addSubUser',
      { subUserName: 'zz-sub', password: 'sub-pass1' },
      1012,
      /subUserPerm/,
    );
    await refused(h, plain, 'getSubUserList', {}, 1012, /subUserPerm/);
    await refused(
      h,
      sub,
      'doTransferFunds',
      { amount: '1', currency: 'usdt', fromUserName: 'alice-a', toUserName: 'alice' },
      1012,
      /subUserPerm/,
    );
  });

  test("doTransferFunds moves funds main ↔ sub and sub ↔ sub with a bill on both sides; a sub-account's key trades its own account only", async () => {
    const { h, alice, aliceId, subId } = await families();
    await ok(h, alice, 'addSubUser', { subUserName: 'alice-b', password: 'sub-pass1' });
    const sub2 = h.venue.engine.userId('alice-b') as number;
    await ok(h, alice, 'doTransferFunds', {
      amount: '300',
      currency: 'USDT',
      fromUserName: 'alice',
      toUserName: 'alice-a',
    });
    await ok(h, alice, 'doTransferFunds', {
      amount: '1e2',
      currency: 'usdt',
      fromUserName: 'alice-a',
      toUserName: 'alice-b',
    });
    await ok(h, alice, 'doTransferFunds', {
      amount: '0.5',
      currency: 'usdt',
      fromUserName: 'alice-b',
      toUserName: 'alice',
    });
    const usdt = (id: number) => h.venue.engine.balance(id, 'usdt')?.available;
    assert.equal(usdt(aliceId), 700_500_000);
    assert.equal(usdt(subId), 200_000_000);
    assert.equal(usdt(sub2), 99_500_000);
    const bills = async (creds: Credentials) =>
      ((await ok(h, creds, 'getSpotBills', { currency: 'usdt' })).result as Json[]).map((b) => [
        b.typeDesc,
        b.changeAmount,
        b.remark,
      ]);
    assert.deepEqual((await bills(alice)).slice(0, 2), [
      ['sub-account transfer in', '+0.500000 USDT', 'sub-account transfer from alice-b'],
      ['sub-account transfer out', '-300.000000 USDT', 'sub-account transfer to alice-a'],
    ]);
    const made = await ok(h, alice, 'createSubUserKey', {
      subUserName: 'alice-a',
      assetPerm: '1',
      entrustPerm: '1',
    });
    const sub = { accessKey: made.accessKey as string, secret: made.secretKey as string };
    assert.deepEqual(await bills(sub), [
      ['sub-account transfer out', '-100.000000 USDT', 'sub-account transfer to alice-b'],
      ['sub-account transfer in', '+300.000000 USDT', 'sub-account transfer from alice'],
    ]);
    // The sub-account's key places an order in the sub-account, and only there.
    await ok(h, sub, 'order', { currency: 'btc_usdt', tradeType: '1', price: '1000', amount: '0.1' });
    assert.equal(h.venue.engine.balance(subId, 'usdt')?.frozen, 100_000_000);
    assert.equal(h.venue.engine.openOrders(subId).length, 1);
    assert.equal(h.venue.engine.openOrders(aliceId).length, 0);
    await refused(
      h,
      sub,
      'order',
      { currency: 'btc_usdt', tradeType: '1', price: '1000', amount: '1.01' },
      2009,
      /insufficient/,
    );
  });

  test('doTransferFunds and createSubUserKey bad input: the interface code, nothing changed', async () => {
    const { h, alice, bob } = await families();
    const t = { amount: '1', currency: 'usdt', fromUserName: 'alice', toUserName: 'alice-a' };
    const cases: [Record<string, string>, number, RegExp][] = [
      [
        { ...t, toUserName: 'nobody' },
        3004,
        /toUserName: 'nobody' is not this user or one of this user's sub-accounts/,
      ],
      [{ ...t, toUserName: 'bob-b' }, 3004, /toUserName: 'bob-b' is not/],
      [{ ...t, toUserName: 'bob' }, 3004, /is not/],
      [{ ...t, fromUserName: 'bob-b' }, 3004, /fromUserName: 'bob-b'/],
      [{ ...t, toUserName: 'alice' }, 3005, /must differ/],
      [
        { ...t, amount: '1000.000001' },
        2009,
        /alice has 1000 usdt available, the transfer is 1000.000001 usdt/,
      ],
      [{ ...t, fromUserName: 'alice-a', toUserName: 'alice' }, 2009, /alice-a has 0 usdt/],
      [{ ...t, amount: '0' }, 3003, /amount '0' must be a positive decimal/],
      [{ ...t, amount: '-1' }, 3003, /amount/],
      [{ ...t, amount: '0.0000001' }, 3003, /at most 6 decimals/],
      [{ ...t, amount: 'abc' }, 3003, /amount/],
      [{ ...t, currency: 'nope' }, 3005, /unknown coin/],
      [{ ...t, currency: '' }, 3005, /currency is required/],
      [{ ...t, toUserName: '' }, 3005, /toUserName is required/],
    ];
    for (const [params, code, message] of cases)
      await refused(h, alice, 'doTransferFunds', params, code, message);
    // Another main user's sub-account is nobody to bob's family either way.
    await refused(
      h,
      bob,
      'doTransferFunds',
      { ...t, fromUserName: 'bob', toUserName: 'alice-a' },
      3004,
      /is not/,
    );
    const k = { subUserName: 'alice-a', assetPerm: '1' };
    await refused(
      h,
      alice,
      'createSubUserKey',
      { ...k, subUserName: 'bob-b' },
      3004,
      /subUserName: 'bob-b' is not one of this user's sub-accounts/,
    );
    await refused(h, alice, 'createSubUserKey', { ...k, subUserName: 'alice' }, 3004, /is not one of/);
    await refused(h, alice, 'createSubUserKey', { subUserName: 'alice-a' }, 3005, /grant at least one/);
    await refused(
      h,
      alice,
      'createSubUserKey',
      { ...k, moneyPerm: 'yes' },
      3005,
      /moneyPerm 'yes' must be 1 or 0/,
    );
    const a = { subUserName: 'alice-c', password: 'sub-pass1' };
    await refused(h, alice, 'addSubUser', { ...a, subUserName: 'ALICE-A' }, 3005, /is taken/);
    await refused(h, alice, 'addSubUser', { ...a, subUserName: 'bad name' }, 3005, /user name must be/);
    await refused(h, alice, 'addSubUser', { ...a, password: 'short' }, 3005, /password must be 6 to 64/);
    await refused(h, alice, 'addSubUser', { ...a, memo: 'm'.repeat(65) }, 3005, /memo must be at most 64/);
    await refused(h, alice, 'addSubUser', { subUserName: 'alice-c' }, 3005, /password is required/);
  });

  test("a sub-account's key manages no sub-accounts; freezing the main user freezes the sub-accounts' orders, withdrawals and transfers", async () => {
    const { h, alice, aliceId } = await families();
    await ok(h, alice, 'doTransferFunds', {
      amount: '100',
      currency: 'usdt',
      fromUserName: 'alice',
      toUserName: 'alice-a',
    });
    // Even granted subuser by the operator, a sub-account's key is refused (a tree has one level).
    const subKey = await h.key(h.venue.engine.userId('alice-a') as number, MANAGER);
    assert.equal((await ok(h, subKey, 'getAccountInfo')).subUserPerm, false);
    await refused(
      h,
      subKey,
      'addSubUser',
      { subUserName: 'deeper', password: 'sub-pass1' },
      3005,
      /a sub-account cannot manage/,
    );
    await refused(h, subKey, 'getSubUserList', {}, 3005, /a sub-account cannot manage/);
    await h.venue.must({ type: 'SetUserStatus', userId: aliceId, status: 'frozen' });
    const order = { currency: 'btc_usdt', tradeType: '1', price: '1000', amount: '0.01' };
    assert.equal(((await h.call('order', subKey, order)) as Json).code, 4001);
    // Its withdrawals too, before its fund password is even looked at (no attempt counted).
    await refused(
      h,
      subKey,
      'withdraw',
      { currency: 'usdt', amount: '10', fees: '1', receiveAddr: `T${'1'.repeat(33)}`, safePwd: 'sub-pass1' },
      4001,
      /frozen/,
    );
    await refused(
      h,
      alice,
      'doTransferFunds',
      { amount: '1', currency: 'usdt', fromUserName: 'alice-a', toUserName: 'alice' },
      4001,
      /frozen/,
    );
    const list = await ok(h, alice, 'getSubUserList');
    assert.equal(((list.message as Json).datas as Json[])[0]?.isFrozen, true);
    await h.venue.must({ type: 'SetUserStatus', userId: aliceId, status: 'active' });
    await ok(h, subKey, 'order', order);
  });
});
