/**
 * @module history-worker — the history store's writes on a worker thread, for the history writer
 * at start-up (recovery's catch-up); a running venue's history follows the journal instead
 * (history-follower.ts).
 *
 * SQLite inserts (about five rows per order) and the WAL checkpoints' fsyncs took a quarter of
 * the event loop under an order load (bench/README.md, HTTP). `HistoryWorker` runs `applyBatch`
 * on its own thread with its own connection to the same store (SQLite file or PostgreSQL
 * database); reads stay on the main thread's connection, which sees each batch once it commits
 * (SQLite in WAL mode, PostgreSQL at its default isolation). Nothing about ordering changes:
 * the history writer still sends one batch at a time and waits for it.
 *
 * A worker that fails to start or dies rejects the batches in flight (the writer logs and
 * retries them, and the store's checkpoint makes a retry apply nothing twice); the next batch
 * starts a fresh worker.
 */
import { Worker } from 'node:worker_threads';
import type { ApplyBatchResult, HistoryEntry } from './history-store.ts';
import type { HistoryLocation } from './history-location.ts';
import { HISTORY_THREAD_LIMITS } from './history-thread-limits.ts';

/** What the main thread sends: a batch to apply, or a request to close. */
export type HistoryWorkerRequest =
  | { readonly id: number; readonly entries: readonly HistoryEntry[] }
  | { readonly id: number; readonly close: true };

/** What the worker answers, by request id. */
export type HistoryWorkerReply =
  | { readonly id: number; readonly result: ApplyBatchResult | null }
  | { readonly id: number; readonly error: string };

interface Pending {
  readonly resolve: (result: ApplyBatchResult | null) => void;
  readonly reject: (error: Error) => void;
}

export class HistoryWorker {
  readonly #location: HistoryLocation;
  readonly #pending = new Map<number, Pending>();
  #worker: Worker | undefined;
  #nextId = 1;
  #closed = false;

  constructor(location: HistoryLocation) {
    this.#location = location;
  }

  /** Applies the entries in one store transaction on the worker (see HistoryStore.applyBatch). */
  async applyBatch(entries: readonly HistoryEntry[]): Promise<ApplyBatchResult> {
    if (this.#closed) throw new Error('history worker is closed');
    return (await this.#send({ id: this.#nextId++, entries })) as ApplyBatchResult;
  }

  /** Closes the worker's connection and ends the thread. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#worker === undefined) return;
    await this.#send({ id: this.#nextId++, close: true });
    await this.#worker?.terminate();
    this.#worker = undefined;
  }

  #send(request: HistoryWorkerRequest): Promise<ApplyBatchResult | null> {
    const worker = (this.#worker ??= this.#start());
    return new Promise((resolve, reject) => {
      this.#pending.set(request.id, { resolve, reject });
      // Referenced only while it owes an answer: an idle worker does not keep the process alive.
      worker.ref();
      worker.postMessage(request);
    });
  }

  #start(): Worker {
    const worker = new Worker(new URL('./history-worker-thread.ts', import.meta.url), {
      workerData: this.#location,
      resourceLimits: HISTORY_THREAD_LIMITS,
    });
    worker.on('message', (reply: HistoryWorkerReply) => {
      const pending = this.#pending.get(reply.id);
      if (pending === undefined) return;
      this.#pending.delete(reply.id);
      if (this.#pending.size === 0) worker.unref();
      if ('error' in reply) pending.reject(new Error(reply.error));
      else pending.resolve(reply.result);
    });
    const fail = (error: Error): void => {
      if (this.#worker === worker) this.#worker = undefined;
      for (const pending of this.#pending.values()) pending.reject(error);
      this.#pending.clear();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`history worker exited with code ${code}`)));
    return worker;
  }
}
