/**
 * The venue on a PostgreSQL history store (`--history-url`): the server's follower and writer
 * threads write it while orders trade, `bourse rebuild-history` rebuilds it row for row and swaps
 * it in, and a rebuild into SQLite from the same journal holds the same rows.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { offlineCommands } from '../../src/cli/offline.ts';
import {
  createTestDatabase,
  dumpHistory,
  HISTORY_TABLES,
  pgSkipReason,
  type TestDatabase,
} from '../fixtures/postgres.ts';
import { startServer, type ServerProcess } from '../fixtures/server-process.ts';
import { admin, createTrader, type ZbClient } from '../fixtures/zb-client.ts';
import { fileTimeLimit } from '../fixtures/time-limit.ts';

fileTimeLimit(import.meta.url);

const skip = await pgSkipReason();
const root = mkdtempSync(join(tmpdir(), 'bourse-pg-history-'));
const dataDir = join(root, 'data');
let db: TestDatabase | undefined;
let url = '';
const quiet = { out: (): void => undefined, err: (): void => undefined };

/** Every row of every history table in `schema` of the test's database. */
const dumpPg = (schema: string): Promise<Record<string, unknown[]>> =>
  dumpHistory((db as TestDatabase).url, schema);

function dumpSqlite(path: string): Record<string, unknown[]> {
  const sqlite = new DatabaseSync(path, { readOnly: true });
  try {
    return Object.fromEntries(
      Object.entries(HISTORY_TABLES).map(([table, key]) => [
        table,
        sqlite
          .prepare(`SELECT * FROM ${table} ORDER BY ${key}`)
          .all()
          .map((r) => ({ ...r })),
      ]),
    );
  } finally {
    sqlite.close();
  }
}

describe('history on PostgreSQL', { skip }, () => {
  before(async () => {
    db = await createTestDatabase();
    url = `${db.url}?schema=live`;
    const server = await startServer(dataDir, ['--rate-limits=false', '--history-url', url]);
    try {
      await trade(server);
    } catch (error) {
      await server.kill();
      throw new Error(`${(error as Error).message}\n${server.output()}`, { cause: error });
    }
    assert.equal(await server.stop(), 0);
  });

  async function trade(server: ServerProcess): Promise<void> {
    assert.match(server.output(), /history store: PostgreSQL postgres:\/\//);
    const [ann, ben] = [
      await createTrader(server, 'ann', [['usdt', '50000']]),
      await createTrader(server, 'ben', [['btc', '5']]),
    ] as [ZbClient, ZbClient];
    for (let i = 0; i < 30; i++) {
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
      if (i === 15) await admin(server.base, server.token, '/admin/snapshot', []);
    }
    // What the server wrote is read back through its own API, from PostgreSQL.
    const orders = (await ann.call('getOrdersIgnoreTradeType', [
      ['currency', 'btc_usdt'],
      ['pageIndex', '1'],
      ['pageSize', '50'],
    ])) as unknown as unknown[];
    assert.equal(orders.length, 30);
  }

  after(async () => {
    await db?.drop();
    rmSync(root, { recursive: true, force: true });
  });

  test('rebuild-history on PostgreSQL reproduces the live history row for row, and so does SQLite', async () => {
    const live = await dumpPg('live');
    assert.ok((live['trades'] as unknown[]).length > 10, 'the venue traded');
    assert.equal(await offlineCommands.rebuildHistory(dataDir, quiet, true, url), 0);
    assert.deepEqual(await dumpPg('live'), live);
    // Twice: the rebuild replaces what the first one swapped in, and leaves no temporary schema.
    const lines: string[] = [];
    assert.equal(
      await offlineCommands.rebuildHistory(
        dataDir,
        { out: (l) => lines.push(l), err: () => undefined },
        false,
        url,
      ),
      0,
    );
    assert.match(lines.join('\n'), /journal records replayed into postgres:\/\/.*\(schema live\)/);
    assert.deepEqual(await dumpPg('live'), live);
    const client = new pg.Client({ connectionString: (db as TestDatabase).url });
    await client.connect();
    const schemas = (await client.query("SELECT nspname FROM pg_namespace WHERE nspname LIKE 'live%'")).rows;
    await client.end();
    assert.deepEqual(schemas, [{ nspname: 'live' }]);
    // The same journal into SQLite gives the same rows (flags and amounts alike).
    assert.equal(await offlineCommands.rebuildHistory(dataDir, quiet, true), 0);
    assert.deepEqual(dumpSqlite(join(dataDir, 'history.sqlite')), live);
  });

  test('rebuild-history refuses a URL that is not PostgreSQL, and reports an unreachable server', async () => {
    const err: string[] = [];
    const io = { out: (): void => undefined, err: (l: string) => err.push(l) };
    assert.equal(await offlineCommands.rebuildHistory(dataDir, io, false, 'mysql://db/x'), 2);
    assert.match(err.join('\n'), /must start with postgres:\/\//);
    assert.equal(
      await offlineCommands.rebuildHistory(dataDir, io, false, 'postgres://postgres@127.0.0.1:1/x'),
      1,
    );
    assert.match(err.join('\n'), /ECONNREFUSED.*the history store was not replaced/);
  });
});
