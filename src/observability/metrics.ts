/**
 * @module metrics — the venue's Prometheus metrics (prom-client), served at `/metrics`. Every
 * family is listed in docs/operations.md, "Metrics".
 *
 * Cost on the hot path: per applied batch, one pass over its commands (a count by kind and
 * result, an order's latency into preallocated buckets, the open-order count from the events); per journal flush, two observations. Everything else (gauges, the ws and journal
 * counters, book depth) is read from its owner when scraped. prom-client's default metrics add
 * the process and Node families (CPU, memory, event-loop delay, GC pauses).
 */
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import type { EngineEvent } from '../domain/events.ts';
import type { MarketSpec } from '../domain/specs.ts';
import { BucketHistogram } from './bucket-histogram.ts';
import { OpenOrderCounts } from './open-orders.ts';

/** The commands whose latency is order entry. */
const ORDER_ENTRY_KINDS = new Set(['PlaceOrder', 'PlaceOrderBatch']);

/** Upper bounds of order entry latency, submit → applied (seconds). */
export const LATENCY_BUCKETS_SECONDS = [
  0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5,
] as const;
/** Upper bounds of records per journal flush. */
export const FLUSH_RECORDS_BUCKETS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 16384] as const;
/** Upper bounds of fdatasync time (seconds). */
export const FDATASYNC_BUCKETS_SECONDS = [
  0.0001, 0.00025, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1,
] as const;

/** One applied command as the metrics read it (the sequencer's AppliedCommand is one). */
export interface MeasuredCommand {
  readonly command: { readonly type: string };
  readonly result: { readonly result: string; readonly events: readonly EngineEvent[] };
  readonly submittedAt?: number;
}

/** What the metrics read, each from its owner (structural: main.ts passes the real parts). */
export interface MetricsSources {
  readonly engine: {
    readonly lastSeq: number;
    markets(): readonly MarketSpec[];
    depth(market: string, limit: number): { bids: [number, number][]; asks: [number, number][] } | undefined;
  };
  readonly sequencer: {
    readonly inFlight: number;
    readonly busyRefusals: ReadonlyMap<string, number>;
    readonly lastSnapshot: { readonly seq: number; readonly at: number } | undefined;
  };
  readonly journal: {
    readonly durableSeq: number;
    readonly stats: { readonly bytesWritten: number };
  };
  /** The history store's follower: the last seq written, and its thread's heap when it has one. */
  readonly history: {
    readonly writtenSeq: number;
    heapStatistics?(): Promise<{ used: number; total: number } | undefined>;
  };
  readonly ws?: {
    readonly connections: number;
    readonly accepted: number;
    readonly pushesSent: number;
    readonly repliesSent: number;
    readonly dropped: number;
  };
  readonly rateLimiter?: { readonly size: { readonly locks: number } };
  /** True while `/ready` would answer 200. */
  readonly ready: () => boolean;
  /** The markets of the resting orders at start (an engine snapshot's orders). */
  readonly openOrdersAtStart: Iterable<string>;
  /** The monotonic clock order-entry latency is measured on (default `performance.now`). */
  readonly now?: () => number;
}

export class VenueMetrics {
  readonly registry = new Registry();
  /** Commands applied, by kind then result. */
  readonly #commands = new Map<string, Map<string, number>>();
  readonly #orderEntry: BucketHistogram;
  readonly #flushRecords: BucketHistogram;
  readonly #fdatasync: BucketHistogram;
  readonly #openOrders: OpenOrderCounts;
  readonly #now: () => number;

  constructor(sources: MetricsSources) {
    this.#now = sources.now ?? (() => performance.now());
    this.#openOrders = new OpenOrderCounts(sources.openOrdersAtStart);
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });

    const orderEntry = new BucketHistogram({
      name: 'bourse_order_entry_latency_seconds',
      help: 'Order entry (PlaceOrder, PlaceOrderBatch) from submit to applied: durable in the journal, applied by the engine, reply due',
      bounds: LATENCY_BUCKETS_SECONDS,
    });
    const flushRecords = new BucketHistogram({
      name: 'bourse_journal_flush_records',
      help: 'Records made durable by one journal flush (one write and one fdatasync: the group commit size)',
      bounds: FLUSH_RECORDS_BUCKETS,
    });
    const fdatasync = new BucketHistogram({
      name: 'bourse_journal_fdatasync_seconds',
      help: "Time of one journal flush's fdatasync",
      bounds: FDATASYNC_BUCKETS_SECONDS,
    });
    this.#orderEntry = orderEntry;
    this.#flushRecords = flushRecords;
    this.#fdatasync = fdatasync;
    for (const family of [orderEntry, flushRecords, fdatasync])
      this.registry.registerMetric(family.asMetric());

    const commands = this.#commands;
    new Counter({
      name: 'bourse_commands_total',
      help: 'Commands applied by the engine by kind and result, and commands refused as BUSY before the journal',
      labelNames: ['kind', 'result'],
      registers,
      collect() {
        this.reset();
        for (const [kind, results] of commands) {
          for (const [result, n] of results) this.inc({ kind, result }, n);
        }
        for (const [kind, n] of sources.sequencer.busyRefusals) this.inc({ kind, result: 'BUSY' }, n);
      },
    });
    gauge(
      registers,
      'bourse_commands_in_flight',
      'Commands accepted but not yet durable and applied',
      () => sources.sequencer.inFlight,
    );
    gauge(
      registers,
      'bourse_engine_seq',
      'Sequence number of the last command the engine applied',
      () => sources.engine.lastSeq,
    );
    gauge(
      registers,
      'bourse_journal_durable_seq',
      'Highest sequence number durable in the journal',
      () => sources.journal.durableSeq,
    );
    counter(
      registers,
      'bourse_journal_bytes_total',
      'Bytes the journal wrote (framing included)',
      () => sources.journal.stats.bytesWritten,
    );
    gauge(
      registers,
      'bourse_history_lag_commands',
      'Commands applied by the engine but not yet written to the history store',
      () => Math.max(0, sources.engine.lastSeq - sources.history.writtenSeq),
    );
    gauge(
      registers,
      'bourse_history_written_seq',
      'Last sequence number written to the history store',
      () => sources.history.writtenSeq,
    );
    const historyHeap = sources.history.heapStatistics?.bind(sources.history);
    if (historyHeap !== undefined) {
      new Gauge({
        name: 'bourse_history_thread_heap_bytes',
        help: 'JavaScript heap of the history thread (its engine replica and rounds), in use and committed',
        labelNames: ['kind'],
        registers,
        async collect() {
          const heap = await historyHeap();
          this.reset();
          if (heap === undefined) return;
          this.set({ kind: 'used' }, heap.used);
          this.set({ kind: 'total' }, heap.total);
        },
      });
    }
    gauge(
      registers,
      'bourse_snapshot_last_seq',
      'Sequence number of the last snapshot written since start (0: none yet)',
      () => sources.sequencer.lastSnapshot?.seq ?? 0,
    );
    gauge(
      registers,
      'bourse_snapshot_last_timestamp_seconds',
      'When the last snapshot since start was written (Unix time; 0: none yet)',
      () => (sources.sequencer.lastSnapshot?.at ?? 0) / 1000,
    );
    gauge(registers, 'bourse_ready', '1 while /ready answers 200, else 0', () => (sources.ready() ? 1 : 0));

    const openOrders = this.#openOrders;
    new Gauge({
      name: 'bourse_open_orders',
      help: 'Resting orders, by market',
      labelNames: ['market'],
      registers,
      collect() {
        this.reset();
        for (const m of sources.engine.markets()) this.set({ market: m.name }, openOrders.count(m.name));
      },
    });
    const bookGauge = (
      name: string,
      help: string,
      figure: (levels: [number, number][], m: MarketSpec) => number,
    ) =>
      new Gauge({
        name,
        help,
        labelNames: ['market', 'side'],
        registers,
        collect() {
          this.reset();
          for (const m of sources.engine.markets()) {
            const depth = sources.engine.depth(m.name, Number.MAX_SAFE_INTEGER);
            if (depth === undefined) continue;
            this.set({ market: m.name, side: 'bid' }, figure(depth.bids, m));
            this.set({ market: m.name, side: 'ask' }, figure(depth.asks, m));
          }
        },
      });
    bookGauge(
      'bourse_book_levels',
      'Price levels in the book, by market and side',
      (levels) => levels.length,
    );
    bookGauge(
      'bourse_book_amount',
      'Amount resting in the book, in the base coin, by market and side',
      (levels, m) => levels.reduce((sum, [, lots]) => sum + lots, 0) / 10 ** m.amountScale,
    );

    const ws = sources.ws;
    if (ws !== undefined) {
      gauge(registers, 'bourse_ws_connections', 'Open WebSocket connections', () => ws.connections);
      counter(
        registers,
        'bourse_ws_connections_accepted_total',
        'WebSocket connections accepted',
        () => ws.accepted,
      );
      new Counter({
        name: 'bourse_ws_messages_sent_total',
        help: 'WebSocket messages sent: channel pushes (one per connection) and answers to messages',
        labelNames: ['kind'],
        registers,
        collect() {
          this.reset();
          this.inc({ kind: 'push' }, ws.pushesSent);
          this.inc({ kind: 'reply' }, ws.repliesSent);
        },
      });
      counter(
        registers,
        'bourse_ws_slow_consumers_dropped_total',
        'WebSocket connections dropped for too many unsent bytes',
        () => ws.dropped,
      );
    }
    const limiter = sources.rateLimiter;
    if (limiter !== undefined) {
      gauge(
        registers,
        'bourse_rate_limit_locked_ips',
        'IPs locked by the trade-API rate limit now',
        () => limiter.size.locks,
      );
    }
  }

  /** Takes each applied batch (an applied-feed listener). */
  readonly onApplied = (batch: readonly MeasuredCommand[]): void => {
    const now = this.#now();
    for (const item of batch) {
      const kind = item.command.type;
      let results = this.#commands.get(kind);
      if (results === undefined) this.#commands.set(kind, (results = new Map()));
      const result = item.result.result;
      results.set(result, (results.get(result) ?? 0) + 1);
      if (item.submittedAt !== undefined && ORDER_ENTRY_KINDS.has(kind)) {
        this.#orderEntry.observe((now - item.submittedAt) / 1000);
      }
    }
    this.#openOrders.apply(batch);
  };

  /** Takes each journal flush (a journal `onFlushed` listener). */
  readonly onFlushed = (report: { readonly records: number; readonly syncMs: number }): void => {
    this.#flushRecords.observe(report.records);
    this.#fdatasync.observe(report.syncMs / 1000);
  };

  /** Resting orders over all markets as these metrics count them. */
  get openOrders(): number {
    return this.#openOrders.total;
  }

  /** The exposition text, and its content type. */
  async scrape(): Promise<{ text: string; contentType: string }> {
    return { text: await this.registry.metrics(), contentType: this.registry.contentType };
  }
}

function gauge(registers: Registry[], name: string, help: string, read: () => number): void {
  new Gauge({
    name,
    help,
    registers,
    collect() {
      this.set(read());
    },
  });
}

/** A counter whose owner keeps the running total. */
function counter(registers: Registry[], name: string, help: string, read: () => number): void {
  new Counter({
    name,
    help,
    registers,
    collect() {
      this.reset();
      this.inc(read());
    },
  });
}

type FlushReport = Parameters<VenueMetrics['onFlushed']>[0];

/**
 * The venue's metrics, counting from the next command of `feed` on (the sequencer), and each
 * flush of `journal` when it reports them (the file journal does).
 */
export function followedMetrics(
  sources: MetricsSources,
  feed: { readonly appliedSeq: number; subscribe(from: number, listener: VenueMetrics['onApplied']): void },
  journal: object,
): VenueMetrics {
  const metrics = new VenueMetrics(sources);
  feed.subscribe(feed.appliedSeq + 1, metrics.onApplied);
  if ('onFlushed' in journal && typeof journal.onFlushed === 'function') {
    (journal.onFlushed as (listener: (report: FlushReport) => void) => void)(metrics.onFlushed);
  }
  return metrics;
}
