/**
 * End to end: a sandbox replays the sample hour (samples/replay/, Binance aggTrades) on a speed
 * clock while the unchanged ccxt `zb` adapter runs a simple market-making loop through it. Its
 * resting orders fill only where the sample's trades crossed their prices, and in queue order (an
 * order placed behind a larger one at the same price never fills before it is done); the ticker
 * and candles follow the sample; the bot author's report agrees with a hand computation over the
 * bot's own orders, and figure by figure (fills, turnover, fees, realised and unrealised P&L,
 * position) with one over its fills as its private order-record pushes show them, in engine order;
 * a restart gives the same state hash. A malformed file is refused
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
import { signedSubscription, WsTestClient } from '../fixtures/ws-client.ts';
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

/** A JSON reviver that keeps every number as its exact source text (a push's amounts are JSON numbers). */
const exactNumbers = (_key: string, value: unknown, context?: { source?: string }): unknown =>
  typeof value === 'number' ? context?.source : value;

const state = async (server: ServerProcess) =>
  (await admin(server.adminBase, server.token, '/admin/state', [])).stateHash as string;

test('a ccxt market maker through a replayed hour: fills only where the history crossed, in queue order; a restart gives the same state', async (t) => {
  const dataDir = join(root, 'data');
  let server = await startServer(dataDir, ['--sandbox', '--clock=speed:1', `--replay=${SAMPLE}`]);
  let closeWs = (): void => undefined;
  try {
    await untilTrue('the replay', () => /replay \d+: playing 742 trades/.test(server.output()));
    const key = await createTrader(server, 'bot', [
      ['usdt', '100000'],
      ['btc', '1'],
    ]);
    // The bot's fills, one by one and in engine order: its order records on the private channel.
    const ws = await WsTestClient.connect(`${server.base.replace(/^http/, 'ws')}/websocket`);
    closeWs = () => void ws.close();
    const pushes: string[][] = [];
    ws.ws.on('message', (data: Buffer) => {
      const m = JSON.parse(data.toString('utf8'), exactNumbers);
      if (m?.channel === 'push_user_incr_record' && m.dataType === 'userIncrRecord') pushes.push(m.record);
    });
    ws.send(
      signedSubscription('push_user_incr_record', key.accessKey, key.secret, { market: 'btcusdtdefault' }),
    );
    await ws.onChannel('push_user_incr_record', 'userRecord');
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

    // The bot author's report equals a hand computation over the bot's own orders (their signed
    // getOrder records: filled amount, value, fee). The period starts at X's placing, after the
    // deposit and before any fill: the 1 btc held then costs its value at the start's mark.
    const xAt = (await bot.fetchOrder(x.id, 'BTC/USDT')).timestamp as number;
    const report = await admin(server.adminBase, server.token, '/admin/report', [
      ['user', 'bot'],
      ['market', 'btc_usdt'],
      ['from', String(xAt)],
    ]);
    assert.equal(report.code, 1000, JSON.stringify(report));
    const Q = 6; // usdt's decimals: every quote figure is rounded down to them
    const S = 18; // an exact scale for the sums
    const units = (text: string | number, scale: number): bigint => {
      const [whole = '0', frac = ''] = String(text).replace('-', '').split('.');
      const v = BigInt(whole + frac.padEnd(scale, '0').slice(0, scale));
      return String(text).startsWith('-') ? -v : v;
    };
    const floorTo = (v: bigint, from: number, to: number) => {
      const d = 10n ** BigInt(from - to);
      return v >= 0n ? v / d : -((-v + d - 1n) / d);
    };
    let buys = 0;
    let sells = 0;
    let turnover = 0n; // at Q
    let feesQuote = 0n; // at Q
    let cashIn = 0n; // Σ sells (value − fee) − Σ buys value, at Q
    let position = units('1', S); // btc, at S
    let filledTotal = 0n; // Σ filled amounts of the bot's orders, at S
    for (const o of [{ id: x.id, side: 'buy' }, { id: y.id, side: 'buy' }, ...mine]) {
      const r = (await bot.fetchOrder(o.id, 'BTC/USDT')).info;
      const amount = units(r.trade_amount, S);
      filledTotal += amount;
      if (amount === 0n) continue;
      const value = units(r.trade_money, Q);
      const fee = units(r.fees ?? '0', S);
      turnover += value;
      if (o.side === 'buy') {
        buys++;
        // A buy's fee is base: valued at its fill's price (value ÷ amount), rounded down.
        feesQuote += (fee * value) / amount;
        position += amount - fee;
        cashIn -= value;
      } else {
        sells++;
        const feeQ = floorTo(fee, S, Q);
        feesQuote += feeQ;
        position -= amount;
        cashIn += value - feeQ;
      }
    }
    const startMark = units(report.startPrice as string, S);
    const endMark = units(String(lastPrice), S);
    // Average cost: realised + unrealised = Σ sells (value − fee) − Σ buys value − the start's
    // cost (1 btc at the start's mark) + the end's position at the end's mark.
    const startCost = floorTo(units('1', S) * startMark, 2 * S, Q);
    const endWorth = floorTo(position * endMark, 2 * S, Q);
    const pnl = cashIn - startCost + endWorth;
    const got = (k: string) => units(report[k] as string, Q);
    assert.ok(buys > 0 && sells > 0, 'at least one fill on each side');
    assert.ok(
      (report.buys as number) >= buys && (report.sells as number) >= sells,
      'a fill per filled order at least',
    );
    assert.equal(report.fills, (report.buys as number) + (report.sells as number));
    assert.equal(got('turnover'), turnover, 'turnover: Σ value');
    // The report values each fill's buy fee rounded down; an order filled in k pieces loses under
    // one unit a piece beyond the first, which a per-order sum cannot see: at most the extra pieces.
    const feeGap = feesQuote - units((report.fees as { quote: string }).quote, Q);
    const extraBuyPieces = BigInt((report.buys as number) - buys);
    assert.ok(feeGap >= 0n && feeGap <= extraBuyPieces, `fees in quote: ${feeGap} units off`);
    assert.equal(units(report.position as string, S), position, 'the position at the end');
    assert.equal(got('realisedPnl') + got('unrealisedPnl'), pnl, 'realised + unrealised');

    // Exactly, fill by fill, in engine order: the private channel pushes the order's record at
    // every change of it, with its cumulative filled amount, value and fee, so consecutive
    // differences are its fills. A push covers every fill of one order in one command: a resting
    // order is taken once a command (each taker order meets it once), so its pushes are one fill
    // each; an order that took several levels as it arrived would be one push for all, which the
    // check below would name (the difference is then more than the latest fill's amount).
    const pushedFilled = (): bigint => {
      const last = new Map<string, string>();
      for (const r of pushes) last.set(r[0] as string, r[3] as string);
      return [...last.values()].reduce((sum, text) => sum + units(text, S), 0n);
    };
    await untilTrue('every fill pushed', () => pushedFilled() === filledTotal);
    const seen = new Map<string, { amount: bigint; value: bigint; fee: bigint }>();
    const pushedFills: { buy: boolean; amount: bigint; value: bigint; fee: bigint; tradeId: string }[] = [];
    for (const r of pushes) {
      const [
        id = '',
        ,
        ,
        amount = '',
        value = '',
        type = '',
        ,
        ,
        fee = '0',
        ,
        ,
        ,
        ,
        tradeId = '',
        ,
        last = '',
      ] = r;
      const before = seen.get(id) ?? { amount: 0n, value: 0n, fee: 0n };
      const now = { amount: units(amount, S), value: units(value, Q), fee: units(fee, S) };
      seen.set(id, now);
      if (now.amount === before.amount) continue;
      assert.equal(
        now.amount - before.amount,
        units(last, S),
        `order ${id}: one push, one fill (trade ${tradeId})`,
      );
      pushedFills.push({
        buy: Number(type) % 2 === 1,
        amount: now.amount - before.amount,
        value: now.value - before.value,
        fee: now.fee - before.fee,
        tradeId,
      });
    }
    assert.equal(new Set(pushedFills.map((f) => f.tradeId)).size, pushedFills.length, 'a trade per fill');
    // The report's rules (account-report.ts, docs/sandbox.md): average cost, the start's 1 btc at
    // the start's mark; a buy adds its value to the cost and its base fee (valued at the fill's
    // price, rounded down) leaves the position, not the cost; a sell removes cost × sold ÷
    // position (rounded down) and realises value − fee − that; unrealised = the end's position at
    // the end's mark (rounded down) − the cost left.
    let held = units('1', S);
    let cost = startCost;
    let realised = 0n;
    let fillFees = 0n;
    let fillTurnover = 0n;
    for (const f of pushedFills) {
      fillTurnover += f.value;
      if (f.buy) {
        fillFees += (f.fee * f.value) / f.amount;
        cost += f.value;
        held += f.amount - f.fee;
      } else {
        const fee = floorTo(f.fee, S, Q);
        const removed = (cost * f.amount) / held;
        fillFees += fee;
        cost -= removed;
        realised += f.value - fee - removed;
        held -= f.amount;
      }
    }
    const unrealised = floorTo(held * endMark, 2 * S, Q) - cost;
    assert.equal(report.fills, pushedFills.length, 'a fill per push');
    assert.equal(report.buys, pushedFills.filter((f) => f.buy).length, 'buys');
    assert.equal(report.sells, pushedFills.filter((f) => !f.buy).length, 'sells');
    assert.equal(got('turnover'), fillTurnover, 'turnover, fill by fill');
    assert.equal(units((report.fees as { quote: string }).quote, Q), fillFees, 'fees in quote, fill by fill');
    assert.equal(units(report.position as string, S), held, 'the position, fill by fill');
    assert.equal(units(report.endPrice as string, S), endMark, 'the end’s mark: the last trade');
    assert.equal(got('realisedPnl'), realised, 'realised P&L (average cost)');
    assert.equal(got('unrealisedPnl'), unrealised, 'unrealised P&L at the end’s mark');
    t.diagnostic(
      `${pushedFills.length} fills (${report.buys} buys, ${report.sells} sells), turnover ${report.turnover}, ` +
        `fees ${(report.fees as { quote: string }).quote}, realised ${report.realisedPnl}, ` +
        `unrealised ${report.unrealisedPnl}, position ${report.position}, ` +
        `order-record fee gap ${feeGap} units`,
    );

    // The journal alone gives the same state: a restart (the same --replay: already played) changes nothing.
    const hash = await state(server);
    await server.stop();
    server = await startServer(dataDir, ['--sandbox', '--clock=speed:400', `--replay=${SAMPLE}`]);
    await untilTrue('the note', () => /played to its end on this venue before/.test(server.output()));
    assert.equal(await state(server), hash);
  } finally {
    closeWs();
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
