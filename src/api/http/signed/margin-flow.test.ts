import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { SignedApiHarness, type Credentials } from '../../../../test/fixtures/signed-venue.ts';

type Json = Record<string, unknown>;

async function ok(
  h: SignedApiHarness,
  creds: Credentials,
  method: string,
  params: Record<string, string>,
): Promise<Json> {
  const body = (await h.call(method, creds, params)) as Json;
  assert.equal(body.code, method === 'getLoans' ? '1000' : 1000, `${method} → ${JSON.stringify(body)}`);
  return body;
}

/** Refused by the engine (journaled), with the code and message, and nothing changed. */
async function refusedByEngine(
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
  assert.match(String(body.message), message);
  assert.equal(h.stateText(), before, 'state changed');
}

/** A venue whose lending pool offers 100,000 USDT at 0.05 %/day for 10 days; alice has 10,000 USDT. */
async function venue(): Promise<{
  h: SignedApiHarness;
  alice: Credentials;
  aliceId: number;
  bob: Credentials;
}> {
  const h = new SignedApiHarness();
  await h.venue.must({
    type: 'FundLendingPool',
    fundingId: 'operator:p1',
    coin: 'usdt',
    amount: 100_000_000_000,
    dailyRatePpm: 500,
    days: 10,
  });
  const aliceId = await h.venue.fund('alice', 'usdt', '10000');
  const bobId = await h.venue.fund('bob', 'btc', '10');
  return { h, alice: await h.key(aliceId), aliceId, bob: await h.key(bobId) };
}

const leverOf = (body: Json, key: string): Json | undefined =>
  ((body.message as Json).datas as { levers: Json[] }).levers.find((l) => l.key === key);

describe('margin through the signed API', () => {
  test('isolated: transfer in (ccxt BTC/USDT), borrow, lever object, records, repay, transfer out', async () => {
    const { h, alice, aliceId } = await venue();
    await ok(h, alice, 'transferInLever', { coin: 'USDT', marketName: 'BTC/USDT', amount: '1000' });
    assert.equal(h.venue.engine.balance(aliceId, 'usdt')?.available, 9_000_000_000);
    let info = await ok(h, alice, 'getLeverAssetsInfo', {});
    let lever = leverOf(info, 'btcusdt') as Json;
    assert.equal(lever.fAvailable, '1000.000000');
    assert.equal(lever.fAvailableUSD, '1000.00000000');
    assert.equal(lever.couldTransferOutFiat, '1000.000000');
    assert.equal(lever.fCanLoanIn, '4000.000000000000000');
    assert.equal(lever.riskRate, '-');
    assert.equal(lever.showName, 'BTC/USDT');
    assert.equal(typeof lever.version, 'number');

    // Beyond the limit: refused with the limit named, nothing changes.
    await refusedByEngine(
      h,
      alice,
      'borrow',
      { coin: 'USDT', marketName: 'BTC/USDT', amount: '4000.000001' },
      2009,
      /over the limit of 4000/,
    );
    await ok(h, alice, 'borrow', { coin: 'usdt', marketName: 'btcusdt', amount: '4000' });
    info = await ok(h, alice, 'getLeverAssetsInfo', {});
    lever = leverOf(info, 'btcusdt') as Json;
    assert.equal(lever.fAvailable, '5000.000000');
    assert.equal(lever.fLoanIn, '4000.000000');
    assert.equal(lever.fCanLoanIn, '0.000000000000000');
    // The first hour's interest is charged at the borrow: 4000 × 0.05 % ÷ 24 = 0.083333 USDT.
    assert.equal(lever.fOverdraft, '0.083333');
    assert.equal(lever.riskRate, '1.2499');

    const records = await ok(h, alice, 'getLoanRecords', { marketName: 'BTC/USDT' });
    const [record] = records.result as Json[];
    assert.equal((records.result as Json[]).length, 1);
    assert.equal(record?.amount, '4000.000000');
    assert.equal(record?.balanceAmount, '4000.000000');
    assert.equal(record?.marketName, 'btcusdt');
    assert.equal(record?.status, 1);
    assert.equal(record?.isIn, true);
    assert.equal(record?.outUserId, 0);

    // Transfers that would break the line are refused.
    await refusedByEngine(
      h,
      alice,
      'transferOutLever',
      { coin: 'usdt', marketName: 'btc_usdt', amount: '1' },
      2009,
      /over the limit/,
    );
    // Repay part, then the rest; repaying more than owed is refused.
    const loanRecordId = String(record?.id);
    await ok(h, alice, 'repay', { loanRecordId, repayAmount: '1000' });
    await refusedByEngine(h, alice, 'repay', { loanRecordId, repayAmount: '3500' }, 3003, /owed/);
    await ok(h, alice, 'doAllRepay', { marketName: 'BTC/USDT', coin: 'usdt' });
    const repayments = await ok(h, alice, 'getRepayments', { loanRecordId });
    const list = repayments.result as Json[];
    assert.equal(list.length, 2);
    // Interest first, then principal.
    assert.equal(list[1]?.liXi, '0.083333');
    assert.equal(list[1]?.benJin, '999.916667');
    assert.equal(list[0]?.status, 2);
    info = await ok(h, alice, 'getLeverAssetsInfo', {});
    lever = leverOf(info, 'btcusdt') as Json;
    assert.equal(lever.fLoanIn, '0.000000');
    const left = String(lever.fAvailable);
    await ok(h, alice, 'transferOutLever', { coin: 'USDT', marketName: 'BTC/USDT', amount: left });
    lever = leverOf(await ok(h, alice, 'getLeverAssetsInfo', {}), 'btcusdt') as Json;
    assert.equal(lever.fAvailable, '0.000000');

    // getLeverBills: the isolated account's own bills, newest first.
    const lever_bills = (
      await ok(h, alice, 'getLeverBills', { coin: 'USDT', marketName: 'BTC/USDT', pageSize: '50' })
    ).result as Json[];
    // Interest paid is split: 90 % to the lender (repay interest), 10 % to insurance (venue share).
    assert.deepEqual(lever_bills.map((b) => [b.typeDesc, b.changeAmount, b.marketName]).reverse(), [
      ['to margin account', '+1000.000000 USDT', 'btcusdt'],
      ['borrow', '+4000.000000 USDT', 'btcusdt'],
      ['repay interest', '-0.075000 USDT', 'btcusdt'],
      ['interest (venue share)', '-0.008333 USDT', 'btcusdt'],
      ['repay principal', '-999.916667 USDT', 'btcusdt'],
      ['repay principal', '-3000.083333 USDT', 'btcusdt'],
      ['from margin account', `-${left} USDT`, 'btcusdt'],
    ]);
    assert.match(String(lever_bills.at(-2)?.remark), /^loan record \d+$/);
    const none = (await ok(h, alice, 'getCrossBills', {})).result as Json[];
    assert.deepEqual(none, []);

    // getSpotBills shows the spot side of each transfer only, never the margin account's bills.
    const bills = (await ok(h, alice, 'getSpotBills', { currency: 'usdt', pageSize: '50' })).result as Json[];
    assert.deepEqual(
      bills.map((b) => [b.typeDesc, b.changeAmount]),
      [
        ['from margin account', `+${left} USDT`],
        ['to margin account', '-1000.000000 USDT'],
        ['deposit', '+10000.000000 USDT'],
      ],
    );
  });

  test('cross: transfer, doCrossLoan, getCrossAssets numbers, doCrossRepay, getCrossRepayRecords', async () => {
    const { h, alice } = await venue();
    await ok(h, alice, 'transferInCross', { coin: 'USDT', amount: '2000' });
    await ok(h, alice, 'doCrossLoan', { coin: 'USDT', amount: '500' });
    const assets = await ok(h, alice, 'getCrossAssets', {});
    const result = assets.result as Json;
    const usdt = (result.list as Json[]).find((x) => x.key === 'USDT') as Json;
    assert.equal(usdt.amount, 2500);
    assert.equal(usdt.loanIn, 500);
    assert.equal(usdt.freeze, 0);
    assert.equal(typeof usdt.canTransferOut, 'number');
    // The first hour's interest (500 × 0.05 % ÷ 24 = 0.010416 USDT) is owed from the borrow on.
    assert.equal(usdt.overdraft, 0.010416);
    assert.equal(result.loanIn, 500.010416);
    assert.equal(result.total, 2500);
    assert.equal(result.net, 1999.989584);
    assert.equal(result.riskRate, '4.9998');
    await ok(h, alice, 'doCrossRepay', { coin: 'usdt', repayAmount: '200' });
    const repaid = await ok(h, alice, 'getCrossRepayRecords', { coin: 'USDT' });
    const [row] = repaid.result as Json[];
    assert.equal(row?.coinName, 'USDT');
    assert.equal(typeof row?.loanRecordId, 'number');
    assert.equal(Number(row?.benJin) + Number(row?.liXi), 200);
    const crossBills = (await ok(h, alice, 'getCrossBills', { coin: 'usdt' })).result as Json[];
    assert.deepEqual(crossBills.map((b) => [b.typeDesc, b.marketName]).at(-1), ['to margin account', '']);
    assert.equal(crossBills.at(-2)?.changeAmount, '+500.000000 USDT');
  });

  test('lending: loan, getLoans cheapest first, changeLoop, cancelLoan, getFinanceRecords', async () => {
    const { h, bob, alice } = await venue();
    const bobUsdt = await h.venue.fund('bob', 'usdt', '1000');
    const offer = await ok(h, bob, 'loan', {
      coin: 'USDT',
      amount: '1000',
      interestRateOfDay: '0.06',
      repaymentDay: '20',
      isLoop: '0',
    });
    assert.match(String(offer.id), /^\d+$/);
    assert.equal(h.venue.engine.balance(bobUsdt, 'usdt')?.frozen, 1_000_000_000);
    const loans = await ok(h, alice, 'getLoans', { coin: 'USDT' });
    const result = loans.result as Json[];
    assert.equal(result[0]?.interestRateOfDay, '0.0005');
    assert.equal(result[1]?.interestRateOfDay, '0.0006');
    assert.equal(result[1]?.repaymentDay, '20');
    assert.equal(result[1]?.balance, '1000');
    await ok(h, bob, 'changeLoop', { loanId: String(offer.id), isLoop: '1' });
    // alice borrows only from offers at 0.06 % of 20 days: bob's.
    await ok(h, alice, 'transferInCross', { coin: 'USDT', amount: '1000' });
    await ok(h, alice, 'doCrossLoan', {
      coin: 'USDT',
      amount: '300',
      interestRateOfDay: '0.06',
      repaymentDay: '20',
    });
    const lent = await ok(h, bob, 'getFinanceRecords', { coin: 'usdt' });
    const [record] = lent.result as Json[];
    assert.equal(record?.amount, '300.000000');
    assert.equal(record?.isIn, false);
    assert.equal(record?.investMark, true);
    await ok(h, bob, 'changeInvestMark', { loanRecordId: String(record?.id), investMark: '0' });
    await ok(h, bob, 'cancelLoan', { loanId: String(offer.id) });
    assert.equal(h.venue.engine.balance(bobUsdt, 'usdt')?.frozen, 0);
    assert.equal(h.venue.engine.balance(bobUsdt, 'usdt')?.available, 700_000_000);
    // Another's offer or record: refused, nothing changes.
    await refusedByEngine(h, alice, 'cancelLoan', { loanId: String(offer.id) }, 3005, /offer/);
  });

  test('a margin order freezes and settles in the isolated account; express borrows what it lacks', async () => {
    const { h, alice, aliceId, bob } = await venue();
    await ok(h, alice, 'transferInLever', { coin: 'usdt', marketName: 'btcusdt', amount: '1000' });
    await ok(h, bob, 'order', { currency: 'btc_usdt', tradeType: '0', price: '30000', amount: '0.1' });
    const spotBefore = h.venue.engine.balance(aliceId, 'usdt')?.available;
    // 0.1 BTC at 30,000 is 3,000 USDT: beyond the account's 1,000 without express.
    await refusedByEngine(
      h,
      alice,
      'order',
      { currency: 'btc_usdt', tradeType: '1', price: '30000', amount: '0.1', acctType: '1' },
      2009,
      /./,
    );
    await ok(h, alice, 'order', {
      currency: 'btc_usdt',
      tradeType: '1',
      price: '30000',
      amount: '0.1',
      acctType: '1',
      enableExpress: 'true',
    });
    assert.equal(h.venue.engine.balance(aliceId, 'usdt')?.available, spotBefore, 'spot untouched');

    // The order queries take acctType: only that account's orders (absent: every account's).
    const spotId = (
      await ok(h, alice, 'order', { currency: 'btc_usdt', tradeType: '1', price: '100', amount: '0.1' })
    ).id as string;
    const marginId = (
      await ok(h, alice, 'order', {
        currency: 'btc_usdt',
        tradeType: '1',
        price: '100',
        amount: '0.1',
        acctType: '1',
        enableExpress: '1',
      })
    ).id as string;
    const ids = async (method: string, params: Record<string, string>): Promise<string[]> =>
      ((await h.call(method, alice, { currency: 'btc_usdt', ...params })) as Json[]).map((o) => String(o.id));
    assert.deepEqual(await ids('getUnfinishedOrdersIgnoreTradeType', { acctType: '1' }), [marginId]);
    assert.deepEqual(await ids('getUnfinishedOrdersIgnoreTradeType', { acctType: '0' }), [spotId]);
    assert.deepEqual(await ids('getUnfinishedOrdersIgnoreTradeType', {}), [marginId, spotId]);
    assert.equal((await ids('getOrdersIgnoreTradeType', { acctType: '1' })).length, 2);
    assert.deepEqual(await ids('getOrdersNew', { tradeType: '1', acctType: '0' }), [spotId]);
    const got = (await h.call('getOrder', alice, {
      currency: 'btc_usdt',
      id: marginId,
      acctType: '1',
    })) as Json;
    assert.equal(got.acctType, 1);
    const wrong = (await h.call('getOrder', alice, {
      currency: 'btc_usdt',
      id: marginId,
      acctType: '0',
    })) as Json;
    assert.equal(wrong.code, 3001);
    const bad = (await h.call('getOrders', alice, {
      currency: 'btc_usdt',
      tradeType: '1',
      acctType: '5',
    })) as Json;
    assert.equal(bad.code, 3005);
    const notThere = (await h.call('cancelOrder', alice, {
      currency: 'btc_usdt',
      id: marginId,
      acctType: '2',
    })) as Json;
    assert.equal(notThere.code, 3001);
    const badFlag = (await h.call('cancelOrder', alice, {
      currency: 'btc_usdt',
      id: marginId,
      enableExpress: 'maybe',
    })) as Json;
    assert.equal(badFlag.code, 3005);
    await ok(h, alice, 'cancelOrder', { currency: 'btc_usdt', id: marginId, acctType: '1' });
    const lever = leverOf(await ok(h, alice, 'getLeverAssetsInfo', {}), 'btcusdt') as Json;
    // 2,000 borrowed by the first order, 10 by the resting one (cancelled: the loan stays).
    assert.equal(lever.fLoanIn, '2010.000000');
    assert.ok(Number(lever.cAvailable) > 0.099, JSON.stringify(lever));
  });
});
