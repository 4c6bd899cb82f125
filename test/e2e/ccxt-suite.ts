/**
 * The `zb` suite: every unified call a bot would make for spot trading, through the unchanged `zb`
 * adapter of ccxt 2.9.16 with only its API URLs pointed at Bourse. test/e2e/ccxt.test.ts runs it
 * on the embedded server; test/integration/cluster-full.test.ts through each gateway of a cluster.
 */
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { ccxtErrors, connect, type Exchange } from '../fixtures/ccxt-client.ts';
import { admin, createTrader } from '../fixtures/zb-client.ts';

// ccxt's results are untyped: read them as a bot would.
/* eslint-disable @typescript-eslint/no-explicit-any */

export interface CcxtTarget {
  /** The public API the clients call (a server, or a gateway). */
  readonly base: string;
  /** Where users, deposits and keys are made: the venue's admin API (the engine's, in a cluster). */
  readonly venue: { readonly base: string; readonly adminBase: string; readonly token: string };
  /** Resolves once what the admin API did is visible at `base` (a gateway's replica follows the engine). */
  settled(): Promise<void>;
}

/** A fresh market of the suite's run (no orders in it yet), with the amounts of BTC/USDT. */
export interface SuiteMarket {
  readonly symbol: string;
  readonly id: string;
  /** The base coin (the engine's name) and its ccxt code. */
  readonly base: string;
  readonly code: string;
  readonly amountMin: number;
}

export const BTC_USDT: SuiteMarket = {
  symbol: 'BTC/USDT',
  id: 'btc_usdt',
  base: 'btc',
  code: 'BTC',
  amountMin: 0.0001,
};
export const ETH_USDT: SuiteMarket = {
  symbol: 'ETH/USDT',
  id: 'eth_usdt',
  base: 'eth',
  code: 'ETH',
  amountMin: 0.001,
};

export interface CcxtSuite {
  /** Prefix of the suite's user names (a venue can run the suite more than once). */
  readonly users: string;
  readonly market: SuiteMarket;
}

/** Registers the suite under `title`, run against `target()` (read when the suite starts). */
export function describeCcxtZb(
  title: string,
  target: () => CcxtTarget,
  suite: CcxtSuite,
  options: { skip?: string | boolean } = {},
): void {
  describe(title, options, () => {
    let alice: Exchange;
    let bob: Exchange;
    let t: CcxtTarget;
    const { market } = suite;

    async function trader(name: string, deposits: [string, string][]): Promise<Exchange> {
      const client = await createTrader(t.venue, `${suite.users}${name}`, deposits);
      await t.settled();
      return connect(t.base, client.accessKey, client.secret);
    }

    before(async () => {
      t = target();
      alice = await trader('alice', [['usdt', '100000']]);
      bob = await trader('bob', [[market.base, '10']]);
    });

    test('loadMarkets sees the venue’s spot markets with their precision and limits', async () => {
      const markets = await alice.loadMarkets();
      const btc = markets[market.symbol];
      assert.equal(btc.id, market.id);
      assert.equal(btc.precision.price, 0.01);
      assert.equal(btc.precision.amount, 0.0001);
      assert.equal(btc.limits.amount.min, market.amountMin);
      assert.equal(btc.limits.cost.min, 5);
      assert.ok(markets['ZB/QC']);
    });

    test('fetchBalance shows deposits as free', async () => {
      const balance = await alice.fetchBalance();
      assert.equal(balance.USDT.free, 100000);
      assert.equal(balance.USDT.used, 0);
    });

    test('createOrder (limit, PostOnly, IOC), fetchOrder, cancelOrder, order lists, public data', async () => {
      const ask = await bob.createOrder(market.symbol, 'limit', 'sell', 0.5, 30000);
      assert.match(ask.id, /^\d+$/);
      const postOnly = await alice.createOrder(market.symbol, 'limit', 'buy', 0.1, 29000, { postOnly: true });
      await assert.rejects(
        alice.createOrder(market.symbol, 'limit', 'buy', 0.1, 30000, { postOnly: true }),
        (e: Error) => e instanceof ccxtErrors.InvalidOrder,
      );
      const ioc = await alice.createOrder(market.symbol, 'limit', 'buy', 0.2, 30000, { timeInForce: 'IOC' });
      const taker = await alice.createOrder(market.symbol, 'limit', 'buy', 0.5, 30000);

      const filled = await alice.fetchOrder(ioc.id, market.symbol);
      assert.equal(filled.status, 'closed');
      assert.equal(filled.filled, 0.2);
      assert.equal(filled.cost, 6000);
      const partial = await alice.fetchOrder(taker.id, market.symbol);
      assert.equal(partial.status, 'open');
      assert.equal(partial.filled, 0.3);

      const open = await alice.fetchOpenOrders(market.symbol);
      assert.deepEqual(open.map((o: any) => o.id).sort(), [postOnly.id, taker.id].sort());
      await alice.cancelOrder(postOnly.id, market.symbol);
      await assert.rejects(
        alice.cancelOrder(postOnly.id, market.symbol),
        (e: Error) => e instanceof ccxtErrors.OrderNotFound,
      );
      const canceled = await alice.fetchCanceledOrders(market.symbol);
      assert.deepEqual(
        canceled.map((o: any) => o.id),
        [postOnly.id],
      );
      const closed = await alice.fetchClosedOrders(market.symbol);
      assert.ok(closed.some((o: any) => o.id === ioc.id));
      const all = await alice.fetchOrders(market.symbol);
      assert.equal(all.length, 3);

      await assert.rejects(
        alice.createOrder(market.symbol, 'limit', 'buy', 100, 30000),
        (e: Error) => e instanceof ccxtErrors.InsufficientFunds,
      );

      const ticker = await alice.fetchTicker(market.symbol);
      assert.equal(ticker.last, 30000);
      assert.equal(ticker.bid, 30000);
      const tickers = await alice.fetchTickers();
      assert.equal(tickers[market.symbol].last, 30000);
      const book = await alice.fetchOrderBook(market.symbol);
      assert.deepEqual(book.bids[0], [30000, 0.2]);
      assert.deepEqual(book.asks, []);
      const trades = await alice.fetchTrades(market.symbol);
      assert.equal(trades.length, 2);
      assert.deepEqual(
        trades.map((t: any) => [t.price, t.amount, t.side]),
        [
          [30000, 0.2, 'buy'],
          [30000, 0.3, 'buy'],
        ],
      );
      const candles = await alice.fetchOHLCV(market.symbol, '1m');
      assert.equal(candles.length, 1);
      assert.deepEqual(candles[0].slice(1), [30000, 30000, 30000, 30000, 0.5]);

      const balance = await alice.fetchBalance();
      // 0.5 btc bought, 0.2% fee in btc; 15000 usdt paid; 0.2 × 30000 still frozen.
      assert.equal(balance[market.code].free, 0.499);
      assert.equal(balance.USDT.used, 6000);
      assert.equal(balance.USDT.free, 100000 - 15000 - 6000);
    });

    test("an order id in the real venue's form (19 digits, beyond 2^53) that does not exist is OrderNotFound", async () => {
      for (const id of ['202202224851151555', '9223372036854775807']) {
        await assert.rejects(
          alice.fetchOrder(id, market.symbol),
          (e: Error) => e instanceof ccxtErrors.OrderNotFound,
        );
        await assert.rejects(
          alice.cancelOrder(id, market.symbol),
          (e: Error) => e instanceof ccxtErrors.OrderNotFound,
        );
      }
    });

    test('a key with replay protection: ccxt passes a fresh nonce with each call; a call without one is refused', async () => {
      const key = await admin(t.venue.adminBase, t.venue.token, '/admin/keys/create', [
        ['user', `${suite.users}alice`],
        ['perms', 'asset,entrust'],
        ['replayProtection', 'true'],
      ]);
      await t.settled();
      const strict = connect(t.base, key.accessKey as string, key.secretKey as string);
      await assert.rejects(strict.fetchBalance(), (e: Error) => e instanceof ccxtErrors.BadRequest);
      const balance = await strict.fetchBalance({ nonce: Date.now() });
      assert.ok(balance.USDT.free > 0);
      const order = await strict.createOrder(market.symbol, 'limit', 'buy', 0.01, 1000, {
        nonce: Date.now(),
      });
      await strict.cancelOrder(order.id, market.symbol, { nonce: Date.now() });
    });

    test('a wrong secret is an AuthenticationError', async () => {
      const key = alice.apiKey as string;
      const impostor = connect(t.base, key, '00000000-0000-0000-0000-000000000000');
      await assert.rejects(
        impostor.fetchBalance(),
        (e: Error) => e instanceof ccxtErrors.AuthenticationError,
      );
    });
  });
}
