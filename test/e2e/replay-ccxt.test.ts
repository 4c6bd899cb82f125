/**
 * End to end: a sandbox replays the sample hour (samples/replay/, Binance aggTrades) on a speed
 * clock while the unchanged ccxt `zb` adapter runs a simple market-making loop through it. Its
 * resting orders fill only where the sample's trades crossed their prices, and in queue order (an
 * order placed behind a larger one at the same price never fills before it is done); the ticker
 * and candles follow the sample; a restart gives the same state hash. A malformed file is refused
 * at start-up naming its line and column, and nothing is created.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { parseReplay } from '../../src/replay/load.ts';
import { connect } from '../fixtures/ccxt-client.ts';
import { startServer, type ServerProcess } from '../fixtures/server-process.ts';
import { fileTimeLimit } from '../fixtures/time-limit.ts';
import { until, untilTrue } from '../fixtures/until.ts';
import { admin, createTrader } from '../fixtures/zb-client.ts';

// ccxt's results are untyped: read them as a bot would.
/* eslint-disable @typescript-eslint/no-explicit-any */

fileTimeLimit(import.meta.url);

const root = mkdtempSync(join(tmpdir(), 'bourse-replay-e2e-'));
after(() => rmSync(root, { recursive: true, force: true }));
const SAMPLE = join(import.meta.dirname, '..', '..', 'samples', 'replay', 'BTCUSDT-aggTrades-2026-01-01.csv');
const trades = parseReplay(readFileSync(SAMPLE, 'utf8'), SAMPLE).events.map((e) => ({
  time: e.time,
  price: Number((e as { price: string }).price),
}));

const state = async (server: ServerProcess) =>
  (await admin(server.adminBase, server.token, '/admin/state', [])).stateHash as string;

test('a ccxt market maker through a replayed hour: fills only where the history crossed, in queue order; a restart gives the same state', async () => {
  const dataDir = join(root, 'data');
  let server = await startServer(dataDir, ['--sandbox', '--clock=speed:1', `--replay=${SAMPLE}`]);
  try {
    await untilTrue('the replay', () => /replay \d+: playing 742 trades/.test(server.output()));
    const key = await createTrader(server, 'bot', [
      ['usdt', '100000'],
      ['btc', '1'],
    ]);
    const bot = connect(server.base, key.accessKey, key.secret);
    // ccxt's own throttle, as a bot would run it: at most 40 requests a second (the key may send 60).
    bot.enableRateLimit = true;
    bot.rateLimit = 25;
    await bot.loadMarkets();
    // X, then Y behind it at the same price, which the sample trades through later in the hour.
    const x = await bot.createOrder('BTC/USDT', 'limit', 'buy', 0.002, 93900);
    const y = await bot.createOrder('BTC/USDT', 'limit', 'buy', 0.001, 93900);
    const placedAt = Date.now();
    const sped = await admin(server.adminBase, server.token, '/admin/clock/speed', [['speed', '250']]);
    assert.equal(sped.code, 1000, JSON.stringify(sped));

    // The loop: a bid and an ask of 0.001 about 20 usdt from the last price, placed again once gone.
    const mine: { id: string; side: string; price: number; at: number }[] = [];
    let queueChecks = 0;
    while (!/replay \d+: finished/.test(server.output())) {
      const last = (await bot.fetchTicker('BTC/USDT')).last as number;
      const open: any[] = await bot.fetchOpenOrders('BTC/USDT');
      for (const side of ['buy', 'sell']) {
        if (open.some((o) => o.side === side && o.id !== x.id && o.id !== y.id)) continue;
        const price = Math.round((side === 'buy' ? last - 20 : last + 20) * 100) / 100;
        const o = await bot.createOrder('BTC/USDT', 'limit', side, 0.001, price);
        mine.push({ id: o.id, side, price, at: (o.timestamp as number | undefined) ?? Date.now() });
      }
      // Y first: if Y had any fill then, X must be done when read after it.
      const fy = await bot.fetchOrder(y.id, 'BTC/USDT');
      const fx = await bot.fetchOrder(x.id, 'BTC/USDT');
      assert.ok(
        fy.filled === 0 || fx.filled === 0.002,
        `Y filled ${fy.filled} before X was done (${fx.filled})`,
      );
      queueChecks++;
      // A few signed calls a round (fetchOpenOrders is several): well under the key's 60 a second.
      await new Promise((resolve) => setTimeout(resolve, 400));
    }
    assert.ok(queueChecks > 5, 'the loop ran through the replay');
    const fx = await bot.fetchOrder(x.id, 'BTC/USDT');
    const fy = await bot.fetchOrder(y.id, 'BTC/USDT');
    assert.equal(fx.filled, 0.002, 'the sample went below 93900: X filled');
    assert.equal(fy.filled, 0.001, 'and Y after it');
    assert.ok(Date.now() > placedAt);

    // Every fill of the loop's orders is at a price the sample's trades reached or went through.
    let fills = 0;
    for (const o of mine) {
      const got = await bot.fetchOrder(o.id, 'BTC/USDT');
      if (got.filled === 0) continue;
      fills++;
      const crossed = trades.some((t) => (o.side === 'buy' ? t.price <= o.price : t.price >= o.price));
      assert.ok(crossed, `${o.side} at ${o.price} filled but the sample never traded there`);
    }
    assert.ok(fills > 0, 'some of the loop’s orders filled');
    const lastPrice = trades.at(-1)?.price as number;
    assert.equal((await bot.fetchTicker('BTC/USDT')).last, lastPrice, 'the ticker follows the sample');
    const candles: any[] = await bot.fetchOHLCV('BTC/USDT', '1m');
    assert.ok(candles.length >= 50, `a candle a minute of the hour (${candles.length})`);
    // A fresh sandbox's clock starts at the history's start: the venue's candles are the sample's minutes.
    const firstMinute = Math.floor((trades[0]?.time as number) / 60_000) * 60_000;
    assert.ok(
      candles.some((c) => c[0] === firstMinute + 60_000),
      `a candle at ${new Date(firstMinute + 60_000).toISOString()}`,
    );

    // The journal alone gives the same state: a restart (the same --replay: already played) changes nothing.
    const hash = await state(server);
    await server.stop();
    server = await startServer(dataDir, ['--sandbox', '--clock=speed:400', `--replay=${SAMPLE}`]);
    await untilTrue('the note', () => /played to its end on this venue before/.test(server.output()));
    assert.equal(await state(server), hash);
  } finally {
    await server.stop();
  }
});

test('a malformed replay file is refused at start-up naming its line and column; nothing is created', async () => {
  const bad = join(root, 'BTCUSDT-1m-bad.csv');
  writeFileSync(
    bad,
    '1767225600000,93998.86,94006.8,93981.6,93985.78,0.0171,1767225659999,1615.2,24,0.0089,845.7,0\n1767225660000,abc,1,1,1,1,1767225719999,1,1,1,1,0\n',
  );
  const dataDir = join(root, 'refused');
  await assert.rejects(
    startServer(dataDir, ['--sandbox', `--replay=${bad}`]),
    /line 2, column 2 \(open\): 'abc' is not a decimal number/,
  );
  assert.equal(existsSync(join(dataDir, 'journal')), false);
  await assert.rejects(
    startServer(join(root, 'not-sandbox'), [`--replay=${SAMPLE}`]),
    /only a sandbox replays history/,
  );
});

test('bourse replay start on a running sandbox: a malformed file refused changing nothing; a replay started, listed and stopped', async () => {
  const bad = join(root, 'BTCUSDT-aggTrades-bad.csv');
  writeFileSync(
    bad,
    '3000000000,93998.86,0.0007,1,1,1767225605494562,False,True\n3000000001,93999.7,-1,2,2,1767225608836919,False,True\n',
  );
  const server = await startServer(join(root, 'running'), ['--sandbox', '--clock=speed:100']);
  try {
    const call = (path: string, form: [string, string][] = []) =>
      admin(server.adminBase, server.token, path, form);
    const before = await state(server);
    const refused = await call('/admin/replay/start', [['files', bad]]);
    assert.notEqual(refused.code, 1000);
    assert.match(String(refused.message), /line 2, column 3 \(quantity\)/);
    assert.equal(await state(server), before, 'a refusal changes nothing');
    assert.deepEqual((await call('/admin/replay')).replays, []);

    const started = await call('/admin/replay/start', [['files', SAMPLE]]);
    assert.equal(started.code, 1000, JSON.stringify(started));
    const replayId = (started.replay as { replayId: number }).replayId;
    await until('trades played', async () => {
      const r = ((await call('/admin/replay')).replays as { played?: number }[])[0];
      return (r?.played ?? 0) > 0 ? true : undefined;
    });
    const again = await call('/admin/replay/start', [['files', SAMPLE]]);
    assert.equal(
      (again.replay as { replayId: number }).replayId,
      replayId,
      'the same files: the same replay',
    );
    const stopped = await call('/admin/replay/stop', [['replay', String(replayId)]]);
    assert.equal(stopped.code, 1000, JSON.stringify(stopped));
    assert.equal((stopped.replay as { ended: { reason: string } }).ended.reason, 'stopped');
    assert.match(
      String((await call('/admin/replay/stop', [['replay', String(replayId)]])).message),
      /is playing/,
    );
  } finally {
    await server.stop();
  }
});
