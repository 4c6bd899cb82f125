/**
 * Issue 18, roles in separate processes: the engine (src/cluster/engine-role.ts, a child process)
 * on a JetStream journal of a private nats-server with `sync_interval: always`, and two gateways
 * (startGateway) each with its own replica fed by the stream. Orders go in through either
 * gateway; a WebSocket client on gateway B sees a trade placed through gateway A; replies come
 * after the gateway's replica has applied the command (a read right after sees it); the
 * replicas' state hash is the engine's.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startGateway, type RunningGateway } from '../../src/cluster/gateway.ts';
import { dataPaths } from '../../src/config/data-dir.ts';
import { readVenueIdentity } from '../../src/config/venue-identity.ts';
import { SILENT_LOG } from '../../src/observability/memory-log.ts';
import { historyLocation, openHistoryStore } from '../../src/store/history-location.ts';
import type { HistoryStore } from '../../src/store/history-store.ts';
import { natsSkipReason, startNatsServer, type NatsServer } from '../fixtures/nats-server.ts';
import { startRole } from '../fixtures/role-process.ts';
import { startServer, type ServerProcess } from '../fixtures/server-process.ts';
import { ccxtErrors, connect as ccxtZb } from '../fixtures/ccxt-client.ts';
import { WsTestClient } from '../fixtures/ws-client.ts';
import { admin, createTrader, ZbClient } from '../fixtures/zb-client.ts';
import { fileTimeLimit } from '../fixtures/time-limit.ts';

fileTimeLimit(import.meta.url, 10 * 60_000);

const ENGINE_ROLE = join(import.meta.dirname, '..', '..', 'src', 'cluster', 'engine-role.ts');
const skip = natsSkipReason();
const root = mkdtempSync(join(tmpdir(), 'bourse-roles-'));
let nats: NatsServer | undefined;
let engine: ServerProcess | undefined;
let history: HistoryStore | undefined;
let engineFlags: string[] = [];
const gateways: RunningGateway[] = [];

before(async () => {
  if (skip !== false) return;
  nats = await startNatsServer();
  const keyFile = join(root, 'keys', 'master.key');
  mkdirSync(join(root, 'keys'), { mode: 0o700 });
  writeFileSync(keyFile, randomBytes(32).toString('hex'), { mode: 0o600 });
  const dataDir = join(root, 'engine');
  const journalUrl = `${nats.url}?stream=ROLES_${process.pid}&subject=roles.journal&monitor=${nats.monitorUrl}`;
  engineFlags = ['--journal-url', journalUrl, '--rate-limits=false', '--master-key-file', keyFile];
  engine = await startServer(dataDir, engineFlags, {}, [], ENGINE_ROLE);
  const identity = readVenueIdentity(dataDir);
  assert.ok(identity !== undefined);
  // The engine writes its SQLite history; the gateways read it (PostgreSQL across machines).
  history = await openHistoryStore(historyLocation(undefined, dataPaths(dataDir).history), () => undefined);
  for (let i = 0; i < 2; i++) {
    gateways.push(
      await startGateway({
        identity,
        masterKey: Buffer.from(readFileSync(keyFile, 'utf8').trim(), 'hex'),
        servers: nats.url,
        stream: `ROLES_${process.pid}`,
        subject: 'roles.journal',
        history,
        rateLimiter: undefined,
        host: '127.0.0.1',
        port: 0,
        log: SILENT_LOG,
      }),
    );
  }
});

after(async () => {
  for (const g of gateways) await g.close();
  await history?.close();
  await engine?.stop();
  await nats?.stop();
  rmSync(root, { recursive: true, force: true });
});

const baseOf = (g: RunningGateway): string => `http://127.0.0.1:${g.http.port}`;

describe('engine and gateways in separate processes (issue 18)', { skip }, () => {
  test('orders through either gateway; a WebSocket client on B sees a trade placed through A; replicas match the engine', async () => {
    const [a, b] = gateways as [RunningGateway, RunningGateway];
    const server = engine as ServerProcess;
    // Users and keys are made on the engine's admin API; trading goes through the gateways.
    const alice = await createTrader(server, 'alice', [['usdt', '100000']]);
    const bob = await createTrader(server, 'bob', [['btc', '10']]);
    const viaA = (c: ZbClient): ZbClient => new ZbClient(baseOf(a), c.accessKey, c.secret);
    const viaB = (c: ZbClient): ZbClient => new ZbClient(baseOf(b), c.accessKey, c.secret);

    const ws = await WsTestClient.connect(`${baseOf(b).replace(/^http/, 'ws')}/websocket`);
    ws.subscribe('btcusdt_trades');
    await ws.onChannel('btcusdt_trades');

    const sell = await viaB(bob).call('order', [
      ['currency', 'btc_usdt'],
      ['tradeType', '0'],
      ['price', '30000.00'],
      ['amount', '0.0100'],
    ]);
    assert.equal(sell.code, 1000, JSON.stringify(sell));
    // Read your writes: the order is on gateway B's replica when its reply arrives.
    const got = await viaB(bob).call('getOrder', [
      ['currency', 'btc_usdt'],
      ['id', String(sell.id)],
    ]);
    assert.equal(got.code ?? 1000, 1000, JSON.stringify(got));

    const buy = await viaA(alice).call('order', [
      ['currency', 'btc_usdt'],
      ['tradeType', '1'],
      ['price', '30000.00'],
      ['amount', '0.0100'],
    ]);
    assert.equal(buy.code, 1000, JSON.stringify(buy));
    const pushed = await ws.onChannel('btcusdt_trades');
    assert.equal(pushed.data[0].price, '30000.00');
    await ws.close();

    // The engine publishes its state hash every second; each replica checks its own against it.
    while (a.replica.hashesChecked === 0 || b.replica.hashesChecked === 0) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const state = await admin(server.adminBase, server.token, '/admin/state', []);
    for (const g of [a, b]) {
      await g.replica.whenApplied(state.lastSeq as number);
      assert.equal(g.replica.state.stateHash(), state.stateHash);
    }
    const depth = (await (await fetch(`${baseOf(a)}/data/v1/depth?market=btc_usdt&size=5`)).json()) as {
      asks: unknown[];
      bids: unknown[];
    };
    assert.deepEqual([depth.asks.length, depth.bids.length], [0, 0]);
  });

  test('bourse gateway runs as its own process on the engine’s stream; killing it leaves the engine and the other gateways serving', async () => {
    const server = engine as ServerProcess;
    // The role's own entry (startRole): bin/bourse.js runs it in a child of its own, which a
    // kill -9 of the wrapper would leave running.
    const gateway = await startRole('gateway', [
      '--data',
      join(root, 'engine'),
      '--port',
      '0',
      ...engineFlags,
    ]);
    try {
      const base = gateway.ready;
      const carol = await createTrader(server, 'carol', [['usdt', '100000']]);
      const viaProcess = new ZbClient(base, carol.accessKey, carol.secret);
      const placed = await viaProcess.call('order', [
        ['currency', 'btc_usdt'],
        ['tradeType', '1'],
        ['price', '29000.00'],
        ['amount', '0.0100'],
      ]);
      assert.equal(placed.code, 1000, JSON.stringify(placed));
      await gateway.kill();
      // The order is the engine's, seen by the in-process gateway's replica.
      const other = new ZbClient(baseOf(gateways[0] as RunningGateway), carol.accessKey, carol.secret);
      const seen = await other.call('getOrder', [
        ['currency', 'btc_usdt'],
        ['id', String(placed.id)],
      ]);
      assert.equal(String(seen.id), String(placed.id), JSON.stringify(seen));
    } finally {
      await gateway.kill();
    }
  });

  test('ccxt’s zb adapter, unchanged, trades through either gateway', async () => {
    /* eslint-disable @typescript-eslint/no-explicit-any -- ccxt's results are untyped */
    const [a, b] = gateways as [RunningGateway, RunningGateway];
    const server = engine as ServerProcess;
    const dora = await createTrader(server, 'dora', [['usdt', '100000']]);
    const eve = await createTrader(server, 'eve', [['btc', '10']]);
    const doraA = ccxtZb(baseOf(a), dora.accessKey, dora.secret);
    const eveB = ccxtZb(baseOf(b), eve.accessKey, eve.secret);
    const markets = await doraA.loadMarkets();
    assert.equal(markets['BTC/USDT'].id, 'btc_usdt');
    await eveB.loadMarkets();
    assert.equal((await doraA.fetchBalance()).USDT.free, 100000);

    const ask = await eveB.createOrder('BTC/USDT', 'limit', 'sell', 0.5, 31000);
    await a.replica.whenApplied(b.replica.appliedSeq);
    const book = await doraA.fetchOrderBook('BTC/USDT');
    assert.deepEqual(book.asks[0], [31000, 0.5]);
    await assert.rejects(
      doraA.createOrder('BTC/USDT', 'limit', 'buy', 0.1, 31000, { postOnly: true }),
      (e: Error) => e instanceof ccxtErrors.InvalidOrder,
    );
    const bid = await doraA.createOrder('BTC/USDT', 'limit', 'buy', 0.2, 31000);
    const filled = await doraA.fetchOrder(bid.id, 'BTC/USDT');
    assert.equal(filled.status, 'closed');
    assert.equal(filled.filled, 0.2);
    await b.replica.whenApplied(a.replica.appliedSeq);
    const rest = await eveB.fetchOrder(ask.id, 'BTC/USDT');
    assert.equal(rest.filled, 0.2);
    await eveB.cancelOrder(ask.id, 'BTC/USDT');
    await assert.rejects(
      eveB.cancelOrder(ask.id, 'BTC/USDT'),
      (e: Error) => e instanceof ccxtErrors.OrderNotFound,
    );
    const balance = await eveB.fetchBalance();
    assert.equal(balance.BTC.free, 9.8);
    assert.equal(balance.BTC.used, 0);
    const ticker: any = await doraA.fetchTicker('BTC/USDT');
    assert.equal(ticker.last, 31000);
  });
});
