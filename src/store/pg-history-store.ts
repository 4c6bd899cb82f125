/**
 * @module pg-history-store — the history store on PostgreSQL (npm `pg`), for venues whose history
 * outgrows one file or is read by other services (docs/history-store.md, "PostgreSQL").
 *
 * The same projection as SQLite (`planBatch`), the same reads (SQLite's QUERY_SQL, with numbered
 * parameters and without SQLite's index hint), the same row mappers. Each `applyBatch` is one
 * transaction: the checkpoint row is read `FOR UPDATE` (so two writers on one schema cannot both
 * apply a batch), then each table gets one statement for the whole batch, its rows passed as
 * arrays and expanded with `unnest`. The tables live in one schema (default `bourse_history`,
 * or `?schema=` in the URL). `synchronous_commit` is off for the batches by default: a crash may
 * lose the latest committed batches, which the journal replays after the checkpoint, as SQLite's
 * synchronous=NORMAL does.
 */
import pg from 'pg';
import { BUY } from '../domain/commands.ts';
import type { LoanRecord, RepaymentRecord } from '../margin/loans.ts';
import { planBatch, type LoanRow, type RepaymentRow } from './history-projection.ts';
import {
  billRow,
  loanFilters,
  marginBillRow,
  depositRow,
  num,
  recordOf,
  orderRow,
  stepRow,
  tradeRow,
  withdrawalRow,
  type Row,
} from './history-rows.ts';
import {
  DEFAULT_TRADES_LIMIT,
  MAX_KLINE_SIZE,
  MAX_RECORDS_LIMIT,
  MAX_TRADES_LIMIT,
  limitBound,
  pageBounds,
  type ApplyBatchResult,
  type LoanRecordsQuery,
  type RepaymentsQuery,
  type BillRow,
  type BillsQuery,
  type MarginBillRow,
  type MarginBillsQuery,
  type DepositRow,
  type FundsQuery,
  type HistoryEntry,
  type HistoryStore,
  type KlineInterval,
  type KlineRow,
  type KlinesQuery,
  type ListOrdersQuery,
  type OrderRow,
  type Page,
  type TradeRow,
  type TradesQuery,
  type VenueTrades,
  type VenueTradesQuery,
  type WithdrawalRow,
  type WithdrawalStepRow,
} from './history-store.ts';
import { QUERY_SQL, type QueryName } from './sqlite-history-store.ts';
import { PG_VENUE_TRADES_SQL, venueTrades, type VenueTradesStatement } from './venue-trades.ts';

/** The schema when neither the options nor the URL name one. */
export const DEFAULT_PG_SCHEMA = 'bourse_history';
const INT8_OID = 20;

/**
 * Schema migrations, applied in order; `meta.schema_version` counts those applied. The first one
 * is SQLite's schema after its migrations, in PostgreSQL's types (bigint for every amount, id
 * and time; smallint for flags, sides and statuses). Append, never edit.
 */
export const PG_MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE orders (
    id bigint PRIMARY KEY,
    user_id bigint NOT NULL,
    market text NOT NULL,
    side smallint NOT NULL,
    kind text NOT NULL,
    price bigint NOT NULL,
    amount bigint NOT NULL,
    filled bigint NOT NULL,
    filled_value bigint NOT NULL,
    fees bigint NOT NULL,
    fee_coin text NOT NULL,
    platform_fees bigint NOT NULL,
    status smallint NOT NULL,
    acct_type smallint NOT NULL,
    use_platform_coin smallint NOT NULL,
    client_order_id text NOT NULL,
    time bigint NOT NULL,
    updated bigint NOT NULL,
    cancel_reason text
  );
  CREATE INDEX orders_user_market_side_status ON orders (user_id, market, side, status, id);
  CREATE INDEX orders_client_id ON orders (user_id, market, client_order_id, id) WHERE client_order_id <> '';

  CREATE TABLE trades (
    id bigint PRIMARY KEY,
    market text NOT NULL,
    price bigint NOT NULL,
    amount bigint NOT NULL,
    value bigint NOT NULL,
    taker_side smallint NOT NULL,
    taker_order_id bigint NOT NULL,
    maker_order_id bigint NOT NULL,
    taker_user_id bigint NOT NULL,
    maker_user_id bigint NOT NULL,
    time bigint NOT NULL
  );
  CREATE INDEX trades_market ON trades (market, id);

  CREATE TABLE klines (
    market text NOT NULL,
    "interval" text NOT NULL,
    start bigint NOT NULL,
    open bigint NOT NULL,
    high bigint NOT NULL,
    low bigint NOT NULL,
    close bigint NOT NULL,
    volume bigint NOT NULL,
    PRIMARY KEY (market, "interval", start)
  );

  CREATE TABLE bills (
    user_id bigint NOT NULL,
    time bigint NOT NULL,
    id bigint NOT NULL,
    coin text NOT NULL,
    change bigint NOT NULL,
    available bigint NOT NULL,
    frozen bigint NOT NULL,
    bill_type text NOT NULL,
    ref text NOT NULL,
    PRIMARY KEY (user_id, time, id)
  );
  CREATE INDEX bills_user_coin_time ON bills (user_id, coin, time, id);

  CREATE TABLE deposits (
    id bigint PRIMARY KEY,
    deposit_id text NOT NULL UNIQUE,
    user_id bigint NOT NULL,
    coin text NOT NULL,
    chain text NOT NULL,
    tx_hash text NOT NULL,
    address text NOT NULL,
    amount bigint NOT NULL,
    confirmations integer NOT NULL,
    status text NOT NULL,
    itransfer smallint NOT NULL,
    note text NOT NULL,
    time bigint NOT NULL,
    updated bigint NOT NULL
  );
  CREATE INDEX deposits_user ON deposits (user_id, id);
  CREATE INDEX deposits_user_coin ON deposits (user_id, coin, id);

  CREATE TABLE withdrawals (
    id bigint PRIMARY KEY,
    withdrawal_id text NOT NULL UNIQUE,
    user_id bigint NOT NULL,
    coin text NOT NULL,
    chain text NOT NULL,
    address text NOT NULL,
    amount bigint NOT NULL,
    fee bigint NOT NULL,
    status text NOT NULL,
    tx_hash text NOT NULL,
    confirmations integer NOT NULL,
    itransfer smallint NOT NULL,
    reason text NOT NULL,
    submit_time bigint NOT NULL,
    manage_time bigint NOT NULL
  );
  CREATE INDEX withdrawals_user ON withdrawals (user_id, id);
  CREATE INDEX withdrawals_user_coin ON withdrawals (user_id, coin, id);

  CREATE TABLE withdrawal_steps (
    id bigint PRIMARY KEY,
    withdrawal_id text NOT NULL,
    status text NOT NULL,
    confirmations integer NOT NULL,
    tx_hash text NOT NULL,
    reason text NOT NULL,
    time bigint NOT NULL
  );
  CREATE INDEX withdrawal_steps_withdrawal ON withdrawal_steps (withdrawal_id, id);

  INSERT INTO meta (key, value) VALUES ('checkpoint', 0);
  `,
  // Issue 14: the bills of margin accounts, apart from the spot bills.
  `
  CREATE TABLE margin_bills (
    user_id bigint NOT NULL,
    acct_type smallint NOT NULL,
    time bigint NOT NULL,
    id bigint NOT NULL,
    market text NOT NULL,
    coin text NOT NULL,
    change bigint NOT NULL,
    available bigint NOT NULL,
    frozen bigint NOT NULL,
    bill_type text NOT NULL,
    ref text NOT NULL,
    PRIMARY KEY (user_id, acct_type, time, id)
  );
  `,
  // Issue 29: closed loan records and repayments, which the engine no longer keeps.
  `
  CREATE TABLE margin_loans (
    borrower_user bigint NOT NULL,
    id bigint NOT NULL,
    acct_type smallint NOT NULL,
    market text NOT NULL,
    lender_user bigint NOT NULL,
    offer_id bigint NOT NULL,
    coin text NOT NULL,
    status smallint NOT NULL,
    closed_ms bigint NOT NULL,
    record text NOT NULL,
    PRIMARY KEY (borrower_user, id)
  );
  CREATE UNIQUE INDEX margin_loans_id ON margin_loans (id);
  CREATE INDEX margin_loans_lender ON margin_loans (lender_user, id);

  CREATE TABLE margin_repayments (
    borrower_user bigint NOT NULL,
    id bigint NOT NULL,
    loan_id bigint NOT NULL,
    acct_type smallint NOT NULL,
    market text NOT NULL,
    coin text NOT NULL,
    time bigint NOT NULL,
    record text NOT NULL,
    PRIMARY KEY (borrower_user, id)
  );
  CREATE INDEX margin_repayments_loan ON margin_repayments (loan_id, id);
  `,
  // Issue 31: the operator's venue-wide trades by user (taker or maker), src/store/venue-trades.ts.
  `
  CREATE INDEX trades_taker_user ON trades (taker_user_id, id);
  CREATE INDEX trades_maker_user ON trades (maker_user_id, id);
  `,
];

/**
 * SQLite's query as PostgreSQL runs it: `?N` becomes `$N`, each bare `?` the next `$k`, and
 * SQLite's `INDEXED BY` hint goes (PostgreSQL's planner has statistics to choose by).
 */
export function postgresSql(sqliteSql: string): string {
  let next = 0;
  return sqliteSql
    .replace(/ INDEXED BY \w+/g, '')
    .replace(/\?(\d+)?/g, (_, n: string | undefined) => `$${n ?? String(++next)}`);
}

/**
 * An order list in PostgreSQL: each (side, status) range of orders_user_market_side_status read
 * backwards for at most limit + offset rows, then the arms merged. PostgreSQL plans SQLite's
 * single ORDER BY over the union as a sort of every matching order; with a limit per arm the
 * work is bounded by the page, however long the user's history. Parameters as SQLite's: $1
 * user, $2 market, $3 limit, $4 offset, $5 the account (-1 any).
 */
function pgOrderListSql(sqliteSql: string): string {
  const arms = sqliteSql
    .replace(/ ORDER BY id DESC LIMIT \?3 OFFSET \?4$/, '')
    .split(' UNION ALL ')
    .map((arm) => `(${postgresSql(arm)} ORDER BY id DESC LIMIT $3::bigint + $4::bigint)`);
  return `SELECT * FROM (${arms.join(' UNION ALL ')}) page ORDER BY id DESC LIMIT $3 OFFSET $4`;
}

/** Every read, in PostgreSQL's placeholders. */
export const PG_QUERY_SQL = Object.fromEntries(
  Object.entries(QUERY_SQL).map(([name, sql]) => [
    name,
    name.startsWith('orders:')
      ? pgOrderListSql(sql)
      : postgresSql(PG_VENUE_TRADES_SQL[name as VenueTradesStatement] ?? sql),
  ]),
) as { readonly [K in QueryName]: string };

/** The writes of a batch: one statement per table, each row's fields passed as parallel arrays. */
export const PG_WRITE_SQL = {
  insertOrders:
    'INSERT INTO orders (id, user_id, market, side, kind, price, amount, filled, filled_value, fees, ' +
    'fee_coin, platform_fees, status, acct_type, use_platform_coin, client_order_id, time, updated, ' +
    'cancel_reason) SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::smallint[], ' +
    '$5::text[], $6::bigint[], $7::bigint[], $8::bigint[], $9::bigint[], $10::bigint[], $11::text[], ' +
    '$12::bigint[], $13::smallint[], $14::smallint[], $15::smallint[], $16::text[], $17::bigint[], ' +
    '$18::bigint[], $19::text[])',
  // An update for an order this store never saw placed changes nothing (see docs).
  updateOrders:
    'UPDATE orders o SET status = u.status, filled = u.filled, filled_value = u.filled_value, ' +
    'fees = u.fees, platform_fees = u.platform_fees, cancel_reason = u.cancel_reason, updated = u.updated ' +
    'FROM unnest($1::bigint[], $2::smallint[], $3::bigint[], $4::bigint[], $5::bigint[], $6::bigint[], ' +
    '$7::text[], $8::bigint[]) AS u(id, status, filled, filled_value, fees, platform_fees, cancel_reason, updated) ' +
    'WHERE o.id = u.id',
  insertTrades:
    'INSERT INTO trades (id, market, price, amount, value, taker_side, taker_order_id, maker_order_id, ' +
    'taker_user_id, maker_user_id, time) SELECT * FROM unnest($1::bigint[], $2::text[], $3::bigint[], ' +
    '$4::bigint[], $5::bigint[], $6::smallint[], $7::bigint[], $8::bigint[], $9::bigint[], $10::bigint[], ' +
    '$11::bigint[])',
  // Each (market, interval, start) appears once in a plan, as ON CONFLICT requires.
  upsertKlines:
    'INSERT INTO klines AS k (market, "interval", start, open, high, low, close, volume) ' +
    'SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[], $5::bigint[], $6::bigint[], ' +
    '$7::bigint[], $8::bigint[]) ON CONFLICT (market, "interval", start) DO UPDATE SET ' +
    'high = GREATEST(k.high, EXCLUDED.high), low = LEAST(k.low, EXCLUDED.low), close = EXCLUDED.close, ' +
    'volume = k.volume + EXCLUDED.volume',
  insertBills:
    'INSERT INTO bills (id, user_id, coin, change, available, frozen, bill_type, ref, time) ' +
    'SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::bigint[], $5::bigint[], ' +
    '$6::bigint[], $7::text[], $8::text[], $9::bigint[])',
  insertMarginBills:
    'INSERT INTO margin_bills (id, user_id, coin, change, available, frozen, bill_type, ref, time, acct_type, market) ' +
    'SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::bigint[], $5::bigint[], ' +
    '$6::bigint[], $7::text[], $8::text[], $9::bigint[], $10::smallint[], $11::text[])',
  upsertDeposits:
    'INSERT INTO deposits (id, deposit_id, user_id, coin, chain, tx_hash, address, amount, confirmations, ' +
    'status, itransfer, note, time, updated) SELECT * FROM unnest($1::bigint[], $2::text[], $3::bigint[], ' +
    '$4::text[], $5::text[], $6::text[], $7::text[], $8::bigint[], $9::integer[], $10::text[], ' +
    '$11::smallint[], $12::text[], $13::bigint[], $14::bigint[]) ON CONFLICT (deposit_id) DO UPDATE SET ' +
    'confirmations = EXCLUDED.confirmations, status = EXCLUDED.status, note = EXCLUDED.note, ' +
    'updated = EXCLUDED.updated',
  upsertWithdrawals:
    'INSERT INTO withdrawals (id, withdrawal_id, user_id, coin, chain, address, amount, fee, status, ' +
    'tx_hash, confirmations, itransfer, reason, submit_time, manage_time) SELECT * FROM unnest(' +
    '$1::bigint[], $2::text[], $3::bigint[], $4::text[], $5::text[], $6::text[], $7::bigint[], ' +
    '$8::bigint[], $9::text[], $10::text[], $11::integer[], $12::smallint[], $13::text[], $14::bigint[], ' +
    '$15::bigint[]) ON CONFLICT (withdrawal_id) DO UPDATE SET status = EXCLUDED.status, ' +
    'tx_hash = EXCLUDED.tx_hash, confirmations = EXCLUDED.confirmations, reason = EXCLUDED.reason, ' +
    'manage_time = EXCLUDED.manage_time',
  insertWithdrawalSteps:
    'INSERT INTO withdrawal_steps (id, withdrawal_id, status, confirmations, tx_hash, reason, time) ' +
    'SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::integer[], $5::text[], $6::text[], ' +
    '$7::bigint[])',
  insertLoans:
    'INSERT INTO margin_loans (id, borrower_user, acct_type, market, lender_user, offer_id, coin, status, ' +
    'closed_ms, record) SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::smallint[], $4::text[], ' +
    '$5::bigint[], $6::bigint[], $7::text[], $8::smallint[], $9::bigint[], $10::text[])',
  insertRepayments:
    'INSERT INTO margin_repayments (id, borrower_user, loan_id, acct_type, market, coin, time, record) ' +
    'SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::smallint[], $5::text[], ' +
    '$6::text[], $7::bigint[], $8::text[])',
  lockCheckpoint: "SELECT value FROM meta WHERE key = 'checkpoint' FOR UPDATE",
  setCheckpoint: "UPDATE meta SET value = $1 WHERE key = 'checkpoint'",
} as const;

/** Options of `PgHistoryStore.open`. */
export interface PgHistoryStoreOptions {
  /** The schema holding the tables (default: the URL's `schema` parameter, else DEFAULT_PG_SCHEMA). */
  readonly schema?: string;
  /** Connections in the pool (default 4): reads run beside a batch being written. */
  readonly maxConnections?: number;
  /**
   * `off` (default) for the batches: a crash of the database server may lose the latest committed
   * batches, which start-up replays from the journal. `on` waits for each commit's WAL flush.
   */
  readonly synchronousCommit?: 'on' | 'off';
  /** Errors of idle connections (a restarted server), which would otherwise go unseen. */
  readonly log?: (message: string) => void;
}

/** The URL without its `schema` parameter, and that parameter. */
export function splitHistoryUrl(url: string): { connectionString: string; schema: string | undefined } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`history URL is not a URL: ${redactUrl(url)}`);
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
    throw new Error(`history URL must start with postgres:// or postgresql://, got ${parsed.protocol}//`);
  }
  const schema = parsed.searchParams.get('schema') ?? undefined;
  parsed.searchParams.delete('schema');
  return { connectionString: parsed.toString(), schema };
}

/** The URL with any password replaced, for logs. */
export function redactUrl(url: string): string {
  return url.replace(/(\/\/[^:/@]+:)[^@]*@/, '$1***@');
}

const quoteIdent = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/** bigint columns as numbers: every id, amount and time is a safe integer (see docs). */
const TYPES = {
  getTypeParser: ((oid: number, format?: string) =>
    oid === INT8_OID && format !== 'binary'
      ? (value: string): number => Number(value)
      : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
};

export class PgHistoryStore implements HistoryStore {
  readonly #pool: pg.Pool;
  readonly #synchronousCommit: 'on' | 'off';
  #closed = false;

  /** Connects to `url`, creating the schema and its tables if needed, and migrates them. */
  static async open(url: string, options: PgHistoryStoreOptions = {}): Promise<PgHistoryStore> {
    const { connectionString, schema: fromUrl } = splitHistoryUrl(url);
    const schema = options.schema ?? fromUrl ?? DEFAULT_PG_SCHEMA;
    const pool = new pg.Pool({
      connectionString,
      max: options.maxConnections ?? 4,
      options: `-c search_path=${quoteIdent(schema)}`,
      types: TYPES,
      application_name: 'bourse-history',
    });
    const log = options.log ?? (() => undefined);
    pool.on('error', (error) => log(`history store connection lost: ${error.message}`));
    try {
      await migrate(pool, schema);
    } catch (error) {
      await pool.end();
      throw error;
    }
    return new PgHistoryStore(pool, options.synchronousCommit ?? 'off');
  }

  /** The schema a URL names (`?schema=`), else DEFAULT_PG_SCHEMA. */
  static schemaOf(url: string): string {
    return splitHistoryUrl(url).schema ?? DEFAULT_PG_SCHEMA;
  }

  /** Drops `schema` and everything in it, if it exists (a rebuild's leftovers). */
  static async dropSchema(url: string, schema: string): Promise<void> {
    await withClient(url, (c) => c.query(`DROP SCHEMA IF EXISTS ${quoteIdent(schema)} CASCADE`));
  }

  /**
   * Replaces schema `to` by schema `from` in one transaction (drop `to`, rename `from`): readers
   * see the old history or the new one, never a mix. Stores open on `to` see the new tables from
   * their next statement on (their search path names the schema).
   */
  static async replaceSchema(url: string, from: string, to: string): Promise<void> {
    await withClient(url, async (c) => {
      await c.query('BEGIN');
      try {
        await c.query(`DROP SCHEMA IF EXISTS ${quoteIdent(to)} CASCADE`);
        await c.query(`ALTER SCHEMA ${quoteIdent(from)} RENAME TO ${quoteIdent(to)}`);
        await c.query('COMMIT');
      } catch (error) {
        await c.query('ROLLBACK').catch(() => undefined);
        throw error;
      }
    });
  }

  private constructor(pool: pg.Pool, synchronousCommit: 'on' | 'off') {
    this.#pool = pool;
    this.#synchronousCommit = synchronousCommit;
  }

  async applyBatch(entries: readonly HistoryEntry[]): Promise<ApplyBatchResult> {
    this.#open();
    const client = await this.#pool.connect();
    try {
      await client.query(
        this.#synchronousCommit === 'off' ? 'BEGIN; SET LOCAL synchronous_commit = off' : 'BEGIN',
      );
      try {
        const locked = await client.query({ text: PG_WRITE_SQL.lockCheckpoint, rowMode: 'array' });
        // Planned under the checkpoint's row lock, so that two writers cannot both apply a batch.
        const plan = planBatch(num((locked.rows[0] as Row)[0]), entries);
        const w = PG_WRITE_SQL;
        // Every table's statement goes in one statement of data-modifying CTEs, one round trip.
        // They see one snapshot, so no two may touch the same row: the plan coalesces per row.
        const ctes: string[] = [];
        const params: unknown[] = [];
        const write = (sql: string, rows: readonly unknown[], columns: (row: never) => unknown[]): void => {
          if (rows.length === 0) return;
          const arrays: unknown[][] = columns(rows[0] as never).map(() => []);
          for (const row of rows) {
            const values = columns(row as never);
            for (let i = 0; i < values.length; i++) (arrays[i] as unknown[]).push(values[i]);
          }
          const offset = params.length;
          ctes.push(
            `w${ctes.length} AS (${sql.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + offset}`)})`,
          );
          params.push(...arrays);
        };
        write(w.insertOrders, plan.orderInserts, (o: OrderRow) => [
          o.id,
          o.userId,
          o.market,
          o.side,
          o.kind,
          o.price,
          o.amount,
          o.filled,
          o.filledValue,
          o.fees,
          o.feeCoin,
          o.platformFees,
          o.status,
          o.acctType,
          o.usePlatformCoin ? 1 : 0,
          o.clientOrderId,
          o.time,
          o.updated,
          o.cancelReason,
        ]);
        write(w.updateOrders, plan.orderUpdates, (u: (typeof plan.orderUpdates)[number]) => [
          u.id,
          u.status,
          u.filled,
          u.filledValue,
          u.fees,
          u.platformFees,
          u.cancelReason,
          u.updated,
        ]);
        write(w.insertTrades, plan.trades, (t: TradeRow) => [
          t.id,
          t.market,
          t.price,
          t.amount,
          t.value,
          t.takerSide,
          t.takerOrderId,
          t.makerOrderId,
          t.takerUserId,
          t.makerUserId,
          t.time,
        ]);
        write(w.upsertKlines, plan.klines, (k: (typeof plan.klines)[number]) => [
          k.market,
          k.interval,
          k.start,
          k.open,
          k.high,
          k.low,
          k.close,
          k.volume,
        ]);
        write(w.insertBills, plan.bills, (b: BillRow) => [
          b.id,
          b.userId,
          b.coin,
          b.change,
          b.available,
          b.frozen,
          b.billType,
          b.ref,
          b.time,
        ]);
        write(w.insertMarginBills, plan.marginBills, (b: MarginBillRow) => [
          b.id,
          b.userId,
          b.coin,
          b.change,
          b.available,
          b.frozen,
          b.billType,
          b.ref,
          b.time,
          b.acctType,
          b.market,
        ]);
        write(w.upsertDeposits, plan.deposits, (d: DepositRow) => [
          d.id,
          d.depositId,
          d.userId,
          d.coin,
          d.chain,
          d.txHash,
          d.address,
          d.amount,
          d.confirmations,
          d.status,
          d.itransfer ? 1 : 0,
          d.note,
          d.time,
          d.updated,
        ]);
        write(w.upsertWithdrawals, plan.withdrawals, (x: WithdrawalRow) => [
          x.id,
          x.withdrawalId,
          x.userId,
          x.coin,
          x.chain,
          x.address,
          x.amount,
          x.fee,
          x.status,
          x.txHash,
          x.confirmations,
          x.itransfer ? 1 : 0,
          x.reason,
          x.submitTime,
          x.manageTime,
        ]);
        write(w.insertWithdrawalSteps, plan.withdrawalSteps, (x: WithdrawalStepRow) => [
          x.id,
          x.withdrawalId,
          x.status,
          x.confirmations,
          x.txHash,
          x.reason,
          x.time,
        ]);
        write(w.insertLoans, plan.loans, (l: LoanRow) => [
          l.id,
          l.borrowerUserId,
          l.acctType,
          l.market,
          l.lenderUserId,
          l.offerId,
          l.coin,
          l.status,
          l.closedMs,
          l.record,
        ]);
        write(w.insertRepayments, plan.repayments, (r: RepaymentRow) => [
          r.id,
          r.borrowerUserId,
          r.loanId,
          r.acctType,
          r.market,
          r.coin,
          r.time,
          r.record,
        ]);
        if (plan.applied > 0) {
          ctes.push(`w${ctes.length} AS (${w.setCheckpoint.replace('$1', `$${params.length + 1}`)})`);
          params.push(plan.checkpoint);
        }
        if (ctes.length > 0) await client.query(`WITH ${ctes.join(', ')} SELECT 1`, params);
        await client.query('COMMIT');
        return { checkpoint: plan.checkpoint, applied: plan.applied, skipped: plan.skipped, rows: plan.rows };
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      }
    } finally {
      client.release();
    }
  }

  async checkpoint(): Promise<number> {
    this.#open();
    const rows = await this.#rows("SELECT value FROM meta WHERE key = 'checkpoint'", []);
    return num(rows[0]?.[0] ?? 0);
  }

  async getOrder(userId: number, market: string, orderId: number): Promise<OrderRow | undefined> {
    const r = (await this.#query('getOrder', [orderId, userId, market]))[0];
    return r === undefined ? undefined : orderRow(r);
  }

  async getOrderByClientId(
    userId: number,
    market: string,
    clientOrderId: string,
  ): Promise<OrderRow | undefined> {
    this.#open();
    if (clientOrderId === '') return undefined;
    const r = (await this.#query('getOrderByClientId', [userId, market, clientOrderId]))[0];
    return r === undefined ? undefined : orderRow(r);
  }

  async listOrders(userId: number, market: string, query: ListOrdersQuery = {}): Promise<OrderRow[]> {
    this.#open();
    const { pageSize, offset } = pageBounds(query);
    const status = query.status ?? 'all';
    const side = query.side === undefined ? 'any' : query.side === BUY ? 'buy' : 'sell';
    const name = `orders:${status}:${side}`;
    if (!(name in PG_QUERY_SQL)) {
      throw new RangeError(`unknown order list filter '${String(query.status)}/${String(query.side)}'`);
    }
    const acctType = query.acctType ?? -1;
    return (await this.#query(name as QueryName, [userId, market, pageSize, offset, acctType])).map(orderRow);
  }

  async trades(market: string, query: TradesQuery = {}): Promise<TradeRow[]> {
    this.#open();
    const limit = limitBound(query.limit, DEFAULT_TRADES_LIMIT, MAX_TRADES_LIMIT, 'limit');
    if (query.sinceTradeId !== undefined) {
      return (await this.#query('tradesSince', [market, query.sinceTradeId, limit])).map(tradeRow);
    }
    return (await this.#query('tradesLatest', [market, limit])).map(tradeRow).reverse();
  }

  async venueTrades(query: VenueTradesQuery): Promise<VenueTrades> {
    this.#open();
    return venueTrades((name, params) => this.#query(name, [...params]), query);
  }

  async klines(market: string, interval: KlineInterval, query: KlinesQuery = {}): Promise<KlineRow[]> {
    this.#open();
    const size = limitBound(query.size, MAX_KLINE_SIZE, MAX_KLINE_SIZE, 'size');
    // The columns are start, open, high, low, close, volume: the rows are KlineRows as they come.
    const rows =
      query.since === undefined
        ? (await this.#query('klinesLatest', [market, interval, size])).reverse()
        : await this.#query('klinesSince', [market, interval, query.since, size]);
    return rows as unknown as KlineRow[];
  }

  async bills(userId: number, query: BillsQuery = {}): Promise<Page<BillRow>> {
    this.#open();
    const { pageIndex, pageSize, offset } = pageBounds(query);
    const from = query.startTime ?? Number.MIN_SAFE_INTEGER;
    const to = query.endTime ?? Number.MAX_SAFE_INTEGER;
    const [rows, count] =
      query.coin === undefined
        ? await Promise.all([
            this.#query('bills', [userId, from, to, pageSize, offset]),
            this.#query('billsCount', [userId, from, to]),
          ])
        : await Promise.all([
            this.#query('billsCoin', [userId, query.coin, from, to, pageSize, offset]),
            this.#query('billsCoinCount', [userId, query.coin, from, to]),
          ]);
    return { rows: rows.map(billRow), total: num(count[0]?.[0]), pageIndex, pageSize };
  }

  async marginBills(userId: number, query: MarginBillsQuery): Promise<Page<MarginBillRow>> {
    this.#open();
    const { pageIndex, pageSize, offset } = pageBounds(query);
    const from = query.startTime ?? Number.MIN_SAFE_INTEGER;
    const to = query.endTime ?? Number.MAX_SAFE_INTEGER;
    const args = [userId, query.acctType, query.market ?? '', query.coin ?? '', from, to];
    const [rows, count] = await Promise.all([
      this.#query('marginBills', [...args, pageSize, offset]),
      this.#query('marginBillsCount', args),
    ]);
    return { rows: rows.map(marginBillRow), total: num(count[0]?.[0]), pageIndex, pageSize };
  }

  async deposits(userId: number, query: FundsQuery = {}): Promise<Page<DepositRow>> {
    this.#open();
    const { pageIndex, pageSize, offset } = pageBounds(query);
    const [rows, count] =
      query.coin === undefined
        ? await Promise.all([
            this.#query('deposits', [userId, pageSize, offset]),
            this.#query('depositsCount', [userId]),
          ])
        : await Promise.all([
            this.#query('depositsCoin', [userId, query.coin, pageSize, offset]),
            this.#query('depositsCoinCount', [userId, query.coin]),
          ]);
    return { rows: rows.map(depositRow), total: num(count[0]?.[0]), pageIndex, pageSize };
  }

  async withdrawals(userId: number, query: FundsQuery = {}): Promise<Page<WithdrawalRow>> {
    this.#open();
    const { pageIndex, pageSize, offset } = pageBounds(query);
    const [rows, count] =
      query.coin === undefined
        ? await Promise.all([
            this.#query('withdrawals', [userId, pageSize, offset]),
            this.#query('withdrawalsCount', [userId]),
          ])
        : await Promise.all([
            this.#query('withdrawalsCoin', [userId, query.coin, pageSize, offset]),
            this.#query('withdrawalsCoinCount', [userId, query.coin]),
          ]);
    return { rows: rows.map(withdrawalRow), total: num(count[0]?.[0]), pageIndex, pageSize };
  }

  async withdrawalSteps(withdrawalId: string): Promise<WithdrawalStepRow[]> {
    return (await this.#query('withdrawalSteps', [withdrawalId])).map(stepRow);
  }

  async closedLoan(loanId: number): Promise<LoanRecord | undefined> {
    const [r] = await this.#query('closedLoan', [loanId]);
    return r === undefined ? undefined : recordOf<LoanRecord>(r);
  }

  async loansBorrowed(userId: number, query: LoanRecordsQuery): Promise<LoanRecord[]> {
    const limit = limitBound(query.limit, 1, MAX_RECORDS_LIMIT, 'limit');
    const q = loanFilters(query);
    const rows = await this.#query('loansBorrowed', [userId, q.acctType, q.market, q.coin, q.status, limit]);
    return rows.map((r) => recordOf<LoanRecord>(r));
  }

  async loansLent(userId: number, query: LoanRecordsQuery): Promise<LoanRecord[]> {
    const limit = limitBound(query.limit, 1, MAX_RECORDS_LIMIT, 'limit');
    const q = loanFilters(query);
    const rows = await this.#query('loansLent', [userId, q.offerId, q.coin, q.status, limit]);
    return rows.map((r) => recordOf<LoanRecord>(r));
  }

  async repayments(userId: number, query: RepaymentsQuery): Promise<RepaymentRecord[]> {
    const limit = limitBound(query.limit, 1, MAX_RECORDS_LIMIT, 'limit');
    const q = loanFilters(query);
    const rows = await this.#query('repayments', [userId, q.acctType, q.market, q.coin, limit]);
    return rows.map((r) => recordOf<RepaymentRecord>(r));
  }

  async loanRepayments(loanId: number): Promise<RepaymentRecord[]> {
    return (await this.#query('loanRepayments', [loanId])).map((r) => recordOf<RepaymentRecord>(r));
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#pool.end();
  }

  /** A named read: prepared once per connection, rows as arrays. */
  async #query(name: QueryName, values: unknown[]): Promise<Row[]> {
    this.#open();
    const result = await this.#pool.query({ name, text: PG_QUERY_SQL[name], values, rowMode: 'array' });
    return result.rows as Row[];
  }

  async #rows(text: string, values: unknown[]): Promise<Row[]> {
    return (await this.#pool.query({ text, values, rowMode: 'array' })).rows as Row[];
  }

  #open(): void {
    if (this.#closed) throw new Error('history store is closed');
  }
}

/** Runs `body` on one connection to the URL's database. */
async function withClient<T>(url: string, body: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: splitHistoryUrl(url).connectionString });
  await client.connect();
  try {
    return await body(client);
  } finally {
    await client.end();
  }
}

/**
 * Creates the schema and the meta table if needed and applies the migrations not yet applied,
 * under an advisory lock: the venue's reader and its writer thread may open the store at once.
 */
async function migrate(pool: pg.Pool, schema: string): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    try {
      await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`bourse-history:${schema}`]);
      await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(schema)}`);
      await client.query('CREATE TABLE IF NOT EXISTS meta (key text PRIMARY KEY, value bigint NOT NULL)');
      const row = await client.query({
        text: "SELECT value FROM meta WHERE key = 'schema_version'",
        rowMode: 'array',
      });
      const version = row.rows.length === 0 ? 0 : num((row.rows[0] as Row)[0]);
      if (version > PG_MIGRATIONS.length) {
        throw new Error(
          `history store schema version ${version} is newer than this code (${PG_MIGRATIONS.length})`,
        );
      }
      for (let v = version; v < PG_MIGRATIONS.length; v++) await client.query(PG_MIGRATIONS[v] as string);
      if (version < PG_MIGRATIONS.length) {
        await client.query(
          "INSERT INTO meta (key, value) VALUES ('schema_version', $1) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
          [PG_MIGRATIONS.length],
        );
      }
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
  } finally {
    client.release();
  }
}
