/**
 * Save points and the report through the real server and the `bourse` CLI (issue 35): a sandbox
 * saves, trades on, restores to the saved hash with the saved users' keys still signing; a restart
 * comes back to the restored state; `bourse report` reads the fills.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { runCli } from '../../src/cli/bourse.ts';
import { offlineCommands } from '../../src/cli/offline.ts';
import { startServer, type ServerProcess } from '../fixtures/server-process.ts';
import { fileTimeLimit } from '../fixtures/time-limit.ts';
import { createTrader, tradeRounds, ZbClient } from '../fixtures/zb-client.ts';

fileTimeLimit(import.meta.url);

const root = mkdtempSync(join(tmpdir(), 'bourse-save-e2e-'));
after(() => rmSync(root, { recursive: true, force: true }));
const dataDir = join(root, 'data');

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

test('bourse sandbox save and restore on a real sandbox: the saved hash back, keys working, a restart at the restored state; bourse report', async () => {
  let server: ServerProcess | undefined = await startServer(dataDir, ['--sandbox', '--demo=false']);
  try {
    const alice = await createTrader(server, 'alice', [['usdt', '10000']]);
    const bob = await createTrader(server, 'bob', [['btc', '1']]);
    await tradeRounds(alice, bob, 2);
    const saved = await bourse('sandbox', 'save', 'start');
    assert.equal(saved.code, 0, JSON.stringify(saved.body));
    await tradeRounds(alice, bob, 3);
    const report = await bourse('report', 'alice', '--market', 'btc_usdt');
    assert.equal(report.code, 0, JSON.stringify(report.body));
    assert.ok((report.body.fills as number) >= 5 && report.body.sells === 0, JSON.stringify(report.body));
    const list = await bourse('sandbox', 'saves');
    assert.equal((list.body.saves as { name: string }[])[0]?.name, 'start');

    const restored = await bourse('sandbox', 'restore', 'start');
    assert.equal(restored.code, 0, JSON.stringify(restored.body));
    assert.equal(restored.body.stateHash, saved.body.stateHash, 'the exact state hash that was saved');
    const info = await alice.call('getAccountInfo', []);
    assert.ok(info.result !== undefined, `the saved user's key still signs: ${JSON.stringify(info)}`);
    const unknown = await bourse('sandbox', 'restore', 'nope');
    assert.notEqual(unknown.code, 0);
    assert.match(JSON.stringify(unknown.body), /no save point 'nope': the saved ones are start/);
    const state = (await bourse('state')).body;

    assert.equal(await server.stop(), 0);
    server = await startServer(dataDir, ['--sandbox', '--demo=false']);
    assert.deepEqual((await bourse('state')).body, state, 'a restart comes back to the restored state');
    assert.ok(
      (await new ZbClient(server.base, alice.accessKey, alice.secret).call('getAccountInfo', [])).result !==
        undefined,
      'and after the restart',
    );
  } finally {
    await server?.stop();
  }
});
