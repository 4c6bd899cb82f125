/**
 * The trading page's logic that needs no browser (issue 31): the merged ladder, the fills made
 * from order records with maker or taker, the network of an address, and the words of refusals.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { networksOf } from '../../web/src/address-forms.ts';
import { FillTracker, type OrderRecord } from '../../web/src/fills.ts';
import { mergeLevels } from '../../web/src/merge-levels.ts';
import { explain } from '../../web/src/messages.ts';
import { amountProblem, priceProblem } from '../../web/src/order-checks.ts';
import { ApiError } from '../../web/src/rest.ts';

const BTC_USDT = {
  name: 'btc_usdt',
  wireId: 'btcusdt',
  base: 'btc',
  quote: 'usdt',
  priceScale: 2,
  amountScale: 4,
  minAmount: 0.0001,
  minSize: 1,
  makerFee: '0.001',
  takerFee: '0.002',
};

test('merging keeps the levels: bids rounded down to the step, asks up, amounts summed', () => {
  const bids: [number, number][] = [
    [100.19, 1],
    [100.11, 2],
    [100.05, 3],
    [99.99, 4],
  ];
  assert.deepEqual(mergeLevels(bids, 10, 2, 'bid'), [
    [100.1, 3],
    [100, 3],
    [99.9, 4],
  ]);
  const asks: [number, number][] = [
    [100.21, 1],
    [100.29, 2],
    [100.31, 3],
  ];
  assert.deepEqual(mergeLevels(asks, 10, 2, 'ask'), [
    [100.3, 3],
    [100.4, 3],
  ]);
  assert.deepEqual(mergeLevels(asks, 1, 2, 'ask'), asks);
});

/** A record: id, price, amount, filled, value, type, placed, status, fee, …, trade id, price, amount, time. */
const record = (
  id: string,
  type: number,
  placed: number,
  status: number,
  fee: number,
  trade: [number, number, number, number] | undefined,
): OrderRecord => [
  id,
  100,
  1,
  0,
  0,
  type,
  placed,
  status,
  fee,
  0,
  false,
  '',
  placed,
  ...(trade ?? [0, 0, 0, 0]),
];

test('fills from order records: one per new trade id, the fee its growth, maker or taker by the rate', () => {
  const fills = new FillTracker();
  fills.baseline([record('1', 1, 1_000, 3, 0.0005, [7, 100, 0.5, 1_500])]);
  // The snapshot's own fill is not listed again.
  assert.equal(fills.fillOf(record('1', 1, 1_000, 3, 0.0005, [7, 100, 0.5, 1_500]), BTC_USDT), undefined);
  // A buy's fee is in the base coin: 0.0002 of 0.2 is the maker's 0.1%.
  const maker = fills.fillOf(record('1', 1, 1_000, 3, 0.0007, [8, 100, 0.2, 2_000]), BTC_USDT);
  assert.deepEqual(
    maker && [maker.tradeId, maker.price, maker.amount, Number(maker.fee.toFixed(8)), maker.role],
    [8, 100, 0.2, 0.0002, 'maker'],
  );
  // A sell's fee is in the quote: 0.4 of 0.2 × 1000 is the taker's 0.2%.
  const taker = fills.fillOf(record('2', 0, 3_000, 2, 0.4, [9, 1000, 0.2, 3_000]), BTC_USDT);
  assert.equal(taker?.role, 'taker');
  // Equal rates: a limit order's fill at its placement took, a later one made.
  const equal = { ...BTC_USDT, makerFee: '0.002', takerFee: '0.002' };
  assert.equal(fills.fillOf(record('3', 1, 5_000, 3, 0.001, [10, 100, 0.5, 5_000]), equal)?.role, 'taker');
  assert.equal(fills.fillOf(record('3', 1, 5_000, 2, 0.002, [11, 100, 0.5, 6_000]), equal)?.role, 'maker');
  assert.equal(
    fills.fillOf(record('4', 3, 7_000, 2, 0.002, [12, 100, 1, 7_000]), equal)?.role,
    'maker',
    'PostOnly',
  );
  // A cancel carries no new trade.
  assert.equal(fills.fillOf(record('5', 1, 8_000, 1, 0, undefined), equal), undefined);
});

test('the network of an address: by its form among the coin’s networks', () => {
  const usdt = [
    { chainName: 'ERC20', mainChainName: 'ETH', fee: 15, canWithdraw: true },
    { chainName: 'TRC20', mainChainName: 'TRX', fee: 1, canWithdraw: true },
  ];
  assert.deepEqual(
    networksOf(`T${'1'.repeat(33)}`, usdt).map((n) => n.chainName),
    ['TRC20'],
  );
  assert.deepEqual(
    networksOf(`0x${'a'.repeat(40)}`, usdt).map((n) => n.chainName),
    ['ERC20'],
  );
  assert.deepEqual(networksOf('not an address', usdt), []);
});

test('refusals say what to do', () => {
  const unverified = explain(
    new ApiError(
      1001,
      '提币地址有误, 请先添加提币地址。 (withdrawal address wrong: add it and have it verified first)',
    ),
    'withdraw',
  );
  assert.match(unverified, /^This address is not one of your verified withdrawal addresses\./);
  assert.doesNotMatch(unverified, /[\u4e00-\u9fff]/);
  assert.match(
    explain(new ApiError(1003, 'signature does not match: sign HMAC-MD5(sha1hex(secret)) …'), 'sign-in'),
    /^The secret does not match this API key/,
  );
  assert.match(explain(new ApiError(1003, 'unknown accesskey abc'), 'sign-in'), /^This API key is not known/);
  assert.match(explain(new ApiError(1003, 'unknown accesskey abc'), 'session'), /^Signed out/);
  assert.match(
    explain(
      new ApiError(
        1001,
        'no usdt deposit address yet: it must first be created (the operator runs: bourse address create a usdt)',
      ),
      'deposit',
    ),
    /^You have no USDT deposit address yet: ask the venue's operator/,
  );
  assert.equal(
    explain(new ApiError(2009, 'insufficient account balance')),
    'insufficient account balance (code 2009)',
  );
  assert.equal(
    priceProblem('', BTC_USDT),
    'Enter a price in USDT, or click a price in the order book to use it.',
  );
  assert.match(priceProblem('1.234', BTC_USDT) ?? '', /at most 2 decimals: shorten 1\.234/);
  assert.equal(priceProblem('1.23', BTC_USDT), undefined);
  assert.match(amountProblem('', BTC_USDT, 'buy') ?? '', /^Enter how much BTC to buy/);
});
