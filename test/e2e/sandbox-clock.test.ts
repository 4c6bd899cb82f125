import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { runCli } from '../../src/cli/bourse.ts';
import { offlineCommands } from '../../src/cli/offline.ts';
import { startServer, type ServerProcess } from '../fixtures/server-process.ts';
import { createTrader, TEST_USER_AGENT } from '../fixtures/zb-client.ts';
import { fileTimeLimit } from '../fixtures/time-limit.ts';

fileTimeLimit(import.meta.url);

const root = mkdtempSync(join(tmpdir(), 'bourse-clock-e2e-'));
after(() => rmSync(root, { recursive: true, force: true }));
const dataDir = join(root, 'data');
const MINUTE = 60_000;
const DAY = 86_400_000;

/** Runs a `bourse` command on the data directory (online ones find the server there). */
async function bourse(_server: ServerProcess | undefined, ...argv: string[]) {
  let out = '';
  const code = await runCli(
    [...argv, '--data', dataDir, '--json'],
    { out: (l) => (out += l), err: (l) => (out += l) },
    offlineCommands,
    {}, // none of the test process's BOURSE_* variables
  );
  return { code, body: (out.startsWith('{') ? JSON.parse(out) : { text: out }) as Record<string, unknown> };
}

const get = async (server: ServerProcess, path: string): Promise<Record<string, unknown>> =>
  (await fetch(`${server.base}${path}`, { headers: { 'user-agent': TEST_USER_AGENT } })).json() as Promise<
    Record<string, unknown>
  >;

test('a manual clock: bourse clock advance fires the dead-man switch and rolls the candle; signed calls and limits stay on the wall clock; replay gives the same hash', async () => {
  let server = await startServer(dataDir, ['--clock=manual', '--sandbox']);
  try {
    const t0 = (await bourse(server, 'clock')).body.time as number;
    assert.equal((await bourse(server, 'clock')).body.mode, 'manual');
    const alice = await createTrader(server, 'alice', [['usdt', '100000']]);
    const bob = await createTrader(server, 'bob', [['btc', '10']]);
    const order = async (who: typeof alice, side: string, price: string): Promise<string> => {
      const r = await who.call('order', [
        ['currency', 'btc_usdt'],
        ['tradeType', side],
        ['price', price],
        ['amount', '0.0100'],
      ]);
      assert.equal(r.code, 1000, JSON.stringify(r));
      return r.id as string;
    };
    await order(alice, '1', '30000');
    await order(bob, '0', '30000'); // the first trade, at t0
    const resting = await order(alice, '1', '29000');
    const armed = await alice.call('cancelAllOrdersAfter', [['currency', 'btc_usdt']]);
    assert.equal(armed.deadline, t0 + MINUTE, 'the switch is armed on venue time');

    // Venue time stands still: the switch does not fire on its own.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    assert.equal((await bourse(server, 'clock')).body.time, t0);
    const still = await alice.call('getOrder', [
      ['currency', 'btc_usdt'],
      ['id', resting],
    ]);
    assert.equal(still.status, 0);

    const advanced = await bourse(server, 'clock', 'advance', '2d');
    assert.equal(advanced.code, 0, JSON.stringify(advanced.body));
    assert.equal(advanced.body.time, t0 + 2 * DAY);
    assert.equal(advanced.body.timerSteps, 1);
    // Signed calls carry the wall clock's reqTime: still accepted two venue days later.
    const cancelled = await alice.call('getOrder', [
      ['currency', 'btc_usdt'],
      ['id', resting],
    ]);
    assert.equal(cancelled.status, 1, 'the dead-man switch cancelled it');

    await order(alice, '1', '30100');
    await order(bob, '0', '30100'); // a trade two days later
    const minute = (t: number): number => t - (t % MINUTE);
    let rows: number[][] = [];
    for (let i = 0; i < 20 && rows.length < 2; i++) {
      // The kline limit (1 request a second per IP) runs on the wall clock, not the stopped venue clock.
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      const kline = await get(server, '/data/v1/kline?market=btc_usdt&type=1min');
      assert.ok(Array.isArray(kline.data), JSON.stringify(kline));
      rows = kline.data as number[][];
    }
    assert.deepEqual(
      rows.map((r) => [r[0], r[4]]),
      [
        [minute(t0), 30000],
        [minute(t0 + 2 * DAY), 30100],
      ],
    );
    // The 24 hours of the ticker are venue hours: the first trade has left them.
    const ticker = (await get(server, '/data/v1/ticker?market=btc_usdt')).ticker as Record<string, string>;
    assert.equal(ticker.vol, '0.0100');

    assert.equal((await bourse(server, 'snapshot')).code, 0);
    const hash = (await bourse(server, 'state')).body.stateHash;
    assert.equal(await server.stop(), 0);

    // `bourse verify` replays the journal from scratch and compares the snapshot's state hash.
    const verified = await bourse(undefined, 'verify');
    assert.equal(verified.code, 0, JSON.stringify(verified.body));

    server = await startServer(dataDir, ['--clock=manual', '--sandbox']);
    assert.equal((await bourse(server, 'state')).body.stateHash, hash);
    assert.equal((await bourse(server, 'clock')).body.time, t0 + 2 * DAY, 'the clock resumes where it stood');
  } finally {
    await server.stop();
  }
});
