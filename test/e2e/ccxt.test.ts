/**
 * End to end: the real server, driven by the unchanged `zb` adapter of ccxt 2.9.16 with only its
 * API URLs pointed at Bourse. Every unified call a bot would make for spot trading.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ccxtErrors, connect, type Exchange } from '../fixtures/ccxt-client.ts';
import { startServer, type ServerProcess } from '../fixtures/server-process.ts';
import { admin, createTrader } from '../fixtures/zb-client.ts';

// ccxt's results are untyped: read them as a bot would.
/* eslint-disable @typescript-eslint/no-explicit-any */

const root = mkdtempSync(join(tmpdir(), 'bourse-ccxt-'));
let server: ServerProcess;
let alice: Exchange;
let bob: Exchange;

async function trader(name: string, deposits: [string, string][]): Promise<Exchange> {
  const client = await createTrader(server, name, deposits);
  return connect(server.base, client.accessKey, client.secret);
}

before(async () => {
  server = await startServer(join(root, 'data'));
  alice = await trader('alice', [['usdt', '100000']]);
  bob = await trader('bob', [['btc', '10']]);
});

after(async () => {
  await server?.stop();
  rmSync(root, { recursive: true, force: true });
});

describe('ccxt zb adapter against Bourse', () => {
  test('loadMarkets sees the venue’s spot markets with their precision and limits', async () => {
    const markets = await alice.loadMarkets();
    const btc = markets['BTC/USDT'];
    assert.equal(btc.id, 'btc_usdt');
    assert.equal(btc.precision.price, 0.01);
    assert.equal(btc.precision.amount, 0.0001);
    assert.equal(btc.limits.amount.min, 0.0001);
    assert.equal(btc.limits.cost.min, 5);
    assert.ok(markets['ZB/QC']);
  });

  test('fetchBalance shows deposits as free', async () => {
    const balance = await alice.fetchBalance();
    assert.equal(balance.USDT.free, 100000);
    assert.equal(balance.USDT.used, 0);
  });

  test('createOrder (limit, PostOnly, IOC), fetchOrder, cancelOrder, order lists, public data', async () => {
    const ask = await bob.createOrder('BTC/USDT', 'limit', 'sell', 0.5, 30000);
    assert.match(ask.id, /^\d+$/);
    const postOnly = await alice.createOrder('BTC/USDT', 'limit', 'buy', 0.1, 29000, { postOnly: true });
    await assert.rejects(
      alice.createOrder('BTC/USDT', 'limit', 'buy', 0.1, 30000, { postOnly: true }),
      (e: Error) => e instanceof ccxtErrors.InvalidOrder,
    );
    const ioc = await alice.createOrder('BTC/USDT', 'limit', 'buy', 0.2, 30000, { timeInForce: 'IOC' });
    const taker = await alice.createOrder('BTC/USDT', 'limit', 'buy', 0.5, 30000);

    const filled = await alice.fetchOrder(ioc.id, 'BTC/USDT');
    assert.equal(filled.status, 'closed');
    assert.equal(filled.filled, 0.2);
    assert.equal(filled.cost, 6000);
    const partial = await alice.fetchOrder(taker.id, 'BTC/USDT');
    assert.equal(partial.status, 'open');
    assert.equal(partial.filled, 0.3);

    const open = await alice.fetchOpenOrders('BTC/USDT');
    assert.deepEqual(open.map((o: any) => o.id).sort(), [postOnly.id, taker.id].sort());
    await alice.cancelOrder(postOnly.id, 'BTC/USDT');
    await assert.rejects(
      alice.cancelOrder(postOnly.id, 'BTC/USDT'),
      (e: Error) => e instanceof ccxtErrors.OrderNotFound,
    );
    const canceled = await alice.fetchCanceledOrders('BTC/USDT');
    assert.deepEqual(
      canceled.map((o: any) => o.id),
      [postOnly.id],
    );
    const closed = await alice.fetchClosedOrders('BTC/USDT');
    assert.ok(closed.some((o: any) => o.id === ioc.id));
    const all = await alice.fetchOrders('BTC/USDT');
    assert.equal(all.length, 3);

    await assert.rejects(
      alice.createOrder('BTC/USDT', 'limit', 'buy', 100, 30000),
      (e: Error) => e instanceof ccxtErrors.InsufficientFunds,
    );

    const ticker = await alice.fetchTicker('BTC/USDT');
    assert.equal(ticker.last, 30000);
    assert.equal(ticker.bid, 30000);
    const tickers = await alice.fetchTickers();
    assert.equal(tickers['BTC/USDT'].last, 30000);
    const book = await alice.fetchOrderBook('BTC/USDT');
    assert.deepEqual(book.bids[0], [30000, 0.2]);
    assert.deepEqual(book.asks, []);
    const trades = await alice.fetchTrades('BTC/USDT');
    assert.equal(trades.length, 2);
    assert.deepEqual(
      trades.map((t: any) => [t.price, t.amount, t.side]),
      [
        [30000, 0.2, 'buy'],
        [30000, 0.3, 'buy'],
      ],
    );
    const candles = await alice.fetchOHLCV('BTC/USDT', '1m');
    assert.equal(candles.length, 1);
    assert.deepEqual(candles[0].slice(1), [30000, 30000, 30000, 30000, 0.5]);

    const balance = await alice.fetchBalance();
    // 0.5 btc bought, 0.2% fee in btc; 15000 usdt paid; 0.2 × 30000 still frozen.
    assert.equal(balance.BTC.free, 0.499);
    assert.equal(balance.USDT.used, 6000);
    assert.equal(balance.USDT.free, 100000 - 15000 - 6000);
  });

  test("an order id in the real venue's form (19 digits, beyond 2^53) that does not exist is OrderNotFound", async () => {
    for (const id of ['202202224851151555', '9223372036854775807']) {
      await assert.rejects(
        alice.fetchOrder(id, 'BTC/USDT'),
        (e: Error) => e instanceof ccxtErrors.OrderNotFound,
      );
      await assert.rejects(
        alice.cancelOrder(id, 'BTC/USDT'),
        (e: Error) => e instanceof ccxtErrors.OrderNotFound,
      );
    }
  });

  test('a key with replay protection: ccxt passes a fresh nonce with each call; a call without one is refused', async () => {
    const key = await admin(server.adminBase, server.token, '/admin/keys/create', [
      ['user', 'alice'],
      ['perms', 'asset,entrust'],
      ['replayProtection', 'true'],
    ]);
    const strict = connect(server.base, key.accessKey as string, key.secretKey as string);
    await assert.rejects(strict.fetchBalance(), (e: Error) => e instanceof ccxtErrors.BadRequest);
    const balance = await strict.fetchBalance({ nonce: Date.now() });
    assert.ok(balance.USDT.free > 0);
    const order = await strict.createOrder('BTC/USDT', 'limit', 'buy', 0.01, 1000, { nonce: Date.now() });
    await strict.cancelOrder(order.id, 'BTC/USDT', { nonce: Date.now() });
  });

  test('a wrong secret is an AuthenticationError', async () => {
    const key = alice.apiKey as string;
    const impostor = connect(server.base, key, '00000000-0000-0000-0000-000000000000');
    await assert.rejects(impostor.fetchBalance(), (e: Error) => e instanceof ccxtErrors.AuthenticationError);
  });
});
