/**
 * @module history-writer — feeds the history store from applied batches with their events (the
 * replay at start-up and `bourse rebuild-history`; a running venue uses history-follower.ts): a
 * bounded queue drained in store transactions, one at a time, off the engine's path.
 *
 * Batches gather: while fewer than `gatherEntries` are queued, the writer waits `gatherMs` before
 * sending them, so that a steady order flow is written in transactions of hundreds of entries
 * instead of the few dozen of one journal flush. A transaction's fixed cost (BEGIN, COMMIT, the
 * WAL pages of every index leaf it touched) is then shared: under 18k orders/s over HTTP the
 * history thread's CPU fell from 36% to 28% of a core and the orders' p99 from 22–25 to 17–19 ms
 * (bench/README.md, HTTP). The price: a query that must see history up to the last acknowledged
 * command (getOrder of a finished order, the order lists, bills) waits up to `gatherMs` longer.
 *
 * Its callers bound the queue by waiting for `drain()` (recovery does every 20,000 entries). A
 * store failure is logged and retried; it never touches engine state, and the store's checkpoint
 * makes a retry (or a restart) apply nothing twice.
 */
import type { AppliedCommand } from '../sequencer/sequencer.ts';
import type { HistoryEntry, HistoryStore } from './history-store.ts';

/** What the writer needs of a store: its writes (the store itself, or a HistoryWorker). */
export type HistorySink = Pick<HistoryStore, 'applyBatch'>;

/** Entries written per store transaction at most. */
export const HISTORY_BATCH_ENTRIES = 5_000;
const RETRY_DELAY_MS = 500;
/** Default wait for company when few entries are queued (ms). */
export const HISTORY_GATHER_MS = 10;
/** Queued entries from which a batch goes at once. */
export const HISTORY_GATHER_ENTRIES = 2_000;

export interface HistoryWriterOptions {
  /** Default HISTORY_GATHER_MS; 0 writes whatever is queued at once. */
  readonly gatherMs?: number;
  /** Default HISTORY_GATHER_ENTRIES. */
  readonly gatherEntries?: number;
}

export class HistoryWriter {
  readonly #store: HistorySink;
  readonly #log: (message: string) => void;
  readonly #gatherMs: number;
  readonly #gatherEntries: number;
  #queue: HistoryEntry[] = [];
  #head = 0;
  #running: Promise<void> | undefined;
  #idle: (() => void)[] = [];
  #written = 0;

  constructor(store: HistorySink, log: (message: string) => void, options: HistoryWriterOptions = {}) {
    this.#store = store;
    this.#log = log;
    this.#gatherMs = options.gatherMs ?? HISTORY_GATHER_MS;
    this.#gatherEntries = options.gatherEntries ?? HISTORY_GATHER_ENTRIES;
  }

  /** Entries waiting to be written. */
  get queued(): number {
    return this.#queue.length - this.#head;
  }

  /** Entries written since start. */
  get written(): number {
    return this.#written;
  }

  /** Queues an applied batch (an applied-feed listener). */
  readonly enqueue = (batch: readonly AppliedCommand[]): void => {
    for (const { command, result } of batch) {
      this.#queue.push({ seq: command.seq, time: command.time, events: result.events });
    }
    this.#running ??= this.#pump();
  };

  /** Resolves when everything queued so far is written. */
  drain(): Promise<void> {
    if (this.queued === 0 && this.#running === undefined) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  async #pump(): Promise<void> {
    // Let the current event-loop turn finish first, so replies and pushes go out before writes.
    await new Promise<void>((resolve) => setImmediate(resolve));
    while (this.queued > 0) {
      if (this.#gatherMs > 0 && this.queued < this.#gatherEntries) {
        await new Promise<void>((resolve) => setTimeout(resolve, this.#gatherMs));
      }
      const end = Math.min(this.#queue.length, this.#head + HISTORY_BATCH_ENTRIES);
      const entries = this.#queue.slice(this.#head, end);
      try {
        await this.#store.applyBatch(entries);
      } catch (error) {
        this.#log(
          `history store write failed at seq ${entries[0]?.seq}: ${(error as Error).message}; retrying`,
        );
        await new Promise<void>((resolve) => setTimeout(resolve, RETRY_DELAY_MS));
        continue;
      }
      this.#head = end;
      this.#written += entries.length;
      if (this.#head > 65_536) {
        this.#queue = this.#queue.slice(this.#head);
        this.#head = 0;
      }
    }
    this.#running = undefined;
    for (const resolve of this.#idle.splice(0)) resolve();
  }
}
