/**
 * @module sqlite-history-store — the history store on SQLite (`node:sqlite`), the embedded default.
 *
 * One file, WAL mode, synchronous=NORMAL by default: a crash may lose the last batches, which is
 * fine because the journal is the durable source and the checkpoint (stored with the rows) says
 * where to resume. Each `applyBatch` is one IMMEDIATE transaction of prepared statements. Every
 * query is answered from an index, in index order, without a sort (the test checks each plan with
 * EXPLAIN QUERY PLAN). docs/history-store.md has the tables and the figures.
 */
import { DatabaseSync, type SQLInputValue, type StatementSync } from 'node:sqlite';
import { BUY, SELL } from '../domain/commands.ts';
import {
  ORDER_CANCELLED,
  ORDER_DONE,
  ORDER_PARTIAL,
  ORDER_PENDING,
  type OrderStatus,
} from '../domain/events.ts';
import type { LoanRecord, RepaymentRecord } from '../margin/loans.ts';
import { planBatch } from './history-projection.ts';
import {
  BILL_COLUMNS,
  MARGIN_BILL_COLUMNS,
  DEPOSIT_COLUMNS,
  ORDER_COLUMNS,
  STEP_COLUMNS,
  TRADE_COLUMNS,
  WITHDRAWAL_COLUMNS,
  LOAN_COLUMNS,
  REPAYMENT_COLUMNS,
  billRow,
  loanFilters,
  marginBillRow,
  recordOf,
  depositRow,
  num,
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
  type LoanRecordsQuery,
  type RepaymentsQuery,
  MAX_TRADES_LIMIT,
  limitBound,
  pageBounds,
  type ApplyBatchResult,
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
  type OrderStatusFilter,
  type Page,
  type TradeRow,
  type TradesQuery,
  type VenueTrades,
  type VenueTradesQuery,
  type WithdrawalRow,
  type WithdrawalStepRow,
} from './history-store.ts';
import { VENUE_TRADES_SQL, venueTrades } from './venue-trades.ts';

/**
 * Schema migrations, applied in order; `meta.schema_version` counts those applied. To extend a
 * table (chain data on deposits and withdrawals, say), append a migration; never edit one.
 */
export const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE orders (
    id INTEGER PRIMARY KEY,
    user_id INTEGER NOT NULL,
    market TEXT NOT NULL,
    side INTEGER NOT NULL,
    kind TEXT NOT NULL,
    price INTEGER NOT NULL,
    amount INTEGER NOT NULL,
    filled INTEGER NOT NULL,
    filled_value INTEGER NOT NULL,
    fees INTEGER NOT NULL,
    fee_coin TEXT NOT NULL,
    platform_fees INTEGER NOT NULL,
    status INTEGER NOT NULL,
    acct_type INTEGER NOT NULL,
    use_platform_coin INTEGER NOT NULL,
    client_order_id TEXT NOT NULL,
    time INTEGER NOT NULL,
    updated INTEGER NOT NULL,
    cancel_reason TEXT
  );
  -- One index serves every order list: each filter is a union of (side, status) ranges, each in
  -- id order, which SQLite merges without sorting (see ordersQuery). Fewer indexes, cheaper writes.
  CREATE INDEX orders_user_market_side_status ON orders (user_id, market, side, status, id);
  CREATE INDEX orders_client_id ON orders (user_id, market, client_order_id, id)
    WHERE client_order_id <> '';

  CREATE TABLE trades (
    id INTEGER PRIMARY KEY,
    market TEXT NOT NULL,
    price INTEGER NOT NULL,
    amount INTEGER NOT NULL,
    value INTEGER NOT NULL,
    taker_side INTEGER NOT NULL,
    taker_order_id INTEGER NOT NULL,
    maker_order_id INTEGER NOT NULL,
    taker_user_id INTEGER NOT NULL,
    maker_user_id INTEGER NOT NULL,
    time INTEGER NOT NULL
  );
  CREATE INDEX trades_market ON trades (market, id);

  CREATE TABLE klines (
    market TEXT NOT NULL,
    interval TEXT NOT NULL,
    start INTEGER NOT NULL,
    open INTEGER NOT NULL,
    high INTEGER NOT NULL,
    low INTEGER NOT NULL,
    close INTEGER NOT NULL,
    volume INTEGER NOT NULL,
    PRIMARY KEY (market, interval, start)
  ) WITHOUT ROWID;

  -- Clustered by user and time: a page of a user's bills is a few adjacent leaf pages, newest
  -- first is (time, id) descending, and a write touches the table and one index only.
  CREATE TABLE bills (
    user_id INTEGER NOT NULL,
    time INTEGER NOT NULL,
    id INTEGER NOT NULL,
    coin TEXT NOT NULL,
    change INTEGER NOT NULL,
    available INTEGER NOT NULL,
    frozen INTEGER NOT NULL,
    bill_type TEXT NOT NULL,
    ref TEXT NOT NULL,
    PRIMARY KEY (user_id, time, id)
  ) WITHOUT ROWID;
  CREATE INDEX bills_user_coin_time ON bills (user_id, coin, time, id);

  CREATE TABLE deposits (
    id INTEGER PRIMARY KEY,
    deposit_id TEXT NOT NULL UNIQUE,
    user_id INTEGER NOT NULL,
    coin TEXT NOT NULL,
    amount INTEGER NOT NULL,
    status TEXT NOT NULL,
    time INTEGER NOT NULL
  );
  CREATE INDEX deposits_user ON deposits (user_id, id);
  CREATE INDEX deposits_user_coin ON deposits (user_id, coin, id);

  CREATE TABLE withdrawals (
    id INTEGER PRIMARY KEY,
    withdrawal_id TEXT NOT NULL UNIQUE,
    user_id INTEGER NOT NULL,
    coin TEXT NOT NULL,
    amount INTEGER NOT NULL,
    fee INTEGER NOT NULL,
    status TEXT NOT NULL,
    reason TEXT,
    submit_time INTEGER NOT NULL,
    manage_time INTEGER
  );
  CREATE INDEX withdrawals_user ON withdrawals (user_id, id);
  CREATE INDEX withdrawals_user_coin ON withdrawals (user_id, coin, id);
  `,
  // 2: chain data on deposits and withdrawals, the withdrawal state machine's states, its steps.
  `
  ALTER TABLE deposits ADD COLUMN chain TEXT NOT NULL DEFAULT '';
  ALTER TABLE deposits ADD COLUMN tx_hash TEXT NOT NULL DEFAULT '';
  ALTER TABLE deposits ADD COLUMN address TEXT NOT NULL DEFAULT '';
  ALTER TABLE deposits ADD COLUMN confirmations INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE deposits ADD COLUMN itransfer INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE deposits ADD COLUMN note TEXT NOT NULL DEFAULT '';
  ALTER TABLE deposits ADD COLUMN updated INTEGER NOT NULL DEFAULT 0;
  UPDATE deposits SET updated = time;

  ALTER TABLE withdrawals ADD COLUMN chain TEXT NOT NULL DEFAULT '';
  ALTER TABLE withdrawals ADD COLUMN address TEXT NOT NULL DEFAULT '';
  ALTER TABLE withdrawals ADD COLUMN tx_hash TEXT NOT NULL DEFAULT '';
  ALTER TABLE withdrawals ADD COLUMN confirmations INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE withdrawals ADD COLUMN itransfer INTEGER NOT NULL DEFAULT 0;
  UPDATE withdrawals SET
    status = CASE status WHEN 'frozen' THEN 'submitted' WHEN 'settled' THEN 'succeeded'
      ELSE CASE reason WHEN 'failed' THEN 'failed' ELSE 'cancelled' END END,
    reason = coalesce(reason, ''),
    manage_time = coalesce(manage_time, submit_time);

  CREATE TABLE withdrawal_steps (
    id INTEGER PRIMARY KEY,
    withdrawal_id TEXT NOT NULL,
    status TEXT NOT NULL,
    confirmations INTEGER NOT NULL,
    tx_hash TEXT NOT NULL,
    reason TEXT NOT NULL,
    time INTEGER NOT NULL
  );
  CREATE INDEX withdrawal_steps_withdrawal ON withdrawal_steps (withdrawal_id, id);
  `,
  // Issue 14: the bills of margin accounts, apart from the spot bills, clustered as they are read:
  // by user, account kind, then time.
  `
  CREATE TABLE margin_bills (
    user_id INTEGER NOT NULL,
    acct_type INTEGER NOT NULL,
    time INTEGER NOT NULL,
    id INTEGER NOT NULL,
    market TEXT NOT NULL,
    coin TEXT NOT NULL,
    change INTEGER NOT NULL,
    available INTEGER NOT NULL,
    frozen INTEGER NOT NULL,
    bill_type TEXT NOT NULL,
    ref TEXT NOT NULL,
    PRIMARY KEY (user_id, acct_type, time, id)
  ) WITHOUT ROWID;
  `,
  // Issue 29: closed loan records and repayments, which the engine no longer keeps. Clustered by
  // borrower then id (getLoanRecords, getRepayments read a user's newest); lenders and loans by index.
  `
  CREATE TABLE margin_loans (
    borrower_user INTEGER NOT NULL,
    id INTEGER NOT NULL,
    acct_type INTEGER NOT NULL,
    market TEXT NOT NULL,
    lender_user INTEGER NOT NULL,
    offer_id INTEGER NOT NULL,
    coin TEXT NOT NULL,
    status INTEGER NOT NULL,
    closed_ms INTEGER NOT NULL,
    record TEXT NOT NULL,
    PRIMARY KEY (borrower_user, id)
  ) WITHOUT ROWID;
  CREATE UNIQUE INDEX margin_loans_id ON margin_loans (id);
  CREATE INDEX margin_loans_lender ON margin_loans (lender_user, id);

  CREATE TABLE margin_repayments (
    borrower_user INTEGER NOT NULL,
    id INTEGER NOT NULL,
    loan_id INTEGER NOT NULL,
    acct_type INTEGER NOT NULL,
    market TEXT NOT NULL,
    coin TEXT NOT NULL,
    time INTEGER NOT NULL,
    record TEXT NOT NULL,
    PRIMARY KEY (borrower_user, id)
  ) WITHOUT ROWID;
  CREATE INDEX margin_repayments_loan ON margin_repayments (loan_id, id);
  `,
  // Issue 31: the operator's venue-wide trades by user (taker or maker), src/store/venue-trades.ts.
  `
  CREATE INDEX trades_taker_user ON trades (taker_user_id, id);
  CREATE INDEX trades_maker_user ON trades (maker_user_id, id);
  `,
];

const PAGE = 'LIMIT ? OFFSET ?';

/** The order statuses each list filter takes (see OrderStatusFilter). */
const FILTER_STATUSES: Readonly<Record<OrderStatusFilter, readonly OrderStatus[]>> = {
  all: [ORDER_PENDING, ORDER_CANCELLED, ORDER_DONE, ORDER_PARTIAL],
  open: [ORDER_PENDING, ORDER_PARTIAL],
  finished: [ORDER_CANCELLED, ORDER_DONE],
  finishedAndPartial: [ORDER_DONE, ORDER_PARTIAL],
};
const SIDE_KEYS = { any: [SELL, BUY], sell: [SELL], buy: [BUY] } as const;
type SideKey = keyof typeof SIDE_KEYS;
type OrderListName = `orders:${OrderStatusFilter}:${SideKey}`;

/**
 * An order list as the union of its (side, status) ranges of orders_user_market_side_status,
 * ordered by id: SQLite merges the ranges in order (MERGE (UNION ALL)) and stops at the limit,
 * so no sort is needed. Parameters: ?1 user, ?2 market, ?3 limit, ?4 offset, ?5 the account
 * (acctType 0/1/2; -1 any).
 */
function orderListSql(filter: OrderStatusFilter, side: SideKey): string {
  const arms: string[] = [];
  for (const sd of SIDE_KEYS[side]) {
    for (const status of FILTER_STATUSES[filter]) {
      // Status 3 counts as "partial" only once something traded (always so with this engine).
      const traded = filter === 'finishedAndPartial' && status === ORDER_PARTIAL ? ' AND filled > 0' : '';
      arms.push(
        `SELECT ${ORDER_COLUMNS} FROM orders WHERE user_id = ?1 AND market = ?2 AND side = ${sd} ` +
          `AND status = ${status}${traded} AND (?5 < 0 OR acct_type = ?5)`,
      );
    }
  }
  return `${arms.join(' UNION ALL ')} ORDER BY id DESC LIMIT ?3 OFFSET ?4`;
}

const ORDER_LIST_SQL = Object.fromEntries(
  (Object.keys(FILTER_STATUSES) as OrderStatusFilter[]).flatMap((filter) =>
    (Object.keys(SIDE_KEYS) as SideKey[]).map((side) => [
      `orders:${filter}:${side}`,
      orderListSql(filter, side),
    ]),
  ),
) as Record<OrderListName, string>;

/**
 * The SQL of every query, by name. Exported so that the test can check each plan with
 * EXPLAIN QUERY PLAN.
 */
export const QUERY_SQL = {
  getOrder: `SELECT ${ORDER_COLUMNS} FROM orders WHERE id = ? AND user_id = ? AND market = ?`,
  // The partial index needs the query to imply its condition, hence the redundant test.
  getOrderByClientId:
    `SELECT ${ORDER_COLUMNS} FROM orders WHERE user_id = ? AND market = ? AND client_order_id = ? ` +
    `AND client_order_id <> '' ORDER BY id DESC LIMIT 1`,
  ...ORDER_LIST_SQL,
  tradesLatest: `SELECT ${TRADE_COLUMNS} FROM trades WHERE market = ? ORDER BY id DESC LIMIT ?`,
  tradesSince: `SELECT ${TRADE_COLUMNS} FROM trades WHERE market = ? AND id > ? ORDER BY id LIMIT ?`,
  ...VENUE_TRADES_SQL,
  klinesLatest:
    'SELECT start, open, high, low, close, volume FROM klines WHERE market = ? AND interval = ? ' +
    'ORDER BY start DESC LIMIT ?',
  klinesSince:
    'SELECT start, open, high, low, close, volume FROM klines WHERE market = ? AND interval = ? ' +
    'AND start >= ? ORDER BY start LIMIT ?',
  bills:
    `SELECT ${BILL_COLUMNS} FROM bills WHERE user_id = ? AND time BETWEEN ? AND ? ` +
    `ORDER BY time DESC, id DESC ${PAGE}`,
  billsCount: 'SELECT count(*) AS n FROM bills WHERE user_id = ? AND time BETWEEN ? AND ?',
  billsCoin:
    // Without statistics the planner would rather walk the primary key and filter by coin.
    `SELECT ${BILL_COLUMNS} FROM bills INDEXED BY bills_user_coin_time ` +
    'WHERE user_id = ? AND coin = ? AND time BETWEEN ? AND ? ' +
    `ORDER BY time DESC, id DESC ${PAGE}`,
  billsCoinCount:
    'SELECT count(*) AS n FROM bills INDEXED BY bills_user_coin_time ' +
    'WHERE user_id = ? AND coin = ? AND time BETWEEN ? AND ?',
  // ?1 user, ?2 acctType, ?3 market ('' any), ?4 coin ('' any), ?5..?6 time, then the page.
  marginBills:
    `SELECT ${MARGIN_BILL_COLUMNS} FROM margin_bills WHERE user_id = ?1 AND acct_type = ?2 ` +
    "AND (?3 = '' OR market = ?3) AND (?4 = '' OR coin = ?4) AND time BETWEEN ?5 AND ?6 " +
    'ORDER BY time DESC, id DESC LIMIT ?7 OFFSET ?8',
  marginBillsCount:
    'SELECT count(*) AS n FROM margin_bills WHERE user_id = ?1 AND acct_type = ?2 ' +
    "AND (?3 = '' OR market = ?3) AND (?4 = '' OR coin = ?4) AND time BETWEEN ?5 AND ?6",
  deposits: `SELECT ${DEPOSIT_COLUMNS} FROM deposits WHERE user_id = ? ORDER BY id DESC ${PAGE}`,
  depositsCount: 'SELECT count(*) AS n FROM deposits WHERE user_id = ?',
  depositsCoin: `SELECT ${DEPOSIT_COLUMNS} FROM deposits WHERE user_id = ? AND coin = ? ORDER BY id DESC ${PAGE}`,
  depositsCoinCount: 'SELECT count(*) AS n FROM deposits WHERE user_id = ? AND coin = ?',
  withdrawals: `SELECT ${WITHDRAWAL_COLUMNS} FROM withdrawals WHERE user_id = ? ORDER BY id DESC ${PAGE}`,
  withdrawalsCount: 'SELECT count(*) AS n FROM withdrawals WHERE user_id = ?',
  withdrawalsCoin:
    `SELECT ${WITHDRAWAL_COLUMNS} FROM withdrawals WHERE user_id = ? AND coin = ? ` +
    `ORDER BY id DESC ${PAGE}`,
  withdrawalsCoinCount: 'SELECT count(*) AS n FROM withdrawals WHERE user_id = ? AND coin = ?',
  withdrawalSteps: `SELECT ${STEP_COLUMNS} FROM withdrawal_steps WHERE withdrawal_id = ? ORDER BY id`,
  closedLoan: 'SELECT record FROM margin_loans WHERE id = ?',
  // ?1 user, ?2 acctType (-1 any), ?3 market ('' any), ?4 coin ('' any), ?5 status (-1 any), ?6 limit.
  loansBorrowed:
    'SELECT record FROM margin_loans WHERE borrower_user = ?1 AND (?2 < 0 OR acct_type = ?2) ' +
    "AND (?3 = '' OR market = ?3) AND (?4 = '' OR coin = ?4) AND (?5 < 0 OR status = ?5) " +
    'ORDER BY id DESC LIMIT ?6',
  // ?1 lender (0 the pool), ?2 offer (-1 any), ?3 coin ('' any), ?4 status (-1 any), ?5 limit.
  loansLent:
    'SELECT record FROM margin_loans WHERE lender_user = ?1 AND (?2 < 0 OR offer_id = ?2) ' +
    "AND (?3 = '' OR coin = ?3) AND (?4 < 0 OR status = ?4) ORDER BY id DESC LIMIT ?5",
  // ?1 user, ?2 acctType (-1 any), ?3 market ('' any), ?4 coin ('' any), ?5 limit.
  repayments:
    'SELECT record FROM margin_repayments WHERE borrower_user = ?1 AND (?2 < 0 OR acct_type = ?2) ' +
    "AND (?3 = '' OR market = ?3) AND (?4 = '' OR coin = ?4) ORDER BY id DESC LIMIT ?5",
  loanRepayments: 'SELECT record FROM margin_repayments WHERE loan_id = ? ORDER BY id',
} as const;

export type QueryName = keyof typeof QUERY_SQL;

/** The SQL of every write, by name (exported for the plan test). */
export const WRITE_SQL = {
  insertOrder:
    `INSERT INTO orders (${ORDER_COLUMNS}) ` +
    'VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
  updateOrder:
    'UPDATE orders SET status = ?, filled = ?, filled_value = ?, fees = ?, platform_fees = ?, ' +
    'cancel_reason = ?, updated = ? WHERE id = ?',
  insertTrade: `INSERT INTO trades (${TRADE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  upsertKline:
    'INSERT INTO klines (market, interval, start, open, high, low, close, volume) ' +
    'VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (market, interval, start) DO UPDATE SET ' +
    'high = max(high, excluded.high), low = min(low, excluded.low), close = excluded.close, ' +
    'volume = volume + excluded.volume',
  insertBill: `INSERT INTO bills (${BILL_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  insertMarginBill: `INSERT INTO margin_bills (${MARGIN_BILL_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  upsertDeposit:
    `INSERT INTO deposits (${DEPOSIT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ` +
    'ON CONFLICT (deposit_id) DO UPDATE SET confirmations = excluded.confirmations, ' +
    'status = excluded.status, note = excluded.note, updated = excluded.updated',
  upsertWithdrawal:
    `INSERT INTO withdrawals (${WITHDRAWAL_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ` +
    'ON CONFLICT (withdrawal_id) DO UPDATE SET status = excluded.status, tx_hash = excluded.tx_hash, ' +
    'confirmations = excluded.confirmations, reason = excluded.reason, manage_time = excluded.manage_time',
  insertWithdrawalStep: `INSERT INTO withdrawal_steps (${STEP_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)`,
  insertLoan: `INSERT INTO margin_loans (${LOAN_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  insertRepayment: `INSERT INTO margin_repayments (${REPAYMENT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  getMeta: 'SELECT value FROM meta WHERE key = ?',
  setMeta:
    'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
} as const;

const all = (stmt: StatementSync, ...params: SQLInputValue[]): Row[] =>
  stmt.all(...params) as unknown as Row[];
const one = (stmt: StatementSync, ...params: SQLInputValue[]): Row | undefined =>
  stmt.get(...params) as unknown as Row | undefined;

/**
 * The WAL's size after a checkpoint resets it. Between checkpoints it grows to about
 * `walAutocheckpointPages` (40 MB by default) plus one batch; this cuts it back afterwards, so
 * that the WAL stays bounded whatever one batch (a rebuild, a long replay) once made it.
 */
const WAL_SIZE_LIMIT_BYTES = 32 * 1024 * 1024;

/** Options of `SqliteHistoryStore.open`. */
export interface SqliteHistoryStoreOptions {
  /** SQLite page cache in KiB (default 65536 = 64 MiB). */
  readonly cacheKiB?: number;
  /**
   * WAL pages (4 KiB) after which a commit checkpoints the WAL into the database (default 10000,
   * SQLite's own default is 1000). Rarer checkpoints write a hot index page once for many batches.
   */
  readonly walAutocheckpointPages?: number;
  /**
   * Size the WAL file is cut back to when a checkpoint resets it (`journal_size_limit`, default
   * 32 MiB). Without it the file keeps its largest size ever, e.g. that of one rebuild batch.
   */
  readonly walSizeLimitBytes?: number;
  /**
   * NORMAL (default) syncs at checkpoints: an OS crash loses at most the latest batches, which
   * the journal replays. OFF never syncs: faster, but an OS crash or power loss may corrupt the
   * file, which must then be rebuilt from the journal. Fine for a rebuild into a temporary file.
   */
  readonly synchronous?: 'NORMAL' | 'OFF';
  /** How long a statement waits for another connection's lock before it fails (ms, default 5000). */
  readonly busyTimeoutMs?: number;
}

export class SqliteHistoryStore implements HistoryStore {
  readonly #db: DatabaseSync;
  readonly #query: { readonly [K in QueryName]: StatementSync };
  readonly #write: { readonly [K in keyof typeof WRITE_SQL]: StatementSync };
  #closed = false;

  /** Opens (creating if needed) the store in the file at `path`, migrating its schema. */
  static open(path: string, options: SqliteHistoryStoreOptions = {}): SqliteHistoryStore {
    return new SqliteHistoryStore(path, options);
  }

  private constructor(path: string, options: SqliteHistoryStoreOptions) {
    this.#db = new DatabaseSync(path, { timeout: options.busyTimeoutMs ?? 5_000 });
    try {
      const cacheKiB = Math.max(1_024, Math.floor(options.cacheKiB ?? 65_536));
      const walPages = Math.max(100, Math.floor(options.walAutocheckpointPages ?? 10_000));
      const walLimit = Math.max(0, Math.floor(options.walSizeLimitBytes ?? WAL_SIZE_LIMIT_BYTES));
      const synchronous = options.synchronous === 'OFF' ? 'OFF' : 'NORMAL';
      this.#db.exec(
        `PRAGMA journal_mode = WAL; PRAGMA synchronous = ${synchronous}; PRAGMA temp_store = MEMORY; ` +
          `PRAGMA cache_size = -${cacheKiB}; PRAGMA wal_autocheckpoint = ${walPages}; ` +
          `PRAGMA journal_size_limit = ${walLimit};`,
      );
      this.#migrate();
      const prepare = <T extends Record<string, string>>(sql: T): { [K in keyof T]: StatementSync } =>
        Object.fromEntries(Object.entries(sql).map(([k, s]) => [k, this.#db.prepare(s)])) as {
          [K in keyof T]: StatementSync;
        };
      this.#query = prepare(QUERY_SQL);
      this.#write = prepare(WRITE_SQL);
      for (const stmt of Object.values(this.#query)) stmt.setReturnArrays(true);
    } catch (err) {
      this.#db.close();
      throw err;
    }
  }

  #migrate(): void {
    this.#db.exec(
      'CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID',
    );
    const row = this.#db.prepare("SELECT value FROM meta WHERE key = 'schema_version'").get();
    const version = row === undefined ? 0 : num(row.value);
    if (version > MIGRATIONS.length) {
      throw new Error(
        `history store schema version ${version} is newer than this code (${MIGRATIONS.length})`,
      );
    }
    for (let v = version; v < MIGRATIONS.length; v++) {
      this.#transaction(() => {
        this.#db.exec(MIGRATIONS[v] as string);
        this.#db
          .prepare(
            "INSERT INTO meta (key, value) VALUES ('schema_version', ?) " +
              'ON CONFLICT (key) DO UPDATE SET value = excluded.value',
          )
          .run(v + 1);
      });
    }
  }

  #transaction<T>(body: () => T): T {
    this.#db.exec('BEGIN IMMEDIATE');
    try {
      const result = body();
      this.#db.exec('COMMIT');
      return result;
    } catch (err) {
      this.#db.exec('ROLLBACK');
      throw err;
    }
  }

  #checkpointNow(): number {
    const row = this.#write.getMeta.get('checkpoint');
    return row === undefined ? 0 : num(row.value);
  }

  async applyBatch(entries: readonly HistoryEntry[]): Promise<ApplyBatchResult> {
    this.#open();
    return this.#transaction(() => {
      // Read under the write lock, so that two writers on one file cannot both apply a batch.
      const plan = planBatch(this.#checkpointNow(), entries);
      const w = this.#write;
      for (const o of plan.orderInserts) {
        w.insertOrder.run(
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
        );
      }
      for (const u of plan.orderUpdates) {
        // An update for an order this store never saw placed changes nothing (see docs).
        w.updateOrder.run(
          u.status,
          u.filled,
          u.filledValue,
          u.fees,
          u.platformFees,
          u.cancelReason,
          u.updated,
          u.id,
        );
      }
      for (const t of plan.trades) {
        w.insertTrade.run(
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
        );
      }
      for (const k of plan.klines) {
        w.upsertKline.run(k.market, k.interval, k.start, k.open, k.high, k.low, k.close, k.volume);
      }
      for (const b of plan.bills) {
        w.insertBill.run(b.id, b.userId, b.coin, b.change, b.available, b.frozen, b.billType, b.ref, b.time);
      }
      for (const b of plan.marginBills) {
        w.insertMarginBill.run(
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
        );
      }
      for (const d of plan.deposits) {
        w.upsertDeposit.run(
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
        );
      }
      for (const x of plan.withdrawals) {
        w.upsertWithdrawal.run(
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
        );
      }
      for (const x of plan.withdrawalSteps) {
        w.insertWithdrawalStep.run(
          x.id,
          x.withdrawalId,
          x.status,
          x.confirmations,
          x.txHash,
          x.reason,
          x.time,
        );
      }
      for (const l of plan.loans) {
        w.insertLoan.run(
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
        );
      }
      for (const r of plan.repayments) {
        w.insertRepayment.run(
          r.id,
          r.borrowerUserId,
          r.loanId,
          r.acctType,
          r.market,
          r.coin,
          r.time,
          r.record,
        );
      }
      if (plan.applied > 0) w.setMeta.run('checkpoint', plan.checkpoint);
      return { checkpoint: plan.checkpoint, applied: plan.applied, skipped: plan.skipped, rows: plan.rows };
    });
  }

  async checkpoint(): Promise<number> {
    this.#open();
    return this.#checkpointNow();
  }

  async getOrder(userId: number, market: string, orderId: number): Promise<OrderRow | undefined> {
    this.#open();
    const r = one(this.#query.getOrder, orderId, userId, market);
    return r === undefined ? undefined : orderRow(r);
  }

  async getOrderByClientId(
    userId: number,
    market: string,
    clientOrderId: string,
  ): Promise<OrderRow | undefined> {
    this.#open();
    if (clientOrderId === '') return undefined;
    const r = one(this.#query.getOrderByClientId, userId, market, clientOrderId);
    return r === undefined ? undefined : orderRow(r);
  }

  async listOrders(userId: number, market: string, query: ListOrdersQuery = {}): Promise<OrderRow[]> {
    this.#open();
    const { pageSize, offset } = pageBounds(query);
    const status = query.status ?? 'all';
    const side: SideKey = query.side === undefined ? 'any' : query.side === BUY ? 'buy' : 'sell';
    const stmt = this.#query[`orders:${status}:${side}`] as StatementSync | undefined;
    if (stmt === undefined)
      throw new RangeError(`unknown order list filter '${String(query.status)}/${String(query.side)}'`);
    return all(stmt, userId, market, pageSize, offset, query.acctType ?? -1).map(orderRow);
  }

  async trades(market: string, query: TradesQuery = {}): Promise<TradeRow[]> {
    this.#open();
    const limit = limitBound(query.limit, DEFAULT_TRADES_LIMIT, MAX_TRADES_LIMIT, 'limit');
    if (query.sinceTradeId !== undefined) {
      return all(this.#query.tradesSince, market, query.sinceTradeId, limit).map(tradeRow);
    }
    return all(this.#query.tradesLatest, market, limit).map(tradeRow).reverse();
  }

  async venueTrades(query: VenueTradesQuery): Promise<VenueTrades> {
    this.#open();
    return venueTrades((name, params) => Promise.resolve(all(this.#query[name], ...params)), query);
  }

  async klines(market: string, interval: KlineInterval, query: KlinesQuery = {}): Promise<KlineRow[]> {
    this.#open();
    const size = limitBound(query.size, MAX_KLINE_SIZE, MAX_KLINE_SIZE, 'size');
    // The columns are start, open, high, low, close, volume: the rows are KlineRows as they come.
    const rows =
      query.since === undefined
        ? all(this.#query.klinesLatest, market, interval, size).reverse()
        : all(this.#query.klinesSince, market, interval, query.since, size);
    return rows as unknown as KlineRow[];
  }

  async bills(userId: number, query: BillsQuery = {}): Promise<Page<BillRow>> {
    this.#open();
    const { pageIndex, pageSize, offset } = pageBounds(query);
    const from = query.startTime ?? Number.MIN_SAFE_INTEGER;
    const to = query.endTime ?? Number.MAX_SAFE_INTEGER;
    const q = this.#query;
    const [rows, count] =
      query.coin === undefined
        ? [all(q.bills, userId, from, to, pageSize, offset), one(q.billsCount, userId, from, to)]
        : [
            all(q.billsCoin, userId, query.coin, from, to, pageSize, offset),
            one(q.billsCoinCount, userId, query.coin, from, to),
          ];
    return { rows: rows.map(billRow), total: num(count?.[0]), pageIndex, pageSize };
  }

  async marginBills(userId: number, query: MarginBillsQuery): Promise<Page<MarginBillRow>> {
    this.#open();
    const { pageIndex, pageSize, offset } = pageBounds(query);
    const from = query.startTime ?? Number.MIN_SAFE_INTEGER;
    const to = query.endTime ?? Number.MAX_SAFE_INTEGER;
    const args = [userId, query.acctType, query.market ?? '', query.coin ?? '', from, to] as const;
    const rows = all(this.#query.marginBills, ...args, pageSize, offset);
    const count = one(this.#query.marginBillsCount, ...args);
    return { rows: rows.map(marginBillRow), total: num(count?.[0]), pageIndex, pageSize };
  }

  async deposits(userId: number, query: FundsQuery = {}): Promise<Page<DepositRow>> {
    this.#open();
    const { pageIndex, pageSize, offset } = pageBounds(query);
    const q = this.#query;
    const [rows, count] =
      query.coin === undefined
        ? [all(q.deposits, userId, pageSize, offset), one(q.depositsCount, userId)]
        : [
            all(q.depositsCoin, userId, query.coin, pageSize, offset),
            one(q.depositsCoinCount, userId, query.coin),
          ];
    return { rows: rows.map(depositRow), total: num(count?.[0]), pageIndex, pageSize };
  }

  async withdrawals(userId: number, query: FundsQuery = {}): Promise<Page<WithdrawalRow>> {
    this.#open();
    const { pageIndex, pageSize, offset } = pageBounds(query);
    const q = this.#query;
    const [rows, count] =
      query.coin === undefined
        ? [all(q.withdrawals, userId, pageSize, offset), one(q.withdrawalsCount, userId)]
        : [
            all(q.withdrawalsCoin, userId, query.coin, pageSize, offset),
            one(q.withdrawalsCoinCount, userId, query.coin),
          ];
    return { rows: rows.map(withdrawalRow), total: num(count?.[0]), pageIndex, pageSize };
  }

  async withdrawalSteps(withdrawalId: string): Promise<WithdrawalStepRow[]> {
    this.#open();
    return all(this.#query.withdrawalSteps, withdrawalId).map(stepRow);
  }

  async closedLoan(loanId: number): Promise<LoanRecord | undefined> {
    this.#open();
    const r = one(this.#query.closedLoan, loanId);
    return r === undefined ? undefined : recordOf<LoanRecord>(r);
  }

  async loansBorrowed(userId: number, query: LoanRecordsQuery): Promise<LoanRecord[]> {
    this.#open();
    const limit = limitBound(query.limit, 1, MAX_RECORDS_LIMIT, 'limit');
    const q = loanFilters(query);
    return all(this.#query.loansBorrowed, userId, q.acctType, q.market, q.coin, q.status, limit).map((r) =>
      recordOf<LoanRecord>(r),
    );
  }

  async loansLent(userId: number, query: LoanRecordsQuery): Promise<LoanRecord[]> {
    this.#open();
    const limit = limitBound(query.limit, 1, MAX_RECORDS_LIMIT, 'limit');
    const q = loanFilters(query);
    return all(this.#query.loansLent, userId, q.offerId, q.coin, q.status, limit).map((r) =>
      recordOf<LoanRecord>(r),
    );
  }

  async repayments(userId: number, query: RepaymentsQuery): Promise<RepaymentRecord[]> {
    this.#open();
    const limit = limitBound(query.limit, 1, MAX_RECORDS_LIMIT, 'limit');
    const q = loanFilters(query);
    return all(this.#query.repayments, userId, q.acctType, q.market, q.coin, limit).map((r) =>
      recordOf<RepaymentRecord>(r),
    );
  }

  async loanRepayments(loanId: number): Promise<RepaymentRecord[]> {
    this.#open();
    return all(this.#query.loanRepayments, loanId).map((r) => recordOf<RepaymentRecord>(r));
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#db.close();
  }

  #open(): void {
    if (this.#closed) throw new Error('history store is closed');
  }
}
