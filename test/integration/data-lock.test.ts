/**
 * One process per data directory (issue 13): a second server and the offline tools are refused
 * in one line naming the holder while a server runs, touching nothing, and the first keeps
 * serving and loses nothing; a server killed with SIGKILL leaves no lock behind.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { offlineCommands } from '../../src/cli/offline.ts';
import { startServer } from '../fixtures/server-process.ts';
import { createTrader, ZbClient } from '../fixtures/zb-client.ts';
import { fileTimeLimit } from '../fixtures/time-limit.ts';

fileTimeLimit(import.meta.url);

const root = mkdtempSync(join(tmpdir(), 'bourse-lock-'));
const dataDir = join(root, 'data');
after(() => rmSync(root, { recursive: true, force: true }));

/** Every file under `dir` with its size, except the history database's (its follower writes on). */
function listing(dir: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || entry.name.startsWith('history.sqlite')) continue;
    const path = join(entry.parentPath, entry.name);
    out[path] = statSync(path).size;
  }
  return out;
}

async function balance(client: ZbClient, coin: string): Promise<string> {
  const info = await client.call('getAccountInfo');
  assert.ok(info.result !== undefined, JSON.stringify(info));
  const coins = (info.result as { coins: { enName: string; available: string }[] }).coins;
  return coins.find((c) => c.enName.toLowerCase() === coin)?.available ?? 'missing';
}

const USDT_100 = '100.000000';
const BTC_2 = '2.00000000';

test('a second server and the offline tools are refused while the first serves on; nothing is lost', async () => {
  const first = await startServer(dataDir);
  const firstPid = first.child.pid as number;
  let ann: ZbClient;
  let bob: ZbClient;
  try {
    ann = await createTrader(first, 'ann', [['usdt', '100']]);
    const before = listing(dataDir);
    assert.match(readFileSync(join(dataDir, 'lock'), 'utf8'), new RegExp(`"pid":${firstPid}\\b`));

    await assert.rejects(
      startServer(dataDir),
      new RegExp(
        `server exited \\(1\\) before listening:[\\s\\S]*bourse: cannot start: the data directory \\S+ is in use by pid ${firstPid} \\(bourse server, since [^)]+\\): stop it first`,
      ),
    );
    for (const tool of ['verify', 'rebuildHistory'] as const) {
      const errors: string[] = [];
      const io = { out: (): void => undefined, err: (line: string) => errors.push(line) };
      assert.equal(await offlineCommands[tool](dataDir, io, false), 1, tool);
      assert.equal(errors.length, 1, errors.join('\n'));
      assert.match(errors[0] as string, new RegExp(`in use by pid ${firstPid} \\(bourse server`));
    }
    assert.deepEqual(listing(dataDir), before, 'the refused processes touched the data directory');

    // The first server still serves and acknowledges.
    assert.equal(await balance(ann, 'usdt'), USDT_100);
    bob = await createTrader(first, 'bob', [['btc', '2']]);
    assert.equal(await balance(bob, 'btc'), BTC_2);
  } finally {
    assert.equal(await first.stop(), 0);
  }

  // After a restart both users, their keys and balances are there.
  const again = await startServer(dataDir);
  try {
    const annAgain = new ZbClient(again.base, ann.accessKey, ann.secret);
    const bobAgain = new ZbClient(again.base, bob.accessKey, bob.secret);
    assert.equal(await balance(annAgain, 'usdt'), USDT_100);
    assert.equal(await balance(bobAgain, 'btc'), BTC_2);
  } finally {
    assert.equal(await again.stop(), 0);
  }
});

test('the lock is the directory’s, whatever path reaches it: a symbolic link, a bind mount', async () => {
  const first = await startServer(dataDir);
  const pid = first.child.pid as number;
  try {
    const link = join(root, 'link');
    symlinkSync(dataDir, link);
    await assert.rejects(startServer(link), new RegExp(`in use by pid ${pid} \\(bourse server`));
    const bound = join(root, 'bound');
    mkdirSync(bound);
    if (spawnSync('mount', ['--bind', dataDir, bound]).status === 0) {
      try {
        const errors: string[] = [];
        const io = { out: (): void => undefined, err: (line: string) => errors.push(line) };
        assert.equal(await offlineCommands.verify(bound, io, false), 1);
        assert.match(errors.join('\n'), new RegExp(`in use by pid ${pid} \\(bourse server`));
      } finally {
        spawnSync('umount', [bound]);
      }
    }
  } finally {
    assert.equal(await first.stop(), 0);
  }
});

test('a server killed with SIGKILL leaves no lock: the next start and the offline tools work', async () => {
  const killed = await startServer(dataDir);
  await killed.kill();
  const next = await startServer(dataDir);
  assert.match(readFileSync(join(dataDir, 'lock'), 'utf8'), new RegExp(`"pid":${next.child.pid}\\b`));
  assert.equal(await next.stop(), 0);
  const quiet = { out: (): void => undefined, err: (): void => undefined };
  assert.equal(await offlineCommands.verify(dataDir, quiet, false), 0);
});
