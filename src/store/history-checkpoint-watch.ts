/**
 * @module history-checkpoint-watch — what a process that does not write the history store
 * (`--write-history=false`: a `bourse history` process writes it from the stream) knows of it: the
 * store's checkpoint, read every second, for `/ready` and the history-lag metric. The same
 * `HistoryProgress` the in-process writer (HistoryFollower) gives, so health and metrics take
 * either.
 *
 * It never stops the venue: a history process that is down or behind shows as lag (and `/ready`
 * answers 503 past `--ready-max-history-lag`), while trading goes on; the history process catches
 * up from its checkpoint when it comes back.
 */
import type { Log } from '../domain/log.ts';
import type { HistoryStore } from './history-store.ts';

/** How far the history store is written, and whether its writer failed for good. */
export interface HistoryProgress {
  /** The last seq written to the store. */
  readonly writtenSeq: number;
  /** Why the writer stopped for good, or undefined. */
  readonly failure: Error | undefined;
  /** Called once when the writer stops for good (the venue then stops). */
  onFatal(listener: (error: Error) => void): void;
  close(): Promise<void>;
}

/** How often the checkpoint is read (ms). */
export const CHECKPOINT_WATCH_MS = 1_000;

export class HistoryCheckpointWatch implements HistoryProgress {
  readonly #store: Pick<HistoryStore, 'checkpoint'>;
  readonly #log: Log;
  readonly #timer: NodeJS.Timeout;
  #writtenSeq: number;
  #reading: Promise<void> = Promise.resolve();
  #failing = false;

  /** Starts from `checkpoint` (read by the caller at start) and reads it again every `everyMs`. */
  constructor(
    store: Pick<HistoryStore, 'checkpoint'>,
    checkpoint: number,
    log: Log,
    everyMs = CHECKPOINT_WATCH_MS,
  ) {
    this.#store = store;
    this.#log = log;
    this.#writtenSeq = checkpoint;
    this.#timer = setInterval(() => (this.#reading = this.#read()), everyMs);
    this.#timer.unref();
  }

  get writtenSeq(): number {
    return this.#writtenSeq;
  }

  get failure(): undefined {
    return undefined;
  }

  onFatal(): void {
    // The store is another process's to write: nothing here can fail for good.
  }

  async #read(): Promise<void> {
    try {
      this.#writtenSeq = await this.#store.checkpoint();
      if (this.#failing) this.#log.info('history store: its checkpoint can be read again');
      this.#failing = false;
    } catch (error) {
      if (!this.#failing) {
        this.#log.warn(
          { err: error },
          `history store: cannot read its checkpoint (${(error as Error).message}); the lag shown is from seq ${this.#writtenSeq}`,
        );
      }
      this.#failing = true;
    }
  }

  async close(): Promise<void> {
    clearInterval(this.#timer);
    await this.#reading;
  }
}
