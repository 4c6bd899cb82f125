/**
 * @module history-projection — turns a batch of journal entries into the row writes of the history
 * store, shared by every adapter so that SQLite and PostgreSQL project events identically.
 *
 * The plan is coalesced per batch: an order placed and filled five times in the batch becomes one
 * insert with its final state; a kline bucket touched by many trades becomes one upsert carrying
 * the batch's open, high, low, close and volume for it. Applying batches in sequence order, each
 * plan merged into the tables (see `KlineDelta`), gives the same rows however the entries are
 * split into batches.
 */
import { BUY } from '../domain/commands.ts';
import { ORDER_PENDING, type EngineEvent } from '../domain/events.ts';
import { splitMarketName } from '../domain/specs.ts';
import {
  KLINE_INTERVALS,
  klineBucketStart,
  type BillRow,
  type DepositRow,
  type MarginBillRow,
  type HistoryEntry,
  type KlineInterval,
  type OrderRow,
  type TradeRow,
  type WithdrawalRow,
  type WithdrawalStepRow,
} from './history-store.ts';

/** Record ids are seq × 2^20 + the event's index within its command's events. */
export const EVENT_INDEX_LIMIT = 2 ** 20;

/** The id of the record made from event `index` of the command at `seq`. */
export function recordId(seq: number, index: number): number {
  if (index >= EVENT_INDEX_LIMIT) {
    throw new RangeError(
      `command ${seq} emitted more than ${EVENT_INDEX_LIMIT} events: record ids would clash`,
    );
  }
  const id = seq * EVENT_INDEX_LIMIT + index;
  if (!Number.isSafeInteger(id)) throw new RangeError(`seq ${seq} is too large for record ids`);
  return id;
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** The latest state of an order that existed before the batch. */
export interface OrderUpdate {
  readonly id: number;
  status: OrderRow['status'];
  filled: number;
  filledValue: number;
  fees: number;
  platformFees: number;
  cancelReason: OrderRow['cancelReason'];
  updated: number;
}

/**
 * One kline bucket's trades within the batch. Merged into a stored bucket as: open kept, high =
 * max, low = min, close replaced, volume added; inserted as is when the bucket is new.
 */
export interface KlineDelta {
  readonly market: string;
  readonly interval: KlineInterval;
  readonly start: number;
  readonly open: number;
  high: number;
  low: number;
  close: number;
  volume: number;
}

/** A closed loan record's row (issue 29): the fields it is looked up by, and the record as JSON. */
export interface LoanRow {
  readonly id: number;
  readonly borrowerUserId: number;
  /** 1 isolated, 2 cross. */
  readonly acctType: 1 | 2;
  /** The isolated account's market; '' for cross. */
  readonly market: string;
  /** The lender's user id; 0 for the lending pool. */
  readonly lenderUserId: number;
  readonly offerId: number;
  readonly coin: string;
  readonly status: number;
  readonly closedMs: number;
  readonly record: string;
}

/** A repayment's row: the fields it is looked up by, and the record as JSON. */
export interface RepaymentRow {
  readonly id: number;
  readonly borrowerUserId: number;
  readonly loanId: number;
  readonly acctType: 1 | 2;
  readonly market: string;
  readonly coin: string;
  readonly time: number;
  readonly record: string;
}

/** The writes of one batch. Within each list the writes are independent of each other's order. */
export interface BatchPlan {
  /** The checkpoint to store: the last applied entry's seq, or the old checkpoint. */
  readonly checkpoint: number;
  readonly applied: number;
  readonly skipped: number;
  readonly orderInserts: OrderRow[];
  readonly orderUpdates: OrderUpdate[];
  readonly trades: TradeRow[];
  readonly bills: BillRow[];
  /** Bills of margin accounts (issue 14), kept apart from the spot bills. */
  readonly marginBills: MarginBillRow[];
  readonly klines: KlineDelta[];
  /**
   * Deposit and withdrawal records as the batch left them, to insert, or to merge into a stored
   * row of the same deposit or withdrawal id (its id, time and fixed fields kept, its state,
   * confirmations, note or reason and change time replaced).
   */
  readonly deposits: DepositRow[];
  readonly withdrawals: WithdrawalRow[];
  readonly withdrawalSteps: WithdrawalStepRow[];
  /** Loan records closed in the batch (each closes once) and repayments made (issue 29). */
  readonly loans: LoanRow[];
  readonly repayments: RepaymentRow[];
  /** Total rows the plan writes. */
  readonly rows: number;
}

/**
 * Plans the writes for `entries` given the store's `checkpoint`. Entries must be strictly
 * ascending by seq (else an Error, and nothing may be written); those at or below the checkpoint
 * are skipped. Events that history does not record (users, fee preferences, dead-man switch,
 * coins and markets) are ignored.
 */
export function planBatch(checkpoint: number, entries: readonly HistoryEntry[]): BatchPlan {
  const newOrders = new Map<number, Mutable<OrderRow>>();
  const updates = new Map<number, OrderUpdate>();
  const trades: TradeRow[] = [];
  const bills: BillRow[] = [];
  const marginBills: MarginBillRow[] = [];
  const klineBuckets = new Map<string, Map<number, KlineDelta>[]>();
  const deposits = new Map<string, DepositRow>();
  const withdrawals = new Map<string, WithdrawalRow>();
  const withdrawalSteps: WithdrawalStepRow[] = [];
  const loans: LoanRow[] = [];
  const repayments: RepaymentRow[] = [];
  let last = 0;
  let applied = 0;
  let skipped = 0;
  let lastApplied = checkpoint;

  for (const entry of entries) {
    if (!Number.isSafeInteger(entry.seq) || entry.seq <= last) {
      throw new Error(`history entries out of order: seq ${entry.seq} after ${last}`);
    }
    last = entry.seq;
    if (entry.seq <= checkpoint) {
      skipped++;
      continue;
    }
    applied++;
    lastApplied = entry.seq;
    const events = entry.events;
    for (let index = 0; index < events.length; index++) {
      const e = events[index] as EngineEvent;
      switch (e.type) {
        case 'OrderAccepted': {
          const coins = splitMarketName(e.market);
          newOrders.set(e.orderId, {
            id: e.orderId,
            userId: e.userId,
            market: e.market,
            side: e.side,
            kind: e.kind,
            price: e.price,
            amount: e.amount,
            filled: 0,
            filledValue: 0,
            fees: 0,
            // Fees are charged in the coin received: base for a buy, quote for a sell.
            feeCoin: coins === undefined ? '' : e.side === BUY ? coins.base : coins.quote,
            platformFees: 0,
            status: ORDER_PENDING,
            acctType: e.acctType,
            usePlatformCoin: e.usePlatformCoin,
            clientOrderId: e.clientOrderId,
            time: e.time,
            updated: e.time,
            cancelReason: null,
          });
          break;
        }
        case 'OrderUpdated': {
          const target = newOrders.get(e.orderId) ?? updates.get(e.orderId);
          if (target !== undefined) {
            target.status = e.status;
            target.filled = e.filled;
            target.filledValue = e.filledValue;
            target.fees = e.fees;
            target.platformFees = e.platformFees;
            target.cancelReason = e.cancelReason;
            target.updated = e.time;
          } else {
            updates.set(e.orderId, {
              id: e.orderId,
              status: e.status,
              filled: e.filled,
              filledValue: e.filledValue,
              fees: e.fees,
              platformFees: e.platformFees,
              cancelReason: e.cancelReason,
              updated: e.time,
            });
          }
          break;
        }
        case 'TradeExecuted': {
          trades.push({
            id: e.tradeId,
            market: e.market,
            price: e.price,
            amount: e.amount,
            value: e.value,
            takerSide: e.takerSide,
            takerOrderId: e.takerOrderId,
            makerOrderId: e.makerOrderId,
            takerUserId: e.takerUserId,
            makerUserId: e.makerUserId,
            time: e.time,
          });
          let perInterval = klineBuckets.get(e.market);
          if (perInterval === undefined) {
            perInterval = KLINE_INTERVALS.map(() => new Map<number, KlineDelta>());
            klineBuckets.set(e.market, perInterval);
          }
          for (let i = 0; i < KLINE_INTERVALS.length; i++) {
            const interval = KLINE_INTERVALS[i] as KlineInterval;
            const buckets = perInterval[i] as Map<number, KlineDelta>;
            const start = klineBucketStart(interval, e.time);
            const k = buckets.get(start);
            if (k === undefined) {
              buckets.set(start, {
                market: e.market,
                interval,
                start,
                open: e.price,
                high: e.price,
                low: e.price,
                close: e.price,
                volume: e.amount,
              });
            } else {
              if (e.price > k.high) k.high = e.price;
              if (e.price < k.low) k.low = e.price;
              k.close = e.price;
              k.volume += e.amount;
            }
          }
          break;
        }
        case 'BalanceChanged': {
          const change = e.deltaAvailable + e.deltaFrozen;
          // A freeze or a release moves funds between available and frozen: no bill, except the
          // release of a withdrawal cancelled or failed, which the user must see (issue 33): a
          // bill of change 0 typed for it. A margin account's bills (issue 14) are kept apart:
          // getSpotBills shows spot bills only.
          const released = change === 0 ? withdrawalRelease(events, index, e) : undefined;
          if (change === 0 && released === undefined) break;
          const bill: BillRow = {
            id: recordId(entry.seq, index),
            userId: e.userId,
            coin: e.coin,
            change,
            balance: e.available + e.frozen,
            available: e.available,
            frozen: e.frozen,
            billType: released ?? e.billType,
            ref: e.ref,
            time: e.time,
          };
          if (e.account === undefined) bills.push(bill);
          else
            marginBills.push({
              ...bill,
              acctType: e.account.kind === 'cross' ? 2 : 1,
              market: e.account.kind === 'cross' ? '' : e.account.market,
            });
          break;
        }
        case 'DepositUpdated': {
          const first = deposits.get(e.depositId);
          deposits.set(e.depositId, {
            id: first?.id ?? recordId(entry.seq, index),
            depositId: e.depositId,
            userId: e.userId,
            coin: e.coin,
            chain: e.chain,
            txHash: e.txHash,
            address: e.address,
            amount: e.amount,
            confirmations: e.confirmations,
            status: e.state,
            itransfer: e.itransfer,
            note: e.note,
            time: first?.time ?? e.time,
            updated: e.time,
          });
          break;
        }
        case 'WithdrawalUpdated': {
          const id = recordId(entry.seq, index);
          withdrawals.set(e.withdrawalId, {
            id: withdrawals.get(e.withdrawalId)?.id ?? id,
            withdrawalId: e.withdrawalId,
            userId: e.userId,
            coin: e.coin,
            chain: e.chain,
            address: e.address,
            amount: e.amount,
            fee: e.fee,
            status: e.state,
            txHash: e.txHash,
            confirmations: e.confirmations,
            itransfer: e.itransfer,
            reason: e.reason,
            submitTime: e.submitTime,
            manageTime: e.time,
          });
          withdrawalSteps.push({
            id,
            withdrawalId: e.withdrawalId,
            status: e.state,
            confirmations: e.confirmations,
            txHash: e.txHash,
            reason: e.reason,
            time: e.time,
          });
          break;
        }
        case 'LoanClosed': {
          const l = e.loan;
          const b = l.borrower;
          loans.push({
            id: l.id,
            borrowerUserId: b.kind === 'system' ? 0 : b.userId,
            acctType: b.kind === 'cross' ? 2 : 1,
            market: b.kind === 'isolated' ? b.market : '',
            lenderUserId: l.lender.kind === 'system' ? 0 : l.lender.userId,
            offerId: l.offerId,
            coin: l.coin,
            status: l.status,
            closedMs: l.closedMs,
            record: JSON.stringify(l),
          });
          break;
        }
        case 'LoanRepaid': {
          const r = e.repayment;
          const b = r.borrower;
          repayments.push({
            id: r.id,
            borrowerUserId: b.kind === 'system' ? 0 : b.userId,
            loanId: r.loanId,
            acctType: b.kind === 'cross' ? 2 : 1,
            market: b.kind === 'isolated' ? b.market : '',
            coin: r.coin,
            time: r.timeMs,
            record: JSON.stringify(r),
          });
          break;
        }
        default:
          // Users, fee preferences, dead-man switch, coins, markets, addresses and fund
          // passwords: live state, not history.
          break;
      }
    }
  }

  const klines: KlineDelta[] = [];
  for (const perInterval of klineBuckets.values()) {
    for (const buckets of perInterval) for (const k of buckets.values()) klines.push(k);
  }
  const orderInserts = [...newOrders.values()];
  const orderUpdates = [...updates.values()];
  const depositRows = [...deposits.values()];
  const withdrawalRows = [...withdrawals.values()];
  return {
    checkpoint: lastApplied,
    applied,
    skipped,
    orderInserts,
    orderUpdates,
    trades,
    bills,
    marginBills,
    klines,
    deposits: depositRows,
    withdrawals: withdrawalRows,
    withdrawalSteps,
    loans,
    repayments,
    rows:
      orderInserts.length +
      orderUpdates.length +
      trades.length +
      bills.length +
      marginBills.length +
      klines.length +
      depositRows.length +
      withdrawalRows.length +
      withdrawalSteps.length +
      loans.length +
      repayments.length,
  };
}

/**
 * The bill type of a release (`unfreeze`) that gives a withdrawal's amount and fee back: the
 * same command's later WithdrawalUpdated of that withdrawal, cancelled or failed. Undefined for
 * any other change.
 */
function withdrawalRelease(
  events: readonly EngineEvent[],
  index: number,
  e: Extract<EngineEvent, { type: 'BalanceChanged' }>,
): 'withdrawCancelled' | 'withdrawFailed' | undefined {
  if (e.billType !== 'unfreeze' || e.account !== undefined) return undefined;
  for (let i = index + 1; i < events.length; i++) {
    const w = events[i] as EngineEvent;
    if (w.type !== 'WithdrawalUpdated' || w.withdrawalId !== e.ref || w.userId !== e.userId) continue;
    if (w.state === 'cancelled') return 'withdrawCancelled';
    if (w.state === 'failed') return 'withdrawFailed';
    return undefined;
  }
  return undefined;
}
