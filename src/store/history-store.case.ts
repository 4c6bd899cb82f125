/**
 * @module history-store.case — the contract suite every history store adapter must pass, run
 * with events produced by the real engine: scenarios a trader could read, kline buckets checked
 * by hand, and a seeded trading stream compared with a deliberately naive reference projection.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_VENUE } from '../config/default-venue.ts';
import { BUY, SELL, type Command } from '../domain/commands.ts';
import { ORDER_CANCELLED, ORDER_DONE, ORDER_PARTIAL, ORDER_PENDING } from '../domain/events.ts';
import {
  KLINE_INTERVALS,
  type BillRow,
  type DepositRow,
  type HistoryEntry,
  type HistoryStore,
  type KlineInterval,
  type KlineRow,
  type OrderRow,
  type OrderStatusFilter,
  type TradeRow,
  type WithdrawalRow,
  type WithdrawalStepRow,
} from './history-store.ts';
import type { LoanRecord, RepaymentRecord } from '../margin/loans.ts';
import { EngineRecorder, TradingStream, seededRandom } from './trading-stream.ts';

/** Makes a fresh, empty store; the suite closes every store it makes. */
export type CreateHistoryStore = () => Promise<HistoryStore>;

const MARKETS = DEFAULT_VENUE.markets.map((m) => m.name);
const COINS = DEFAULT_VENUE.coins.map((c) => c.name);
/** Monday 2024-01-01 00:00 UTC. */
const T0 = Date.UTC(2024, 0, 1);
const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;

// ───────────────────────────── helpers ─────────────────────────────

/** Splits entries into consecutive batches of the given sizes (cycling through them). */
function split(entries: readonly HistoryEntry[], sizes: readonly number[]): HistoryEntry[][] {
  const out: HistoryEntry[][] = [];
  for (let i = 0, k = 0; i < entries.length; k++) {
    const n = sizes[k % sizes.length] as number;
    out.push(entries.slice(i, i + n));
    i += n;
  }
  return out;
}

async function applyAll(store: HistoryStore, batches: readonly (readonly HistoryEntry[])[]): Promise<void> {
  for (const b of batches) await store.applyBatch(b);
}

/** Everything a store holds, read back through the port's queries with paging. */
async function dump(store: HistoryStore, users: readonly number[]): Promise<unknown> {
  const orders: OrderRow[] = [];
  const bills: BillRow[] = [];
  const deposits: DepositRow[] = [];
  const withdrawals: WithdrawalRow[] = [];
  for (const user of users) {
    for (const market of MARKETS) {
      for (let page = 1; ; page++) {
        const rows = await store.listOrders(user, market, { pageIndex: page, pageSize: 1000 });
        orders.push(...rows);
        if (rows.length < 1000) break;
      }
    }
    for (let page = 1; ; page++) {
      const p = await store.bills(user, { pageIndex: page, pageSize: 1000 });
      bills.push(...p.rows);
      if (p.rows.length < 1000) break;
    }
    deposits.push(...(await store.deposits(user, { pageSize: 1000 })).rows);
    withdrawals.push(...(await store.withdrawals(user, { pageSize: 1000 })).rows);
  }
  const trades: TradeRow[] = [];
  const klines: Record<string, KlineRow[]> = {};
  for (const market of MARKETS) {
    for (let since = 0; ;) {
      const rows = await store.trades(market, { sinceTradeId: since, limit: 1000 });
      trades.push(...rows);
      if (rows.length < 1000) break;
      since = (rows.at(-1) as TradeRow).id;
    }
    for (const interval of KLINE_INTERVALS) {
      const rows: KlineRow[] = [];
      for (let since = Number.MIN_SAFE_INTEGER; ;) {
        const page = await store.klines(market, interval, { since, size: 1000 });
        rows.push(...page);
        if (page.length < 1000) break;
        since = (page.at(-1) as KlineRow)[0] + 1;
      }
      klines[`${market}/${interval}`] = rows;
    }
  }
  return { checkpoint: await store.checkpoint(), orders, trades, klines, bills, deposits, withdrawals };
}

/**
 * A kline bucket start computed the plain way, independently of the store's arithmetic: calendar
 * fields for days and weeks (weeks start on Monday), epoch multiples for the rest.
 */
function referenceBucket(interval: KlineInterval, time: number): number {
  const d = new Date(time);
  const midnight = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
  switch (interval) {
    case '1day':
      return midnight;
    case '1week':
      return midnight - ((d.getUTCDay() + 6) % 7) * DAY;
    case '3day':
      return midnight - (Math.round(midnight / DAY) % 3) * DAY;
    default: {
      const minutes = Number.parseInt(interval, 10) * (interval.endsWith('hour') ? 60 : 1);
      return time - (time % (minutes * MINUTE));
    }
  }
}

/** A deliberately naive projection: every event applied one by one to plain arrays and maps. */
class ReferenceHistory {
  readonly orders = new Map<number, OrderRow>();
  readonly trades: TradeRow[] = [];
  readonly bills: BillRow[] = [];
  readonly deposits = new Map<string, DepositRow>();
  readonly withdrawals = new Map<string, WithdrawalRow>();
  readonly steps: WithdrawalStepRow[] = [];

  constructor(entries: readonly HistoryEntry[]) {
    for (const entry of entries) {
      entry.events.forEach((e, index) => {
        switch (e.type) {
          case 'OrderAccepted': {
            const [base, quote] = e.market.split('_') as [string, string];
            this.orders.set(e.orderId, {
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
              feeCoin: e.side === BUY ? base : quote,
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
            const o = this.orders.get(e.orderId) as OrderRow;
            this.orders.set(e.orderId, {
              ...o,
              status: e.status,
              filled: e.filled,
              filledValue: e.filledValue,
              fees: e.fees,
              platformFees: e.platformFees,
              cancelReason: e.cancelReason,
              updated: e.time,
            });
            break;
          }
          case 'TradeExecuted':
            this.trades.push({
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
            break;
          case 'BalanceChanged': {
            // A withdrawal's release when it is cancelled or failed is a bill of change 0 (issue 33).
            const ended =
              e.billType === 'unfreeze'
                ? entry.events
                    .slice(index + 1)
                    .find((w) => w.type === 'WithdrawalUpdated' && w.withdrawalId === e.ref)
                : undefined;
            const state = ended?.type === 'WithdrawalUpdated' ? ended.state : undefined;
            const released =
              state === 'cancelled' ? 'withdrawCancelled' : state === 'failed' ? 'withdrawFailed' : undefined;
            if (e.deltaAvailable + e.deltaFrozen !== 0 || released !== undefined) {
              this.bills.push({
                id: entry.seq * 2 ** 20 + index,
                userId: e.userId,
                coin: e.coin,
                change: e.deltaAvailable + e.deltaFrozen,
                balance: e.available + e.frozen,
                available: e.available,
                frozen: e.frozen,
                billType: released ?? e.billType,
                ref: e.ref,
                time: e.time,
              });
            }
            break;
          }
          case 'DepositUpdated': {
            const first = this.deposits.get(e.depositId);
            this.deposits.set(e.depositId, {
              id: first?.id ?? entry.seq * 2 ** 20 + index,
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
            const id = entry.seq * 2 ** 20 + index;
            this.withdrawals.set(e.withdrawalId, {
              id: this.withdrawals.get(e.withdrawalId)?.id ?? id,
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
            const { withdrawalId, state, confirmations, txHash, reason, time } = e;
            this.steps.push({ id, withdrawalId, status: state, confirmations, txHash, reason, time });
            break;
          }
          default:
            break;
        }
      });
    }
  }

  listOrders(
    userId: number,
    market: string,
    status: OrderStatusFilter,
    side: 0 | 1 | undefined,
    pageIndex: number,
    pageSize: number,
  ): OrderRow[] {
    const keep = (o: OrderRow): boolean =>
      status === 'all' ||
      (status === 'open' && (o.status === ORDER_PENDING || o.status === ORDER_PARTIAL)) ||
      (status === 'finished' && (o.status === ORDER_CANCELLED || o.status === ORDER_DONE)) ||
      (status === 'finishedAndPartial' &&
        (o.status === ORDER_DONE || (o.status === ORDER_PARTIAL && o.filled > 0)));
    return [...this.orders.values()]
      .filter((o) => o.userId === userId && o.market === market && (side === undefined || o.side === side))
      .filter(keep)
      .sort((a, b) => b.id - a.id)
      .slice((pageIndex - 1) * pageSize, pageIndex * pageSize);
  }

  klines(market: string, interval: KlineInterval): KlineRow[] {
    const buckets = new Map<number, TradeRow[]>();
    for (const t of this.trades) {
      if (t.market !== market) continue;
      const start = referenceBucket(interval, t.time);
      buckets.set(start, [...(buckets.get(start) ?? []), t]);
    }
    return [...buckets.entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([start, ts]) => {
        const byId = ts.sort((a, b) => a.id - b.id);
        const prices = byId.map((t) => t.price);
        return [
          start,
          prices[0] as number,
          Math.max(...prices),
          Math.min(...prices),
          prices.at(-1) as number,
          byId.reduce((s, t) => s + t.amount, 0),
        ] as const;
      });
  }

  billsOf(userId: number, coin?: string, from = -Infinity, to = Infinity): BillRow[] {
    return this.bills
      .filter((b) => b.userId === userId && (coin === undefined || b.coin === coin))
      .filter((b) => b.time >= from && b.time <= to)
      .sort((a, b) => b.time - a.time || b.id - a.id);
  }
}

/** A seeded stream on the real engine: setup, then `steps` commands. */
function stream(seed: number, users: number, steps: number, meanStepMs: number): TradingStream {
  const s = new TradingStream({ seed, users, startTime: T0 - 7 * MINUTE, meanStepMs, targetOpenOrders: 300 });
  s.setup();
  for (let i = 0; i < steps; i++) s.step();
  s.recorder.engine.assertInvariants();
  return s;
}

/** Places a resting sell for `seller` and an IOC buy for `buyer` that takes it: one trade at `price`. */
function trade(
  rec: EngineRecorder,
  seller: number,
  buyer: number,
  time: number,
  price: number,
  lots: number,
): void {
  assert.equal(rec.place(seller, 'btc_usdt', SELL, 'limit', price, lots, time).result, 'OK');
  assert.equal(rec.place(buyer, 'btc_usdt', BUY, 'ioc', price, lots, time).result, 'OK');
}

// ───────────────────────────── the suite ─────────────────────────────

/**
 * Runs the history store contract against stores made by `createStore`; `skip` names why the
 * adapter's service is not there (the suite is then reported skipped).
 */
export function runHistoryStoreContract(
  name: string,
  createStore: CreateHistoryStore,
  options: { skip?: string | false } = {},
): void {
  const withStore = async (body: (store: HistoryStore) => Promise<void>): Promise<void> => {
    const store = await createStore();
    try {
      await body(store);
    } finally {
      await store.close();
    }
  };

  // One stream for the tests that compare with the reference (built once: the engine is the cost).
  let shared: { s: TradingStream; ref: ReferenceHistory } | undefined;
  const sharedStream = (): { s: TradingStream; ref: ReferenceHistory } => {
    if (shared === undefined) {
      const s = stream(20240101, 12, 4_000, 3_000);
      shared = { s, ref: new ReferenceHistory(s.recorder.entries) };
    }
    return shared;
  };

  describe(`history store contract: ${name}`, { skip: options.skip ?? false }, () => {
    it('starts empty', () =>
      withStore(async (store) => {
        assert.equal(await store.checkpoint(), 0);
        assert.equal(await store.getOrder(1, 'btc_usdt', 1), undefined);
        assert.equal(await store.getOrderByClientId(1, 'btc_usdt', 'abcd'), undefined);
        assert.deepEqual(await store.listOrders(1, 'btc_usdt'), []);
        assert.deepEqual(await store.trades('btc_usdt'), []);
        assert.deepEqual(await store.klines('btc_usdt', '1min'), []);
        assert.deepEqual(await store.bills(1), { rows: [], total: 0, pageIndex: 1, pageSize: 10 });
        assert.equal((await store.deposits(1)).total, 0);
        assert.equal((await store.withdrawals(1)).total, 0);
      }));

    it('scenario: alice sells 0.7 BTC @ 30000; bob buys 0.2 IOC, then 0.6 limit; alice cancels nothing left', () =>
      withStore(async (store) => {
        const rec = new EngineRecorder(T0);
        const alice = rec.fundedUser('alice', { btc: 100_000_000 }); // 1 BTC
        const bob = rec.fundedUser('bob', { usdt: 100_000_000_000 }); // 100,000 USDT
        const sell = rec.place(alice, 'btc_usdt', SELL, 'limit', 3_000_000, 7_000, T0 + 1_000, 'ask1');
        const ioc = rec.place(bob, 'btc_usdt', BUY, 'ioc', 3_010_000, 2_000, T0 + 2_000);
        const buy = rec.place(bob, 'btc_usdt', BUY, 'limit', 3_000_000, 6_000, T0 + 3_000, 'bid1');
        const none = rec.cancel(alice, 'btc_usdt', sell.orderId ?? 0, T0 + 4_000);
        assert.equal(none.result, 'ORDER_NOT_FOUND');
        const r = await store.applyBatch(rec.entries);
        assert.equal(r.checkpoint, rec.seq);
        assert.equal(r.applied, rec.entries.length);
        assert.equal(await store.checkpoint(), rec.seq);

        // Alice's ask: 0.2 then 0.5 filled at 30000: done; fees 0.2% of 21,000 USDT in USDT.
        const ask = await store.getOrder(alice, 'btc_usdt', sell.orderId as number);
        assert.deepEqual(ask, {
          id: sell.orderId,
          userId: alice,
          market: 'btc_usdt',
          side: SELL,
          kind: 'limit',
          price: 3_000_000,
          amount: 7_000,
          filled: 7_000,
          filledValue: 21_000_000_000,
          fees: 42_000_000,
          feeCoin: 'usdt',
          platformFees: 0,
          status: ORDER_DONE,
          acctType: 0,
          usePlatformCoin: false,
          clientOrderId: 'ask1',
          time: T0 + 1_000,
          updated: T0 + 3_000,
          cancelReason: null,
        });
        // Bob's IOC: filled 0.2 at the resting price 30000; fee 0.2% of 0.2 BTC in BTC.
        const iocRow = await store.getOrder(bob, 'btc_usdt', ioc.orderId as number);
        assert.equal(iocRow?.kind, 'ioc');
        assert.equal(iocRow?.status, ORDER_DONE);
        assert.equal(iocRow?.filledValue, 6_000_000_000);
        assert.equal(iocRow?.fees, 40_000);
        assert.equal(iocRow?.feeCoin, 'btc');
        // Bob's bid: 0.5 of 0.6 filled, 0.1 resting: status 3.
        const bid = await store.getOrderByClientId(bob, 'btc_usdt', 'bid1');
        assert.equal(bid?.id, buy.orderId);
        assert.equal(bid?.status, ORDER_PARTIAL);
        assert.equal(bid?.filled, 5_000);
        assert.equal(bid?.updated, T0 + 3_000);
        // Not hers, not this market: no order.
        assert.equal(await store.getOrder(bob, 'btc_usdt', sell.orderId as number), undefined);
        assert.equal(await store.getOrder(alice, 'eth_usdt', sell.orderId as number), undefined);

        const trades = await store.trades('btc_usdt');
        assert.deepEqual(
          trades.map((t) => [t.id, t.price, t.amount, t.value, t.takerSide, t.time]),
          [
            [1, 3_000_000, 2_000, 6_000_000_000, BUY, T0 + 2_000],
            [2, 3_000_000, 5_000, 15_000_000_000, BUY, T0 + 3_000],
          ],
        );

        // Alice's bills: deposit, then per fill a BTC sell, a USDT sell and a USDT sell fee.
        const bills = await store.bills(alice, { pageSize: 50 });
        assert.equal(bills.total, 7);
        assert.deepEqual(bills.rows.map((b) => [b.coin, b.billType, b.change, b.balance]).reverse(), [
          ['btc', 'deposit', 100_000_000, 100_000_000],
          ['btc', 'sell', -20_000_000, 80_000_000],
          ['usdt', 'sell', 6_000_000_000, 6_000_000_000],
          ['usdt', 'sellFee', -12_000_000, 5_988_000_000],
          ['btc', 'sell', -50_000_000, 30_000_000],
          ['usdt', 'sell', 15_000_000_000, 20_988_000_000],
          ['usdt', 'sellFee', -30_000_000, 20_958_000_000],
        ]);
        const usdt = await store.bills(alice, { coin: 'usdt', pageSize: 10 });
        assert.equal(usdt.total, 4);
        assert.deepEqual(
          usdt.rows.map((b) => b.billType),
          ['sellFee', 'sell', 'sellFee', 'sell'],
        );
        // Bill ids are seq × 2^20 + the event's index among the command's events.
        const first = bills.rows.at(-1) as BillRow;
        const depositSeq =
          rec.entries.findIndex((e) => e.events.some((x) => x.type === 'DepositUpdated')) + 1;
        const depositEntry = rec.entries[depositSeq - 1] as HistoryEntry;
        assert.equal(
          first.id,
          depositSeq * 2 ** 20 + depositEntry.events.findIndex((x) => x.type === 'BalanceChanged'),
        );
        const deposits = await store.deposits(alice);
        assert.equal(deposits.total, 1);
        assert.deepEqual(
          deposits.rows.map((d) => [d.depositId, d.coin, d.amount, d.status]),
          [[`genesis-${alice}-btc`, 'btc', 100_000_000, 'credited']],
        );
      }));

    it('lists orders newest first, filtered by status and side, in pages', () =>
      withStore(async (store) => {
        const rec = new EngineRecorder(T0);
        const alice = rec.fundedUser('alice', { btc: 1_000_000_000, usdt: 1_000_000_000_000 });
        const bob = rec.fundedUser('bob', { btc: 1_000_000_000, usdt: 1_000_000_000_000 });
        const place = (
          userId: number,
          side: 0 | 1,
          price: number,
          lots: number,
          kind: 'limit' | 'ioc' = 'limit',
        ) => rec.place(userId, 'btc_usdt', side, kind, price, lots, rec.time + 1_000).orderId as number;
        const cancel = (orderId: number) => rec.cancel(alice, 'btc_usdt', orderId, rec.time + 1_000);
        const a1 = place(alice, BUY, 2_900_000, 100); // rests untouched: 0
        const a2 = place(alice, SELL, 3_100_000, 100); // filled 40, then the other 60: 2
        const a3 = place(alice, SELL, 3_200_000, 100); // cancelled untouched: 1
        const a4 = place(alice, SELL, 3_300_000, 100); // filled 40, then cancelled: 2
        const a5 = place(alice, BUY, 3_000_000, 100, 'ioc'); // nothing to take: 1
        place(bob, BUY, 3_100_000, 40);
        cancel(a3);
        place(bob, BUY, 3_300_000, 100);
        cancel(a4);
        const a6 = place(alice, SELL, 3_400_000, 100); // filled 10, resting: 3
        place(bob, BUY, 3_400_000, 10);
        await store.applyBatch(rec.entries);

        const ids = async (status: OrderStatusFilter, side?: 0 | 1) =>
          (await store.listOrders(alice, 'btc_usdt', { status, side, pageSize: 100 })).map((o) => o.id);
        assert.deepEqual(await ids('all'), [a6, a5, a4, a3, a2, a1]);
        assert.deepEqual(await ids('all', BUY), [a5, a1]);
        assert.deepEqual(await ids('all', SELL), [a6, a4, a3, a2]);
        assert.deepEqual(await ids('open'), [a6, a1]);
        assert.deepEqual(await ids('open', SELL), [a6]);
        assert.deepEqual(await ids('finished'), [a5, a4, a3, a2]);
        assert.deepEqual(await ids('finished', BUY), [a5]);
        // Orders that traded: done (a2), cancelled after a partial fill (a4), partly filled (a6).
        assert.deepEqual(await ids('finishedAndPartial'), [a6, a4, a2]);
        assert.deepEqual(await ids('finishedAndPartial', SELL), [a6, a4, a2]);
        assert.deepEqual(await ids('finishedAndPartial', BUY), []);
        // By account (issue 14): every order here is spot.
        const ofAccount = async (acctType: 0 | 1 | 2, status: OrderStatusFilter = 'all') =>
          (await store.listOrders(alice, 'btc_usdt', { status, acctType, pageSize: 100 })).map((o) => o.id);
        assert.deepEqual(await ofAccount(0), [a6, a5, a4, a3, a2, a1]);
        assert.deepEqual(await ofAccount(0, 'open'), [a6, a1]);
        assert.deepEqual(await ofAccount(1), []);
        assert.deepEqual(await ofAccount(2, 'finished'), []);
        const rows = new Map(
          (await store.listOrders(alice, 'btc_usdt', { pageSize: 100 })).map((o) => [o.id, o]),
        );
        assert.deepEqual(
          [a1, a2, a3, a4, a5, a6].map((id) => [
            rows.get(id)?.status,
            rows.get(id)?.filled,
            rows.get(id)?.cancelReason,
          ]),
          [
            [ORDER_PENDING, 0, null],
            [ORDER_DONE, 100, null],
            [ORDER_CANCELLED, 0, 'user'],
            [ORDER_DONE, 40, 'user'],
            [ORDER_CANCELLED, 0, 'ioc'],
            [ORDER_PARTIAL, 10, null],
          ],
        );
        // Pages of 2: newest first, no overlap, nothing lost.
        const pages = [];
        for (let p = 1; p <= 4; p++)
          pages.push(
            (await store.listOrders(alice, 'btc_usdt', { pageIndex: p, pageSize: 2 })).map((o) => o.id),
          );
        assert.deepEqual(pages, [[a6, a5], [a4, a3], [a2, a1], []]);
        assert.deepEqual(await store.listOrders(bob, 'eth_usdt'), []);
      }));

    it('getOrderByClientId returns the latest order with that id', () =>
      withStore(async (store) => {
        const rec = new EngineRecorder(T0);
        const alice = rec.fundedUser('alice', { usdt: 1_000_000_000_000 });
        const place = (market: string, clientOrderId: string) =>
          rec.place(alice, market, BUY, 'limit', 100_000, 1_000, rec.time + 1, clientOrderId)
            .orderId as number;
        const first = place('btc_usdt', 'myid42');
        rec.cancel(alice, 'btc_usdt', 0, rec.time + 1, 'myid42');
        const second = place('btc_usdt', 'myid42');
        const other = place('eth_usdt', 'myid42');
        // The two halves of the stream in separate batches: the latest wins across batches too.
        const half = rec.entries.findIndex((e) =>
          e.events.some((x) => x.type === 'OrderAccepted' && x.orderId === second),
        );
        await store.applyBatch(rec.entries.slice(0, half));
        assert.equal((await store.getOrderByClientId(alice, 'btc_usdt', 'myid42'))?.id, first);
        await store.applyBatch(rec.entries.slice(half));
        const latest = await store.getOrderByClientId(alice, 'btc_usdt', 'myid42');
        assert.equal(latest?.id, second);
        assert.equal(latest?.status, ORDER_PENDING);
        assert.equal((await store.getOrder(alice, 'btc_usdt', first))?.status, ORDER_CANCELLED);
        assert.equal((await store.getOrderByClientId(alice, 'eth_usdt', 'myid42'))?.id, other);
        assert.equal(await store.getOrderByClientId(alice, 'btc_usdt', 'nope'), undefined);
        assert.equal(await store.getOrderByClientId(alice + 1, 'btc_usdt', 'myid42'), undefined);
        assert.equal(await store.getOrderByClientId(alice, 'btc_usdt', ''), undefined);
      }));

    it('trades: the latest 50, or the ones after a trade id, ascending', () =>
      withStore(async (store) => {
        const { s, ref } = sharedStream();
        await applyAll(store, split(s.recorder.entries, [1000]));
        for (const market of MARKETS) {
          const all = ref.trades.filter((t) => t.market === market);
          assert.ok(all.length > 60 || market !== 'btc_usdt', 'the stream trades enough');
          assert.deepEqual(await store.trades(market), all.slice(-50));
          assert.deepEqual(await store.trades(market, { limit: 7 }), all.slice(-7));
          const mid = all[Math.floor(all.length / 3)];
          if (mid !== undefined) {
            const after = all.filter((t) => t.id > mid.id);
            assert.deepEqual(await store.trades(market, { sinceTradeId: mid.id }), after.slice(0, 50));
            assert.deepEqual(
              await store.trades(market, { sinceTradeId: mid.id, limit: 3 }),
              after.slice(0, 3),
            );
          }
          const last = all.at(-1);
          if (last !== undefined) assert.deepEqual(await store.trades(market, { sinceTradeId: last.id }), []);
        }
      }));

    it('venue trades: every market’s newest first, by market, by user (taker or maker), by time range, paged', () =>
      withStore(async (store) => {
        const { s, ref } = sharedStream();
        await applyAll(store, split(s.recorder.entries, [1000]));
        const newest = [...ref.trades].sort((a, b) => b.id - a.id);
        assert.ok(newest.length > 100, 'the stream trades enough');
        const user = (newest[10] as TradeRow).makerUserId;
        const times = newest.map((t) => t.time);
        const mid = times[Math.floor(times.length / 2)] as number;
        const early = times[Math.floor((times.length * 4) / 5)] as number;
        const cases: { market?: string; userId?: number; fromTime?: number; toTime?: number }[] = [
          {},
          { market: 'btc_usdt' },
          { userId: user },
          { userId: user, market: 'btc_usdt' },
          { fromTime: mid },
          { toTime: mid },
          { fromTime: early, toTime: mid, market: 'btc_usdt' },
          { fromTime: early, toTime: mid, userId: user },
          { fromTime: mid, toTime: early },
          { market: 'nope_usdt' },
          { userId: 987_654 },
          { fromTime: (times[0] as number) + 1 },
        ];
        for (const filter of cases) {
          const expected = newest.filter(
            (t) =>
              (filter.market === undefined || t.market === filter.market) &&
              (filter.userId === undefined ||
                t.takerUserId === filter.userId ||
                t.makerUserId === filter.userId) &&
              t.time >= (filter.fromTime ?? Number.MIN_SAFE_INTEGER) &&
              t.time <= (filter.toTime ?? Number.MAX_SAFE_INTEGER),
          );
          for (const [limit, offset] of [
            [1000, 0],
            [7, 0],
            [7, 13],
            [25, expected.length - 3],
          ] as const) {
            if (offset < 0) continue;
            const got = await store.venueTrades({ ...filter, limit, offset });
            const what = `${JSON.stringify(filter)} ${limit}@${offset}`;
            assert.equal(got.total, expected.length, what);
            assert.equal(got.capped, false, what);
            assert.deepEqual(got.rows, expected.slice(offset, offset + limit), what);
          }
        }
        await assert.rejects(store.venueTrades({ limit: 0, offset: 0 }), RangeError);
        await assert.rejects(store.venueTrades({ limit: 1001, offset: 0 }), RangeError);
        await assert.rejects(store.venueTrades({ limit: 10, offset: 9_991 }), RangeError);
      }));

    it('klines: OHLCV by bucket, UTC, weeks from Monday, across bucket boundaries', () =>
      withStore(async (store) => {
        const rec = new EngineRecorder(T0 - DAY);
        const alice = rec.fundedUser('alice', { btc: 100_000_000 });
        const bob = rec.fundedUser('bob', { usdt: 1_000_000_000_000 });
        trade(rec, alice, bob, T0 - 1, 3_000_000, 10); // a: Sunday 23:59:59.999
        trade(rec, alice, bob, T0, 3_010_000, 20); // b: Monday 00:00
        trade(rec, alice, bob, T0 + MINUTE - 1, 2_990_000, 30); // c
        // d: one taker sweeping two makers: two trades in one command, the second closes.
        rec.place(alice, 'btc_usdt', SELL, 'limit', 3_020_000, 40, T0 + MINUTE);
        rec.place(alice, 'btc_usdt', SELL, 'limit', 3_021_000, 5, T0 + MINUTE);
        rec.place(bob, 'btc_usdt', BUY, 'ioc', 3_021_000, 45, T0 + MINUTE);
        trade(rec, alice, bob, T0 + 3 * MINUTE - 1, 3_005_000, 50); // e
        trade(rec, alice, bob, T0 + 3 * MINUTE, 3_001_000, 60); // f
        trade(rec, alice, bob, T0 + 5 * MINUTE, 3_030_000, 70); // g
        trade(rec, alice, bob, T0 + HOUR, 2_980_000, 80); // h
        trade(rec, alice, bob, T0 + 2 * DAY, 3_040_000, 90); // i: Wednesday, a new 3-day bucket
        trade(rec, alice, bob, T0 + 7 * DAY, 3_050_000, 100); // j: next Monday
        // One entry per batch: every bucket is built by merging batch upserts.
        await applyAll(store, split(rec.entries, [1]));

        const expected: Partial<Record<KlineInterval, KlineRow[]>> = {
          '1min': [
            [T0 - MINUTE, 3_000_000, 3_000_000, 3_000_000, 3_000_000, 10],
            [T0, 3_010_000, 3_010_000, 2_990_000, 2_990_000, 50],
            [T0 + MINUTE, 3_020_000, 3_021_000, 3_020_000, 3_021_000, 45],
            [T0 + 2 * MINUTE, 3_005_000, 3_005_000, 3_005_000, 3_005_000, 50],
            [T0 + 3 * MINUTE, 3_001_000, 3_001_000, 3_001_000, 3_001_000, 60],
            [T0 + 5 * MINUTE, 3_030_000, 3_030_000, 3_030_000, 3_030_000, 70],
            [T0 + HOUR, 2_980_000, 2_980_000, 2_980_000, 2_980_000, 80],
            [T0 + 2 * DAY, 3_040_000, 3_040_000, 3_040_000, 3_040_000, 90],
            [T0 + 7 * DAY, 3_050_000, 3_050_000, 3_050_000, 3_050_000, 100],
          ],
          '3min': [
            [T0 - 3 * MINUTE, 3_000_000, 3_000_000, 3_000_000, 3_000_000, 10],
            [T0, 3_010_000, 3_021_000, 2_990_000, 3_005_000, 145],
            // f and g: 5 minutes is inside [3, 6).
            [T0 + 3 * MINUTE, 3_001_000, 3_030_000, 3_001_000, 3_030_000, 130],
            [T0 + HOUR, 2_980_000, 2_980_000, 2_980_000, 2_980_000, 80],
            [T0 + 2 * DAY, 3_040_000, 3_040_000, 3_040_000, 3_040_000, 90],
            [T0 + 7 * DAY, 3_050_000, 3_050_000, 3_050_000, 3_050_000, 100],
          ],
          '1hour': [
            [T0 - HOUR, 3_000_000, 3_000_000, 3_000_000, 3_000_000, 10],
            [T0, 3_010_000, 3_030_000, 2_990_000, 3_030_000, 275],
            [T0 + HOUR, 2_980_000, 2_980_000, 2_980_000, 2_980_000, 80],
            [T0 + 2 * DAY, 3_040_000, 3_040_000, 3_040_000, 3_040_000, 90],
            [T0 + 7 * DAY, 3_050_000, 3_050_000, 3_050_000, 3_050_000, 100],
          ],
          '1day': [
            [T0 - DAY, 3_000_000, 3_000_000, 3_000_000, 3_000_000, 10],
            [T0, 3_010_000, 3_030_000, 2_980_000, 2_980_000, 355],
            [T0 + 2 * DAY, 3_040_000, 3_040_000, 3_040_000, 3_040_000, 90],
            [T0 + 7 * DAY, 3_050_000, 3_050_000, 3_050_000, 3_050_000, 100],
          ],
          // Three-day buckets count from 1970-01-01: 2023-12-31, 2024-01-03, 2024-01-06, …
          '3day': [
            [T0 - DAY, 3_000_000, 3_030_000, 2_980_000, 2_980_000, 365],
            [T0 + 2 * DAY, 3_040_000, 3_040_000, 3_040_000, 3_040_000, 90],
            [T0 + 5 * DAY, 3_050_000, 3_050_000, 3_050_000, 3_050_000, 100],
          ],
          '1week': [
            [T0 - 7 * DAY, 3_000_000, 3_000_000, 3_000_000, 3_000_000, 10],
            [T0, 3_010_000, 3_040_000, 2_980_000, 3_040_000, 445],
            [T0 + 7 * DAY, 3_050_000, 3_050_000, 3_050_000, 3_050_000, 100],
          ],
        };
        for (const [interval, rows] of Object.entries(expected) as [KlineInterval, KlineRow[]][]) {
          assert.deepEqual(await store.klines('btc_usdt', interval), rows, interval);
        }
        // The latest `size` rows, ascending; with `since`, the first rows starting at or after it.
        assert.deepEqual(await store.klines('btc_usdt', '1min', { size: 2 }), expected['1min']?.slice(-2));
        assert.deepEqual(
          await store.klines('btc_usdt', '1min', { since: T0, size: 2 }),
          expected['1min']?.slice(1, 3),
        );
        assert.deepEqual(
          await store.klines('btc_usdt', '1min', { since: T0 + 1 }),
          expected['1min']?.slice(2),
        );
        assert.deepEqual(await store.klines('eth_usdt', '1min'), []);
        // Every interval agrees with the naive reference, however the entries were batched.
        const ref = new ReferenceHistory(rec.entries);
        for (const interval of KLINE_INTERVALS) {
          assert.deepEqual(
            await store.klines('btc_usdt', interval),
            ref.klines('btc_usdt', interval),
            interval,
          );
        }
      }));

    it('margin bills (issue 14): kept apart from spot bills, by account kind, market and coin', () =>
      withStore(async (store) => {
        const rec = new EngineRecorder(T0);
        const alice = rec.fundedUser('alice', { usdt: 10_000_000_000 });
        const must = (cmd: Parameters<typeof rec.apply>[0]): void => {
          const r = rec.apply(cmd, rec.time + 1_000);
          assert.equal(r.result, 'OK', r.message);
        };
        must({
          type: 'FundLendingPool',
          fundingId: 'p',
          coin: 'usdt',
          amount: 100_000_000_000,
          dailyRatePpm: 500,
          days: 10,
        });
        const transfer = (acctType: 1 | 2, market: string, amount: number) =>
          must({
            type: 'MarginTransfer',
            userId: alice,
            direction: 'in',
            acctType,
            market,
            coin: 'usdt',
            amount,
          });
        transfer(1, 'btc_usdt', 1_000_000_000);
        transfer(1, 'eth_usdt', 2_000_000_000);
        transfer(2, '', 3_000_000_000);
        must({
          type: 'Borrow',
          userId: alice,
          acctType: 1,
          market: 'btc_usdt',
          coin: 'usdt',
          amount: 500_000_000,
          rollOver: false,
        });
        await store.applyBatch(rec.entries);
        const kinds = async (q: Parameters<HistoryStore['marginBills']>[1]) =>
          (await store.marginBills(alice, q)).rows.map((b) => [b.market, b.billType, b.change]);
        assert.deepEqual(await kinds({ acctType: 1, market: 'btc_usdt' }), [
          ['btc_usdt', 'borrow', 500_000_000],
          ['btc_usdt', 'toMargin', 1_000_000_000],
        ]);
        assert.deepEqual(await kinds({ acctType: 1, market: 'eth_usdt', coin: 'usdt' }), [
          ['eth_usdt', 'toMargin', 2_000_000_000],
        ]);
        assert.equal((await store.marginBills(alice, { acctType: 1 })).total, 3);
        assert.deepEqual(await kinds({ acctType: 2 }), [['', 'toMargin', 3_000_000_000]]);
        assert.deepEqual(await kinds({ acctType: 2, coin: 'btc' }), []);
        // The spot side only among the spot bills.
        const spot = (await store.bills(alice, { pageSize: 50 })).rows.map((b) => [b.billType, b.change]);
        assert.deepEqual(spot.slice(0, 3), [
          ['toMargin', -3_000_000_000],
          ['toMargin', -2_000_000_000],
          ['toMargin', -1_000_000_000],
        ]);
      }));

    it('closed loan records and repayments (issue 29): the engine keeps open ones, the store the rest', () =>
      withStore(async (store) => {
        const rec = new EngineRecorder(T0);
        const alice = rec.fundedUser('alice', { usdt: 100_000_000_000 });
        const bob = rec.fundedUser('bob', { usdt: 100_000_000_000 });
        const must = (cmd: Parameters<typeof rec.apply>[0], at = rec.time + 1_000) => {
          const r = rec.apply(cmd, at);
          assert.equal(r.result, 'OK', `${cmd.type}: ${r.message ?? ''}`);
          return r;
        };
        must({
          type: 'FundLendingPool',
          fundingId: 'p',
          coin: 'usdt',
          amount: 50_000_000_000,
          dailyRatePpm: 700,
          days: 10,
        });
        // Bob's offer is the cheaper: borrows take it first, then the pool's.
        const offer = must({
          type: 'PlaceLoanOffer',
          userId: bob,
          coin: 'usdt',
          amount: 3_000_000_000,
          dailyRatePpm: 500,
          days: 10,
          loop: true,
        }).offerId as number;
        for (const [acctType, market] of [
          [1, 'btc_usdt'],
          [2, ''],
        ] as const)
          must({
            type: 'MarginTransfer',
            userId: alice,
            direction: 'in',
            acctType,
            market,
            coin: 'usdt',
            amount: 10_000_000_000,
          });
        // Many cycles: borrow (from bob and the pool), an hour, part repaid, then the rest.
        const CYCLES = 40;
        for (let i = 0; i < CYCLES; i++) {
          const acctType = i % 2 === 0 ? 1 : 2;
          const market = acctType === 1 ? 'btc_usdt' : '';
          const loanIds = must({
            type: 'Borrow',
            userId: alice,
            acctType,
            market,
            coin: 'usdt',
            amount: 4_000_000_000,
            rollOver: false,
          }).loanIds as number[];
          must({ type: 'FireTimers' }, rec.time + HOUR);
          must({ type: 'RepayLoan', userId: alice, loanId: loanIds[0] as number, amount: 1_000_000_000 });
          if (i < CYCLES - 1)
            must({ type: 'RepayAll', userId: alice, acctType, market, coin: 'usdt', amount: 'all' });
        }
        // The engine holds the last cycle's records only; its snapshot no closed record, no repayment.
        const open = [...rec.engine.margin.openLoans()];
        assert.equal(open.length, 2);
        const snapshot = rec.engine.snapshot() as unknown as {
          margin: { loans: { loans: unknown[] }; repayments?: unknown };
        };
        assert.equal(snapshot.margin.loans.loans.length, 2);
        assert.equal(snapshot.margin.repayments, undefined);
        // What the events said, the reference.
        const closed = new Map<number, LoanRecord>();
        const paid: RepaymentRecord[] = [];
        for (const e of rec.entries.flatMap((x) => x.events)) {
          if (e.type === 'LoanClosed') closed.set(e.loan.id, e.loan);
          if (e.type === 'LoanRepaid') paid.push(e.repayment);
        }
        assert.equal(closed.size, 2 * (CYCLES - 1));
        assert.ok(paid.length >= 3 * (CYCLES - 1), `${paid.length} repayments`);
        await applyAll(store, split(rec.entries, [7, 1, 30]));
        const newest = (xs: Iterable<LoanRecord>): LoanRecord[] => [...xs].sort((a, b) => b.id - a.id);
        const all = newest(closed.values());
        for (const l of all) assert.deepEqual(await store.closedLoan(l.id), l);
        for (const l of open)
          assert.equal(await store.closedLoan(l.id), undefined, 'an open record is not there');
        assert.deepEqual(await store.loansBorrowed(alice, { limit: 1000 }), all);
        assert.deepEqual(await store.loansBorrowed(alice, { limit: 5 }), all.slice(0, 5));
        assert.deepEqual(
          await store.loansBorrowed(alice, { acctType: 1, market: 'btc_usdt', limit: 1000 }),
          all.filter((l) => l.borrower.kind === 'isolated'),
        );
        assert.deepEqual(
          await store.loansBorrowed(alice, { acctType: 2, status: 2, limit: 1000 }),
          all.filter((l) => l.borrower.kind === 'cross' && l.status === 2),
        );
        assert.deepEqual(
          await store.loansBorrowed(alice, { acctType: 1, market: 'eth_usdt', limit: 10 }),
          [],
        );
        assert.deepEqual(await store.loansBorrowed(bob, { limit: 10 }), []);
        assert.deepEqual(
          await store.loansLent(bob, { offerId: offer, limit: 1000 }),
          all.filter((l) => l.lender.kind === 'spot'),
        );
        assert.deepEqual(
          await store.loansLent(0, { coin: 'usdt', limit: 1000 }),
          all.filter((l) => l.lender.kind === 'system'),
        );
        assert.deepEqual(await store.loansLent(bob, { coin: 'btc', limit: 10 }), []);
        const byId = [...paid].sort((a, b) => b.id - a.id);
        assert.deepEqual(await store.repayments(alice, { limit: 10_000 }), byId);
        assert.deepEqual(
          await store.repayments(alice, { acctType: 2, coin: 'usdt', limit: 10_000 }),
          byId.filter((r) => r.borrower.kind === 'cross'),
        );
        assert.deepEqual(
          await store.repayments(alice, { acctType: 1, market: 'btc_usdt', limit: 3 }),
          byId.filter((r) => r.borrower.kind === 'isolated').slice(0, 3),
        );
        for (const l of [...all.slice(0, 3), ...open])
          assert.deepEqual(
            await store.loanRepayments(l.id),
            paid.filter((r) => r.loanId === l.id),
          );
        // Rebuilt from the journal's entries one at a time: the same rows.
        const other = await createStore();
        try {
          await applyAll(other, split(rec.entries, [1]));
          assert.deepEqual(await other.loansBorrowed(alice, { limit: 1000 }), all);
          assert.deepEqual(await other.repayments(alice, { limit: 10_000 }), byId);
        } finally {
          await other.close();
        }
        await assert.rejects(store.loansBorrowed(alice, { limit: 0 }), RangeError);
        await assert.rejects(store.repayments(alice, { limit: 1.5 }), RangeError);
      }));

    it('bills: one per change of the total (and per withdrawal released), newest first, filtered, and they add up to the balances', () =>
      withStore(async (store) => {
        const { s, ref } = sharedStream();
        await applyAll(store, split(s.recorder.entries, [1000]));
        const engine = s.recorder.engine;
        for (const user of s.users) {
          const all = (await store.bills(user, { pageSize: 1000 })).rows;
          assert.deepEqual(all, ref.billsOf(user).slice(0, 1000));
          // Only a withdrawal's release (cancelled or failed) is a bill of change 0.
          assert.ok(
            all.every(
              (b) => b.change !== 0 || b.billType === 'withdrawCancelled' || b.billType === 'withdrawFailed',
            ),
          );
          // Summed per coin, the bills give the engine's balance; the running sum gives each row's balance.
          for (const coin of COINS) {
            let running = 0;
            const rows = ref.billsOf(user, coin).reverse();
            for (const b of rows) {
              running += b.change;
              assert.equal(b.balance, running, `user ${user} ${coin} bill ${b.id}`);
            }
            const bal = engine.balance(user, coin) as { available: number; frozen: number };
            assert.equal(running, bal.available + bal.frozen, `user ${user} ${coin}`);
            const page = await store.bills(user, { coin, pageIndex: 2, pageSize: 10 });
            assert.equal(page.total, rows.length);
            assert.deepEqual(page.rows, ref.billsOf(user, coin).slice(10, 20));
          }
        }
        // A time window, inclusive at both ends.
        const user = s.users[0] as number;
        const times = ref.billsOf(user).map((b) => b.time);
        const from = times[Math.floor(times.length * 0.7)] as number;
        const to = times[Math.floor(times.length * 0.3)] as number;
        const window = await store.bills(user, { startTime: from, endTime: to, pageSize: 1000 });
        assert.deepEqual(window.rows, ref.billsOf(user, undefined, from, to));
        assert.equal(window.total, ref.billsOf(user, undefined, from, to).length);
        assert.ok(window.rows.some((b) => b.time === from) && window.rows.some((b) => b.time === to));
        const usdt = await store.bills(user, { coin: 'usdt', startTime: from, pageSize: 5, pageIndex: 3 });
        assert.deepEqual(usdt.rows, ref.billsOf(user, 'usdt', from).slice(10, 15));
        assert.equal(usdt.total, ref.billsOf(user, 'usdt', from).length);
      }));

    it('deposits and withdrawals: records and steps, states with reasons and times, newest first', () =>
      withStore(async (store) => {
        const rec = new EngineRecorder(T0);
        const alice = rec.fundedUser('alice', { btc: 100_000_000, usdt: 500_000_000 });
        const ok = (cmd: Command, time = rec.time + 1_000): string | undefined => {
          const r = rec.apply(cmd, time);
          assert.equal(r.result, 'OK', `${cmd.type}: ${r.message ?? ''}`);
          return r.withdrawalId;
        };
        ok({ type: 'SetFundPassword', userId: alice, hash: 'h' });
        for (const [coin, chain, address] of [
          ['btc', 'BTC', 'bc1qexternal'],
          ['usdt', 'TRC20', 'Texternal'],
        ] as const) {
          ok({ type: 'AddWithdrawAddress', userId: alice, coin, chain, address });
          ok({ type: 'VerifyWithdrawAddress', userId: alice, coin, address });
        }
        const request = (coin: string, address: string, amount: number, fee: number): string =>
          ok({
            type: 'RequestWithdrawal',
            userId: alice,
            coin,
            address,
            amount,
            fee,
            itransfer: false,
          }) as string;
        const w1 = request('btc', 'bc1qexternal', 10_000_000, 50_000);
        const w2 = request('btc', 'bc1qexternal', 20_000_000, 50_000);
        const w3 = request('usdt', 'Texternal', 20_000_000, 1_000_000);
        await store.applyBatch(rec.entries);
        const submitted = rec.time;
        ok({ type: 'SendWithdrawal', withdrawalId: w1 }, T0 + 60_000);
        ok({ type: 'MarkWithdrawalSent', withdrawalId: w1, txHash: 'feedfeedfeedfeed' }, T0 + 60_001);
        ok({ type: 'ConfirmWithdrawal', withdrawalId: w1, confirmations: 2 }, T0 + 60_002);
        ok({ type: 'CancelWithdrawal', withdrawalId: w2, userId: alice }, T0 + 61_000);
        const w4 = request('btc', 'bc1qexternal', 5_000_000, 50_000);
        ok({ type: 'SendWithdrawal', withdrawalId: w4 }, T0 + 80_000);
        ok({ type: 'FailWithdrawal', withdrawalId: w4, reason: 'could not be broadcast' }, T0 + 90_000);
        // A repeated confirmation is a duplicate: no events, nothing changes.
        assert.equal(
          rec.apply({ type: 'ConfirmWithdrawal', withdrawalId: w1, confirmations: 2 }).duplicate,
          true,
        );
        ok(
          { type: 'CreditDeposit', depositId: 'tx-9', userId: alice, coin: 'btc', amount: 7, remark: '' },
          T0 + 100_000,
        );
        ok({
          type: 'AssignDepositAddress',
          userId: alice,
          coin: 'btc',
          chain: 'BTC',
          address: 'bc1qalice',
          memo: '',
        });
        const seen = {
          type: 'ReportDeposit',
          coin: 'btc',
          chain: 'BTC',
          txHash: 'abcdef0123456789',
          output: 1,
          address: 'bc1qalice',
          memo: '',
          amount: 300_000,
          confirmations: 0,
          failed: false,
        } as const;
        ok(seen, T0 + 110_000);
        await store.applyBatch(rec.entries);
        // The credit comes in a later batch: the stored record is updated in place.
        ok({ ...seen, confirmations: 2 }, T0 + 120_000);
        await store.applyBatch(rec.entries);

        const w = await store.withdrawals(alice, { pageSize: 10 });
        assert.equal(w.total, 4);
        assert.deepEqual(
          w.rows.map((x) => [
            x.withdrawalId,
            x.coin,
            x.chain,
            x.amount,
            x.fee,
            x.status,
            x.reason,
            x.manageTime,
          ]),
          [
            [w4, 'btc', 'BTC', 5_000_000, 50_000, 'failed', 'could not be broadcast', T0 + 90_000],
            [w3, 'usdt', 'TRC20', 20_000_000, 1_000_000, 'approved', '', submitted],
            [w2, 'btc', 'BTC', 20_000_000, 50_000, 'cancelled', 'cancelled by the user', T0 + 61_000],
            [w1, 'btc', 'BTC', 10_000_000, 50_000, 'succeeded', '', T0 + 60_002],
          ],
        );
        const first = w.rows[3] as WithdrawalRow;
        assert.deepEqual(
          [first.txHash, first.confirmations, first.address, first.itransfer],
          ['feedfeedfeedfeed', 2, 'bc1qexternal', false],
        );
        assert.equal((w.rows[1] as WithdrawalRow).submitTime, submitted);
        assert.deepEqual(
          (await store.withdrawalSteps(w1)).map((x) => [x.status, x.confirmations, x.txHash, x.time]),
          [
            ['approved', 0, '', (w.rows[3] as WithdrawalRow).submitTime],
            ['sending', 0, '', T0 + 60_000],
            ['sent', 0, 'feedfeedfeedfeed', T0 + 60_001],
            ['succeeded', 2, 'feedfeedfeedfeed', T0 + 60_002],
          ],
        );
        assert.deepEqual(await store.withdrawalSteps('404'), []);
        assert.deepEqual(
          (await store.withdrawals(alice, { coin: 'btc', pageIndex: 2, pageSize: 2 })).rows.map(
            (x) => x.withdrawalId,
          ),
          [w1],
        );
        assert.equal((await store.withdrawals(alice, { coin: 'usdt' })).total, 1);
        const d = await store.deposits(alice);
        assert.deepEqual(
          d.rows.map((x) => [x.depositId, x.coin, x.amount, x.status, x.confirmations, x.time, x.updated]),
          [
            ['chain:btc/BTC/abcdef0123456789/1', 'btc', 300_000, 'credited', 2, T0 + 110_000, T0 + 120_000],
            ['tx-9', 'btc', 7, 'credited', 0, T0 + 100_000, T0 + 100_000],
            [`genesis-${alice}-usdt`, 'usdt', 500_000_000, 'credited', 0, T0, T0],
            [`genesis-${alice}-btc`, 'btc', 100_000_000, 'credited', 0, T0, T0],
          ],
        );
        const chain = d.rows[0] as DepositRow;
        assert.deepEqual(
          [chain.chain, chain.txHash, chain.address, chain.itransfer],
          ['BTC', 'abcdef0123456789', 'bc1qalice', false],
        );
        assert.equal((await store.deposits(alice, { coin: 'btc' })).total, 3);
        assert.equal((await store.deposits(alice + 1)).total, 0);
        // Success moves the total (withdraw, withdrawFee bills); freezing and releasing do not,
        // but the release of a cancelled or failed withdrawal is a bill of change 0 (issue 33).
        const bills = await store.bills(alice, { coin: 'btc', pageSize: 50 });
        assert.deepEqual(
          bills.rows.map((b) => [b.billType, b.change, b.ref]),
          [
            ['deposit', 300_000, 'chain:btc/BTC/abcdef0123456789/1'],
            ['deposit', 7, 'tx-9'],
            ['withdrawFailed', 0, w4],
            ['withdrawCancelled', 0, w2],
            ['withdrawFee', -50_000, w1],
            ['withdraw', -10_000_000, w1],
            ['deposit', 100_000_000, `genesis-${alice}-btc`],
          ],
        );
      }));

    it('matches a naive reference on a seeded trading stream (orders, filters, paging)', () =>
      withStore(async (store) => {
        const { s, ref } = sharedStream();
        await applyAll(store, split(s.recorder.entries, [1000]));
        const engine = s.recorder.engine;
        const statuses: OrderStatusFilter[] = ['all', 'open', 'finished', 'finishedAndPartial'];
        for (const user of s.users) {
          for (const market of MARKETS) {
            for (const status of statuses) {
              for (const side of [undefined, BUY, SELL] as const) {
                for (const [pageIndex, pageSize] of [
                  [1, 1000],
                  [1, 7],
                  [3, 7],
                ] as const) {
                  assert.deepEqual(
                    await store.listOrders(user, market, { status, side, pageIndex, pageSize }),
                    ref.listOrders(user, market, status, side, pageIndex, pageSize),
                    `user ${user} ${market} ${status} ${String(side)} page ${pageIndex}/${pageSize}`,
                  );
                }
              }
            }
            // Open orders agree with the engine's live view.
            const open = await store.listOrders(user, market, { status: 'open', pageSize: 1000 });
            const live = engine.openOrders(user, market).reverse();
            assert.deepEqual(
              open.map((o) => [
                o.id,
                o.status,
                o.filled,
                o.filledValue,
                o.fees,
                o.platformFees,
                o.clientOrderId,
              ]),
              live.map((o) => [
                o.id,
                o.status,
                o.filled,
                o.filledValue,
                o.fees,
                o.platformFees,
                o.clientOrderId,
              ]),
            );
            for (const o of live) {
              if (o.clientOrderId === '') continue;
              const latest = engine.orderIdForClientId(user, market, o.clientOrderId);
              assert.equal((await store.getOrderByClientId(user, market, o.clientOrderId))?.id, latest);
            }
          }
        }
        for (const o of ref.orders.values()) {
          if (o.id % 7 === 0) assert.deepEqual(await store.getOrder(o.userId, o.market, o.id), o);
        }
        assert.ok(
          [...ref.orders.values()].some((o) => o.platformFees > 0),
          'some fees are paid in zb',
        );
        assert.ok(
          [...ref.orders.values()].some((o) => o.cancelReason === 'deadman'),
          'the dead-man switch fires',
        );
        for (const market of MARKETS) {
          for (const interval of KLINE_INTERVALS) {
            assert.deepEqual(await store.klines(market, interval), ref.klines(market, interval).slice(-1000));
          }
        }
        for (const user of s.users) {
          const w = await store.withdrawals(user, { pageSize: 1000 });
          assert.deepEqual(
            w.rows,
            [...ref.withdrawals.values()].filter((x) => x.userId === user).sort((a, b) => b.id - a.id),
          );
          const d = await store.deposits(user, { pageSize: 1000 });
          assert.deepEqual(
            d.rows,
            [...ref.deposits.values()].filter((x) => x.userId === user).sort((a, b) => b.id - a.id),
          );
          for (const x of w.rows.slice(0, 5)) {
            assert.deepEqual(
              await store.withdrawalSteps(x.withdrawalId),
              ref.steps.filter((step) => step.withdrawalId === x.withdrawalId),
            );
          }
        }
      }));

    it('is idempotent by seq: the same batches again, or overlapping ones, change nothing', () =>
      withStore(async (store) => {
        const { s } = sharedStream();
        const entries = s.recorder.entries;
        const batches = split(entries, [1000]);
        await applyAll(store, batches);
        const before = await dump(store, s.users);
        const last = entries.at(-1) as HistoryEntry;
        assert.equal(await store.checkpoint(), last.seq);
        for (const b of batches) {
          const r = await store.applyBatch(b);
          assert.deepEqual(r, { checkpoint: last.seq, applied: 0, skipped: b.length, rows: 0 });
        }
        assert.deepEqual(await dump(store, s.users), before);
        // Overlaps: each batch re-sends the tail of the one before.
        const other = await createStore();
        try {
          for (let i = 0; i < entries.length; i += 300) {
            const r = await other.applyBatch(entries.slice(Math.max(0, i - 150), i + 300));
            assert.equal(r.skipped, Math.min(i, 150));
          }
          assert.deepEqual(await dump(other, s.users), before);
        } finally {
          await other.close();
        }
      }));

    it('gives the same rows however the entries are split into batches', () =>
      withStore(async (store) => {
        const { s } = sharedStream();
        const entries = s.recorder.entries;
        await store.applyBatch(entries);
        const whole = await dump(store, s.users);
        const random = seededRandom(7);
        const sizes = Array.from({ length: 50 }, () => 1 + Math.floor(random() * 400));
        for (const pattern of [[1], [2, 3, 5], sizes]) {
          const other = await createStore();
          try {
            await applyAll(other, split(entries, pattern));
            assert.deepEqual(
              await dump(other, s.users),
              whole,
              `batch sizes ${pattern.slice(0, 3).join(',')}…`,
            );
          } finally {
            await other.close();
          }
        }
      }));

    it('refuses a batch out of sequence order and changes nothing', () =>
      withStore(async (store) => {
        const rec = new EngineRecorder(T0);
        rec.fundedUser('alice', { btc: 100_000_000, usdt: 1_000_000 });
        const [e1, e2, e3] = rec.entries as [HistoryEntry, HistoryEntry, HistoryEntry];
        await assert.rejects(store.applyBatch([e1, e3, e2]), /out of order/);
        assert.equal(await store.checkpoint(), 0);
        assert.equal((await store.deposits(1)).total, 0);
        await assert.rejects(store.applyBatch([e1, e1]), /out of order/);
        assert.equal(await store.checkpoint(), 0);
        // Entries without events (refused commands) still advance the checkpoint.
        const r = await store.applyBatch([e1, e2, e3, { seq: 10, time: T0, events: [] }]);
        assert.equal(r.checkpoint, 10);
        assert.equal(r.applied, 4);
        assert.equal((await store.deposits(1)).total, 2);
      }));

    it('refuses bad query bounds', () =>
      withStore(async (store) => {
        await assert.rejects(store.listOrders(1, 'btc_usdt', { pageIndex: 0 }), RangeError);
        await assert.rejects(store.listOrders(1, 'btc_usdt', { pageSize: 1001 }), RangeError);
        await assert.rejects(store.bills(1, { pageSize: 0 }), RangeError);
        await assert.rejects(store.deposits(1, { pageIndex: 1.5 }), RangeError);
        await assert.rejects(store.trades('btc_usdt', { limit: 0 }), RangeError);
        await assert.rejects(store.klines('btc_usdt', '1min', { size: 1001 }), RangeError);
      }));
  });
}
