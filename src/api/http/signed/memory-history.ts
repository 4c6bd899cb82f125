/** @module memory-history — test support: a minimal in-memory HistoryStore projecting orders, trades and bills from engine events, so the signed routes can be tested without the SQLite adapter. */
import { BUY } from '../../../domain/commands.ts';
import { splitMarketName } from '../../../domain/specs.ts';
import {
  pageBounds,
  type ApplyBatchResult,
  type BillRow,
  type BillsQuery,
  type DepositRow,
  type FundsQuery,
  type HistoryEntry,
  type HistoryStore,
  type KlineRow,
  type ListOrdersQuery,
  type OrderRow,
  type Page,
  type TradeRow,
  type TradesQuery,
  type WithdrawalRow,
  type WithdrawalStepRow,
} from '../../../store/history-store.ts';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/**
 * Orders, trades and bills only (klines, deposit and withdrawal records stay empty: the tests of
 * the funds endpoints use the SQLite store). Same ordering rules as the port: orders newest first by id, bills
 * newest first by time then id (seq × 2^20 + event index).
 */
export class MemoryHistoryStore implements HistoryStore {
  #checkpoint = 0;
  readonly #orders = new Map<number, Mutable<OrderRow>>();
  readonly #trades: TradeRow[] = [];
  readonly #bills: BillRow[] = [];

  async applyBatch(entries: readonly HistoryEntry[]): Promise<ApplyBatchResult> {
    let applied = 0;
    let skipped = 0;
    let rows = 0;
    for (const entry of entries) {
      if (entry.seq <= this.#checkpoint) {
        skipped++;
        continue;
      }
      entry.events.forEach((event, index) => {
        switch (event.type) {
          case 'OrderAccepted': {
            const parts = splitMarketName(event.market);
            this.#orders.set(event.orderId, {
              id: event.orderId,
              userId: event.userId,
              market: event.market,
              side: event.side,
              kind: event.kind,
              price: event.price,
              amount: event.amount,
              filled: 0,
              filledValue: 0,
              fees: 0,
              feeCoin: (event.side === BUY ? parts?.base : parts?.quote) ?? '',
              platformFees: 0,
              status: 0,
              acctType: event.acctType,
              usePlatformCoin: event.usePlatformCoin,
              clientOrderId: event.clientOrderId,
              time: event.time,
              updated: event.time,
              cancelReason: null,
            });
            rows++;
            break;
          }
          case 'OrderUpdated': {
            const o = this.#orders.get(event.orderId);
            if (o === undefined) break;
            Object.assign(o, {
              status: event.status,
              filled: event.filled,
              filledValue: event.filledValue,
              fees: event.fees,
              platformFees: event.platformFees,
              cancelReason: event.cancelReason,
              updated: event.time,
            });
            rows++;
            break;
          }
          case 'TradeExecuted':
            this.#trades.push({
              id: event.tradeId,
              market: event.market,
              price: event.price,
              amount: event.amount,
              value: event.value,
              takerSide: event.takerSide,
              takerOrderId: event.takerOrderId,
              makerOrderId: event.makerOrderId,
              takerUserId: event.takerUserId,
              makerUserId: event.makerUserId,
              time: event.time,
            });
            rows++;
            break;
          case 'BalanceChanged': {
            const change = event.deltaAvailable + event.deltaFrozen;
            if (change === 0) break;
            this.#bills.push({
              id: entry.seq * 2 ** 20 + index,
              userId: event.userId,
              coin: event.coin,
              change,
              balance: event.available + event.frozen,
              available: event.available,
              frozen: event.frozen,
              billType: event.billType,
              ref: event.ref,
              time: event.time,
            });
            rows++;
            break;
          }
          default:
            break;
        }
      });
      this.#checkpoint = entry.seq;
      applied++;
    }
    return { checkpoint: this.#checkpoint, applied, skipped, rows };
  }

  async checkpoint(): Promise<number> {
    return this.#checkpoint;
  }

  async getOrder(userId: number, market: string, orderId: number): Promise<OrderRow | undefined> {
    const o = this.#orders.get(orderId);
    return o !== undefined && o.userId === userId && o.market === market ? { ...o } : undefined;
  }

  async getOrderByClientId(
    userId: number,
    market: string,
    clientOrderId: string,
  ): Promise<OrderRow | undefined> {
    if (clientOrderId === '') return undefined;
    let found: OrderRow | undefined;
    for (const o of this.#orders.values()) {
      if (o.userId === userId && o.market === market && o.clientOrderId === clientOrderId) {
        if (found === undefined || o.id > found.id) found = o;
      }
    }
    return found === undefined ? undefined : { ...found };
  }

  async listOrders(userId: number, market: string, query: ListOrdersQuery = {}): Promise<OrderRow[]> {
    const { pageSize, offset } = pageBounds(query);
    const status = query.status ?? 'all';
    const rows = [...this.#orders.values()].filter(
      (o) =>
        o.userId === userId &&
        o.market === market &&
        (query.side === undefined || o.side === query.side) &&
        (status === 'all' ||
          (status === 'open' && (o.status === 0 || o.status === 3)) ||
          (status === 'finished' && (o.status === 1 || o.status === 2)) ||
          (status === 'finishedAndPartial' && o.filled > 0)),
    );
    return rows
      .sort((a, b) => b.id - a.id)
      .slice(offset, offset + pageSize)
      .map((o) => ({ ...o }));
  }

  async trades(market: string, query: TradesQuery = {}): Promise<TradeRow[]> {
    const limit = query.limit ?? 50;
    const all = this.#trades.filter((t) => t.market === market);
    if (query.sinceTradeId !== undefined) {
      const since = query.sinceTradeId;
      return all.filter((t) => t.id > since).slice(0, limit);
    }
    return all.slice(-limit);
  }

  async klines(): Promise<KlineRow[]> {
    return [];
  }

  async bills(userId: number, query: BillsQuery = {}): Promise<Page<BillRow>> {
    const { pageIndex, pageSize, offset } = pageBounds(query);
    const from = query.startTime ?? -Infinity;
    const to = query.endTime ?? Infinity;
    const rows = this.#bills
      .filter(
        (b) =>
          b.userId === userId &&
          (query.coin === undefined || b.coin === query.coin) &&
          b.time >= from &&
          b.time <= to,
      )
      .sort((a, b) => b.time - a.time || b.id - a.id);
    return { rows: rows.slice(offset, offset + pageSize), total: rows.length, pageIndex, pageSize };
  }

  async deposits(_userId: number, query: FundsQuery = {}): Promise<Page<DepositRow>> {
    const { pageIndex, pageSize } = pageBounds(query);
    return { rows: [], total: 0, pageIndex, pageSize };
  }

  async withdrawals(_userId: number, query: FundsQuery = {}): Promise<Page<WithdrawalRow>> {
    const { pageIndex, pageSize } = pageBounds(query);
    return { rows: [], total: 0, pageIndex, pageSize };
  }

  async withdrawalSteps(): Promise<WithdrawalStepRow[]> {
    return [];
  }

  async close(): Promise<void> {}
}
