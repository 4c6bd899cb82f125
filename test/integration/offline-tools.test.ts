/**
 * The offline tools on a real data directory: `bourse rebuild-history` gives exactly the history
 * the server wrote live, and `bourse verify` replays from scratch and matches every snapshot.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { copyFileSync, cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, before, test } from 'node:test';
import { offlineCommands } from '../../src/cli/offline.ts';
import { SnapshotStore } from '../../src/journal/snapshot-store.ts';
import { startServer } from '../fixtures/server-process.ts';
import { admin, createTrader, type ZbClient } from '../fixtures/zb-client.ts';
import { fileTimeLimit } from '../fixtures/time-limit.ts';

fileTimeLimit(import.meta.url);

const root = mkdtempSync(join(tmpdir(), 'bourse-offline-'));
const dataDir = join(root, 'data');
const TABLES = [
  'orders',
  'trades',
  'klines',
  'bills',
  'deposits',
  'withdrawals',
  'withdrawal_steps',
  'margin_bills',
  'margin_loans',
  'margin_repayments',
];

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
  // Margin (issue 29): closed loan records and repayments live in the history store only.
  const fund = await admin(server.adminBase, server.token, '/admin/lending/fund', [
    ['coin', 'usdt'],
    ['amount', '100000'],
    ['rate', '0.05'],
    ['days', '10'],
  ]);
  assert.equal(fund.code, 1000, JSON.stringify(fund));
  const cleo = await createTrader(server, 'cleo', [['usdt', '5000']], 'asset,entrust,lever');
  const call = async (method: string, params: [string, string][]): Promise<void> => {
    const r = (await cleo.call(method, params)) as { code?: unknown };
    assert.equal(r.code, 1000, `${method}: ${JSON.stringify(r)}`);
  };
  await call('transferInLever', [
    ['coin', 'usdt'],
    ['marketName', 'btc_usdt'],
    ['amount', '1000'],
  ]);
  for (let i = 0; i < 6; i++) {
    await call('borrow', [
      ['coin', 'usdt'],
      ['marketName', 'btc_usdt'],
      ['amount', String(100 + i)],
    ]);
    if (i === 3) await admin(server.adminBase, server.token, '/admin/snapshot', []);
    await call('doAllRepay', [
      ['marketName', 'btc_usdt'],
      ['coin', 'usdt'],
    ]);
  }
  assert.equal(await server.stop(), 0);
});

after(() => rmSync(root, { recursive: true, force: true }));

test('rebuild-history reproduces the live history store row for row', async () => {
  const live = join(root, 'live.sqlite');
  copyFileSync(join(dataDir, 'history.sqlite'), live);
  const before = dump(live);
  assert.equal(before['margin_loans']?.length, 6, 'the closed loan records are in the live store');
  assert.ok((before['margin_repayments']?.length ?? 0) >= 6);
  assert.ok((before.trades as unknown[]).length > 10);
  assert.equal(await offlineCommands.rebuildHistory(dataDir, quiet, true), 0);
  assert.deepEqual(dump(join(dataDir, 'history.sqlite')), before);
});

test('verify reports a snapshot the start would refuse: a balance beyond the exact range (issue 29 §5)', async () => {
  // A snapshot as an engine without the range checks wrote it (issue 29: the pool funded twice,
  // then borrowed into 25,000,000,000 usdt): its hash matches its content, its state breaks the
  // ledger's invariants, so the start refuses it.
  const copy = join(root, 'out-of-range');
  cpSync(dataDir, copy, { recursive: true });
  const store = new SnapshotStore(join(copy, 'snapshots'));
  const latest = store.latestValid();
  assert.ok(latest !== undefined, 'the server wrote no snapshot');
  const state = structuredClone(latest.state) as {
    coins: { name: string }[];
    users: [number, string, boolean, number[], number[]][];
  };
  const ann = state.users.find((u) => u[1] === 'ann') ?? assert.fail('no user ann');
  ann[3][state.coins.findIndex((c) => c.name === 'usdt')] = 25_000_000_000_000_000; // available, beyond 2^53
  rmSync(latest.path);
  await store.write(state, {
    lastSeq: latest.lastSeq,
    stateHash: createHash('sha256').update(JSON.stringify(state)).digest('hex'),
  });
  const out: string[] = [];
  assert.equal(
    await offlineCommands.verify(copy, { out: (l) => out.push(l), err: () => undefined }, false),
    1,
  );
  assert.ok(
    out.some(
      (l) =>
        l.startsWith('problem:') &&
        l.includes('the start would refuse it') &&
        l.includes('25000000000000000'),
    ),
    out.join('\n'),
  );
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
