/**
 * The data directory's files (issue 13): owner-only modes (the directory and every directory in it
 * 0700, every file 0600, an existing loose directory tightened at start), and the temp files of a
 * snapshot cut short by a kill removed at start and by verify, which no longer calls them problems.
 */
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { offlineCommands } from '../../src/cli/offline.ts';
import { until } from '../fixtures/until.ts';
import { startServer } from '../fixtures/server-process.ts';
import { admin, createTrader } from '../fixtures/zb-client.ts';
import { fileTimeLimit } from '../fixtures/time-limit.ts';

fileTimeLimit(import.meta.url);

const root = mkdtempSync(join(tmpdir(), 'bourse-data-files-'));
const dataDir = join(root, 'data');
after(() => rmSync(root, { recursive: true, force: true }));

/** Every entry under the data directory (itself included) with its permission bits, as text. */
function modes(): Record<string, string> {
  const out: Record<string, string> = { '.': (statSync(dataDir).mode & 0o777).toString(8) };
  for (const entry of readdirSync(dataDir, { recursive: true, withFileTypes: true })) {
    const path = join(entry.parentPath, entry.name);
    out[path.slice(dataDir.length + 1)] = (statSync(path).mode & 0o777).toString(8);
  }
  return out;
}

function assertOwnerOnly(seen: Record<string, string>): void {
  const loose = Object.entries(seen).filter(([path, mode]) => {
    const isDir = statSync(join(dataDir, path)).isDirectory();
    return mode !== (isDir ? '700' : '600');
  });
  assert.deepEqual(loose, [], 'entries not owner-only');
}

test('the data directory and every file in it are the owner’s only; a loose one is tightened at start', async () => {
  // The test process's umask (usually 022) is what the server inherits.
  const server = await startServer(dataDir);
  try {
    const ann = await createTrader(server, 'ann', [['usdt', '1000']]);
    await ann.call('order', [
      ['currency', 'btc_usdt'],
      ['tradeType', '1'],
      ['price', '100'],
      ['amount', '1'],
    ]);
    assert.equal((await admin(server.adminBase, server.token, '/admin/snapshot', [])).code, 1000);
    const running = modes();
    for (const file of [
      'genesis.json',
      'venue.json',
      'lock',
      'listen.json',
      'admin.token',
      'history.sqlite',
    ]) {
      assert.ok(file in running, `${file} missing: ${Object.keys(running).join(', ')}`);
    }
    assert.ok(
      Object.keys(running).some((p) => p.startsWith('journal/')),
      'no journal segment',
    );
    assert.ok(
      Object.keys(running).some((p) => p.startsWith('snapshots/snapshot-')),
      'no snapshot',
    );
    assertOwnerOnly(running);
  } finally {
    assert.equal(await server.stop(), 0);
  }

  // A directory restored by a tool that ignored modes: everything readable by all.
  chmodSync(dataDir, 0o755);
  for (const entry of readdirSync(dataDir, { recursive: true, withFileTypes: true })) {
    chmodSync(join(entry.parentPath, entry.name), entry.isDirectory() ? 0o755 : 0o644);
  }
  const again = await startServer(dataDir);
  try {
    assertOwnerOnly(modes());
    // The log is asynchronous: listen.json may be seen before the line reaches the pipe.
    await until('the tightening in the log', () =>
      /readable by the owner only/.test(again.output()) ? true : undefined,
    );
    assert.match(again.output(), /readable by the owner only/);
  } finally {
    assert.equal(await again.stop(), 0);
  }
});

test('a snapshot cut short leaves a temp file: verify removes it without calling it a problem, and so does a start', async () => {
  const leftover = (n: number): string => {
    const file = join(dataDir, 'snapshots', `snapshot-0000000000000000099${n}.snap.4242-${n}.tmp`);
    writeFileSync(file, '{"format":"bourse-sna');
    return file;
  };
  const first = leftover(1);
  const lines: string[] = [];
  assert.equal(
    await offlineCommands.verify(dataDir, { out: (l) => lines.push(l), err: () => undefined }, true),
    0,
  );
  const report = JSON.parse(lines[0] as string) as { problems: string[]; removed: string[] };
  assert.deepEqual(report.problems, []);
  assert.deepEqual(report.removed, [first]);
  assert.equal(existsSync(first), false);

  const second = leftover(2);
  const server = await startServer(dataDir);
  try {
    assert.equal(existsSync(second), false, 'the start left the temp file');
  } finally {
    assert.equal(await server.stop(), 0);
  }
  lines.length = 0;
  assert.equal(
    await offlineCommands.verify(dataDir, { out: (l) => lines.push(l), err: () => undefined }, false),
    0,
  );
  assert.match(lines.join('\n'), /verify: OK/);
});
