import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import WebSocket from 'ws';
import { hmacMd5Hex, secretHash } from '../auth/signature.ts';
import { MAX_DEPTH_SIZE } from '../market-data/market-data.ts';
import { WsTestClient, signedSubscription } from '../../../test/fixtures/ws-client.ts';
import { nextTick, WsHarness } from '../../../test/fixtures/ws-harness.ts';

const h = new WsHarness();
let base = '';
let alice = 0;
let bob = 0;

before(async () => {
  base = await h.listen();
  alice = h.user('alice', [['usdt', '100000']]);
  bob = h.user('bob', [['btc', '10']]);
});

after(async () => {
  await h.close();
});

const connect = (path = '/websocket'): Promise<WsTestClient> => WsTestClient.connect(`${base}${path}`);

describe('public channels', () => {
  test('each channel answers with a snapshot equal to the REST body, then pushes the changes of each tick', async () => {
    h.order(bob, 0, '30100.00', '1.0000');
    h.order(alice, 1, '29900.00', '0.5000');
    const c = await connect();
    for (const ch of ['btcusdt_ticker', 'btcusdt_depth', 'btcusdt_trades', 'btcusdt_kline_1min'])
      c.subscribe(ch);
    c.subscribe('btcusdt_quick_depth', { length: 10 });

    const ticker = await c.onChannel('btcusdt_ticker', 'ticker');
    const rest = JSON.parse((h.marketData.tickerBody('btc_usdt') as Buffer).toString());
    assert.deepEqual(ticker.ticker, rest.ticker);
    assert.equal(ticker.date, String(h.time));
    const depth = await c.onChannel('btcusdt_depth', 'depth');
    const restDepth = JSON.parse((h.marketData.depthBody('btc_usdt', MAX_DEPTH_SIZE) as Buffer).toString());
    assert.deepEqual(depth.asks, restDepth.asks);
    assert.deepEqual(depth.bids, [[29900, 0.5]]);
    assert.equal(depth.timestamp, Math.floor(h.time / 1000));
    assert.deepEqual((await c.onChannel('btcusdt_trades', 'trades')).data, []);
    const kline = await c.onChannel('btcusdt_kline_1min', 'kline');
    assert.deepEqual(kline, {
      symbol: 'BTC',
      moneyType: 'USDT',
      data: [],
      dataType: 'kline',
      channel: 'btcusdt_kline_1min',
    });
    const quick = await c.onChannel('btcusdt_quick_depth', 'quickDepth');
    assert.deepEqual(quick.listUp, [[30100, 1]]);
    assert.deepEqual(quick.listDown, [[29900, 0.5]]);
    assert.equal(quick.market, 'btcusdt');

    h.time += 1_000;
    h.order(alice, 1, '30100.00', '0.2500');
    const t = await c.onChannel('btcusdt_ticker', 'ticker');
    assert.equal(t.ticker.last, '30100.00');
    assert.equal(t.ticker.vol, '0.2500');
    const trades = await c.onChannel('btcusdt_trades', 'trades');
    const restTrades = JSON.parse((h.marketData.latestTradesBody('btc_usdt') as Buffer).toString());
    assert.deepEqual(trades.data, restTrades.slice(-1));
    assert.equal(trades.data[0].type, 'buy');
    assert.equal('type' in trades, false, 'no top-level type: ccxt would take it for the contract format');
    const candle = await c.onChannel('btcusdt_kline_1min', 'kline');
    assert.deepEqual(candle.data, [[Math.floor(h.time / 60_000) * 60_000, 30100, 30100, 30100, 30100, 0.25]]);
    assert.deepEqual((await c.onChannel('btcusdt_depth', 'depth')).asks, [[30100, 0.75]]);
    const q = await c.onChannel('btcusdt_quick_depth', 'quickDepth');
    assert.equal(q.currentPrice, 30100);
    assert.equal(q.currentIsBuy, true);
    assert.equal(q.dayNumber, 0.25);
    await c.close();
  });

  test('a kline update carries the candles the tick touched; a new subscriber gets the latest candles', async () => {
    const c = await connect();
    c.subscribe('btcusdt_kline_1min');
    const snapshot = await c.onChannel('btcusdt_kline_1min');
    h.order(bob, 0, '30200.00', '0.1000');
    h.order(alice, 1, '30200.00', '0.0500');
    h.time += 60_000;
    h.order(alice, 1, '30200.00', '0.0500');
    const update = await c.onChannel('btcusdt_kline_1min');
    assert.equal(update.data.length, 2, 'the closed bucket and the new one');
    assert.equal(update.data[1][0] - update.data[0][0], 60_000);
    const late = await connect();
    late.subscribe('btcusdt_kline_1min');
    const now = await late.onChannel('btcusdt_kline_1min');
    assert.equal(now.data.length, snapshot.data.length + 1);
    assert.deepEqual(now.data.slice(-2), update.data);
    await Promise.all([c.close(), late.close()]);
  });

  test('quick depth at /websocket/<base>, as ccxt connects for it; its length is 5 or 10', async () => {
    const c = await connect('/websocket/btc');
    c.subscribe('btcusdt_quick_depth');
    const q = await c.onChannel('btcusdt_quick_depth');
    assert.ok(q.listUp.length <= 5);
    c.subscribe('btcusdt_quick_depth', { length: 7 });
    const e = await c.error();
    assert.equal(e.code, 3005);
    assert.match(e.message, /length/);
    await c.close();
    await assert.rejects(connect('/websocket/nosuchcoin'), /404/);
    await assert.rejects(connect('/other'), /404/);
  });

  test('removeChannel stops the pushes of that channel only', async () => {
    const c = await connect();
    c.subscribe('btcusdt_ticker');
    c.subscribe('btcusdt_trades');
    await c.onChannel('btcusdt_ticker');
    await c.onChannel('btcusdt_trades');
    c.send({ event: 'removeChannel', channel: 'btcusdt_ticker' });
    await nextTick();
    h.order(bob, 0, '30300.00', '0.1000');
    h.order(alice, 1, '30300.00', '0.1000');
    await c.onChannel('btcusdt_trades');
    await nextTick();
    assert.equal(
      c.queued.some((m) => m.channel === 'btcusdt_ticker'),
      false,
    );
    await c.close();
  });
});

describe('heartbeats', () => {
  test('the text ping is answered pong, and a protocol ping with a pong frame', async () => {
    const c = await connect();
    c.send('ping');
    assert.equal(await c.take((m) => m === 'pong'), 'pong');
    const pong = new Promise<Buffer>((resolve) => c.ws.once('pong', resolve));
    c.ws.ping(Buffer.from('hi'));
    assert.equal((await pong).toString(), 'hi');
    await c.close();
  });
});

describe('bad input gets the reference’s error frames, never a crash', () => {
  test('malformed JSON, a non-object, a binary frame, no event, an unknown event → 1008', async () => {
    const c = await connect();
    for (const bad of ['{bad', '[1,2]', '42', '{}']) {
      c.send(bad);
      const e = await c.error();
      assert.equal(e.code, 1008, bad);
      assert.equal(e.no, '0');
    }
    c.ws.send(Buffer.from([1, 2, 3]), { binary: true });
    assert.equal((await c.error()).code, 1008);
    c.send({ event: 'subscribe', channel: 'btcusdt_ticker', no: '77' });
    const e = await c.error();
    assert.deepEqual([e.code, e.no, e.channel], [1008, '77', 'btcusdt_ticker']);
    assert.match(e.message, /unknown event 'subscribe'/);
    await c.close();
  });

  test('no channel, or a channel that names nothing → 1007 with the channel echoed', async () => {
    const c = await connect();
    c.send({ event: 'addChannel' });
    assert.equal((await c.error()).code, 1007);
    for (const channel of [
      'btc_usdt_ticker',
      'btcusdt_nothing',
      'xyzusdt_depth',
      'btcusdt_kline_2min',
      'ticker',
    ]) {
      c.subscribe(channel);
      const e = await c.error();
      assert.deepEqual([e.code, e.success, e.channel], [1007, false, channel]);
      assert.match(e.message, /^Channel is empty/);
    }
    c.send({ event: 'removeChannel', channel: 'btcusdt_ticker' });
    assert.equal((await c.error()).code, 1007);
    // Still serving: a good subscription on the same connection works.
    c.subscribe('btcusdt_ticker');
    await c.onChannel('btcusdt_ticker');
    await c.close();
  });

  test('single-quoted pseudo-JSON (ZB’s own demos) is read', async () => {
    const c = await connect();
    c.send("{'event':'addChannel','channel':'btcusdt_ticker'}");
    await c.onChannel('btcusdt_ticker');
    await c.close();
  });

  test('a frame over the size limit, or text that is not UTF-8, closes the connection cleanly', async () => {
    const big = await connect();
    big.send(JSON.stringify({ event: 'addChannel', channel: 'x'.repeat(10_000) }));
    assert.equal((await big.closed).code, 1009);
    const utf = await connect();
    utf.ws.send(Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), { binary: false });
    assert.equal((await utf.closed).code, 1007);
  });

  test('a flood gets a 4002 frame and a 1008 close; other connections are not touched', async () => {
    const other = await connect();
    other.subscribe('btcusdt_ticker');
    await other.onChannel('btcusdt_ticker');
    const flood = await connect();
    for (let i = 0; i < 500; i++) flood.send('ping');
    const e = await flood.error();
    assert.equal(e.code, 4002);
    assert.equal((await flood.closed).code, 1008);
    h.order(bob, 0, '30400.00', '0.1000');
    await other.onChannel('btcusdt_ticker');
    other.send('ping');
    await other.take((m) => m === 'pong');
    await other.close();
  });
});

describe('private channels', () => {
  test('a subscription signed either way (sorted compact JSON, or all values as strings) is accepted', async () => {
    const { accessKey, secret } = h.key(alice);
    const c = await connect();
    c.send(signedSubscription('push_user_asset', accessKey, secret));
    const asset = await c.onChannel('push_user_asset', 'userAsset');
    const usdt = asset.coins.find((coin: { key: string }) => coin.key === 'usdt');
    assert.ok(Number(usdt.available) > 0);
    c.send(
      signedSubscription(
        'push_user_incr_record',
        accessKey,
        secret,
        { market: 'btcusdtdefault', no: 5 },
        true,
      ),
    );
    const records = await c.onChannel('push_user_incr_record', 'userRecord');
    assert.equal(records.market, 'btcusdtdefault');
    assert.ok(Array.isArray(records.records));
    await c.close();
  });

  test('refusals: no key, unknown key, bad or missing sign → 1003; permission → 1012; bound IP → 3006; market → 3005', async () => {
    const { accessKey, secret } = h.key(alice);
    const assetOnly = h.key(alice, { asset: true, entrust: false, money: false, lever: false });
    const bound = h.key(alice, { asset: true, entrust: true, money: false, lever: false }, ['10.9.9.9']);
    const c = await connect();
    const cases: [Record<string, unknown>, number, RegExp][] = [
      [{ event: 'addChannel', channel: 'push_user_asset' }, 1003, /accesskey missing/],
      [{ event: 'addChannel', channel: 'push_user_asset', accesskey: accessKey }, 1003, /sign missing/],
      [signedSubscription('push_user_asset', 'no-such-key-000', secret), 1003, /unknown accesskey/],
      [
        { ...signedSubscription('push_user_asset', accessKey, secret), sign: '0'.repeat(32) },
        1003,
        /does not match/,
      ],
      [{ ...signedSubscription('push_user_asset', accessKey, 'wrong-secret') }, 1003, /does not match/],
      [
        { ...signedSubscription('push_user_asset', accessKey, secret), channel: 'push_user_incr_asset' },
        1003,
        /does not match/,
      ],
      [
        signedSubscription('push_user_incr_record', assetOnly.accessKey, assetOnly.secret, {
          market: 'btcusdtdefault',
        }),
        1012,
        /entrustPerm/,
      ],
      [signedSubscription('push_user_asset', bound.accessKey, bound.secret), 3006, /not bound/],
      [
        signedSubscription('push_user_incr_record', accessKey, secret, { market: 'btc_usdt' }),
        3005,
        /market/,
      ],
    ];
    for (const [message, code, pattern] of cases) {
      c.send(message);
      const e = await c.error();
      assert.equal(e.code, code, JSON.stringify(message));
      assert.match(e.message, pattern);
    }
    await nextTick();
    assert.equal(c.queued.length, 0, 'nothing was pushed for a refused subscription');
    await c.close();
  });

  test('a key with replay protection: the subscription signs a fresh nonce and is accepted once', async () => {
    const { accessKey, secret } = h.key(alice, undefined, [], { replayProtection: true });
    const c = await connect();
    c.send(signedSubscription('push_user_asset', accessKey, secret));
    const missing = await c.error();
    assert.equal(missing.code, 3005);
    assert.match(missing.message, /replay protection: sign a parameter nonce/);
    const fresh = signedSubscription('push_user_asset', accessKey, secret, { nonce: h.time });
    c.send(fresh);
    await c.onChannel('push_user_asset', 'userAsset');
    const replay = await connect();
    replay.send(fresh);
    const replayed = await replay.error();
    assert.equal(replayed.code, 3007);
    assert.match(replayed.message, /request already received/);
    replay.send(signedSubscription('push_user_asset', accessKey, secret, { nonce: h.time - 60_000 }));
    assert.equal((await replay.error()).code, 3007, 'a stale nonce');
    await c.close();
    await replay.close();
  });

  test("an order's life and the balance changes it causes arrive in engine order", async () => {
    // eth_usdt: a book of its own, untouched by the other tests.
    const carol = h.user('carol', [['usdt', '10000']]);
    const dave = h.user('dave', [['eth', '10']]);
    const { accessKey, secret } = h.key(carol);
    const c = await connect();
    c.send(signedSubscription('push_user_incr_record', accessKey, secret, { market: 'ethusdtdefault' }));
    c.send(signedSubscription('push_user_incr_asset', accessKey, secret));
    c.send(signedSubscription('push_user_asset', accessKey, secret));
    assert.deepEqual((await c.onChannel('push_user_incr_record', 'userRecord')).records, []);
    await c.onChannel('push_user_incr_asset', 'userIncrAsset');
    await c.onChannel('push_user_asset', 'userAsset');

    // Placed: a buy of 3 at 2000 rests and freezes 6000 usdt.
    const placed = h.order(carol, 1, '2000.00', '3.0000', 'eth_usdt');
    const placedAt = h.time;
    const id = String(placed.orderId);
    let r = (await c.onChannel('push_user_incr_record', 'userIncrRecord')).record;
    assert.deepEqual(r.slice(0, 8), [id, 2000, 3, 0, 0, 1, placedAt, 0]);
    assert.deepEqual(r.slice(13), [0, 0, 0, 0]);
    let incr = await c.onChannel('push_user_incr_asset', 'userIncrAsset');
    assert.deepEqual(
      incr.coins.map((x: { key: string; available: string; freez: string }) => [x.key, x.available, x.freez]),
      [['usdt', '4000.000000', '6000.000000']],
    );
    const full = await c.onChannel('push_user_asset', 'userAsset');
    assert.equal(full.coins.length, h.engine.coins().length);

    // Partly filled: dave sells 1.
    h.time += 10;
    const fillTime = h.time;
    h.order(dave, 0, '2000.00', '1.0000', 'eth_usdt');
    r = (await c.onChannel('push_user_incr_record', 'userIncrRecord')).record;
    assert.deepEqual(r.slice(0, 8), [id, 2000, 3, 1, 2000, 1, placedAt, 3]);
    assert.ok(r[13] > 0, 'the latest trade id');
    assert.deepEqual(r.slice(14), [2000, 1, fillTime]);
    incr = await c.onChannel('push_user_incr_asset', 'userIncrAsset');
    assert.deepEqual(
      incr.coins.map((x: { key: string }) => x.key).sort(),
      ['eth', 'usdt'],
      'only the coins that changed',
    );

    // Filled: dave sells 2 more; then another order is placed and cancelled, all in one tick.
    h.order(dave, 0, '2000.00', '2.0000', 'eth_usdt');
    const second = h.order(carol, 1, '1900.00', '1.0000', 'eth_usdt');
    h.must({
      type: 'CancelOrder',
      userId: carol,
      market: 'eth_usdt',
      orderId: second.orderId as number,
      clientOrderId: '',
    });
    const filled = (await c.onChannel('push_user_incr_record', 'userIncrRecord')).record;
    assert.deepEqual([filled[0], filled[3], filled[7], filled[15]], [id, 3, 2, 2]);
    const accepted = (await c.onChannel('push_user_incr_record', 'userIncrRecord')).record;
    assert.deepEqual([accepted[0], accepted[7]], [String(second.orderId), 0]);
    const cancelled = (await c.onChannel('push_user_incr_record', 'userIncrRecord')).record;
    assert.deepEqual([cancelled[0], cancelled[7]], [String(second.orderId), 1]);
    incr = await c.onChannel('push_user_incr_asset', 'userIncrAsset');
    const usdt = incr.coins.find((x: { key: string }) => x.key === 'usdt');
    assert.equal(usdt.freez, '0.000000', 'nothing left frozen after the fill and the cancel');
    assert.equal(usdt.available, '4000.000000');
    assert.equal(incr.version, h.engine.lastSeq);
    await c.close();
  });

  test('a new subscription’s snapshot lists the open orders: what a client rebuilds its state from', async () => {
    const erin = h.user('erin', [['usdt', '10000']]);
    const { accessKey, secret } = h.key(erin);
    const a = h.order(erin, 1, '25000.00', '0.1000');
    const b = h.order(erin, 1, '25001.00', '0.1000');
    h.must({
      type: 'CancelOrder',
      userId: erin,
      market: 'btc_usdt',
      orderId: a.orderId as number,
      clientOrderId: '',
    });
    const c = await connect();
    c.send(signedSubscription('push_user_incr_record', accessKey, secret, { market: 'btcusdtdefault' }));
    const snap = await c.onChannel('push_user_incr_record', 'userRecord');
    assert.deepEqual(
      snap.records.map((r: unknown[]) => [r[0], r[1], r[7]]),
      [[String(b.orderId), 25001, 0]],
    );
    await c.close();
  });

  test('margin changes reach push_user_incr_asset with the account named, and push_user_cross_asset', async () => {
    const frank = h.user('frank', [['usdt', '10000']]);
    const { accessKey, secret } = h.key(frank);
    const c = await connect();
    c.send(signedSubscription('push_user_cross_asset', accessKey, secret));
    c.send(signedSubscription('push_user_incr_asset', accessKey, secret));
    const empty = await c.onChannel('push_user_cross_asset', 'userCrossAsset');
    assert.equal(empty.total, 0);
    assert.equal(empty.riskRate, '-');
    assert.equal(empty.list.length, h.engine.coins().length);
    await c.onChannel('push_user_incr_asset', 'userIncrAsset');

    // Spot → isolated: the spot coin, then the isolated account named with its coin.
    h.must({
      type: 'MarginTransfer',
      userId: frank,
      direction: 'in',
      acctType: 1,
      market: 'btc_usdt',
      coin: 'usdt',
      amount: 1_000_000_000,
    });
    const spot = await c.onChannel('push_user_incr_asset', 'userIncrAsset');
    assert.equal(spot.acctType, undefined);
    assert.deepEqual(
      spot.coins.map((x: { key: string; available: string }) => [x.key, x.available]),
      [['usdt', '9000.000000']],
    );
    const isolated = await c.onChannel('push_user_incr_asset', 'userIncrAsset');
    assert.deepEqual([isolated.acctType, isolated.marketName], [1, 'btcusdt']);
    assert.deepEqual(
      isolated.coins.map((x: Record<string, string>) => [x.key, x.available, x.freez, x.loanIn, x.overdraft]),
      [['usdt', '1000.000000', '0.000000', '0.000000', '0.000000']],
    );
    assert.equal(isolated.version, h.engine.lastSeq);

    // Spot → cross: the cross account on both channels.
    h.must({
      type: 'MarginTransfer',
      userId: frank,
      direction: 'in',
      acctType: 2,
      market: '',
      coin: 'usdt',
      amount: 500_000_000,
    });
    const cross = await c.onChannel('push_user_cross_asset', 'userCrossAsset');
    const usdt = cross.list.find((x: { key: string }) => x.key === 'USDT');
    assert.deepEqual([usdt.amount, usdt.freeze, usdt.loanIn, usdt.canTransferOut], [500, 0, 0, 500]);
    assert.equal(cross.total, 500);
    await c.onChannel('push_user_incr_asset', 'userIncrAsset');
    const crossIncr = await c.onChannel('push_user_incr_asset', 'userIncrAsset');
    assert.deepEqual([crossIncr.acctType, crossIncr.marketName], [2, '']);
    await c.close();
  });

  test('deleting the API key ends its subscriptions with a 1003 frame', async () => {
    const { accessKey, secret } = h.key(alice);
    const c = await connect();
    c.send(signedSubscription('push_user_asset', accessKey, secret));
    await c.onChannel('push_user_asset');
    h.must({ type: 'DeleteApiKey', accessKey });
    const e = await c.error();
    assert.deepEqual([e.code, e.channel], [1003, 'push_user_asset']);
    h.must({
      type: 'CreditDeposit',
      depositId: 'after-delete',
      userId: alice,
      coin: 'usdt',
      amount: 1,
      remark: '',
    });
    await nextTick();
    assert.equal(
      c.queued.some((m) => m.channel === 'push_user_asset'),
      false,
    );
    await c.close();
  });

  test('the signature covers the whole message: a signed string built by hand verifies', async () => {
    const { accessKey, secret } = h.key(alice);
    const text = `{"accesskey":"${accessKey}","channel":"push_user_asset","event":"addChannel"}`;
    const c = await connect();
    c.send({
      event: 'addChannel',
      channel: 'push_user_asset',
      accesskey: accessKey,
      sign: hmacMd5Hex(secretHash(secret), text),
    });
    await c.onChannel('push_user_asset');
    await c.close();
  });
});

test('closing the gateway closes every connection with 1001', async () => {
  const other = new WsHarness();
  const url = await other.listen();
  const c = await WsTestClient.connect(`${url}/websocket`);
  await other.close();
  assert.equal((await c.closed).code, 1001);
  assert.equal(c.ws.readyState, WebSocket.CLOSED);
});
