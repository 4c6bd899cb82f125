/**
 * @module history-rows — the history tables' column lists and the mappers from result rows (arrays
 * in column-list order) to the port's row types, shared by the SQLite and PostgreSQL adapters so
 * that both read the same columns the same way.
 */
import type { CancelReason, OrderStatus, BillType } from '../domain/events.ts';
import type {
  BillRow,
  DepositRow,
  MarginBillRow,
  OrderRow,
  TradeRow,
  WithdrawalRow,
  WithdrawalStepRow,
} from './history-store.ts';

export const ORDER_COLUMNS =
  'id, user_id, market, side, kind, price, amount, filled, filled_value, fees, fee_coin, platform_fees, ' +
  'status, acct_type, use_platform_coin, client_order_id, time, updated, cancel_reason';
export const TRADE_COLUMNS =
  'id, market, price, amount, value, taker_side, taker_order_id, maker_order_id, taker_user_id, ' +
  'maker_user_id, time';
export const BILL_COLUMNS = 'id, user_id, coin, change, available, frozen, bill_type, ref, time';
export const MARGIN_BILL_COLUMNS = `${BILL_COLUMNS}, acct_type, market`;
export const DEPOSIT_COLUMNS =
  'id, deposit_id, user_id, coin, chain, tx_hash, address, amount, confirmations, status, itransfer, ' +
  'note, time, updated';
export const WITHDRAWAL_COLUMNS =
  'id, withdrawal_id, user_id, coin, chain, address, amount, fee, status, tx_hash, confirmations, ' +
  'itransfer, reason, submit_time, manage_time';
export const STEP_COLUMNS = 'id, withdrawal_id, status, confirmations, tx_hash, reason, time';

/**
 * A result row as an array in the order of the statement's column list: node:sqlite builds
 * arrays markedly faster than objects (about 40% less per row in a measurement here), and
 * node-postgres returns them with `rowMode: 'array'`. Integers arrive as numbers (the PostgreSQL
 * adapter parses bigint columns, all safe integers), flags as 0 or 1.
 */
export type Row = readonly unknown[];

export const num = (v: unknown): number => v as number;
const str = (v: unknown): string => v as string;

/** Rows of ORDER_COLUMNS. */
export function orderRow(r: Row): OrderRow {
  return {
    id: num(r[0]),
    userId: num(r[1]),
    market: str(r[2]),
    side: num(r[3]) as OrderRow['side'],
    kind: str(r[4]) as OrderRow['kind'],
    price: num(r[5]),
    amount: num(r[6]),
    filled: num(r[7]),
    filledValue: num(r[8]),
    fees: num(r[9]),
    feeCoin: str(r[10]),
    platformFees: num(r[11]),
    status: num(r[12]) as OrderStatus,
    acctType: num(r[13]) as OrderRow['acctType'],
    usePlatformCoin: r[14] === 1,
    clientOrderId: str(r[15]),
    time: num(r[16]),
    updated: num(r[17]),
    cancelReason: (r[18] ?? null) as CancelReason | null,
  };
}

/** Rows of TRADE_COLUMNS. */
export function tradeRow(r: Row): TradeRow {
  return {
    id: num(r[0]),
    market: str(r[1]),
    price: num(r[2]),
    amount: num(r[3]),
    value: num(r[4]),
    takerSide: num(r[5]) as TradeRow['takerSide'],
    takerOrderId: num(r[6]),
    makerOrderId: num(r[7]),
    takerUserId: num(r[8]),
    makerUserId: num(r[9]),
    time: num(r[10]),
  };
}

/** Rows of BILL_COLUMNS. */
export function marginBillRow(r: Row): MarginBillRow {
  return { ...billRow(r), acctType: num(r[9]) === 2 ? 2 : 1, market: str(r[10]) };
}

export function billRow(r: Row): BillRow {
  const available = num(r[4]);
  const frozen = num(r[5]);
  return {
    id: num(r[0]),
    userId: num(r[1]),
    coin: str(r[2]),
    change: num(r[3]),
    balance: available + frozen,
    available,
    frozen,
    billType: str(r[6]) as BillType,
    ref: str(r[7]),
    time: num(r[8]),
  };
}

/** Rows of DEPOSIT_COLUMNS. */
export function depositRow(r: Row): DepositRow {
  return {
    id: num(r[0]),
    depositId: str(r[1]),
    userId: num(r[2]),
    coin: str(r[3]),
    chain: str(r[4]),
    txHash: str(r[5]),
    address: str(r[6]),
    amount: num(r[7]),
    confirmations: num(r[8]),
    status: str(r[9]) as DepositRow['status'],
    itransfer: r[10] === 1,
    note: str(r[11]),
    time: num(r[12]),
    updated: num(r[13]),
  };
}

/** Rows of WITHDRAWAL_COLUMNS. */
export function withdrawalRow(r: Row): WithdrawalRow {
  return {
    id: num(r[0]),
    withdrawalId: str(r[1]),
    userId: num(r[2]),
    coin: str(r[3]),
    chain: str(r[4]),
    address: str(r[5]),
    amount: num(r[6]),
    fee: num(r[7]),
    status: str(r[8]) as WithdrawalRow['status'],
    txHash: str(r[9]),
    confirmations: num(r[10]),
    itransfer: r[11] === 1,
    reason: str(r[12]),
    submitTime: num(r[13]),
    manageTime: num(r[14]),
  };
}

/** Rows of STEP_COLUMNS. */
export function stepRow(r: Row): WithdrawalStepRow {
  return {
    id: num(r[0]),
    withdrawalId: str(r[1]),
    status: str(r[2]) as WithdrawalStepRow['status'],
    confirmations: num(r[3]),
    txHash: str(r[4]),
    reason: str(r[5]),
    time: num(r[6]),
  };
}

/** A closed loan record's and a repayment's row: the lookup columns, then the record as JSON. */
export const LOAN_COLUMNS =
  'id, borrower_user, acct_type, market, lender_user, offer_id, coin, status, closed_ms, record';
export const REPAYMENT_COLUMNS = 'id, borrower_user, loan_id, acct_type, market, coin, time, record';

/** The record of a loan or repayment row read as `SELECT record …`. */
export function recordOf<T>(r: Row): T {
  return JSON.parse(String(r[0])) as T;
}

/** A loan or repayment query's filters as the SQL's parameters: -1 and '' for "any". */
export function loanFilters(q: {
  readonly acctType?: number | undefined;
  readonly market?: string | undefined;
  readonly offerId?: number | undefined;
  readonly coin?: string | undefined;
  readonly status?: number | undefined;
}): { acctType: number; market: string; offerId: number; coin: string; status: number } {
  return {
    acctType: q.acctType ?? -1,
    market: q.market ?? '',
    offerId: q.offerId ?? -1,
    coin: q.coin ?? '',
    status: q.status ?? -1,
  };
}
