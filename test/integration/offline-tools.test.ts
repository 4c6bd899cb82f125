/**
 * The offline tools on a real data directory: `bourse rebuild-history` gives exactly the history
 * the server wrote live, and `bourse verify` replays from scratch and matches every snapshot.
 */
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, before, test } from 'node:test';
import { offlineCommands } from '../../src/cli/offline.ts';
import { startServer } from '../fixtures/server-process.ts';
import { admin, createTrader, type ZbClient } from '../fixtures/zb-client.ts';
import { fileTimeLimit } from '../fixtures/time-limit.ts';

fileTimeLimit(import.meta.url);

const root = mkdtempSync(join(tmpdir(), 'bourse-offline-'));
const dataDir = join(root, 'data');
const TABLES = ['orders', 'trades', 'klines', 'bills', 'deposits', 'withdrawals', 'withdrawal_steps'];

function dump(path: string): Record<string, unknown[]> {
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    return Object.fromEntries(TABLES.map((t) => [t, db.prepare(`SELECT * FROM ${t} ORDER BY 1, 2`).all()]));
  } finally {
    db.close();
  }
}

const quiet = { out: (): void => undefined, err: (): void => undefined };

before(async () => {
  const server = await startServer(dataDir, ['--rate-limits=false']);
  const clients = [
    await createTrader(server, 'ann', [['usdt', '50000']]),
    await createTrader(server, 'ben', [['btc', '5']]),
  ];
  const [ann, ben] = clients as [ZbClient, ZbClient];
  for (let i = 0; i < 40; i++) {
    await ben.call('order', [
      ['currency', 'btc_usdt'],
      ['tradeType', '0'],
      ['price', String(30000 + (i % 7))],
      ['amount', '0.01'],
    ]);
    await ann.call('order', [
      ['currency', 'btc_usdt'],
      ['tradeType', '1'],
      ['price', String(30000 + (i % 5))],
      ['amount', '0.015'],
    ]);
    if (i === 20) await admin(server.adminBase, server.token, '/admin/snapshot', []);
  }
  assert.equal(await server.stop(), 0);
});

after(() => rmSync(root, { recursive: true, force: true }));

test('rebuild-history reproduces the live history store row for row', async () => {
  const live = join(root, 'live.sqlite');
  copyFileSync(join(dataDir, 'history.sqlite'), live);
  const before = dump(live);
  assert.ok((before.trades as unknown[]).length > 10);
  assert.equal(await offlineCommands.rebuildHistory(dataDir, quiet, true), 0);
  assert.deepEqual(dump(join(dataDir, 'history.sqlite')), before);
});

test('verify replays from scratch and matches every snapshot; a flipped bit is reported', async () => {
  const lines: string[] = [];
  assert.equal(
    await offlineCommands.verify(dataDir, { out: (l) => lines.push(l), err: () => undefined }, true),
    0,
  );
  const report = JSON.parse(lines[0] as string) as {
    hashesCompared: number;
    problems: string[];
    replayed: number;
  };
  assert.ok(report.hashesCompared >= 1, 'no snapshot was compared');
  assert.deepEqual(report.problems, []);
  assert.ok(report.replayed > 80);

  const snapshots = join(dataDir, 'snapshots');
  const file = join(snapshots, readdirSync(snapshots).find((f) => f.endsWith('.snap')) as string);
  const bytes = readFileSync(file);
  bytes[bytes.length - 10] = (bytes[bytes.length - 10] as number) ^ 0x04;
  writeFileSync(file, bytes);
  const out: string[] = [];
  assert.equal(
    await offlineCommands.verify(dataDir, { out: (l) => out.push(l), err: () => undefined }, false),
    1,
  );
  assert.ok(
    out.some((l) => l.startsWith('problem:') && l.includes('snapshot-')),
    out.join('\n'),
  );
});
