/**
 * @module history-writer — feeds the history store from the sequencer's applied batches: a
 * bounded queue drained in store transactions, one at a time, off the engine's path.
 *
 * The queue's length is a backpressure signal: past its bound the sequencer refuses new commands
 * as busy rather than let memory grow. A store failure is logged and retried; it never touches
 * engine state, and the store's checkpoint makes a retry (or a restart) apply nothing twice.
 */
import type { AppliedCommand } from '../sequencer/sequencer.ts';
import type { HistoryEntry, HistoryStore } from './history-store.ts';

/** What the writer needs of a store: its writes (the store itself, or a HistoryWorker). */
export type HistorySink = Pick<HistoryStore, 'applyBatch'>;

/** Entries written per store transaction at most. */
export const HISTORY_BATCH_ENTRIES = 5_000;
/** Queued entries beyond which the sequencer is told to refuse new commands. */
export const HISTORY_QUEUE_BOUND_ENTRIES = 200_000;
const RETRY_DELAY_MS = 500;

export class HistoryWriter {
  readonly #store: HistorySink;
  readonly #log: (message: string) => void;
  #queue: HistoryEntry[] = [];
  #head = 0;
  #running: Promise<void> | undefined;
  #idle: (() => void)[] = [];
  #written = 0;

  constructor(store: HistorySink, log: (message: string) => void) {
    this.#store = store;
    this.#log = log;
  }

  /** Entries waiting to be written. */
  get queued(): number {
    return this.#queue.length - this.#head;
  }

  /** True while the queue is past its bound (a sequencer pressure source). */
  readonly overBound = (): boolean => this.queued > HISTORY_QUEUE_BOUND_ENTRIES;

  /** Entries written since start. */
  get written(): number {
    return this.#written;
  }

  /** Queues an applied batch (a sequencer `onApplied` listener). */
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
