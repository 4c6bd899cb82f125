/**
 * @module history-store.bench — throughput of a history store (SQLite, or PostgreSQL with
 * HS_STORE=pg) on a realistic trading stream from the real engine: rows per second when applying
 * batches of journal entries, and the latency of the main queries afterwards.
 *
 * PostgreSQL: a database of the run's own, `bourse_bench_<pid>`, is created on the server of
 * HS_PG_URL (default postgres://postgres@127.0.0.1:5432/postgres) and dropped afterwards. Its CPU
 * time is the client's plus the server backends' that served the store (read from /proc; the
 * server's WAL writer and checkpointer are not counted).
 *
 * Run: `node src/store/history-store.bench.ts [commands=200000] [batch=1000] [users=500]`, with
 * the store's options from the environment if wanted: HS_SYNC=OFF, HS_WAL_PAGES=1000,
 * HS_CACHE_KIB=32768. The stream is generated first (engine time is not counted), then applied
 * to a fresh file. Wall time and CPU time are both printed: on a shared machine, CPU time is the
 * steadier figure.
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { planBatch } from './history-projection.ts';
import type { HistoryEntry } from './history-store.ts';
import pg from 'pg';
import type { HistoryStore } from './history-store.ts';
import { PgHistoryStore } from './pg-history-store.ts';
import { SqliteHistoryStore } from './sqlite-history-store.ts';
import { TradingStream } from './trading-stream.ts';

const [commands = 200_000, batchSize = 1_000, users = 500] = process.argv.slice(2).map(Number);

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0;
}

let t = performance.now();
const stream = new TradingStream({
  seed: 42,
  users,
  startTime: Date.UTC(2024, 0, 1),
  meanStepMs: 100,
  targetOpenOrders: 5_000,
});
stream.setup();
for (let i = 0; i < commands; i++) stream.step();
const entries = stream.recorder.entries;
const events = entries.reduce((n, e) => n + e.events.length, 0);
const trades = entries.reduce((n, e) => n + e.events.filter((x) => x.type === 'TradeExecuted').length, 0);
console.log(
  `stream: ${entries.length} entries (${commands} trading commands + setup), ${events} events, ` +
    `${trades} trades, over ${((stream.recorder.time - Date.UTC(2024, 0, 1)) / 3_600_000).toFixed(1)} h ` +
    `of stream time; generated in ${((performance.now() - t) / 1000).toFixed(1)} s`,
);

const batches: HistoryEntry[][] = [];
for (let i = 0; i < entries.length; i += batchSize) batches.push(entries.slice(i, i + batchSize));

// Planning alone (shared by every adapter): the in-memory part of applyBatch.
t = performance.now();
let planned = 0;
for (const b of batches) planned += planBatch(0, b).rows;
const planMs = performance.now() - t;

const env = process.env;
const PG = env.HS_STORE === 'pg';
const adminUrl = env.HS_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const database = `bourse_bench_${process.pid}`;
const dbUrl = Object.assign(new URL(adminUrl), { pathname: `/${database}` }).toString();
const onAdmin = async (sql: string): Promise<void> => {
  const c = new pg.Client({ connectionString: adminUrl });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
};
/** CPU ms of the server backends that serve the store (PostgreSQL runs outside this process). */
const backendCpuMs = async (): Promise<number> => {
  if (!PG) return 0;
  const c = new pg.Client({ connectionString: dbUrl });
  await c.connect();
  const pids = (
    await c.query("SELECT pid FROM pg_stat_activity WHERE application_name = 'bourse-history'")
  ).rows.map((r) => Number(r.pid));
  await c.end();
  let ticks = 0;
  for (const pid of pids) {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    ticks += Number(fields[11]) + Number(fields[12]);
  }
  return ticks * 10; // USER_HZ is 100
};

const dir = mkdtempSync(join(tmpdir(), 'bourse-history-bench-'));
const file = join(dir, 'history.db');
if (PG)
  await onAdmin(`DROP DATABASE IF EXISTS ${database} WITH (FORCE); CREATE DATABASE ${database}`).catch(
    async () => {
      await onAdmin(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      await onAdmin(`CREATE DATABASE ${database}`);
    },
  );
try {
  console.log(PG ? `store: PostgreSQL, database ${database}` : `store: SQLite, ${file}`);
  const store: HistoryStore = PG
    ? await PgHistoryStore.open(dbUrl, {
        ...(env.HS_SYNC_COMMIT === 'on' ? { synchronousCommit: 'on' as const } : {}),
        maxConnections: 1,
      })
    : SqliteHistoryStore.open(file, {
        ...(env.HS_SYNC === 'OFF' ? { synchronous: 'OFF' as const } : {}),
        ...(env.HS_WAL_PAGES === undefined ? {} : { walAutocheckpointPages: Number(env.HS_WAL_PAGES) }),
        ...(env.HS_CACHE_KIB === undefined ? {} : { cacheKiB: Number(env.HS_CACHE_KIB) }),
      });
  const serverCpuBefore = await backendCpuMs();
  const batchMs: number[] = [];
  const batchRows: number[] = [];
  let rows = 0;
  const cpu = process.cpuUsage();
  t = performance.now();
  for (const b of batches) {
    const t0 = performance.now();
    const written = (await store.applyBatch(b)).rows;
    rows += written;
    batchRows.push(written);
    batchMs.push(performance.now() - t0);
  }
  const totalMs = performance.now() - t;
  const used = process.cpuUsage(cpu);
  const serverCpuMs = (await backendCpuMs()) - serverCpuBefore;
  const cpuMs = (used.user + used.system) / 1000 + serverCpuMs;
  const sorted = [...batchMs].sort((a, b) => a - b);
  const perSec = (n: number, ms: number): string => Math.round((n / ms) * 1000).toLocaleString('en-US');
  console.log(
    `apply: ${batches.length} batches of ${batchSize} entries in ${(totalMs / 1000).toFixed(2)} s: ` +
      `${perSec(rows, totalMs)} rows/s, ${perSec(entries.length, totalMs)} commands/s, ` +
      `${perSec(events, totalMs)} events/s (${rows} rows)`,
  );
  console.log(
    `  CPU time ${(cpuMs / 1000).toFixed(2)} s (user ${(used.user / 1e6).toFixed(2)}, system ${(used.system / 1e6).toFixed(2)}): ` +
      `${perSec(rows, cpuMs)} rows per CPU-second, ${perSec(entries.length, cpuMs)} commands per CPU-second` +
      (PG ? ` (of which the PostgreSQL backend ${(serverCpuMs / 1000).toFixed(2)} s)` : ''),
  );
  console.log(
    `  per batch: p50 ${percentile(sorted, 0.5).toFixed(1)} ms, p99 ${percentile(sorted, 0.99).toFixed(1)} ms, ` +
      `max ${(sorted.at(-1) ?? 0).toFixed(1)} ms; planning alone ${(planMs / 1000).toFixed(2)} s ` +
      `(${perSec(planned, planMs)} rows/s)`,
  );
  // Does it slow down as the file grows? Wall-clock rows/s per fifth of the stream.
  const fifths: string[] = [];
  for (let k = 0; k < 5; k++) {
    const from = Math.floor((batches.length * k) / 5);
    const to = Math.floor((batches.length * (k + 1)) / 5);
    const ms = batchMs.slice(from, to).reduce((a, b) => a + b, 0);
    fifths.push(
      perSec(
        batchRows.slice(from, to).reduce((a, b) => a + b, 0),
        ms,
      ),
    );
  }
  console.log(`  rows/s by fifth of the stream: ${fifths.join(' → ')}`);
  if (PG) {
    const c = new pg.Client({ connectionString: dbUrl });
    await c.connect();
    const bytes = Number((await c.query('SELECT pg_database_size(current_database()) AS n')).rows[0].n);
    await c.end();
    console.log(`  database: ${(bytes / 2 ** 20).toFixed(1)} MiB`);
  } else {
    const size = ['', '-wal'].reduce(
      (n, x) => n + (statSync(file + x, { throwIfNoEntry: false })?.size ?? 0),
      0,
    );
    console.log(`  file: ${(size / 2 ** 20).toFixed(1)} MiB (db + wal)`);
  }

  // Query latencies on the loaded store: the busiest user and market.
  const time = async (name: string, n: number, body: (i: number) => Promise<unknown>): Promise<void> => {
    const t0 = performance.now();
    for (let i = 0; i < n; i++) await body(i);
    console.log(`  query ${name}: ${(((performance.now() - t0) / n) * 1000).toFixed(0)} µs`);
  };
  const user = stream.users[0] as number;
  const total = (await store.bills(user)).total;
  console.log(`queries (user ${user}: ${total} bills):`);
  await time('listOrders all, page 1 of 50', 500, () => store.listOrders(user, 'btc_usdt', { pageSize: 50 }));
  await time('listOrders finished, page 3 of 10', 500, () =>
    store.listOrders(user, 'btc_usdt', { status: 'finished', pageIndex: 3 }),
  );
  const ids = (await store.listOrders(user, 'btc_usdt', { pageSize: 1000 })).map((o) => o.id);
  await time('getOrder', 2_000, (i) => store.getOrder(user, 'btc_usdt', ids[i % ids.length] as number));
  await time('trades latest 50', 500, () => store.trades('btc_usdt'));
  await time('klines 1min, 1000 rows', 200, () => store.klines('btc_usdt', '1min'));
  await time('bills page 1 of 50 with total', 500, () => store.bills(user, { pageSize: 50 }));
  await time('bills usdt page 1 of 50 with total', 500, () =>
    store.bills(user, { coin: 'usdt', pageSize: 50 }),
  );
  await time('withdrawals page 1 with total', 500, () => store.withdrawals(user));
  await store.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
  if (PG) await onAdmin(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
}
