/**
 * @module history-boot — the history store through a venue's start: opened for reads, written
 * during the start-up replay (through a worker thread with its own connection) when this process
 * writes it, then handed to what keeps it current while the venue runs: the in-process follower
 * (HistoryFollower, on its own engine replica), or, with `--write-history=false`, a watch of the
 * checkpoint a `bourse history` process writes.
 */
import type { Log } from '../domain/log.ts';
import type { Engine } from '../engine/engine.ts';
import type { AppliedCommand } from '../sequencer/sequencer.ts';
import { HistoryCheckpointWatch, type HistoryProgress } from './history-checkpoint-watch.ts';
import { HistoryFollower } from './history-follower.ts';
import {
  describeHistoryLocation,
  historyLocation,
  openHistoryStore,
  readerLocation,
  type HistoryLocation,
} from './history-location.ts';
import type { HistoryStore } from './history-store.ts';
import { HistoryWorker } from './history-worker.ts';
import { HISTORY_BATCH_ENTRIES, HistoryWriter } from './history-writer.ts';

export interface HistoryBootOptions {
  /** `--history-url` (PostgreSQL), else the SQLite file `sqlitePath`. */
  readonly url: string | undefined;
  readonly sqlitePath: string;
  /** `--write-history`: this process writes the store (else a `bourse history` process does). */
  readonly writes: boolean;
  /** The store a hot standby already opened for reads, used instead of opening one. */
  readonly opened?: HistoryStore | undefined;
  readonly log: Log;
}

export class HistoryBoot {
  /** The store, open for reads (the API's history reads). */
  readonly store: HistoryStore;
  /** Its checkpoint when the venue started. */
  readonly seq: number;
  readonly writes: boolean;
  readonly #place: HistoryLocation;
  readonly #log: Log;
  readonly #worker: HistoryWorker | undefined;
  readonly #writer: HistoryWriter | undefined;

  private constructor(options: HistoryBootOptions, place: HistoryLocation, store: HistoryStore, seq: number) {
    this.store = store;
    this.seq = seq;
    this.writes = options.writes;
    this.#place = place;
    this.#log = options.log;
    this.#worker = options.writes ? new HistoryWorker(place) : undefined;
    this.#writer = this.#worker && new HistoryWriter(this.#worker, (message) => options.log.warn(message));
  }

  static async open(options: HistoryBootOptions): Promise<HistoryBoot> {
    const { log } = options;
    const place = historyLocation(options.url, options.sqlitePath);
    const store =
      options.opened ?? (await openHistoryStore(readerLocation(place), (message) => log.warn(message)));
    log.info({ store: describeHistoryLocation(place) }, `history store: ${describeHistoryLocation(place)}`);
    return new HistoryBoot(options, place, store, await store.checkpoint());
  }

  /** Writes the replayed commands the store lacks (a recovery `onReplayed`), with backpressure; undefined when another process writes. */
  get onReplayed(): ((batch: readonly AppliedCommand[]) => Promise<void>) | undefined {
    const writer = this.#writer;
    if (writer === undefined) return undefined;
    return async (batch) => {
      writer.enqueue(batch.filter((c) => c.command.seq > this.seq));
      if (writer.queued >= HISTORY_BATCH_ENTRIES * 4) await writer.drain();
    };
  }

  /** After the replay: the writes are durable and the worker closed; from here on `running` keeps the store current. */
  async replayed(): Promise<void> {
    await this.#writer?.drain();
    await this.#worker?.close();
  }

  /** What keeps the store current from the recovered `engine` on (the module comment). */
  running(engine: Engine, startState: ReturnType<Engine['snapshot']>): HistoryProgress {
    if (this.writes) {
      return new HistoryFollower(
        { store: this.#place, snapshot: startState, stateHash: engine.stateHash(startState) },
        this.#log,
      );
    }
    this.#log.info(
      { historySeq: this.seq },
      `history store: written by a \`bourse history\` process (--write-history=false), at seq ${this.seq}`,
    );
    return new HistoryCheckpointWatch(this.store, this.seq, this.#log);
  }
}
