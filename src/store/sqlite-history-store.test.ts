/** @module sqlite-history-store.test — the history store contract on SQLite, its query plans and its file. */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, describe, it } from 'node:test';
import { runHistoryStoreContract } from './history-store.case.ts';
import {
  MIGRATIONS,
  QUERY_SQL,
  SqliteHistoryStore,
  WRITE_SQL,
  type QueryName,
} from './sqlite-history-store.ts';
import { TradingStream } from './trading-stream.ts';

const dir = mkdtempSync(join(tmpdir(), 'bourse-history-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const nextFile = (): string => join(dir, `history-${++files}.db`);

runHistoryStoreContract('sqlite', async () => SqliteHistoryStore.open(nextFile()));

/** The index each query must search (a rowid or primary-key search where named so). */
function expectedIndex(name: QueryName): string | readonly string[] {
  if (name.startsWith('orders:')) return 'orders_user_market_side_status';
  // The venue-wide trades (venue-trades.ts): by id, by market, or a user's two arms merged.
  if (name.startsWith('venueTrades')) {
    const shape = name.split(':')[1];
    if (shape === 'all') return 'INTEGER PRIMARY KEY';
    if (shape === 'market') return 'trades_market';
    return ['trades_taker_user', 'trades_maker_user'];
  }
  const byName: Partial<Record<QueryName, string>> = {
    getOrder: 'INTEGER PRIMARY KEY',
    tradeAtOrAfter: 'INTEGER PRIMARY KEY',
    tradeLast: 'INTEGER PRIMARY KEY',
    getOrderByClientId: 'orders_client_id',
    tradesLatest: 'trades_market',
    tradesSince: 'trades_market',
    klinesLatest: 'PRIMARY KEY',
    klinesSince: 'PRIMARY KEY',
    bills: 'PRIMARY KEY',
    billsCount: 'PRIMARY KEY',
    billsCoin: 'bills_user_coin_time',
    billsCoinCount: 'bills_user_coin_time',
    marginBills: 'PRIMARY KEY',
    marginBillsCount: 'PRIMARY KEY',
    withdrawalSteps: 'withdrawal_steps_withdrawal',
    deposits: 'deposits_user',
    depositsCount: 'deposits_user',
    depositsCoin: 'deposits_user_coin',
    depositsCoinCount: 'deposits_user_coin',
    withdrawals: 'withdrawals_user',
    withdrawalsCount: 'withdrawals_user',
    withdrawalsCoin: 'withdrawals_user_coin',
    withdrawalsCoinCount: 'withdrawals_user_coin',
    closedLoan: 'margin_loans_id',
    loansBorrowed: 'PRIMARY KEY',
    loansLent: 'margin_loans_lender',
    repayments: 'PRIMARY KEY',
    loanRepayments: 'margin_repayments_loan',
  };
  const index = byName[name];
  if (index === undefined) throw new Error(`no expected index for ${name}`);
  return index;
}

function plan(db: DatabaseSync, sql: string): string[] {
  // Numbered parameters (?1, ?2) count by their highest number, bare ones one each.
  const numbered = [...sql.matchAll(/\?(\d+)/g)].map((m) => Number(m[1]));
  const count = numbered.length > 0 ? Math.max(...numbered) : (sql.match(/\?/g) ?? []).length;
  const params = Array.from({ length: count }, () => 1);
  return db
    .prepare(`EXPLAIN QUERY PLAN ${sql}`)
    .all(...params)
    .map((r) => String(r.detail));
}

describe('sqlite history store', () => {
  it('answers every query by an index search, in index order, without a sort', async () => {
    const file = nextFile();
    // A populated store: the planner sees real tables (no ANALYZE, as in production).
    const s = new TradingStream({ seed: 3, users: 5, startTime: Date.UTC(2024, 0, 1), meanStepMs: 1_000 });
    s.setup();
    for (let i = 0; i < 500; i++) s.step();
    const store = SqliteHistoryStore.open(file);
    await store.applyBatch(s.recorder.entries);
    await store.close();
    const db = new DatabaseSync(file, { readOnly: true });
    try {
      for (const [name, sql] of Object.entries(QUERY_SQL) as [QueryName, string][]) {
        const lines = plan(db, sql);
        const text = `${name}: ${lines.join(' | ')}`;
        // Order lists merge several ranges in id order; every table access must be an index search.
        const access = lines.filter(
          (l) => !/^(MERGE \(UNION ALL\)|LEFT|RIGHT|SCAN CONSTANT ROW|SCALAR SUBQUERY \d+)$/.test(l),
        );
        assert.ok(access.length >= 1, text);
        const expected = expectedIndex(name);
        const indexes = typeof expected === 'string' ? [expected] : expected;
        for (const line of access) {
          assert.match(line, /^SEARCH /, `scans: ${text}`);
          assert.ok(
            indexes.some((index) => line.includes(`USING ${index} `) || line.includes(`INDEX ${index} `)),
            text,
          );
        }
        // Each of a user's arms searches its own index.
        for (const index of indexes)
          assert.ok(
            lines.some((l) => l.includes(`INDEX ${index} `) || l.includes(`USING ${index} `)),
            text,
          );
        assert.ok(!lines.some((l) => l.includes('TEMP B-TREE')), `sorts: ${text}`);
        if (name.startsWith('orders:'))
          assert.ok(lines.length === 1 || lines[0] === 'MERGE (UNION ALL)', text);
      }
      // Updates find their row by key too.
      const lines = plan(db, WRITE_SQL.updateOrder);
      assert.ok(
        lines.every((l) => l.startsWith('SEARCH ')),
        `updateOrder: ${lines.join(' | ')}`,
      );
    } finally {
      db.close();
    }
  });

  it('bounds the WAL: a checkpoint after one huge batch cuts the file back (journal_size_limit)', async () => {
    const s = new TradingStream({ seed: 7, users: 8, startTime: Date.UTC(2024, 0, 1), meanStepMs: 1_000 });
    s.setup();
    for (let i = 0; i < 3000; i++) s.step();
    const entries = s.recorder.entries;
    const file = nextFile();
    const limit = 64 * 1024;
    const store = SqliteHistoryStore.open(file, { walAutocheckpointPages: 100, walSizeLimitBytes: limit });
    try {
      // One transaction grows the WAL past any checkpoint's reach (as a rebuild's batch does).
      await store.applyBatch(entries.slice(0, -20));
      const peak = statSync(`${file}-wal`).size;
      assert.ok(peak > 8 * limit, `the big batch made a WAL of only ${peak} bytes`);
      // The next commits reset the checkpointed WAL and cut the file back.
      for (const entry of entries.slice(-20)) await store.applyBatch([entry]);
      const after = statSync(`${file}-wal`).size;
      assert.ok(after <= limit + 100 * 4096, `WAL still ${after} bytes after checkpoints (peak ${peak})`);
    } finally {
      await store.close();
    }
  });

  it('keeps rows and checkpoint across reopening, and continues from there', async () => {
    const s = new TradingStream({ seed: 5, users: 6, startTime: Date.UTC(2024, 0, 1), meanStepMs: 2_000 });
    s.setup();
    for (let i = 0; i < 800; i++) s.step();
    const entries = s.recorder.entries;
    const half = Math.floor(entries.length / 2);
    const file = nextFile();
    let store = SqliteHistoryStore.open(file);
    await store.applyBatch(entries.slice(0, half));
    await store.close();
    await assert.rejects(store.checkpoint(), /closed/);
    store = SqliteHistoryStore.open(file);
    assert.equal(await store.checkpoint(), (entries[half - 1] as { seq: number }).seq);
    // A restart typically re-sends a little: the overlap is skipped.
    const r = await store.applyBatch(entries.slice(half - 10));
    assert.equal(r.skipped, 10);
    const whole = SqliteHistoryStore.open(nextFile());
    await whole.applyBatch(entries);
    for (const user of s.users) {
      assert.deepEqual(
        await store.bills(user, { pageSize: 1000 }),
        await whole.bills(user, { pageSize: 1000 }),
      );
      assert.deepEqual(
        await store.listOrders(user, 'btc_usdt', { pageSize: 1000 }),
        await whole.listOrders(user, 'btc_usdt', { pageSize: 1000 }),
      );
    }
    assert.deepEqual(await store.klines('btc_usdt', '1min'), await whole.klines('btc_usdt', '1min'));
    await store.close();
    await whole.close();
  });

  it('rolls back a batch whose writes fail: no rows, no checkpoint', async () => {
    const store = SqliteHistoryStore.open(nextFile());
    const time = Date.UTC(2024, 0, 1);
    const accepted = {
      type: 'OrderAccepted',
      orderId: 1,
      userId: 1,
      market: 'btc_usdt',
      side: 1,
      kind: 'limit',
      price: 1,
      amount: 1,
      acctType: 0,
      clientOrderId: '',
      usePlatformCoin: false,
      time,
    } as const;
    const deposit = {
      type: 'DepositUpdated',
      depositId: 'd1',
      userId: 1,
      coin: 'btc',
      chain: '',
      txHash: '',
      address: '',
      amount: 5,
      confirmations: 0,
      state: 'credited',
      itransfer: false,
      note: '',
      time,
    } as const;
    await store.applyBatch([{ seq: 1, time, events: [accepted] }]);
    // The same order id accepted again cannot happen from the engine: the insert fails.
    await assert.rejects(
      store.applyBatch([
        { seq: 2, time, events: [deposit] },
        { seq: 3, time, events: [accepted] },
      ]),
    );
    assert.equal(await store.checkpoint(), 1);
    assert.equal((await store.deposits(1)).total, 0);
    await store.applyBatch([{ seq: 2, time, events: [deposit] }]);
    assert.equal((await store.deposits(1)).total, 1);
    await store.close();
  });

  it('migrates deposits and withdrawals of a schema-1 file to the withdrawal states', async () => {
    const file = nextFile();
    const db = new DatabaseSync(file);
    db.exec(MIGRATIONS[0] as string);
    db.exec(
      "CREATE TABLE meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID; INSERT INTO meta VALUES ('schema_version', 1), ('checkpoint', 9);" +
        "INSERT INTO deposits VALUES (1, 'd1', 1, 'btc', 5, 'credited', 100);" +
        "INSERT INTO withdrawals VALUES (2, 'w1', 1, 'btc', 7, 1, 'frozen', NULL, 200, NULL), " +
        "(3, 'w2', 1, 'btc', 7, 1, 'settled', NULL, 200, 300), (4, 'w3', 1, 'btc', 7, 1, 'released', 'failed', 200, 400), " +
        "(5, 'w4', 1, 'btc', 7, 1, 'released', 'cancelled', 200, 500);",
    );
    db.close();
    const store = SqliteHistoryStore.open(file);
    assert.equal(await store.checkpoint(), 9);
    assert.deepEqual(
      (await store.withdrawals(1)).rows.map((w) => [
        w.withdrawalId,
        w.status,
        w.reason,
        w.manageTime,
        w.txHash,
      ]),
      [
        ['w4', 'cancelled', 'cancelled', 500, ''],
        ['w3', 'failed', 'failed', 400, ''],
        ['w2', 'succeeded', '', 300, ''],
        ['w1', 'submitted', '', 200, ''],
      ],
    );
    const [d] = (await store.deposits(1)).rows;
    assert.deepEqual([d?.status, d?.chain, d?.updated, d?.itransfer], ['credited', '', 100, false]);
    await store.close();
  });

  it('refuses a file written by a newer schema', async () => {
    const file = nextFile();
    await SqliteHistoryStore.open(file).close();
    const db = new DatabaseSync(file);
    db.exec("UPDATE meta SET value = 99 WHERE key = 'schema_version'");
    db.close();
    assert.throws(() => SqliteHistoryStore.open(file), /newer/);
  });
});
