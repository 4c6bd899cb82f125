/**
 * @module stream-replica — a read replica of the engine, fed by the journal's JetStream stream:
 * what a gateway (or the history role, or a standby) reads and pushes from in the distributed
 * setup (docs/scale-out.md).
 *
 * The engine is deterministic, so a replica that applies the journal's commands in order holds the
 * leader's state at each sequence number (`stateHash` shows it). It starts from an engine at some
 * seq (genesis, or a snapshot) and follows the stream from the next record on, for as long as it
 * runs: an ordered consumer, which the client library recreates after a reconnect or a gap, so
 * the replica survives a restart of the NATS server. It implements the same AppliedFeed and
 * VenueState as the embedded sequencer: the adapters fed by it cannot tell the difference.
 *
 * Only records the stream stored are applied, and the stream stores only the current writer's
 * records (the JetStream journal fences deposed writers): the replica never sees a fork.
 */
import { DeliverPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import type { Engine } from '../engine/engine.ts';
import {
  batchRange,
  batchRecords,
  batchTags,
  findBatch,
  lastJournalSeq,
} from '../journal/jetstream-journal.ts';
import { decodeCommand } from '../sequencer/command-codec.ts';
import type { Log } from '../domain/log.ts';
import type { AppliedCommand, AppliedListener } from '../sequencer/sequencer.ts';
import { FeedPositionError, type AppliedFeed, type VenueState } from '../sequencer/venue-ports.ts';

/** Longest the replica applies records without letting the process's other work run (ms). */
const YIELD_EVERY_MS = 20;

export interface StreamReplicaOptions {
  /** NATS server URLs (nats://host:port). */
  readonly servers: string | readonly string[];
  /** The journal's stream (default BOURSE_JOURNAL). */
  readonly stream?: string;
  /** The journal's subject prefix: the stream captures `<subject>.*` (default bourse.journal). */
  readonly subject?: string;
  /** The replica's engine at its starting point (genesis or a snapshot); the replica owns it from here. */
  readonly engine: Engine;
  readonly log: Log;
  /**
   * A subscriber from the replica's first record on, joined before it follows the stream (the
   * history role writes from there); others join later with `subscribe`.
   */
  readonly listener?: AppliedListener;
}

/** A waiter for a sequence number to be applied. */
interface Waiter {
  readonly seq: number;
  readonly resolve: () => void;
  readonly reject: (error: Error) => void;
}

export class StreamReplica implements AppliedFeed {
  readonly #nc: NatsConnection;
  readonly #stream: string;
  readonly #engine: Engine;
  readonly #log: Log;
  readonly #listeners: AppliedListener[] = [];
  #waiters: Waiter[] = [];
  #failure: Error | undefined;
  #stop: (() => void) | undefined;
  #following: Promise<void> = Promise.resolve();
  readonly #fatalListeners: ((error: Error) => void)[] = [];
  /** The leader's state hashes at seqs the replica has not reached yet, by seq. */
  readonly #expected = new Map<number, string>();
  #hashesChecked = 0;

  private constructor(nc: NatsConnection, engine: Engine, log: Log, stream: string) {
    this.#nc = nc;
    this.#stream = stream;
    this.#engine = engine;
    this.#log = log;
  }

  /** Connects and starts following the stream after the engine's last seq. */
  static async open(options: StreamReplicaOptions): Promise<StreamReplica> {
    const stream = options.stream ?? 'BOURSE_JOURNAL';
    const subject = options.subject ?? 'bourse.journal';
    const nc = await connect({
      servers: typeof options.servers === 'string' ? [options.servers] : [...options.servers],
      name: `bourse-replica ${stream}`,
      maxReconnectAttempts: -1,
    });
    try {
      const replica = new StreamReplica(nc, options.engine, options.log, stream);
      if (options.listener !== undefined) replica.#listeners.push(options.listener);
      await replica.#follow(stream, subject);
      return replica;
    } catch (error) {
      await nc.close();
      throw error;
    }
  }

  /** The replica's state, read-only. */
  get state(): VenueState {
    return this.#engine;
  }

  get appliedSeq(): number {
    return this.#engine.lastSeq;
  }

  /** Why the replica stopped following (a record it could not apply, a gap), or undefined. */
  get failure(): Error | undefined {
    return this.#failure;
  }

  /** Same contract as the sequencer's: `fromSeq` must be the next record to apply. */
  subscribe(fromSeq: number, listener: AppliedListener): void {
    const next = this.#engine.lastSeq + 1;
    if (fromSeq !== next) {
      throw new FeedPositionError(fromSeq, `the replica delivers from the next record to apply, seq ${next}`);
    }
    this.#listeners.push(listener);
  }

  /** Called once when the replica stops following for good. */
  onFatal(listener: (error: Error) => void): void {
    this.#fatalListeners.push(listener);
  }

  /**
   * The leader's state hash at `seq`: the replica compares its own when it reaches that seq and
   * stops (onFatal) on a difference, since it would serve a state the leader does not have. A
   * seq already passed is not checked (the replica keeps no past states).
   */
  expectHash(seq: number, stateHash: string): void {
    if (seq === this.#engine.lastSeq) this.#check(seq, stateHash);
    else if (seq > this.#engine.lastSeq) this.#expected.set(seq, stateHash);
  }

  /** How many of the leader's hashes the replica has matched. */
  get hashesChecked(): number {
    return this.#hashesChecked;
  }

  #check(seq: number, stateHash: string): void {
    const own = this.#engine.stateHash();
    if (own !== stateHash) {
      this.#fail(
        new Error(`replica state at seq ${seq} differs from the leader's (hash ${own}, leader ${stateHash})`),
      );
      return;
    }
    this.#hashesChecked++;
  }

  /** Resolves once the replica has applied every record the stream holds now. */
  async whenCaughtUp(): Promise<void> {
    await this.whenApplied(await lastJournalSeq(await jetstreamManager(this.#nc), this.#stream));
  }

  /** Resolves once the replica has applied `seq` (at once if it has); rejects if it stops first. */
  whenApplied(seq: number): Promise<void> {
    if (this.#engine.lastSeq >= seq) return Promise.resolve();
    if (this.#failure !== undefined) return Promise.reject(this.#failure);
    return new Promise((resolve, reject) => this.#waiters.push({ seq, resolve, reject }));
  }

  async #follow(stream: string, subject: string): Promise<void> {
    const from = this.#engine.lastSeq;
    let start: { streamSeq: number; first: number } | undefined;
    if (from > 0) {
      // The message holding the replica's last record: its later records are the first to apply.
      start = await findBatch(await jetstreamManager(this.#nc), stream, from);
    }
    const consumer = await jetstream(this.#nc).consumers.get(stream, {
      filter_subjects: `${subject}.*`,
      ...(start === undefined
        ? { deliver_policy: DeliverPolicy.All }
        : { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: start.streamSeq }),
    });
    const messages = await consumer.consume();
    this.#stop = () => messages.stop();
    this.#following = (async () => {
      let yieldedAt = performance.now();
      try {
        for await (const m of messages) {
          // Messages already delivered resolve as microtasks: a long catch-up would starve the
          // timers and sockets of the process (a standby's lease, a gateway's requests).
          if (performance.now() - yieldedAt >= YIELD_EVERY_MS) {
            await new Promise((resolve) => setImmediate(resolve));
            yieldedAt = performance.now();
          }
          const { first, last } = batchRange(m.headers, m.seq);
          if (last <= this.#engine.lastSeq) continue;
          if (first > this.#engine.lastSeq + 1) {
            throw new Error(
              `stream ${stream} message ${m.seq} starts at seq ${first}, after ${this.#engine.lastSeq}: records are missing`,
            );
          }
          this.#apply(m.data, first, last, batchTags(m.headers, first));
        }
      } catch (error) {
        this.#fail(error as Error);
        messages.stop();
      }
    })();
  }

  #apply(data: Uint8Array, first: number, last: number, tags: ReadonlyMap<number, string>): void {
    const batch: AppliedCommand[] = [];
    for (const record of batchRecords(data, first, last, tags)) {
      if (record.seq <= this.#engine.lastSeq) continue;
      const command = decodeCommand(record.seq, record.payload);
      let result;
      try {
        result = this.#engine.apply(command);
      } catch (error) {
        throw new Error(`replica: engine invariant broken at seq ${record.seq}: ${(error as Error).message}`);
      }
      batch.push(
        record.tag === undefined
          ? { command, result, payload: record.payload }
          : { command, result, payload: record.payload, requestId: record.tag },
      );
      const expected = this.#expected.get(record.seq);
      if (expected !== undefined) {
        this.#expected.delete(record.seq);
        this.#check(record.seq, expected);
        if (this.#failure !== undefined) throw this.#failure;
      }
    }
    if (batch.length === 0) return;
    for (const listener of this.#listeners) {
      try {
        listener(batch);
      } catch (error) {
        this.#log.error(
          { err: error, fromSeq: batch[0]?.command.seq, toSeq: last },
          'an applied-batch subscriber of the replica failed (the replica state is unaffected)',
        );
      }
    }
    const applied = this.#engine.lastSeq;
    if (this.#waiters.length > 0) {
      const due = this.#waiters.filter((w) => w.seq <= applied);
      this.#waiters = this.#waiters.filter((w) => w.seq > applied);
      for (const w of due) w.resolve();
    }
  }

  #fail(error: Error): void {
    if (this.#failure !== undefined) return;
    this.#failure = error;
    this.#log.error({ err: error, seq: this.#engine.lastSeq }, `replica stopped: ${error.message}`);
    for (const w of this.#waiters) w.reject(error);
    this.#waiters = [];
    for (const listener of this.#fatalListeners) listener(error);
  }

  /** Stops following and closes the connection. */
  async close(): Promise<void> {
    this.#stop?.();
    await this.#following;
    const closed = new Error('replica closed');
    for (const w of this.#waiters) w.reject(closed);
    this.#waiters = [];
    await this.#nc.close();
  }
}
