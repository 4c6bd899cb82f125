import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { LendingBook } from '../../margin/lending-book.ts';
import {
  borrowLimit,
  ratio,
  riskRateBp,
  transferOutLimit,
  unitPrice,
  unwindPrice,
  valuateIsolated,
  type CoinPosition,
} from '../../margin/lines.ts';
import { LOAN_STATUS, LoanBook } from '../../margin/loans.ts';
import { isolated, spot } from '../../margin/movement.ts';
import { DEFAULT_MARGIN_SETTINGS, defaultLendingSettings } from '../../margin/settings.ts';
import {
  crossAssets,
  formatRatio,
  getLoansAnswer,
  leverAssetsInfoAnswer,
  leverObject,
  loanOfferItem,
  loanRecord,
  parseMarginMarketName,
  repaymentItem,
  type Converter,
} from './margin-wire.ts';

// The reference's samples (zb-api-facts §7.1, §7.4, §8).
const LEVER_SAMPLE = JSON.parse(
  '{"cNetUSD":"0.00","repayLeverShow":"-","cCanLoanIn":"0.002115400000000","fNetCNY":"147.76081161","fLoanIn":"0.00","repayLevel":0,"level":1,"netConvertCNY":"147.760811613032","cFreeze":"0.00","cUnitTag":"BTC","version":1646783178609,"cAvailableUSD":"0.00","cNetCNY":"0.00","riskRate":"-","fAvailableUSD":"20.49273433","fNetUSD":"20.49273432","cShowName":"BTC","leverMultiple":"5.00","couldTransferOutFiat":"20.49273433","noticeLine":"1.13","fFreeze":"0.00","cUnitDecimal":8,"fCanLoanIn":"81.970937320000000","cAvailable":"0.00","repayLock":false,"status":1,"forbidType":0,"totalConvertCNY":"147.760811613032","cAvailableCNY":"0.00","unwindPrice":"0.00","fOverdraft":"0.00","fShowName":"USDT","statusShow":"%E6%AD%A3%E5%B8%B8","cOverdraft":"0.00","netConvertUSD":"20.49273433","cNetBtc":"0.00","loanInConvertCNY":"0.00","fAvailableCNY":"147.760811613032","key":"btcusdt","fNetBtc":"0.0005291","fUnitDecimal":8,"loanInConvertUSD":"0.00","showName":"BTC/USDT","startLine":"1.25","totalConvertUSD":"20.49273433","couldTransferOutCoin":"0.00","cEnName":"BTC","leverMultipleInterest":"3.00","fAvailable":"20.49273433","fEnName":"USDT","forceRepayLine":"1.08","cLoanIn":"0.00"}',
) as Record<string, unknown>;
const CROSS_SAMPLE = JSON.parse(
  '{"loanIn":0,"total":71.167,"riskRate":"-","net":71.167,"list":[{"fundType":2,"loanIn":0,"amount":0,"freeze":0,"overdraft":0,"key":"BTC","canTransferOut":0}]}',
) as { list: Record<string, unknown>[] } & Record<string, unknown>;
const LOANS_SAMPLE = JSON.parse(
  '{"code":"1000","message":"操作成功","result":[{"interestRateOfDay":"0.0005","repaymentDay":"30","amount":"148804.4841","balance":"148804.4841","rateOfDayShow":"0.05 %","coinName":"USDT","lowestAmount":"0.01"}]}',
) as { result: Record<string, unknown>[] } & Record<string, unknown>;

/** Each key with its JSON type, sorted. */
const shape = (o: object): string[] =>
  Object.entries(o)
    .map(([k, v]) => `${k}:${typeof v}`)
    .sort();

const MARKETS = [{ name: 'btc_usdt' }, { name: 'eth_btc' }, { name: 'ab_c' }, { name: 'a_bc' }];
const BTC = { name: 'btc', unitDecimal: 8, fundsType: 2 };
const USDT = { name: 'usdt', unitDecimal: 8, fundsType: 11 };
const PRICE = unitPrice(3_000_000, 2, 8, 8); // 30,000.00
const convert: Converter = {
  usd: (coin, units) =>
    coin === 'usdt' ? ratio(units, 100_000_000) : ratio(BigInt(units) * 30_000n, 100_000_000n),
  btc: (coin, units) => (coin === 'btc' ? ratio(units, 100_000_000) : ratio(units, 3_000_000_000_000n)),
  cnyPerUsd: ratio(72, 10),
};
const pos = (coin: string, p: Partial<CoinPosition> = {}): CoinPosition => ({
  coin,
  available: 0,
  frozen: 0,
  principal: 0,
  interest: 0,
  ...p,
});

describe('marketName', () => {
  test('BTC/USDT as ccxt sends it, btcusdt as the SDKs do, btc_usdt, any case', () => {
    for (const text of ['BTC/USDT', 'btc/usdt', 'btcusdt', 'BTCUSDT', 'btc_usdt', ' BtcUsdt ']) {
      const r = parseMarginMarketName(text, MARKETS);
      assert.equal(r.ok && r.market.name, 'btc_usdt', text);
    }
    const eth = parseMarginMarketName('ETH/BTC', MARKETS);
    assert.equal(eth.ok && eth.market.name, 'eth_btc');
  });

  test('unknown, malformed and ambiguous names are refused with UNKNOWN_MARKET', () => {
    for (const text of [
      '',
      'BTC/',
      '/USDT',
      'BTC/USDT/X',
      'btc__usdt',
      'btc_',
      'usdtbtc',
      'x'.repeat(41),
      'USDT/BTC',
    ]) {
      const r = parseMarginMarketName(text, MARKETS);
      assert.equal(r.ok ? 'OK' : r.result, 'UNKNOWN_MARKET', text);
    }
    const amb = parseMarginMarketName('abc', MARKETS);
    assert.equal(
      amb.ok ? 'OK' : amb.message,
      "marketName 'abc' is ambiguous (ab_c, a_bc): use BTC/USDT or btc_usdt",
    );
    const slashed = parseMarginMarketName('AB/C', MARKETS);
    assert.equal(slashed.ok && slashed.market.name, 'ab_c');
  });
});

describe('getLeverAssetsInfo', () => {
  // 1,000 usdt of its own, 4,000 borrowed (2 of interest), bought 0.15 btc at 30,000 (0.01 frozen in an order).
  const base = pos('btc', { available: 14_000_000, frozen: 1_000_000 });
  const quote = pos('usdt', { available: 50_000_000_000, principal: 400_000_000_000, interest: 200_000_000 });
  const v = valuateIsolated(base, quote, PRICE);
  const lever = leverObject({
    market: 'btc_usdt',
    priceScale: 2,
    base: BTC,
    quote: USDT,
    settings: DEFAULT_MARGIN_SETTINGS,
    basePosition: base,
    quotePosition: quote,
    canLoanIn: {
      base: borrowLimit(v, DEFAULT_MARGIN_SETTINGS, PRICE),
      quote: borrowLimit(v, DEFAULT_MARGIN_SETTINGS, ratio(1)),
    },
    transferOut: {
      base: transferOutLimit(v, DEFAULT_MARGIN_SETTINGS, base.available, PRICE),
      quote: transferOutLimit(v, DEFAULT_MARGIN_SETTINGS, quote.available, ratio(1)),
    },
    riskRateBp: riskRateBp(v),
    unwind: unwindPrice(base, quote, DEFAULT_MARGIN_SETTINGS, unitPrice(1, 2, 8, 8)),
    repayLock: false,
    version: 42,
    convert,
  });

  test("every field of the reference's lever object, with its type", () => {
    assert.deepEqual(shape(lever), shape(LEVER_SAMPLE));
  });

  test('the values of a levered account', () => {
    assert.equal(lever.key, 'btcusdt');
    assert.equal(lever.showName, 'BTC/USDT');
    assert.equal(lever.fAvailable, '500.00000000');
    assert.equal(lever.fLoanIn, '4000.00000000');
    assert.equal(lever.fOverdraft, '2.00000000');
    assert.equal(lever.cFreeze, '0.01000000');
    assert.equal(lever.totalConvertUSD, '5000.00000000');
    assert.equal(lever.loanInConvertUSD, '4002.00000000');
    assert.equal(lever.netConvertUSD, '998.00000000');
    assert.equal(lever.netConvertCNY, '7185.60000000');
    assert.equal(lever.fAvailableUSD, '500.00000000');
    assert.equal(lever.riskRate, '1.2493');
    assert.equal(lever.level, 1);
    assert.equal(lever.fCanLoanIn, '0.000000000000000');
    assert.equal(lever.couldTransferOutFiat, '0.00000000');
    // 500 usdt and 0.15 btc against 4,002 usdt at 1.08: (4,322.16 − 500) ÷ 0.15 = 25,481.066…, rounded down.
    assert.equal(lever.unwindPrice, '25481.06');
    assert.deepEqual(
      [lever.leverMultiple, lever.startLine, lever.noticeLine, lever.forceRepayLine],
      ['5.00', '1.25', '1.13', '1.08'],
    );
    const answer = leverAssetsInfoAnswer([lever], true);
    assert.equal(answer.message.datas.levers[0]?.key, 'btcusdt');
    assert.equal(answer.message.isSuc, true);
  });

  test('an account without debt: risk rate "-", unwind price zero, the limits from its assets', () => {
    const q = pos('usdt', { available: 100_000_000_000 });
    const free = valuateIsolated(pos('btc'), q, PRICE);
    const o = leverObject({
      market: 'btc_usdt',
      priceScale: 2,
      base: BTC,
      quote: USDT,
      settings: DEFAULT_MARGIN_SETTINGS,
      basePosition: pos('btc'),
      quotePosition: q,
      canLoanIn: {
        base: borrowLimit(free, DEFAULT_MARGIN_SETTINGS, PRICE),
        quote: borrowLimit(free, DEFAULT_MARGIN_SETTINGS, ratio(1)),
      },
      transferOut: { base: 0, quote: q.available },
      riskRateBp: riskRateBp(free),
      unwind: undefined,
      repayLock: false,
      version: 1,
      convert,
    });
    assert.equal(o.riskRate, '-');
    assert.equal(o.unwindPrice, '0.00');
    assert.equal(o.fCanLoanIn, '4000.000000000000000');
    assert.equal(o.cCanLoanIn, '0.133333330000000');
  });
});

describe('getCrossAssets', () => {
  test('numbers and uppercase keys, as the reference shows', () => {
    const cross = crossAssets(
      [
        { coin: BTC, position: pos('btc', { available: 10_000_000, frozen: 1 }), canTransferOut: 10_000_000 },
        {
          coin: USDT,
          position: pos('usdt', { available: 30_000, principal: 2_000_000_000 }),
          canTransferOut: 0,
        },
      ],
      15_000,
      convert,
    );
    // The reference's fields, plus Bourse's `level` and `repayLock` (issue 15).
    assert.deepEqual(Object.keys(cross).sort(), [...Object.keys(CROSS_SAMPLE), 'level', 'repayLock'].sort());
    assert.deepEqual([cross.level, cross.repayLock], [1, false]);
    for (const item of cross.list) assert.deepEqual(shape(item), shape(CROSS_SAMPLE.list[0] as object));
    assert.deepEqual(cross.list[0], {
      fundType: 2,
      loanIn: 0,
      amount: 0.10000001,
      freeze: 1e-8,
      overdraft: 0,
      key: 'BTC',
      canTransferOut: 0.1,
    });
    assert.equal(cross.riskRate, '1.5000');
    assert.equal(cross.loanIn, 20);
    assert.equal(cross.total, 3000.0006);
    assert.equal(cross.net, 2980.0006);
  });
});

describe('lending answers', () => {
  const lending = new LendingBook(() => defaultLendingSettings('usdt', 8));
  const offer = lending.place({
    lender: spot(1),
    coin: 'usdt',
    amount: 14_880_448_410_000,
    dailyRatePpm: 500,
    days: 30,
    loop: true,
    timeMs: 0,
    available: 14_880_448_410_000,
  });
  assert.ok(offer.ok);

  test('getLoans: the sample item, field for field', () => {
    const item = loanOfferItem(offer.offer, USDT, 1_000_000);
    assert.deepEqual(item, { ...(LOANS_SAMPLE.result[0] as object) });
    const answer = getLoansAnswer([item]);
    assert.deepEqual(shape(answer), shape(LOANS_SAMPLE));
  });

  test('loan records and repayments: the types the reference lists', () => {
    const loans = new LoanBook(lending, () => defaultLendingSettings('usdt', 8));
    const b = loans.borrow({
      borrower: isolated(2, 'btc_usdt'),
      coin: 'usdt',
      amount: 100_000_000_000,
      timeMs: 5,
      rollOver: false,
    });
    assert.ok(b.ok);
    const loan = b.loans[0];
    assert.ok(loan !== undefined);
    const rec = loanRecord({
      loan,
      coin: USDT,
      lenderUserId: 1,
      lenderName: 'alice',
      borrowerName: 'bob',
      viewerIsBorrower: true,
      venueSharePpm: 100_000,
      borrowerLocked: false,
    });
    const numbers =
      'createTime tstatus withoutLxDays id fundType outUserId inUserId repayDate sourceType status balanceWithoutLxDays riskManage rateForm loanId nextRepayDate';
    const strings =
      'statusShow freezId withoutLxAmount hasRepay amount fwfScale rate marketName hasLx balanceAmount zheLx outUserFees dikouLx coinName reward arrearsLx rateAddVal outUserName inUserName';
    const booleans = 'investMark isIn inUserLock';
    const want = [
      ...numbers.split(' ').map((k) => `${k}:number`),
      ...strings.split(' ').map((k) => `${k}:string`),
      ...booleans.split(' ').map((k) => `${k}:boolean`),
    ].sort();
    assert.deepEqual(shape(rec), want);
    assert.equal(rec.marketName, 'btcusdt');
    assert.equal(rec.rate, '0.0005');
    assert.equal(rec.arrearsLx, '0.02083333'); // the hour begun at the borrow
    assert.equal(rec.status, LOAN_STATUS.REPAYING);
    const r = loans.repay(loan.id, {
      borrower: isolated(2, 'btc_usdt'),
      amount: 'all',
      timeMs: 6,
      available: 1e12,
    });
    assert.ok(r.ok);
    const item = repaymentItem(r.repayment, loan.status, USDT);
    assert.deepEqual(item, {
      benJin: '1000.00000000',
      id: 1,
      statusShow: 'repaid',
      status: 2,
      liXi: '0.02083333',
      actureDate: 6,
    });
  });

  test('decimal text of exact ratios, rounded toward zero', () => {
    assert.equal(formatRatio(ratio(2, 3), 4), '0.6666');
    assert.equal(formatRatio(ratio(-2, 3), 2), '-0.66');
    assert.equal(formatRatio(ratio(5), 0), '5');
  });
});
