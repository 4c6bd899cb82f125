import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { runCli } from '../../src/cli/bourse.ts';
import { offlineCommands } from '../../src/cli/offline.ts';
import { startServer } from '../fixtures/server-process.ts';
import { createTrader } from '../fixtures/zb-client.ts';
import { fileTimeLimit } from '../fixtures/time-limit.ts';

fileTimeLimit(import.meta.url);

const root = mkdtempSync(join(tmpdir(), 'bourse-speed-e2e-'));
after(() => rmSync(root, { recursive: true, force: true }));
const dataDir = join(root, 'data');

/** Runs a `bourse` command on the data directory (it finds the server there). */
async function bourse(...argv: string[]) {
  let out = '';
  const code = await runCli(
    [...argv, '--data', dataDir, '--json'],
    { out: (l) => (out += l), err: (l) => (out += l) },
    offlineCommands,
    {},
  );
  return { code, body: (out.startsWith('{') ? JSON.parse(out) : { text: out }) as Record<string, unknown> };
}

test('a speed clock: bourse clock speed makes a pending dead-man switch fire at the new speed; bad speeds refused', async () => {
  const server = await startServer(dataDir, ['--clock=speed:1', '--sandbox']);
  try {
    const shown = await bourse('clock');
    assert.equal(shown.body.mode, 'speed');
    assert.equal(shown.body.speed, 1);
    const alice = await createTrader(server, 'alice', [['usdt', '100000']]);
    const placed = await alice.call('order', [
      ['currency', 'btc_usdt'],
      ['tradeType', '1'],
      ['price', '29000'],
      ['amount', '0.0100'],
    ]);
    assert.equal(placed.code, 1000, JSON.stringify(placed));
    const armed = await alice.call('cancelAllOrdersAfter', [['currency', 'btc_usdt']]);
    const deadline = armed.deadline as number;

    for (const bad of ['0', '-1', 'abc', '1e3']) {
      const refused = await bourse('clock', 'speed', bad);
      assert.notEqual(refused.code, 0, bad);
      assert.match(
        JSON.stringify(refused.body),
        /is not a speed: give how many times faster than real time/,
        bad,
      );
    }
    assert.equal((await bourse('clock')).body.speed, 1, 'a refusal changes nothing');

    // At 1 the switch is a wall minute away; at 100000 it is a millisecond away.
    const changed = await bourse('clock', 'speed', '100000');
    assert.equal(changed.code, 0, JSON.stringify(changed.body));
    assert.equal(changed.body.speed, 100000);
    assert.equal(changed.body.from, 1);
    let status: unknown;
    while (status !== 1) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      status = (
        await alice.call('getOrder', [
          ['currency', 'btc_usdt'],
          ['id', placed.id as string],
        ])
      ).status;
    }
    assert.ok(((await bourse('clock')).body.time as number) >= deadline, 'venue time passed the deadline');
    assert.match(JSON.stringify((await bourse('clock', 'advance', '1h')).body), /a speed clock/);
  } finally {
    await server.stop();
  }
});
