/**
 * @module history-follower — keeps the history store current from the journal's own bytes: a
 * worker thread holds a replica of the engine, applies every applied command to it, and writes
 * the events that the replica emits.
 *
 * The main thread used to hand the worker each command's events, and cloning those objects across
 * threads cost the event loop about 8 µs per order (bench/README.md, HTTP). A command's journal
 * payload is a few dozen bytes: the follower copies the payloads of each applied batch into one
 * buffer and, every `gatherMs` (or every `gatherCommands`), transfers that buffer to the worker
 * without a copy. The engine is deterministic, so the replica, started from a snapshot of the
 * engine and fed the same commands in the same order, emits the same events (`EngineEvent`s are
 * a function of the state and the command). The replica's state hash is checked against the
 * engine's at the start.
 *
 * Store failures (a locked file, a full disk) are retried on the worker; commands that arrive
 * meanwhile wait in its queue and go with the next round. Commands sent but not yet written count
 * towards a bound, past which the sequencer is told to refuse new commands. A replica that fails
 * (a command it cannot decode or apply, a state that does not match) or a worker that dies is
 * fatal to the follower: the history would otherwise silently stop, so `onFatal` listeners are
 * told, and the venue stops so that a restart brings the history up to date from the journal.
 */
import { Worker, type ResourceLimits } from 'node:worker_threads';
import type { EngineSnapshot } from '../engine/snapshot.ts';
import type { Log } from '../domain/log.ts';
import type { AppliedCommand } from '../sequencer/sequencer.ts';
import { HISTORY_GATHER_ENTRIES, HISTORY_GATHER_MS } from './history-writer.ts';
import type { HistoryLocation } from './history-location.ts';
import { HISTORY_THREAD_LIMITS } from './history-thread-limits.ts';

/** What the follower's thread starts from. */
export interface FollowerStart {
  /** The store the follower writes (its thread opens its own connection). */
  readonly store: HistoryLocation;
  readonly snapshot: EngineSnapshot;
  /** The engine's state hash for `snapshot`: the replica must match it. */
  readonly stateHash: string;
}

/**
 * Main thread → worker: `count` commands from `firstSeq`, each a u32 (little-endian) payload
 * length and the payload; or a request to finish.
 */
export type FollowerRequest =
  | {
      readonly type: 'commands';
      readonly firstSeq: number;
      readonly count: number;
      readonly bytes: Uint8Array;
    }
  | { readonly type: 'close' };

/** Worker → main thread. */
export type FollowerReply =
  | { readonly type: 'written'; readonly seq: number }
  | { readonly type: 'retrying'; readonly message: string }
  | { readonly type: 'fatal'; readonly message: string }
  | { readonly type: 'closed' };

export interface HistoryFollowerOptions {
  /** How long applied commands wait for company before they are sent (ms); default HISTORY_GATHER_MS. */
  readonly gatherMs?: number;
  /** Commands from which a gathered buffer goes at once; default HISTORY_GATHER_ENTRIES. */
  readonly gatherCommands?: number;
}

/** Commands handed over but not yet written beyond which the sequencer is told to refuse new ones. */
export const HISTORY_BOUND_COMMANDS = 200_000;
const LENGTH_BYTES = 4;
const INITIAL_BUFFER_BYTES = 64 * 1024;

export class HistoryFollower {
  readonly #worker: Worker;
  readonly #log: Log;
  readonly #gatherMs: number;
  readonly #gatherCommands: number;
  readonly #fatalListeners: ((error: Error) => void)[] = [];
  #buf: Buffer = Buffer.allocUnsafe(INITIAL_BUFFER_BYTES);
  #used = 0;
  #firstSeq = 0;
  #count = 0;
  #timer: NodeJS.Timeout | undefined;
  /** The last seq handed to the follower, sent or not. */
  #lastSeq: number;
  /** The last seq the worker has written. */
  #writtenSeq: number;
  #failure: Error | undefined;
  #waiters: { readonly seq: number; readonly resolve: () => void; readonly reject: (e: Error) => void }[] =
    [];
  #closing: Promise<void> | undefined;

  /**
   * Starts the worker from the engine's snapshot (`snapshot.lastSeq`: everything up to it must
   * already be in the store). Commands are fed with `enqueue`, the sequencer's applied batches.
   */
  constructor(start: FollowerStart, log: Log, options: HistoryFollowerOptions = {}) {
    this.#log = log;
    this.#gatherMs = options.gatherMs ?? HISTORY_GATHER_MS;
    this.#gatherCommands = options.gatherCommands ?? HISTORY_GATHER_ENTRIES;
    this.#lastSeq = start.snapshot.lastSeq;
    this.#writtenSeq = start.snapshot.lastSeq;
    this.#worker = new Worker(new URL('./history-follower-thread.ts', import.meta.url), {
      workerData: start,
      resourceLimits: HISTORY_THREAD_LIMITS,
    });
    this.#worker.unref();
    this.#worker.on('message', (reply: FollowerReply) => this.#onReply(reply));
    this.#worker.on('error', (error) => this.#fail(new Error(`history follower failed: ${error.message}`)));
    this.#worker.on('exit', (code) => {
      if (this.#closing === undefined || code !== 0)
        this.#fail(new Error(`history follower exited (${code})`));
    });
  }

  /** Commands handed over but not yet written to the store. */
  get behind(): number {
    return this.#lastSeq - this.#writtenSeq;
  }

  /** The last seq written to the store by the follower. */
  get writtenSeq(): number {
    return this.#writtenSeq;
  }

  /** The failure that stopped the follower, or undefined while it runs. */
  get failure(): Error | undefined {
    return this.#failure;
  }

  /**
   * The history thread's JavaScript heap (bytes in use and committed; `/metrics`, bench:soak):
   * its engine replica and its rounds, which the main thread's heap figures do not include.
   * Undefined once the thread has stopped.
   */
  async heapStatistics(): Promise<{ used: number; total: number } | undefined> {
    if (this.#closing !== undefined || this.#failure !== undefined) return undefined;
    const s = await this.#worker.getHeapStatistics().catch(() => undefined);
    return s === undefined ? undefined : { used: s.used_heap_size, total: s.total_heap_size };
  }

  /** The heap bounds the thread runs with (history-thread-limits.ts; V8's defaults fill the rest). */
  get threadLimits(): ResourceLimits {
    return this.#worker.resourceLimits ?? {};
  }

  /** True while too many commands wait to be written (a sequencer pressure source). */
  readonly overBound = (): boolean => this.behind > HISTORY_BOUND_COMMANDS;

  /** Called once if the follower cannot go on (see the module comment). */
  onFatal(listener: (error: Error) => void): void {
    this.#fatalListeners.push(listener);
  }

  /** Takes an applied batch (an applied-feed listener). */
  readonly enqueue = (batch: readonly AppliedCommand[]): void => {
    if (this.#failure !== undefined || this.#closing !== undefined) return;
    for (const { command, payload } of batch) {
      if (command.seq !== this.#lastSeq + 1) {
        this.#fail(new Error(`history follower: seq ${command.seq} does not follow ${this.#lastSeq}`));
        return;
      }
      this.#lastSeq = command.seq;
      if (this.#count === 0) this.#firstSeq = command.seq;
      const need = this.#used + LENGTH_BYTES + payload.length;
      if (need > this.#buf.length) {
        const grown = Buffer.allocUnsafe(Math.max(need, this.#buf.length * 2));
        this.#buf.copy(grown, 0, 0, this.#used);
        this.#buf = grown;
      }
      this.#buf.writeUInt32LE(payload.length, this.#used);
      this.#buf.set(payload, this.#used + LENGTH_BYTES);
      this.#used = need;
      this.#count++;
    }
    if (this.#count >= this.#gatherCommands || this.#gatherMs <= 0) this.#send();
    else if (this.#count > 0) this.#timer ??= setTimeout(() => this.#send(), this.#gatherMs);
  };

  /** Resolves once everything handed over so far is written (sending what is gathered now). */
  drain(): Promise<void> {
    this.#send();
    return this.#whenWritten(this.#lastSeq);
  }

  /** Writes what was handed over, then stops the worker. */
  close(): Promise<void> {
    return (this.#closing ??= (async () => {
      this.#send();
      try {
        await this.#whenWritten(this.#lastSeq);
      } finally {
        if (this.#failure === undefined) {
          const closed = new Promise<void>((resolve) => this.#worker.once('exit', () => resolve()));
          this.#worker.postMessage({ type: 'close' } satisfies FollowerRequest);
          this.#worker.ref();
          await closed;
        } else {
          await this.#worker.terminate();
        }
      }
    })());
  }

  #send(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#count === 0 || this.#failure !== undefined) return;
    // A fresh copy of exactly the used bytes, transferred: the worker owns it, nothing is cloned.
    const bytes = new Uint8Array(this.#used);
    bytes.set(this.#buf.subarray(0, this.#used));
    const request: FollowerRequest = {
      type: 'commands',
      firstSeq: this.#firstSeq,
      count: this.#count,
      bytes,
    };
    this.#used = 0;
    this.#count = 0;
    // Referenced while it owes writes: a follower with work keeps the process alive.
    this.#worker.ref();
    this.#worker.postMessage(request, [bytes.buffer]);
  }

  #whenWritten(seq: number): Promise<void> {
    if (this.#failure !== undefined) return Promise.reject(this.#failure);
    if (seq <= this.#writtenSeq) return Promise.resolve();
    return new Promise((resolve, reject) => this.#waiters.push({ seq, resolve, reject }));
  }

  #onReply(reply: FollowerReply): void {
    switch (reply.type) {
      case 'written': {
        this.#writtenSeq = reply.seq;
        if (this.#writtenSeq >= this.#lastSeq && this.#closing === undefined) this.#worker.unref();
        const due = this.#waiters.filter((w) => w.seq <= reply.seq);
        if (due.length > 0) {
          this.#waiters = this.#waiters.filter((w) => w.seq > reply.seq);
          for (const w of due) w.resolve();
        }
        return;
      }
      case 'retrying':
        this.#log.warn({ reason: reply.message }, 'history store write failed: retrying');
        return;
      case 'fatal':
        this.#fail(new Error(`history follower: ${reply.message}`));
        return;
      case 'closed':
        return;
    }
  }

  #fail(error: Error): void {
    if (this.#failure !== undefined) return;
    this.#failure = error;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    for (const w of this.#waiters.splice(0)) w.reject(error);
    // The composition root logs the stop once; said here only when nobody listens.
    if (this.#fatalListeners.length === 0) this.#log.error({ err: error }, 'history follower stopped');
    for (const listener of this.#fatalListeners) listener(error);
  }
}
