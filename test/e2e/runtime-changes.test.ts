/**
 * End to end, issue 16 "Change": the operator adds a coin (with its chain) and a market (with a
 * maker rebate) through the `bourse` CLI while the real server runs; the public API, the WebSocket
 * channels and ccxt 2.9.16's unchanged `zb` adapter see and trade it at once; a frozen user is
 * refused with the interface's code while reads work; the market is closed (orders cancelled,
 * funds released). Then the server is stopped: a replay of the journal from genesis gives exactly
 * the state hash of the snapshot taken after every change (`bourse verify`), and a restart the
 * state hash the running server had.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { bourseJson, runBourse, type CliRun } from '../fixtures/cli.ts';
import { ccxtErrors, connect, type Exchange } from '../fixtures/ccxt-client.ts';
import { startServer, type ServerProcess } from '../fixtures/server-process.ts';
import { WsTestClient } from '../fixtures/ws-client.ts';
import { admin, createTrader, TEST_USER_AGENT } from '../fixtures/zb-client.ts';
import { fileTimeLimit } from '../fixtures/time-limit.ts';

fileTimeLimit(import.meta.url);

// ccxt's results are untyped: read them as a bot would.
/* eslint-disable @typescript-eslint/no-explicit-any */

const root = mkdtempSync(join(tmpdir(), 'bourse-runtime-'));
const dataDir = join(root, 'data');
const env = { BOURSE_DATA: dataDir };
let server: ServerProcess;

const cli = (argv: string[]): Promise<CliRun> => runBourse(argv, { env });

/** `market add <name>` at the settings every market here shares, then `extra`. */
const marketAdd = (name: string, ...extra: string[]): string[] => [
  'market',
  'add',
  name,
  ...['--price-scale', '2', '--amount-scale', '2', '--min-amount', '0.01', '--min-size', '1'],
  ...extra,
];

async function publicGet(path: string): Promise<any> {
  const response = await fetch(`${server.base}${path}`, { headers: { 'user-agent': TEST_USER_AGENT } });
  return response.json();
}

async function trader(name: string, deposits: [string, string][]): Promise<Exchange> {
  const client = await createTrader(server, name, deposits);
  return connect(server.base, client.accessKey, client.secret);
}

before(async () => {
  server = await startServer(dataDir);
});

after(async () => {
  await server?.stop();
  rmSync(root, { recursive: true, force: true });
});

describe('runtime changes against the real server', () => {
  let alice: Exchange;
  let bob: Exchange;

  test('the CLI adds a coin and a market (table, then --json); bad ones refused, nothing changed', async () => {
    // The edge's caches are warm before the change: they must follow it.
    assert.equal((await publicGet('/api/getFeeInfo')).result.SOL, undefined);
    assert.equal((await publicGet('/data/v1/markets')).sol_usdt, undefined);
    assert.equal((await publicGet('/data/v1/venueInfo')).markets.sol_usdt, undefined);
    const coin = await cli([
      'coin',
      'add',
      'sol',
      '--unit-decimal',
      '8',
      '--en-name',
      'Solana',
      '--add-chain',
      'SOL:SOL:2:0.01:0.1',
      '--daily-limit',
      '1000',
    ]);
    assert.equal(coin.code, 0, coin.err);
    assert.match(coin.out, /^coin sol \(Solana, 8 decimals\): deposits on, withdrawals on, daily limit 1000/);
    assert.match(coin.out, /SOL\s+SOL\s+no\s+2\s+0\.01\s+0\.1\s+on\s+on/);

    const { stateHash: before } = await bourseJson(['state'], env);
    const refusals: [string[], RegExp][] = [
      [['coin', 'add', 'sol', '--unit-decimal', '8'], /coin sol exists/],
      [
        marketAdd('sol_usdt', '--maker-fee', '-0.002', '--taker-fee', '0.001'),
        /rebate .* may not exceed the taker fee/,
      ],
      [marketAdd('doge_usdt'), /unknown coin 'doge'/],
      [marketAdd('btc_usdt'), /market btc_usdt exists/],
      [
        ['market', 'change', 'sol_usdt', '--taker-fee', '0.001'],
        /unknown market 'sol_usdt': the markets are btc_usdt, /,
      ],
      [['user', 'freeze', 'nobody'], /no user named 'nobody'/],
      [['coin', 'change', 'sol', '--chain', 'SOL', '--withdraw-fee', '0.000000001'], /at most 8 decimals/],
    ];
    for (const [argv, message] of refusals) {
      const r = await cli(argv);
      assert.equal(r.code, 1, `${argv.join(' ')} was not refused: ${r.out}`);
      assert.match(r.err, message);
    }
    assert.equal((await bourseJson(['state'], env)).stateHash, before, 'a refusal changed the state');

    const market = await bourseJson(
      marketAdd('sol_usdt', '--maker-fee', '-0.0005', '--taker-fee', '0.001'),
      env,
    );
    assert.deepEqual(market, {
      market: 'sol_usdt',
      base: 'sol',
      quote: 'usdt',
      priceScale: 2,
      amountScale: 2,
      minAmount: '0.01',
      minSize: '1',
      makerFee: '-0.0005',
      takerFee: '0.001',
      status: 'trading',
    });
  });

  test('the public API, the WebSocket and ccxt zb see the new market and trade it; the rebate is paid', async () => {
    const markets = await publicGet('/data/v1/markets');
    assert.deepEqual(markets.sol_usdt, { amountScale: 2, minAmount: 0.01, minSize: 1, priceScale: 2 });
    assert.deepEqual((await publicGet('/api/getFeeInfo')).result.SOL, [
      { chainName: 'SOL', fee: 0.01, mainChainName: 'SOL', canDeposit: true, canWithdraw: true },
    ]);
    assert.equal((await publicGet('/data/v1/getGroupMarkets')).usdt.includes('sol_usdt'), true);
    assert.deepEqual((await publicGet('/data/v1/venueInfo')).markets.sol_usdt, {
      makerFee: '-0.0005',
      takerFee: '0.001',
      status: 'trading',
    });

    const ws = await WsTestClient.connect(`${server.base.replace(/^http/, 'ws')}/websocket`);
    ws.subscribe('solusdt_depth');
    await ws.onChannel('solusdt_depth');

    alice = await trader('alice', [['usdt', '10000']]);
    bob = await trader('bob', [['sol', '100']]);
    // The chain watcher learned the coin's chain: a deposit on it is credited at 2 confirmations.
    const address = await bourseJson(['address', 'create', 'bob', 'sol'], env);
    assert.equal(address.chain, 'SOL');
    assert.equal((await cli(['chain', 'deposit', String(address.address), '3', '--chain', 'SOL'])).code, 0);
    assert.equal((await cli(['chain', 'mine', '2'])).code, 0);
    const bobFunds = await bob.fetchBalance();
    assert.equal(bobFunds.SOL.free, 103);

    const loaded = await alice.loadMarkets();
    const sol = loaded['SOL/USDT'];
    assert.equal(sol.id, 'sol_usdt');
    assert.equal(sol.precision.price, 0.01);
    assert.equal(sol.precision.amount, 0.01);
    assert.equal(sol.limits.amount.min, 0.01);
    assert.equal(sol.limits.cost.min, 1);

    // bob takes alice's bid: he pays 0.1 % of 150 usdt, which is the usdt fee income.
    await alice.createOrder('SOL/USDT', 'limit', 'buy', 1, 150);
    await bob.createOrder('SOL/USDT', 'limit', 'sell', 1, 150);
    // alice takes bob's ask: bob, the maker, gets a 0.05 % rebate in usdt out of that income.
    const ask = await bob.createOrder('SOL/USDT', 'limit', 'sell', 2, 151);
    const depth = await ws.take((m) => m?.channel === 'solusdt_depth' && m.asks?.length > 0);
    assert.deepEqual(depth.asks, [[151, 2]]);
    await alice.createOrder('SOL/USDT', 'limit', 'buy', 1, 151);
    assert.equal((await bob.fetchOrder(ask.id, 'SOL/USDT')).filled, 1);

    const bobBalance = await bob.fetchBalance();
    assert.equal(bobBalance.USDT.free, 150 - 0.15 + 151 + 0.0755);
    assert.equal(bobBalance.SOL.used, 1);
    assert.equal(bobBalance.SOL.free, 103 - 3);
    const aliceBalance = await alice.fetchBalance();
    assert.equal(aliceBalance.SOL.free, 2 - 0.001);

    const ticker = await alice.fetchTicker('SOL/USDT');
    assert.equal(ticker.last, 151);
    const book = await alice.fetchOrderBook('SOL/USDT');
    assert.deepEqual(book.asks, [[151, 1]]);
    const all = await publicGet('/data/v1/allTicker');
    assert.equal(all.solusdt.last, '151.00');
    assert.deepEqual((await publicGet('/data/v1/depth?market=sol_usdt&size=5')).asks, [[151, 1]]);
    await ws.close();
  });

  test('a frozen user is refused with 4001 (ccxt: ExchangeNotAvailable) while reads work', async () => {
    assert.match((await cli(['user', 'freeze', 'alice'])).out, /user alice: frozen/);
    await assert.rejects(
      alice.createOrder('SOL/USDT', 'limit', 'buy', 1, 140),
      (e: Error) => e instanceof ccxtErrors.ExchangeNotAvailable && /frozen/.test(e.message),
    );
    assert.ok((await alice.fetchBalance()).USDT.free > 0);
    const users = await bourseJson(['user', 'list', '--search', 'alice'], env);
    const row = (users.users as Record<string, unknown>[])[0];
    assert.equal(row?.status, 'frozen');
    assert.equal(typeof row?.created, 'number');
    await cli(['user', 'unfreeze', 'alice']);
    await alice.createOrder('SOL/USDT', 'limit', 'buy', 1, 140);
  });

  test('closing the market cancels its orders and releases their funds; it stays listed as closed', async () => {
    const closed = await cli(['market', 'close', 'sol_usdt']);
    assert.equal(closed.code, 0, closed.err);
    assert.match(closed.out, /market sol_usdt closed: 2 orders cancelled/);
    assert.deepEqual(await bob.fetchOpenOrders('SOL/USDT'), []);
    assert.equal((await bob.fetchBalance()).SOL.used, 0);
    assert.equal((await alice.fetchBalance()).USDT.used, 0);
    await assert.rejects(
      bob.createOrder('SOL/USDT', 'limit', 'sell', 1, 150),
      (e: Error) => e instanceof ccxtErrors.ExchangeNotAvailable,
    );
    const listed = await admin(server.adminBase, server.token, '/admin/markets/list', [
      ['market', 'sol_usdt'],
    ]);
    assert.equal((listed.markets as Record<string, unknown>[])[0]?.status, 'closed');
    assert.equal((await publicGet('/data/v1/venueInfo')).markets.sol_usdt.status, 'closed');
    assert.ok((await publicGet('/data/v1/markets')).sol_usdt, 'a closed market stays listed');
  });

  test('a replay from the journal reproduces every runtime change exactly; so does a restart', async () => {
    const keys = (await bourseJson(['key', 'list', '--user', 'bob'], env)).keys as Record<string, unknown>[];
    assert.equal((await cli(['key', 'rotate', String(keys[0]?.accessKey)])).code, 0);
    assert.equal((await cli(['user', 'withdraw-limit', 'bob', 'sol', '5'])).code, 0);
    const change = ['coin', 'change', 'sol', '--chain', 'SOL', '--withdraw-fee', '0.02', '--deposit', 'off'];
    assert.equal((await cli(change)).code, 0);
    assert.deepEqual((await publicGet('/api/getFeeInfo')).result.SOL, [
      { chainName: 'SOL', fee: 0.02, mainChainName: 'SOL', canDeposit: false, canWithdraw: true },
    ]);
    const snapshot = await bourseJson(['snapshot'], env);
    assert.match(String(snapshot.path), /snapshot/);
    const { stateHash: running, lastSeq } = await bourseJson(['state'], env);
    assert.equal(await server.stop(), 0);

    const verified = await cli(['verify', '--json']);
    assert.equal(verified.code, 0, verified.out + verified.err);
    const report = JSON.parse(verified.out) as Record<string, unknown>;
    assert.deepEqual(report.problems, []);
    assert.ok((report.hashesCompared as number) >= 1, 'the replay was compared with the snapshot');
    assert.equal(report.replayed, lastSeq, 'the replay ran from genesis over the whole journal');

    server = await startServer(dataDir);
    const restarted = await bourseJson(['state'], env);
    assert.deepEqual([restarted.stateHash, restarted.lastSeq], [running, lastSeq]);
    assert.equal((await publicGet('/data/v1/markets')).sol_usdt.priceScale, 2);
  });
});
