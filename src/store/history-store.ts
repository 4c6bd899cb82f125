/**
 * @module history-store — the history port: engine events projected into queryable records
 * (orders, trades, klines, bills, deposits, withdrawals, closed loan records and repayments), its
 * row and query types, and the kline
 * bucket rule every adapter shares.
 *
 * The store is a projection (ARCHITECTURE.md, invariant 5): it is fed the journal's entries in
 * sequence order, remembers the last sequence number it applied (its checkpoint) in the same
 * transaction as the rows, skips entries at or below it, and can be rebuilt from the journal
 * with the same rows and the same ids. docs/history-store.md describes the tables and choices.
 */
import type { DepositState, WithdrawalState } from '../domain/chains.ts';
import type { AcctType, OrderKind, Side } from '../domain/commands.ts';
import type { BillType, CancelReason, EngineEvent, OrderStatus } from '../domain/events.ts';
import type { CoinUnits, Lots, PriceTicks } from '../domain/money.ts';
import type { LoanRecord, RepaymentRecord } from '../margin/loans.ts';

/** One journal position: the command's sequence number, its time (ms), and the events it emitted. */
export interface HistoryEntry {
  readonly seq: number;
  readonly time: number;
  /** Empty for a refused command: the entry still advances the checkpoint. */
  readonly events: readonly EngineEvent[];
}

/** What one `applyBatch` did. */
export interface ApplyBatchResult {
  /** The checkpoint after the batch: the last sequence number applied. */
  readonly checkpoint: number;
  /** Entries above the previous checkpoint, applied now. */
  readonly applied: number;
  /** Entries at or below the previous checkpoint, skipped (already applied). */
  readonly skipped: number;
  /** Rows inserted or updated (orders, trades, bills, kline buckets, deposits, withdrawals). */
  readonly rows: number;
}

/** An order as history keeps it: placement fields plus its latest state. */
export interface OrderRow {
  readonly id: number;
  readonly userId: number;
  readonly market: string;
  readonly side: Side;
  /** limit / postOnly / ioc; the wire `type` is `orderTypeCode(kind, side)`. */
  readonly kind: OrderKind;
  readonly price: PriceTicks;
  readonly amount: Lots;
  readonly filled: Lots;
  /** Σ price × amount of the fills, in quote coin units. */
  readonly filledValue: CoinUnits;
  /** Fees paid in the received coin (`feeCoin`: base for a buy, quote for a sell), in its units. */
  readonly fees: CoinUnits;
  readonly feeCoin: string;
  /** Fees paid in the platform coin (zb), in its units. */
  readonly platformFees: CoinUnits;
  readonly status: OrderStatus;
  readonly acctType: AcctType;
  readonly usePlatformCoin: boolean;
  /** '' when the order has none. */
  readonly clientOrderId: string;
  /** Placement time (ms). */
  readonly time: number;
  /** Time of the latest change (placement time until the first fill or cancel). */
  readonly updated: number;
  readonly cancelReason: CancelReason | null;
}

/**
 * Which orders `listOrders` returns, by status:
 * - `all`;
 * - `open`: resting, status 0 or 3;
 * - `finished`: status 1 or 2;
 * - `finishedAndPartial`: every order that has traded (filled > 0): status 2 (completed, or
 *   cancelled after a partial fill) and status 3 (resting, partly filled). A cancelled order that
 *   never traded (status 1) is not included.
 */
export type OrderStatusFilter = 'all' | 'open' | 'finished' | 'finishedAndPartial';

/** Page numbers start at 1; `pageSize` is 1..MAX_PAGE_SIZE (the edge applies the wire's own range). */
export interface PageQuery {
  readonly pageIndex?: number | undefined;
  readonly pageSize?: number | undefined;
}

export interface ListOrdersQuery extends PageQuery {
  readonly side?: Side | undefined;
  /** Default `all`. */
  readonly status?: OrderStatusFilter | undefined;
  /** Only the orders of this account (0 spot, 1 isolated, 2 cross); default every account. */
  readonly acctType?: AcctType | undefined;
}

/** A page of rows, newest first, with the number of rows matching the query. */
export interface Page<T> {
  readonly rows: T[];
  readonly total: number;
  readonly pageIndex: number;
  readonly pageSize: number;
}

export interface TradeRow {
  readonly id: number;
  readonly market: string;
  readonly price: PriceTicks;
  readonly amount: Lots;
  /** price × amount, in quote coin units. */
  readonly value: CoinUnits;
  readonly takerSide: Side;
  readonly takerOrderId: number;
  readonly makerOrderId: number;
  readonly takerUserId: number;
  readonly makerUserId: number;
  readonly time: number;
}

export interface TradesQuery {
  /** Returns the trades after this id (ascending); without it, the latest ones. */
  readonly sinceTradeId?: number | undefined;
  /** Default DEFAULT_TRADES_LIMIT, at most MAX_TRADES_LIMIT. */
  readonly limit?: number | undefined;
}

/** The kline intervals of the interface, with their length in ms. */
export const KLINE_INTERVAL_MS = {
  '1min': 60_000,
  '3min': 180_000,
  '5min': 300_000,
  '15min': 900_000,
  '30min': 1_800_000,
  '1hour': 3_600_000,
  '2hour': 7_200_000,
  '4hour': 14_400_000,
  '6hour': 21_600_000,
  '12hour': 43_200_000,
  '1day': 86_400_000,
  '3day': 259_200_000,
  '1week': 604_800_000,
} as const;

export type KlineInterval = keyof typeof KLINE_INTERVAL_MS;

export const KLINE_INTERVALS = Object.keys(KLINE_INTERVAL_MS) as readonly KlineInterval[];

/** 1970-01-05T00:00Z, the first Monday after the epoch (which was a Thursday). */
const FIRST_MONDAY_MS = 4 * 86_400_000;

/**
 * The start (ms, UTC) of the bucket holding `time`. Buckets are aligned to the Unix epoch for
 * every interval (so 1day starts at 00:00 UTC and 3day at multiples of 3 days since 1970-01-01),
 * except 1week, which starts on Monday 00:00 UTC.
 */
export function klineBucketStart(interval: KlineInterval, time: number): number {
  const length = KLINE_INTERVAL_MS[interval];
  const origin = interval === '1week' ? FIRST_MONDAY_MS : 0;
  return Math.floor((time - origin) / length) * length + origin;
}

/** [start ms, open, high, low, close (ticks), volume (lots)], as the interface's candlestick row. */
export type KlineRow = readonly [
  start: number,
  open: PriceTicks,
  high: PriceTicks,
  low: PriceTicks,
  close: PriceTicks,
  volume: Lots,
];

export interface KlinesQuery {
  /**
   * With `since`: the first `size` buckets starting at or after it, ascending (forward paging).
   * Without: the latest `size` buckets, ascending.
   */
  readonly since?: number | undefined;
  /** Default and maximum MAX_KLINE_SIZE. */
  readonly size?: number | undefined;
}

/** One balance change that moved the total (available + frozen): freezes and releases are no bills. */
export interface BillRow {
  /** seq × 2^20 + the event's index in its command's events: a rebuild gives the same ids. */
  readonly id: number;
  readonly userId: number;
  readonly coin: string;
  /** Signed change of available + frozen, in coin units. */
  readonly change: CoinUnits;
  /** available + frozen after the change. */
  readonly balance: CoinUnits;
  readonly available: CoinUnits;
  readonly frozen: CoinUnits;
  readonly billType: BillType;
  /** The order, deposit or withdrawal id the change belongs to. */
  readonly ref: string;
  readonly time: number;
}

/** A bill of a margin account (issue 14): which account, and the bill as for spot. */
export interface MarginBillRow extends BillRow {
  /** 1 isolated, 2 cross. */
  readonly acctType: 1 | 2;
  /** The isolated account's market; '' for cross. */
  readonly market: string;
}

/** A user's margin bills of one account kind: every isolated account, one market's, or cross. */
export interface MarginBillsQuery extends BillsQuery {
  readonly acctType: 1 | 2;
  /** Only this isolated account's; default every market's. */
  readonly market?: string | undefined;
}

export interface BillsQuery extends PageQuery {
  readonly coin?: string | undefined;
  /** Inclusive bounds on the bill's time (ms). */
  readonly startTime?: number | undefined;
  readonly endTime?: number | undefined;
}

/** A deposit record (an operator credit, a chain deposit, or an internal transfer received) as it is now. */
export interface DepositRow {
  /** seq × 2^20 + event index of the event that first recorded it. */
  readonly id: number;
  /** The engine's id: the operator's, `chain:<coin>/<chain>/<tx>/<output>`, or `internal:<withdrawal>`. */
  readonly depositId: string;
  readonly userId: number;
  readonly coin: string;
  /** '' for an operator credit. */
  readonly chain: string;
  /** '' for an operator credit or an internal transfer. */
  readonly txHash: string;
  /** The deposit address in wire form; '' for an operator credit. */
  readonly address: string;
  readonly amount: CoinUnits;
  readonly confirmations: number;
  readonly status: DepositState;
  readonly itransfer: boolean;
  /** Why it failed, the operator's remark, or what internal transfer it was. */
  readonly note: string;
  /** When it was first recorded (ms). */
  readonly time: number;
  /** When it last changed (ms). */
  readonly updated: number;
}

/** A withdrawal record as it is now. */
export interface WithdrawalRow {
  /** seq × 2^20 + event index of its first WithdrawalUpdated event. */
  readonly id: number;
  /** The engine's id (decimal digits), which the wire shows as the record id. */
  readonly withdrawalId: string;
  readonly userId: number;
  readonly coin: string;
  readonly chain: string;
  /** The receiving address in wire form. */
  readonly address: string;
  readonly amount: CoinUnits;
  /** The fee charged (0 for an internal transfer). */
  readonly fee: CoinUnits;
  readonly status: WithdrawalState;
  readonly txHash: string;
  readonly confirmations: number;
  readonly itransfer: boolean;
  /** Why it failed or who cancelled it; '' otherwise. */
  readonly reason: string;
  /** When it was requested (ms). */
  readonly submitTime: number;
  /** When it last changed (ms). */
  readonly manageTime: number;
}

/** One step of a withdrawal's life: every state change (and confirmation count) leaves one. */
export interface WithdrawalStepRow {
  /** seq × 2^20 + event index of the WithdrawalUpdated event. */
  readonly id: number;
  readonly withdrawalId: string;
  readonly status: WithdrawalState;
  readonly confirmations: number;
  readonly txHash: string;
  readonly reason: string;
  readonly time: number;
}

/**
 * Which closed loan records (issue 29: the engine keeps open ones only) `loansBorrowed` and
 * `loansLent` return: the newest `limit`, by record id descending.
 */
export interface LoanRecordsQuery {
  /** Borrowed: only this account kind (1 isolated, 2 cross); default both. */
  readonly acctType?: 1 | 2 | undefined;
  /** Borrowed: only this isolated account's market. */
  readonly market?: string | undefined;
  /** Lent: only the records of this offer. */
  readonly offerId?: number | undefined;
  readonly coin?: string | undefined;
  /** Only records closed in this status (2, 4 or 6). */
  readonly status?: number | undefined;
  /** 1..MAX_RECORDS_LIMIT. */
  readonly limit: number;
}

/** Which repayments `repayments` returns: the newest `limit` of a user's margin accounts, by id descending. */
export interface RepaymentsQuery {
  readonly acctType?: 1 | 2 | undefined;
  readonly market?: string | undefined;
  readonly coin?: string | undefined;
  /** 1..MAX_RECORDS_LIMIT. */
  readonly limit: number;
}

/** The deepest `limit` of the loan and repayment queries (the wire's deepest page: 100,000 × 100). */
export const MAX_RECORDS_LIMIT = 10_000_000;

export interface FundsQuery extends PageQuery {
  readonly coin?: string | undefined;
}

export const DEFAULT_PAGE_SIZE = 10;
export const MAX_PAGE_SIZE = 1000;
export const DEFAULT_TRADES_LIMIT = 50;
export const MAX_TRADES_LIMIT = 1000;
export const MAX_KLINE_SIZE = 1000;

/** Venue-wide trades (the operator's list, src/store/venue-trades.ts): matches counted exactly; past this the total is "more than" it, and no page starts beyond it. */
export const VENUE_TRADES_COUNT_CAP = 10_000;
/** The largest page. */
export const MAX_VENUE_TRADES_LIMIT = 1000;

export interface VenueTradesQuery {
  readonly market?: string | undefined;
  /** Trades where this user took or made. */
  readonly userId?: number | undefined;
  /** Trades at or after this time (ms). */
  readonly fromTime?: number | undefined;
  /** Trades at or before this time (ms). */
  readonly toTime?: number | undefined;
  /** 1..MAX_VENUE_TRADES_LIMIT. */
  readonly limit: number;
  /** 0..VENUE_TRADES_COUNT_CAP − limit. */
  readonly offset: number;
}

export interface VenueTrades {
  /** Newest first. */
  readonly rows: TradeRow[];
  /** The matches, counted up to VENUE_TRADES_COUNT_CAP; with `capped`, more than that. */
  readonly total: number;
  readonly capped: boolean;
}

/**
 * The history port. Every method returns a promise so that synchronous (SQLite) and
 * asynchronous (PostgreSQL) adapters share it. Calls to `applyBatch` must not overlap: await
 * each before the next. Queries never see half a batch.
 */
export interface HistoryStore {
  /**
   * Applies journal entries in one transaction. Entries must be in ascending sequence order
   * (an out-of-order entry rejects the whole batch and changes nothing); entries at or below
   * the checkpoint are skipped, so sending a batch again, or overlapping batches, changes
   * nothing. The checkpoint moves to the last entry's sequence number in the same transaction.
   */
  applyBatch(entries: readonly HistoryEntry[]): Promise<ApplyBatchResult>;
  /** The last sequence number applied (0 for an empty store). */
  checkpoint(): Promise<number>;

  /** The order, if it belongs to this user and market. */
  getOrder(userId: number, market: string, orderId: number): Promise<OrderRow | undefined>;
  /** The latest order (highest id) the user placed in the market with this client order id. */
  getOrderByClientId(userId: number, market: string, clientOrderId: string): Promise<OrderRow | undefined>;
  /** The user's orders in the market, newest first (by id). */
  listOrders(userId: number, market: string, query?: ListOrdersQuery): Promise<OrderRow[]>;

  /** Trades ascending by id: the latest `limit`, or the first `limit` after `sinceTradeId`. */
  trades(market: string, query?: TradesQuery): Promise<TradeRow[]>;
  /** Every market's trades, newest first, filtered and paged (the operator's list: venue-trades.ts). */
  venueTrades(query: VenueTradesQuery): Promise<VenueTrades>;
  /** Candlesticks ascending by start; buckets without trades are absent. */
  klines(market: string, interval: KlineInterval, query?: KlinesQuery): Promise<KlineRow[]>;

  /** The user's bills, newest first (time, then id). */
  bills(userId: number, query?: BillsQuery): Promise<Page<BillRow>>;
  /** The user's bills of margin accounts (getLeverBills, getCrossBills), newest first. */
  marginBills(userId: number, query: MarginBillsQuery): Promise<Page<MarginBillRow>>;
  /** The user's deposits, newest first. */
  deposits(userId: number, query?: FundsQuery): Promise<Page<DepositRow>>;
  /** The user's withdrawals, newest first (by submission). */
  withdrawals(userId: number, query?: FundsQuery): Promise<Page<WithdrawalRow>>;
  /** Every step of one withdrawal, oldest first. */
  withdrawalSteps(withdrawalId: string): Promise<WithdrawalStepRow[]>;
  /** A closed loan record (LoanClosed), by id; undefined while it is open (in the engine) or unknown. */
  closedLoan(loanId: number): Promise<LoanRecord | undefined>;
  /** Closed loan records borrowed by the user's margin accounts, newest first. */
  loansBorrowed(userId: number, query: LoanRecordsQuery): Promise<LoanRecord[]>;
  /** Closed loan records lent by the user's offers (0: the lending pool's), newest first. */
  loansLent(userId: number, query: LoanRecordsQuery): Promise<LoanRecord[]>;
  /** Payments on the user's margin accounts' loans (LoanRepaid), newest first. */
  repayments(userId: number, query: RepaymentsQuery): Promise<RepaymentRecord[]>;
  /** Every payment on one loan record, oldest first. */
  loanRepayments(loanId: number): Promise<RepaymentRecord[]>;

  close(): Promise<void>;
}

/** Page bounds from a query: integers, pageIndex ≥ 1, 1 ≤ pageSize ≤ MAX_PAGE_SIZE, else RangeError. */
export function pageBounds(query: PageQuery | undefined): {
  pageIndex: number;
  pageSize: number;
  offset: number;
} {
  const pageIndex = query?.pageIndex ?? 1;
  const pageSize = query?.pageSize ?? DEFAULT_PAGE_SIZE;
  if (!Number.isSafeInteger(pageIndex) || pageIndex < 1)
    throw new RangeError(`pageIndex must be an integer ≥ 1`);
  if (!Number.isSafeInteger(pageSize) || pageSize < 1 || pageSize > MAX_PAGE_SIZE)
    throw new RangeError(`pageSize must be an integer 1..${MAX_PAGE_SIZE}`);
  const offset = (pageIndex - 1) * pageSize;
  if (!Number.isSafeInteger(offset)) throw new RangeError('page out of range');
  return { pageIndex, pageSize, offset };
}

/** A limit from a query: an integer 1..max, `fallback` when absent, else RangeError. */
export function limitBound(value: number | undefined, fallback: number, max: number, name: string): number {
  const n = value ?? fallback;
  if (!Number.isSafeInteger(n) || n < 1 || n > max)
    throw new RangeError(`${name} must be an integer 1..${max}`);
  return n;
}
