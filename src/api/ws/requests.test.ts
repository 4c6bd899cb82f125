/**
 * The WebSocket's request channels (zb-api-facts §10.9): the signed endpoints served over the
 * WebSocket from the same declarations. Values (an order placed over the WebSocket rests in the
 * book and REST sees it; cancel; balances; withdraw and cancelWithdraw with its bill), and bad
 * input answered with the REST code, the state unchanged.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { hashFundPassword } from '../auth/fund-password.ts';
import { MemoryRateLimiter } from '../auth/rate-limit.ts';
import { DEFAULT_VENUE } from '../../config/default-venue.ts';
import { signedQuery } from '../auth/sign-request.ts';
import { SIGNED_ENDPOINTS } from '../http/signed/index.ts';
import { WsTestClient, signedSubscription, type Message } from '../../../test/fixtures/ws-client.ts';
import { WsHarness, type Credentials } from '../../../test/fixtures/ws-harness.ts';
import { parseRequestChannel, REQUEST_CHANNELS, requestChannelName } from './requests.ts';
import { WireMarkets } from './channels.ts';

const h = new WsHarness();
let base = '';
let alice = 0;
let aliceKey: Credentials;
const ADDRESS = `T${'1'.repeat(33)}`;

before(async () => {
  base = await h.listen();
  h.time = Date.now();
  alice = h.user('alice', [
    ['usdt', '100000'],
    ['btc', '1'],
  ]);
  aliceKey = h.key(alice, { asset: true, entrust: true, money: true, lever: true });
  h.must({ type: 'SetFundPassword', userId: alice, hash: await hashFundPassword('secret1') });
  h.must({ type: 'AddWithdrawAddress', userId: alice, coin: 'usdt', chain: 'TRC20', address: ADDRESS });
  h.must({ type: 'VerifyWithdrawAddress', userId: alice, coin: 'usdt', address: ADDRESS });
});

after(async () => {
  await h.close();
});

const connect = (): Promise<WsTestClient> => WsTestClient.connect(`${base}/websocket`);

/** The engine's state without its journal position: a refusal may be journaled, the state is what counts. */
const stateText = (): string => JSON.stringify({ ...h.engine.snapshot(), lastSeq: 0 });

let requests = 0;
/** Sends a signed request on `channel` and waits for the frame that answers it (its `no`). */
async function request(
  c: WsTestClient,
  channel: string,
  params: Record<string, unknown> = {},
  key: Credentials = aliceKey,
  tamper: (m: Record<string, unknown>) => Record<string, unknown> = (m) => m,
): Promise<Message> {
  const no = `r${++requests}`;
  c.send(tamper(signedSubscription(channel, key.accessKey, key.secret, { no, ...params })));
  return c.take((m) => m?.no === no, 5_000, `the answer to ${channel} (${no})`);
}

/** A signed REST call over HTTP, to see what the WebSocket did. */
async function rest(method: string, params: Record<string, string>, key = aliceKey): Promise<Message> {
  const query = signedQuery(method, Object.entries(params), key.accessKey, key.secret, h.time);
  const response = await fetch(`${base.replace('ws://', 'http://')}/api/${method}?${query}`);
  return response.json();
}

describe('the catalogue', () => {
  test("the request channels are §10.9's, each from a signed endpoint's declaration", () => {
    const names = REQUEST_CHANNELS.map((c) =>
      requestChannelName(c, c.scope === 'market' ? 'btcusdt' : 'usdt'),
    );
    assert.deepEqual(names.sort(), [
      'btcusdt_cancelorder',
      'btcusdt_getorder',
      'btcusdt_getorders',
      'btcusdt_getordersignoretradetype',
      'btcusdt_getordersnew',
      'btcusdt_getunfinishedordersignoretradetype',
      'btcusdt_order',
      'getaccountinfo',
      'usdt_cancelwithdraw',
      'usdt_getuseraddress',
      'usdt_getwithdrawaddress',
      'usdt_getwithdrawrecord',
      'usdt_withdraw',
    ]);
    for (const c of REQUEST_CHANNELS) assert.ok(SIGNED_ENDPOINTS.includes(c.endpoint), c.endpoint.method);
    const markets = new WireMarkets(h.engine);
    assert.equal(parseRequestChannel(markets, 'btcusdt_ticker'), undefined, 'a public channel');
    assert.equal(parseRequestChannel(markets, 'push_user_asset'), undefined, 'a private channel');
    assert.equal(parseRequestChannel(markets, 'btcusdt_getspotbills'), undefined, 'REST only');
    assert.equal(parseRequestChannel(markets, 'ethusdt_order')?.currency, 'eth_usdt');
  });
});

describe('trading over the WebSocket', () => {
  test('an order placed over the WebSocket rests in the book, REST and the WebSocket see it, and its cancel frees the funds', async () => {
    const c = await connect();
    const placed = await request(c, 'btcusdt_order', { tradeType: 1, price: 29000, amount: 0.01 });
    assert.equal(placed.code, 1000);
    assert.equal(placed.success, true);
    assert.equal(placed.channel, 'btcusdt_order');
    assert.equal(placed.message, 'success');
    assert.equal(placed.data.code, 1000);
    const id = Number(placed.data.id);
    assert.deepEqual(
      Object.keys(placed).sort(),
      ['channel', 'code', 'data', 'message', 'no', 'success'],
      "§10.9's reply shape",
    );
    const open = h.engine.openOrder(id);
    assert.equal(open?.userId, alice);
    assert.equal(h.engine.balance(alice, 'usdt')?.frozen, 290_000_000, '290 usdt frozen (6 decimals)');

    const viaRest = await rest('getOrder', { currency: 'btc_usdt', id: String(id) });
    const viaWs = await request(c, 'btcusdt_getorder', { id: String(id) });
    assert.deepEqual(viaWs.data, viaRest, 'data is what REST answers');
    assert.equal(viaRest.status, 0);
    assert.equal(viaRest.price, 29000);

    const unfinished = await request(c, 'btcusdt_getunfinishedordersignoretradetype', {
      pageIndex: 1,
      pageSize: 10,
    });
    assert.deepEqual(
      unfinished.data.map((o: { id: string }) => o.id),
      [String(id)],
    );
    for (const [channel, params] of [
      ['btcusdt_getorders', { tradeType: 1, pageIndex: 1 }],
      ['btcusdt_getordersnew', { tradeType: 1, pageIndex: 1, pageSize: 10 }],
      ['btcusdt_getordersignoretradetype', { pageIndex: 1, pageSize: 10 }],
    ] as const) {
      const list = await request(c, channel, params);
      assert.equal(list.code, 1000, channel);
      assert.ok(
        list.data.some((o: { id: string }) => o.id === String(id)),
        channel,
      );
    }

    const cancelled = await request(c, 'btcusdt_cancelorder', { id: String(id) });
    assert.equal(cancelled.code, 1000);
    assert.equal(cancelled.channel, 'btcusdt_cancelorder');
    assert.equal(h.engine.openOrder(id), undefined);
    assert.equal(h.engine.balance(alice, 'usdt')?.frozen, 0);
    assert.equal((await rest('getOrder', { currency: 'btc_usdt', id: String(id) })).status, 1, 'cancelled');
    await c.close();
  });

  test("getaccountinfo answers REST's getAccountInfo: the balances and the key's permissions", async () => {
    const c = await connect();
    const info = await request(c, 'getaccountinfo');
    assert.equal(info.code, 1000);
    assert.equal(info.channel, 'getaccountinfo');
    assert.deepEqual(info.data, await rest('getAccountInfo', {}));
    const usdt = info.data.result.coins.find((coin: { key: string }) => coin.key === 'usdt');
    assert.equal(usdt.available, '100000.000000');
    assert.equal(info.data.entrustPerm, true);
    await c.close();
  });

  test('addresses, withdraw, the withdrawal record and cancelwithdraw: the funds come back with a bill', async () => {
    h.must({
      type: 'AssignDepositAddress',
      userId: alice,
      coin: 'usdt',
      chain: 'TRC20',
      address: `T${'a'.repeat(33)}`,
      memo: '',
    });
    const c = await connect();
    const deposit = await request(c, 'usdt_getuseraddress');
    assert.equal(deposit.data.message.datas.key, `T${'a'.repeat(33)}`);
    assert.equal((await request(c, 'usdt_getwithdrawaddress')).data.message.datas.key, ADDRESS);
    const before = h.engine.balance(alice, 'usdt');
    const w = await request(c, 'usdt_withdraw', {
      amount: '20000',
      fees: '1',
      receiveAddr: ADDRESS,
      safePwd: 'secret1',
    });
    assert.equal(w.code, 1000, JSON.stringify(w));
    const downloadId = w.data.id as string;
    assert.equal(h.engine.funds.withdrawal(downloadId)?.state, 'submitted', 'beyond auto-approval');
    const records = await request(c, 'usdt_getwithdrawrecord', { pageIndex: 1, pageSize: 10 });
    assert.deepEqual(
      records.data.message.datas.list.map((r: { id: string | number }) => String(r.id)),
      [downloadId],
    );
    const wrong = await request(c, 'usdt_cancelwithdraw', { downloadId, safePwd: 'nope!!' });
    assert.equal(wrong.code, 1005, 'a wrong fund password counted as for withdraw');
    assert.equal(h.engine.funds.fundPassword(alice)?.failures.length, 1);
    const done = await request(c, 'usdt_cancelwithdraw', { downloadId, safePwd: 'secret1' });
    assert.equal(done.code, 1000, JSON.stringify(done));
    assert.equal(h.engine.funds.withdrawal(downloadId)?.state, 'cancelled');
    assert.deepEqual(h.engine.balance(alice, 'usdt'), before, 'amount and fee back to available');
    const bills = await rest('getSpotBills', { currency: 'usdt' });
    const release = bills.result.find((b: { remark: string }) =>
      b.remark.includes(`withdrawal ${downloadId}`),
    );
    assert.ok(release !== undefined, `a bill of the cancelled withdrawal: ${JSON.stringify(bills.result)}`);
    await c.close();
  });
});

describe('refusals: the REST code, the state unchanged', () => {
  test('wrong sign, missing parameter, unknown market or coin, no permission, a bound IP', async () => {
    const assetOnly = h.key(alice, { asset: true, entrust: false, money: false, lever: false });
    const bound = h.key(alice, { asset: true, entrust: true, money: true, lever: false }, ['10.9.9.9']);
    const c = await connect();
    const order = { tradeType: 1, price: 29000, amount: 0.01 };
    const cases: [
      string,
      Record<string, unknown>,
      Credentials,
      number,
      RegExp,
      ((m: Message) => Message)?,
    ][] = [
      ['btcusdt_order', order, aliceKey, 1003, /does not match/, (m) => ({ ...m, sign: '0'.repeat(32) })],
      ['btcusdt_order', order, aliceKey, 1003, /does not match/, (m) => ({ ...m, price: 1 })],
      ['btcusdt_order', order, { ...aliceKey, secret: 'wrong' }, 1003, /does not match/],
      ['btcusdt_order', order, aliceKey, 1003, /sign missing/, ({ sign: _, ...m }) => m],
      ['btcusdt_order', order, aliceKey, 1003, /accesskey missing/, ({ accesskey: _, ...m }) => m],
      ['btcusdt_order', { tradeType: 1, amount: 0.01 }, aliceKey, 3005, /price is required/],
      ['btcusdt_order', { ...order, tradeType: 3 }, aliceKey, 3005, /tradeType/],
      ['btcusdt_order', { ...order, price: '29000.001' }, aliceKey, 3002, /price/],
      ['btcusdt_order', { ...order, amount: 10 }, aliceKey, 2009, /./],
      ['nosuchusdt_order', order, aliceKey, 3005, /no market 'nosuchusdt'/],
      [
        'doge_withdraw',
        { amount: '1', fees: '1', receiveAddr: ADDRESS, safePwd: 'x' },
        aliceKey,
        3005,
        /doge/,
      ],
      ['btcusdt_order', order, assetOnly, 1012, /entrustPerm, which btcusdt_order needs/],
      ['usdt_getuseraddress', {}, assetOnly, 1012, /moneyPerm/],
      ['btcusdt_order', order, bound, 3006, /not bound/],
      ['btcusdt_cancelorder', { id: '999999' }, aliceKey, 3001, /./],
      ['btcusdt_getorder', {}, aliceKey, 3005, /id/],
      ['usdt_cancelwithdraw', { downloadId: '999', safePwd: 'secret1' }, aliceKey, 3005, /no withdrawal/],
    ];
    for (const [channel, params, key, code, message, tamper] of cases) {
      const state = stateText();
      const frame = await request(c, channel, params, key, tamper);
      const what = `${channel} ${JSON.stringify(params)} → ${JSON.stringify(frame)}`;
      assert.equal(frame.code, code, what);
      assert.equal(frame.success, false, what);
      assert.equal(frame.channel, channel, what);
      assert.match(frame.message, message, what);
      assert.equal('data' in frame, false, what);
      assert.equal(stateText(), state, `the state changed: ${what}`);
    }
    await c.close();
  });

  test('a strict key needs a fresh nonce, and each signed request is served once', async () => {
    const strict = h.key(alice, { asset: true, entrust: true, money: false, lever: false }, [], {
      replayProtection: true,
    });
    const c = await connect();
    assert.equal((await request(c, 'getaccountinfo', {}, strict)).code, 3005, 'no nonce');
    const once = signedSubscription('getaccountinfo', strict.accessKey, strict.secret, {
      no: 'once',
      nonce: h.time,
    });
    c.send(once);
    assert.equal((await c.take((m) => m?.no === 'once')).code, 1000);
    c.send(once);
    const replayed = await c.take((m) => m?.no === 'once');
    assert.equal(replayed.code, 3007);
    assert.match(replayed.message, /already received/);
    await c.close();
  });
});

describe('rate limits', () => {
  test("a key's budget is one for REST and the WebSocket: past it, 4002 on either, nothing served", async () => {
    let time = Date.now();
    const limited = new WsHarness(
      {},
      DEFAULT_VENUE,
      new MemoryRateLimiter({ clock: () => time, keyRequestsPerSecond: 3 }),
    );
    try {
      const url = await limited.listen();
      limited.time = time;
      const user = limited.user('carol', [['usdt', '1000']]);
      const key = limited.key(user);
      const c = await WsTestClient.connect(`${url}/websocket`);
      const ask = async (no: string): Promise<Message> => {
        c.send(signedSubscription('getaccountinfo', key.accessKey, key.secret, { no }));
        return c.take((m) => m?.no === no);
      };
      assert.equal((await ask('1')).code, 1000);
      assert.equal((await ask('2')).code, 1000);
      const query = signedQuery('getAccountInfo', [], key.accessKey, key.secret, time);
      const viaRest: Message = await (
        await fetch(`${url.replace('ws://', 'http://')}/api/getAccountInfo?${query}`)
      ).json();
      assert.equal(viaRest.result !== undefined, true, 'the third of the second, over REST');
      const fourth = await ask('4');
      assert.equal(fourth.code, 4002, JSON.stringify(fourth));
      assert.equal(fourth.channel, 'getaccountinfo');
      time += 1_000;
      limited.time = time;
      assert.equal((await ask('5')).code, 1000, 'the next second');
      await c.close();
    } finally {
      await limited.close();
    }
  });
});
