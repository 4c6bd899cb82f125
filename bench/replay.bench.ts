/**
 * @module replay.bench — issue 35's 1,000× check: a day of one market's history (a synthetic
 * Binance aggTrades file, 50,000 trades over 24 hours: a seeded walk around 94,000 usdt) replayed
 * on the real server (`--sandbox --clock=speed:1000 --replay <file>`) while signed clients trade
 * through it (each a limit order near the price and a cancel, in a loop). It keeps up when the
 * replay ends about when the history's span at that speed says (86.4 s for a day): the figure is
 * the wall time from the replay's start to its end over that span (1.0 = on time; the player
 * plays each trade when venue time reaches it, so it can only be late), with the clients'
 * requests and their answers. `--quick`: 5,000 trades over 2.4 hours (8.6 s). Nothing asserted.
 * Prints a human summary and, last, one JSON line.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { seededRandom } from '../src/domain/random.ts';
import { startServer } from '../test/fixtures/server-process.ts';
import { createTrader, type ZbClient } from '../test/fixtures/zb-client.ts';
import { finish, sized } from './results.ts';

const TRADES = Number(process.env['REPLAY_TRADES'] ?? sized(50_000, 5_000));
const SPAN_MS = Number(process.env['REPLAY_SPAN_MS'] ?? sized(86_400_000, 8_640_000));
const SPEED = Number(process.env['REPLAY_SPEED'] ?? 1_000);
const CLIENTS = Number(process.env['REPLAY_CLIENTS'] ?? sized(8, 2));
const START = 1_767_225_600_000;

/** A Binance aggTrades CSV of `n` trades over `span` ms: a seeded walk, newer kind (header, µs). */
function syntheticDay(n: number, span: number): string {
  const random = seededRandom(35);
  const lines = [
    'agg_trade_id,price,quantity,first_trade_id,last_trade_id,transact_time,is_buyer_maker,is_best_match',
  ];
  let price = 94_000;
  for (let i = 0; i < n; i++) {
    price *= 1 + (random() - 0.5) * 0.0006;
    const time = START + Math.floor((i * span) / n);
    const amount = (0.0001 + random() * 0.02).toFixed(8);
    lines.push(
      `${3e9 + i},${price.toFixed(2)},${amount},${4e9 + i},${4e9 + i},${time * 1000},${random() < 0.5 ? 'True' : 'False'},True`,
    );
  }
  return `${lines.join('\n')}\n`;
}

const root = mkdtempSync(join(tmpdir(), 'bourse-replay-bench-'));
const file = join(root, 'BTCUSDT-aggTrades-synthetic.csv');
writeFileSync(file, syntheticDay(TRADES, SPAN_MS));
const server = await startServer(join(root, 'data'), [
  '--sandbox',
  `--clock=speed:${SPEED}`,
  `--replay=${file}`,
  '--log-format=json',
]);
const when = (pattern: RegExp): Promise<number> =>
  new Promise((resolve) => {
    const poll = setInterval(() => {
      if (pattern.test(server.output())) {
        clearInterval(poll);
        resolve(performance.now());
      }
    }, 5);
  });
try {
  const playing = await when(/replay \d+: playing/);
  const clients: ZbClient[] = [];
  for (let i = 0; i < CLIENTS; i++)
    clients.push(
      await createTrader(server, `trader${i}`, [
        ['usdt', '1000000'],
        ['btc', '10'],
      ]),
    );
  let done = false;
  const counts = { orders: 0, cancels: 0, ok: 0, refused: 0, failed: 0 };
  const loops = clients.map(async (c, i) => {
    const random = seededRandom(100 + i);
    while (!done) {
      try {
        const ticker = await fetch(`${server.base}/data/v1/ticker?market=btc_usdt`).then((r) => r.json());
        const last = Number((ticker as { ticker?: { last?: string } }).ticker?.last ?? 94_000);
        const buy = random() < 0.5;
        const price = (last * (buy ? 1 - random() * 0.001 : 1 + random() * 0.001)).toFixed(2);
        const r = await c.call('order', [
          ['currency', 'btc_usdt'],
          ['tradeType', buy ? '1' : '0'],
          ['price', price],
          ['amount', '0.0010'],
        ]);
        counts.orders++;
        if (r.code === 1000) {
          counts.ok++;
          const x = await c.call('cancelOrder', [
            ['currency', 'btc_usdt'],
            ['id', String(r.id)],
          ]);
          counts.cancels++;
          if (x.code === 1000) counts.ok++;
        } else counts.refused++;
      } catch {
        counts.failed++;
      }
      // Within the key's 60 requests a second.
      await new Promise((resolve) => setTimeout(resolve, 40));
    }
  });
  const finished = await when(/replay \d+: finished/);
  done = true;
  await Promise.all(loops);
  const wallSeconds = (finished - playing) / 1000;
  const idealSeconds = SPAN_MS / SPEED / 1000;
  const figures = {
    bench: 'replay',
    trades: TRADES,
    spanHours: SPAN_MS / 3_600_000,
    speed: SPEED,
    clients: CLIENTS,
    wallSeconds: Number(wallSeconds.toFixed(2)),
    idealSeconds: Number(idealSeconds.toFixed(2)),
    lateness: Number((wallSeconds / idealSeconds).toFixed(3)),
    clientRequests: counts.orders + counts.cancels,
    clientOk: counts.ok,
    clientRefused: counts.refused,
    clientFailed: counts.failed,
  };
  console.error(
    `replay: ${TRADES} trades over ${figures.spanHours} h at ${SPEED}×: ${figures.wallSeconds} s (ideal ` +
      `${figures.idealSeconds} s, ×${figures.lateness}) with ${CLIENTS} signed clients sending ` +
      `${figures.clientRequests} requests (${counts.ok} ok, ${counts.refused} refused, ${counts.failed} failed)`,
  );
  finish('replay', figures);
} finally {
  await server.stop();
  rmSync(root, { recursive: true, force: true });
}
