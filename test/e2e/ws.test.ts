/**
 * End to end over WebSocket: the real server process, the unchanged ccxt pro `zb` adapter of
 * ccxt 2.9.16 (only its URLs pointed at Bourse) for the public channels, and a plain WebSocket
 * client for the signed private channels while orders go through the signed REST API.
 */
import assert from 'node:assert/strict';
import { Agent } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import ccxt from 'ccxt';
import { startServer, type ServerProcess } from '../fixtures/server-process.ts';
import { createTrader, type ZbClient } from '../fixtures/zb-client.ts';
import { signedSubscription, WsTestClient, type Message } from '../fixtures/ws-client.ts';
import { fileTimeLimit } from '../fixtures/time-limit.ts';

fileTimeLimit(import.meta.url);

// ccxt 2.x ships no types for this use; the adapter is used exactly as a bot would.
/* eslint-disable @typescript-eslint/no-explicit-any */
type Exchange = any;

const root = mkdtempSync(join(tmpdir(), 'bourse-ws-e2e-'));
const dataDir = join(root, 'data');
let server: ServerProcess;
let alice: ZbClient;
let bob: ZbClient;

const wsBase = (): string => server.base.replace(/^http/, 'ws');

/** ccxt pro's zb, its REST and WS URLs at Bourse. Plain ws:// needs an http agent (ccxt defaults to https's). */
function proClient(): Exchange {
  const base = server.base;
  const exchange: Exchange = new (ccxt as any).pro.zb({ enableRateLimit: false });
  exchange.urls.api = {
    ...exchange.urls.api,
    spot: { v1: { public: `${base}/data`, private: `${base}/api` } },
    contract: {
      v1: { public: `${base}/api/public` },
      v2: { public: `${base}/Server/api`, private: `${base}/Server/api` },
    },
    ws: { spot: `${wsBase()}/websocket`, contract: `${wsBase()}/ws/public/v1` },
  };
  exchange.options.ws = { options: { agent: new Agent() } };
  return exchange;
}

const order = (client: ZbClient, side: '1' | '0', price: string, amount: string, market = 'btc_usdt') =>
  client.call('order', [
    ['currency', market],
    ['tradeType', side],
    ['price', price],
    ['amount', amount],
  ]);

before(async () => {
  server = await startServer(dataDir);
  alice = await createTrader(server, 'alice', [['usdt', '1000000']]);
  bob = await createTrader(server, 'bob', [
    ['btc', '100'],
    ['eth', '100'],
  ]);
});

after(async () => {
  await server?.stop();
  rmSync(root, { recursive: true, force: true });
});

describe('ccxt pro zb adapter, unchanged, against Bourse', () => {
  test('watchTicker, watchOrderBook and watchTrades see what REST shows, then the next trade', async () => {
    const pro = proClient();
    try {
      assert.equal((await order(bob, '0', '30500.00', '2.0000')).code, 1000);
      assert.equal((await order(alice, '1', '29500.00', '1.0000')).code, 1000);
      const ticker = await pro.watchTicker('BTC/USDT');
      assert.equal(ticker.symbol, 'BTC/USDT');
      assert.equal(ticker.ask, 30500);
      assert.equal(ticker.bid, 29500);
      const book = await pro.watchOrderBook('BTC/USDT', 5);
      assert.deepEqual([...book.asks], [[30500, 2]]);
      assert.deepEqual([...book.bids], [[29500, 1]]);
      const before = await pro.watchTrades('BTC/USDT');
      assert.equal(before.length, 0);

      const nextTrades = pro.watchTrades('BTC/USDT');
      const nextBook = pro.watchOrderBook('BTC/USDT', 5);
      const nextTicker = pro.watchTicker('BTC/USDT');
      assert.equal((await order(alice, '1', '30500.00', '0.5000')).code, 1000);
      const trades = await nextTrades;
      assert.equal(trades.length, 1);
      assert.deepEqual(
        [trades[0].side, trades[0].price, trades[0].amount, trades[0].symbol],
        ['buy', 30500, 0.5, 'BTC/USDT'],
      );
      const rest = (await (await fetch(`${server.base}/data/v1/trades?market=btc_usdt`)).json()) as {
        tid: number;
      }[];
      assert.equal(trades[0].id, String(rest[rest.length - 1]?.tid));
      assert.deepEqual([...(await nextBook).asks], [[30500, 1.5]]);
      assert.equal((await nextTicker).last, 30500);
    } finally {
      await pro.close();
    }
  });
});

/** The messages on a private connection after its snapshots, in arrival order. */
async function privateClient(client: ZbClient, market = 'ethusdtdefault'): Promise<WsTestClient> {
  const ws = await WsTestClient.connect(`${wsBase()}/websocket`);
  ws.send(signedSubscription('push_user_incr_record', client.accessKey, client.secret, { market }));
  ws.send(signedSubscription('push_user_incr_asset', client.accessKey, client.secret));
  await ws.onChannel('push_user_incr_record', 'userRecord');
  await ws.onChannel('push_user_incr_asset', 'userIncrAsset');
  return ws;
}

const isPush = (m: Message): boolean => m?.dataType === 'userIncrRecord' || m?.dataType === 'userIncrAsset';
const summary = (m: Message): string =>
  m.dataType === 'userIncrRecord'
    ? `order ${m.record[0]} status ${m.record[7]} filled ${m.record[3]}`
    : `assets ${m.coins.map((c: { key: string; available: string; freez: string }) => `${c.key} ${c.available}/${c.freez}`).join(', ')}`;

describe('private channels over a plain WebSocket, orders through signed REST', () => {
  test("an order's life (placed, partly filled, filled; another cancelled) and its balance changes, in order", async () => {
    const carol = await createTrader(server, 'carol', [['usdt', '10000']]);
    const ws = await privateClient(carol);
    const seen: string[] = [];
    const expect = async (n: number): Promise<void> => {
      for (let i = 0; i < n; i++) seen.push(summary(await ws.take(isPush)));
    };

    const placed = await order(carol, '1', '2000.00', '3.0000', 'eth_usdt');
    const id = placed.id as string;
    await expect(2);
    await order(bob, '0', '2000.00', '1.0000', 'eth_usdt');
    await expect(2);
    await order(bob, '0', '2000.00', '2.0000', 'eth_usdt');
    await expect(2);
    const second = await order(carol, '1', '1500.00', '1.0000', 'eth_usdt');
    await expect(2);
    const cancel = await carol.call('cancelOrder', [
      ['currency', 'eth_usdt'],
      ['id', second.id as string],
    ]);
    assert.equal(cancel.code, 1000);
    await expect(2);
    // Fees are 0.2% of what is received (eth for a buy).
    assert.deepEqual(seen, [
      `order ${id} status 0 filled 0`,
      'assets usdt 4000.000000/6000.000000',
      `order ${id} status 3 filled 1`,
      'assets eth 0.99800000/0.00000000, usdt 4000.000000/4000.000000',
      `order ${id} status 2 filled 3`,
      'assets eth 2.99400000/0.00000000, usdt 4000.000000/0.000000',
      `order ${second.id} status 0 filled 0`,
      'assets usdt 2500.000000/1500.000000',
      `order ${second.id} status 1 filled 0`,
      'assets usdt 4000.000000/0.000000',
    ]);
    await ws.close();
  });

  test('after a reconnect the snapshots rebuild the state REST shows', async () => {
    const dan = await createTrader(server, 'dan', [['usdt', '10000']]);
    let ws = await privateClient(dan);
    await order(dan, '1', '1000.00', '1.0000', 'eth_usdt');
    await ws.take(isPush);
    await ws.close();
    // While disconnected: one more order, one fill.
    const kept = await order(dan, '1', '1100.00', '2.0000', 'eth_usdt');
    await order(bob, '0', '1100.00', '0.5000', 'eth_usdt');

    ws = await WsTestClient.connect(`${wsBase()}/websocket`);
    ws.send(
      signedSubscription('push_user_incr_record', dan.accessKey, dan.secret, { market: 'ethusdtdefault' }),
    );
    ws.send(signedSubscription('push_user_asset', dan.accessKey, dan.secret));
    const records = (await ws.onChannel('push_user_incr_record', 'userRecord')).records as unknown[][];
    const assets = (await ws.onChannel('push_user_asset', 'userAsset')).coins;
    const open = (await dan.call('getUnfinishedOrdersIgnoreTradeType', [
      ['currency', 'eth_usdt'],
      ['pageIndex', '1'],
      ['pageSize', '10'],
    ])) as unknown as { id: string; trade_amount: number; status: number }[];
    assert.deepEqual(
      records.map((r) => [r[0], r[3], r[7]]).sort(),
      open.map((o) => [o.id, o.trade_amount, o.status]).sort(),
    );
    assert.ok(records.some((r) => r[0] === kept.id && r[3] === 0.5 && r[7] === 3));
    const account = (await dan.call('getAccountInfo')) as { result: { coins: unknown[] } };
    assert.deepEqual(assets, account.result.coins);
    await ws.close();
  });
});

describe("the request channels of ZB's WebSocket demos, on the real server", () => {
  test('an order placed over the WebSocket rests, REST and the pushes see it, and a WebSocket cancel ends it', async () => {
    const frank = await createTrader(server, 'frank', [['usdt', '10000']]);
    const ws = await WsTestClient.connect(`${wsBase()}/websocket`);
    const ask = async (
      channel: string,
      no: string,
      params: Record<string, unknown> = {},
    ): Promise<Message> => {
      ws.send(signedSubscription(channel, frank.accessKey, frank.secret, { no, ...params }));
      return ws.take((m) => m?.no === no, 10_000, `the answer to ${channel}`);
    };
    ws.send(
      signedSubscription('push_user_incr_record', frank.accessKey, frank.secret, {
        market: 'btcusdtdefault',
      }),
    );
    await ws.onChannel('push_user_incr_record', 'userRecord');
    const placed = await ask('btcusdt_order', '1', { tradeType: 1, price: 20000, amount: 0.1 });
    assert.equal(placed.success, true, JSON.stringify(placed));
    const id = placed.data.id as string;
    const pushed = await ws.take((m) => m?.channel === 'push_user_incr_record' && m.record?.[0] === id);
    assert.equal(pushed.record[7], 0, 'pending');
    const viaRest = await frank.call('getOrder', [
      ['currency', 'btc_usdt'],
      ['id', id],
    ]);
    assert.equal(viaRest.status, 0);
    assert.deepEqual((await ask('btcusdt_getorder', '2', { id })).data, viaRest);
    assert.deepEqual((await ask('getaccountinfo', '3')).data, await frank.call('getAccountInfo'));
    assert.equal((await ask('btcusdt_cancelorder', '4', { id })).code, 1000);
    const status = await frank.call('getOrder', [
      ['currency', 'btc_usdt'],
      ['id', id],
    ]);
    assert.equal(status.status, 1, 'cancelled');
    await ws.close();
  });
});

describe('durability', () => {
  test('a pushed trade survives kill -9: pushes carry only what the journal made durable', async () => {
    const ws = await WsTestClient.connect(`${wsBase()}/websocket`);
    ws.subscribe('ethbtc_trades');
    await ws.onChannel('ethbtc_trades');
    const erin = await createTrader(server, 'erin', [['btc', '10']]);
    await order(bob, '0', '0.050000', '1.00', 'eth_btc');
    void order(erin, '1', '0.050000', '1.00', 'eth_btc').catch(() => undefined);
    const pushed = (await ws.onChannel('ethbtc_trades')).data[0];
    await server.kill();
    server = await startServer(dataDir);
    const rest = (await (await fetch(`${server.base}/data/v1/trades?market=eth_btc`)).json()) as {
      tid: number;
    }[];
    assert.deepEqual(
      rest.find((t) => t.tid === pushed.tid),
      pushed,
    );
  });
});
