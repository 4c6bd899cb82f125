/** @module pg-history-store.test — the history store contract on PostgreSQL, its query plans and its schema. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { createTestDatabase, pgSkipReason, type TestDatabase } from '../../test/fixtures/postgres.ts';
import { runHistoryStoreContract } from './history-store.case.ts';
import {
  DEFAULT_PG_SCHEMA,
  PG_MIGRATIONS,
  PG_QUERY_SQL,
  PgHistoryStore,
  postgresSql,
  redactUrl,
  splitHistoryUrl,
} from './pg-history-store.ts';
import { TradingStream } from './trading-stream.ts';

const skip = await pgSkipReason();
let db: TestDatabase | undefined;
let schemas = 0;

before(async () => {
  if (skip === false) db = await createTestDatabase();
});
after(() => db?.drop());

/** A store in a fresh schema of the test database. */
const freshStore = (): Promise<PgHistoryStore> =>
  PgHistoryStore.open((db as TestDatabase).url, { schema: `contract_${++schemas}` });

runHistoryStoreContract('postgresql', freshStore, { skip });

describe('postgresql history store', { skip }, () => {
  it('translates SQLite placeholders and drops its index hint', () => {
    assert.equal(
      postgresSql('SELECT a FROM t WHERE x = ? AND y = ? LIMIT ? OFFSET ?'),
      'SELECT a FROM t WHERE x = $1 AND y = $2 LIMIT $3 OFFSET $4',
    );
    assert.equal(
      postgresSql('SELECT a FROM t INDEXED BY i WHERE u = ?1 AND m = ?2 LIMIT ?3'),
      'SELECT a FROM t WHERE u = $1 AND m = $2 LIMIT $3',
    );
  });

  it('reads the schema from the URL and keeps passwords out of messages', () => {
    assert.deepEqual(splitHistoryUrl('postgres://u:secret@h:5432/db?schema=venue1&sslmode=disable'), {
      connectionString: 'postgres://u:secret@h:5432/db?sslmode=disable',
      schema: 'venue1',
    });
    assert.equal(splitHistoryUrl('postgresql://h/db').schema, undefined);
    assert.throws(() => splitHistoryUrl('mysql://h/db'), /must start with postgres:\/\//);
    assert.throws(() => splitHistoryUrl('not a url'), /not a URL/);
    assert.equal(redactUrl('postgres://u:secret@h/db'), 'postgres://u:***@h/db');
  });

  it('answers every query by index searches, with no sort but of one page per order-list arm', async () => {
    const schema = `plans_${++schemas}`;
    const store = await PgHistoryStore.open((db as TestDatabase).url, { schema });
    const s = new TradingStream({ seed: 3, users: 2, startTime: Date.UTC(2024, 0, 1), meanStepMs: 1_000 });
    s.setup();
    for (let i = 0; i < 5_000; i++) s.step();
    await store.applyBatch(s.recorder.entries);
    await store.close();
    const client = new pg.Client({ connectionString: (db as TestDatabase).url });
    await client.connect();
    try {
      await client.query(`SET search_path = ${schema}`);
      await client.query('ANALYZE');
      // A few hundred rows fit in a page or two, where a sequential scan is cheapest; the plans
      // that matter are those of large tables, which this setting stands in for.
      await client.query('SET enable_seqscan = off');
      // A first page of 10 over every time: the plan for the values a client sends most.
      await client.query('SET plan_cache_mode = force_custom_plan');
      for (const [i, [name, sql]] of Object.entries(PG_QUERY_SQL).entries()) {
        await client.query(`PREPARE q${i} AS ${sql}`);
        const types = (
          await client.query(
            'SELECT parameter_types::text[] AS t FROM pg_prepared_statements WHERE name = $1',
            [`q${i}`],
          )
        ).rows[0].t as string[];
        const at = (pattern: RegExp): number => Number(pattern.exec(sql)?.[1] ?? 0);
        const args = types.map((t, k) => {
          const n = k + 1;
          if (t === 'text') return "'btc_usdt'";
          if (n === at(/LIMIT \$(\d+)/)) return '10';
          if (n === at(/OFFSET \$(\d+)/)) return '0';
          if (n === at(/BETWEEN \$(\d+)/)) return String(Number.MIN_SAFE_INTEGER);
          if (n === at(/BETWEEN \$\d+ AND \$(\d+)/)) return String(Number.MAX_SAFE_INTEGER);
          return '1';
        });
        const plan = (await client.query(`EXPLAIN EXECUTE q${i}(${args.join(', ')})`)).rows
          .map((r) => String(r['QUERY PLAN']))
          .join('\n');
        assert.doesNotMatch(plan, /Seq Scan/, `${name}:\n${plan}`);
        if (
          name.startsWith('orders:') ||
          (/^venueTrades(Beyond)?:/.test(name) && sql.includes('UNION ALL'))
        ) {
          // Each arm stops at the page (an index range read backwards, or a tiny one sorted); only
          // the arms' rows are merged.
          const arms = (sql.match(/UNION ALL/g) ?? []).length + 1;
          assert.equal(plan.match(/->\s+Limit\b/g)?.length, arms, `${name}:\n${plan}`);
        } else assert.doesNotMatch(plan, /^\s*(->\s*)?Sort\b/m, `${name}:\n${plan}`);
      }
    } finally {
      await client.end();
    }
  });

  it('reopens with its rows and checkpoint; refuses a schema from a newer version', async () => {
    const schema = `reopen_${++schemas}`;
    const url = `${(db as TestDatabase).url}?schema=${schema}`;
    const s = new TradingStream({ seed: 5, users: 4, startTime: Date.UTC(2024, 0, 1), meanStepMs: 1_000 });
    s.setup();
    for (let i = 0; i < 200; i++) s.step();
    const store = await PgHistoryStore.open(url);
    await store.applyBatch(s.recorder.entries);
    const trades = await store.trades('btc_usdt');
    await store.close();
    await assert.rejects(store.checkpoint(), /closed/);
    const again = await PgHistoryStore.open(url);
    assert.equal(await again.checkpoint(), s.recorder.seq);
    assert.deepEqual(await again.trades('btc_usdt'), trades);
    await again.close();
    const client = new pg.Client({ connectionString: (db as TestDatabase).url });
    await client.connect();
    await client.query(
      `UPDATE ${schema}.meta SET value = ${PG_MIGRATIONS.length + 1} WHERE key = 'schema_version'`,
    );
    await client.end();
    const newer = `schema version ${PG_MIGRATIONS.length + 1} is newer than this code \\(${PG_MIGRATIONS.length}\\)`;
    await assert.rejects(PgHistoryStore.open(url), new RegExp(newer));
  });

  it('two stores opening one new schema at once both work (the reader and the writer thread)', async () => {
    const url = `${(db as TestDatabase).url}?schema=together_${++schemas}`;
    const [a, b] = await Promise.all([PgHistoryStore.open(url), PgHistoryStore.open(url)]);
    assert.equal(await a.checkpoint(), 0);
    assert.equal(await b.checkpoint(), 0);
    await Promise.all([a.close(), b.close()]);
  });

  it('uses the default schema when none is named', async () => {
    const store = await PgHistoryStore.open((db as TestDatabase).url);
    await store.close();
    const client = new pg.Client({ connectionString: (db as TestDatabase).url });
    await client.connect();
    const r = await client.query(
      'SELECT 1 FROM information_schema.tables WHERE table_schema = $1 AND table_name = $2',
      [DEFAULT_PG_SCHEMA, 'orders'],
    );
    await client.end();
    assert.equal(r.rowCount, 1);
  });
});
