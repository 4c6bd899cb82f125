import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { hashFundPassword } from '../../auth/fund-password.ts';
import { MARGIN_ENDPOINTS } from './margin.ts';
import {
  ALL_PERMISSIONS,
  SignedApiHarness,
  type Credentials,
} from '../../../../test/fixtures/signed-venue.ts';

type Json = Record<string, unknown>;

async function venue(): Promise<{ h: SignedApiHarness; alice: Credentials; aliceId: number }> {
  const h = new SignedApiHarness();
  const aliceId = await h.venue.fund('alice', 'usdt', '10000');
  await h.venue.fund('alice', 'btc', '1');
  return { h, alice: await h.key(aliceId), aliceId };
}

/** Calls with bad input: the code, the message, nothing changed and nothing journaled. */
async function refusedAtEdge(
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
  assert.equal(h.stateText(), before, 'state changed');
  assert.equal(h.venue.submitted, submitted, 'a command was submitted');
}

/** A good request of every margin endpoint. */
const GOOD: Readonly<Record<string, Record<string, string>>> = {
  transferInLever: { coin: 'USDT', marketName: 'BTC/USDT', amount: '100' },
  transferOutLever: { coin: 'usdt', marketName: 'btcusdt', amount: '100' },
  transferInCross: { coin: 'USDT', amount: '100' },
  transferOutCross: { coin: 'usdt', amount: '100' },
  loan: { coin: 'usdt', amount: '100', interestRateOfDay: '0.05', repaymentDay: '10', isLoop: '1' },
  cancelLoan: { loanId: '1' },
  changeLoop: { loanId: '1', isLoop: '0' },
  changeInvestMark: { loanRecordId: '1', investMark: '1' },
  borrow: { coin: 'USDT', marketName: 'BTC/USDT', amount: '100' },
  autoBorrow: {
    coin: 'usdt',
    marketName: 'btcusdt',
    amount: '100',
    interestRateOfDay: '0.1',
    repaymentDay: '30',
  },
  doCrossLoan: { coin: 'USDT', amount: '100' },
  repay: { loanRecordId: '1', repayType: '0' },
  doAllRepay: { marketName: 'btc_usdt', coin: 'usdt' },
  doCrossRepay: { coin: 'usdt', repayAmount: '1' },
  setExpressState: { marketName: 'btcusdt', state: '1' },
  setRepayState: { acctType: '2', state: 'true' },
};

describe('margin endpoints at the edge', () => {
  test('every margin endpoint is listed here and needs leverPerm (1012, nothing journaled)', async () => {
    const { h, aliceId } = await venue();
    const noLever = await h.key(aliceId, { ...ALL_PERMISSIONS, lever: false });
    assert.deepEqual(
      MARGIN_ENDPOINTS.map((e) => e.method).sort(),
      Object.keys(GOOD).sort(),
      'GOOD lists every margin endpoint',
    );
    for (const e of MARGIN_ENDPOINTS) {
      assert.equal(e.permission, 'lever', e.method);
      await refusedAtEdge(h, noLever, e.method, GOOD[e.method] ?? {}, 1012, /lacks leverPerm/);
    }
  });

  test('a margin order needs leverPerm besides entrustPerm; a spot order does not', async () => {
    const { h, aliceId } = await venue();
    const trader = await h.key(aliceId, { ...ALL_PERMISSIONS, lever: false });
    const order = { currency: 'btc_usdt', tradeType: '1', price: '30000', amount: '0.01' };
    for (const acctType of ['1', '2']) {
      await refusedAtEdge(
        h,
        trader,
        'order',
        { ...order, acctType },
        1012,
        /lacks leverPerm, which a margin order/,
      );
      await refusedAtEdge(
        h,
        trader,
        'orderMoreV2',
        { market: 'btc_usdt', tradeParams: '[[30000,0.01]]', tradeType: '1', acctType },
        1012,
        /leverPerm/,
      );
    }
    const body = (await h.call('order', trader, { ...order, acctType: '0' })) as Json;
    assert.equal(body.code, 1000, JSON.stringify(body));
  });

  test('bad input: the interface codes, nothing journaled', async () => {
    const { h, alice } = await venue();
    const cases: [string, Record<string, string>, number, RegExp][] = [
      // marketName forms
      [
        'transferInLever',
        { ...GOOD.transferInLever, marketName: 'BTC-USDT' },
        3005,
        /unknown marketName 'BTC-USDT'/,
      ],
      ['transferInLever', { ...GOOD.transferInLever, marketName: 'doge/usdt' }, 3005, /unknown marketName/],
      ['borrow', { ...GOOD.borrow, marketName: '' }, 3005, /marketName is required/],
      ['borrow', { ...GOOD.borrow, coin: 'eth' }, 3005, /eth is not a coin of btc_usdt/],
      ['transferInCross', { ...GOOD.transferInCross, coin: 'DOGE' }, 3005, /unknown coin 'DOGE'/],
      // amounts
      [
        'transferInLever',
        { ...GOOD.transferInLever, amount: '0' },
        3003,
        /amount '0' must be a positive decimal/,
      ],
      ['transferInCross', { ...GOOD.transferInCross, amount: '0.0000001' }, 3003, /at most 6 decimals/],
      ['transferOutCross', { ...GOOD.transferOutCross, amount: '99999999999999999999' }, 3003, /amount/],
      ['doCrossLoan', { ...GOOD.doCrossLoan, amount: '0.001' }, 3003, /below the minimum 0.01 usdt/],
      ['doCrossRepay', { ...GOOD.doCrossRepay, repayAmount: '-1' }, 3003, /repayAmount '-1'/],
      // lending terms and rates
      [
        'loan',
        { ...GOOD.loan, repaymentDay: '15' },
        3005,
        /repaymentDay '15' must be one of 10, 20, 30 days/,
      ],
      ['loan', { ...GOOD.loan, repaymentDay: '' }, 3005, /repaymentDay is required/],
      [
        'loan',
        { ...GOOD.loan, interestRateOfDay: '0.3' },
        3005,
        /interestRateOfDay 0.3 % is outside 0.05..0.2 %/,
      ],
      ['loan', { ...GOOD.loan, interestRateOfDay: '0.01' }, 3005, /outside/],
      ['loan', { ...GOOD.loan, interestRateOfDay: '5%' }, 3005, /percent per day with at most 4 decimals/],
      ['loan', { ...GOOD.loan, isLoop: '2' }, 3005, /isLoop '2' must be 1 or 0/],
      ['autoBorrow', { ...GOOD.autoBorrow, repaymentDay: '7' }, 3005, /repaymentDay '7'/],
      ['autoBorrow', { ...GOOD.autoBorrow, interestRateOfDay: '0.25' }, 3005, /outside/],
      // ids and flags
      ['cancelLoan', { loanId: 'abc' }, 3005, /loanId 'abc' must be a positive integer/],
      ['cancelLoan', {}, 3005, /loanId is required/],
      ['changeLoop', { loanId: '1' }, 3005, /isLoop is required/],
      ['changeInvestMark', { loanRecordId: '0', investMark: '1' }, 3005, /loanRecordId '0'/],
      ['repay', { loanRecordId: '1', repayType: '3' }, 3005, /repayType '3' must be one of 0, 1/],
      ['repay', { loanRecordId: '1', repayAmount: '5' }, 3005, /no loan record 1 of this account/],
      ['setExpressState', { marketName: 'btcusdt', state: 'on' }, 3005, /state 'on' must be 1 or 0/],
      ['setExpressState', { state: '1' }, 3005, /marketName is required/],
      ['setRepayState', { acctType: '0', state: '1' }, 3005, /acctType '0' must be one of 1, 2/],
    ];
    for (const [method, params, code, message] of cases)
      await refusedAtEdge(h, alice, method, params, code, message);
    assert.deepEqual(h.logged, []);
  });

  test('the fund password applies where it is set: safePwd required and checked on borrows', async () => {
    const { h, alice, aliceId } = await venue();
    // Without a fund password no safePwd is asked: the request reaches the engine.
    const submitted = h.venue.submitted;
    await h.call('doCrossLoan', alice, GOOD.doCrossLoan ?? {});
    assert.equal(h.venue.submitted, submitted + 1);
    await h.venue.must({ type: 'SetFundPassword', userId: aliceId, hash: await hashFundPassword('secret1') });
    await refusedAtEdge(h, alice, 'doCrossLoan', GOOD.doCrossLoan ?? {}, 1005, /safePwd is required/);
    await refusedAtEdge(h, alice, 'borrow', GOOD.borrow ?? {}, 1005, /safePwd is required/);
    // A frozen account: 4001 before the password is looked at (no attempt spent).
    await h.venue.must({ type: 'SetUserStatus', userId: aliceId, status: 'frozen' });
    await refusedAtEdge(h, alice, 'borrow', { ...GOOD.borrow, safePwd: 'wrong12' }, 4001, /frozen/);
    await h.venue.must({ type: 'SetUserStatus', userId: aliceId, status: 'active' });
    const wrong = (await h.call('borrow', alice, { ...GOOD.borrow, safePwd: 'wrong12' })) as Json;
    assert.equal(wrong.code, 1005, JSON.stringify(wrong));
    assert.match(String(wrong.message), /fund password wrong/);
  });
});
