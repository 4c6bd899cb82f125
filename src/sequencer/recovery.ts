/**
 * @module recovery — rebuilds the engine at start-up: the newest valid snapshot (its state hash
 * checked), then every journal record after it, in order. Only then may the API open.
 */
import type { VenueConfig } from '../domain/specs.ts';
import { Engine } from '../engine/engine.ts';
import type { EngineSnapshot } from '../engine/snapshot.ts';
import { decodeCommand } from './command-codec.ts';
import type { JournalPort, JournalRecord, SnapshotPort } from './ports.ts';
import type { Log } from '../domain/log.ts';
import type { AppliedCommand } from './sequencer.ts';

/** How many replayed commands are handed to `onReplayed` at a time. */
export const REPLAY_BATCH_COMMANDS = 2_000;
/**
 * Longest the replay keeps the event loop (ms) before it lets other work run: the admin
 * listener answers `/health` and `/ready` during a long replay.
 */
const REPLAY_YIELD_EVERY_MS = 20;

export interface RecoveryOptions {
  /** The venue configuration the journal started from (kept in the data directory). */
  readonly genesis: VenueConfig;
  readonly journal: JournalPort;
  readonly snapshots: SnapshotPort | undefined;
  /** Start from genesis even if snapshots exist (verification, history rebuilds). */
  readonly ignoreSnapshots?: boolean;
  /**
   * Start from this engine (a hot standby's replica, at or behind the journal's end) instead of a
   * snapshot; the replay covers the journal after its last seq.
   */
  readonly from?: Engine;
  /**
   * Receives replayed commands in batches, e.g. to bring the history store up to date; a
   * returned promise is awaited before the replay goes on (backpressure).
   */
  readonly onReplayed?: (batch: readonly AppliedCommand[]) => void | Promise<void>;
  /** Called after every replayed command with the engine in the state right after it. */
  readonly afterEach?: (seq: number, engine: Engine) => void;
  /**
   * Told how far the replay is: after every REPLAY_BATCH_COMMANDS commands and at the end, with
   * the commands replayed and the total to replay (src/observability/progress.ts shows it).
   */
  readonly progress?: (replayed: number, total: number) => void;
  readonly log: Log;
}

export interface Recovered {
  readonly engine: Engine;
  /** Sequence number of the snapshot started from (0: genesis). */
  readonly snapshotSeq: number;
  readonly replayed: number;
  /** The time stamped on the journal's last command (undefined for an empty journal). */
  readonly lastTime: number | undefined;
}

/**
 * Restores the newest valid snapshot and replays the journal after it. Throws with a clear
 * message when the snapshot's state hash does not match its content, when the journal does not
 * continue where the snapshot ends, or when a replayed command breaks an engine invariant.
 */
export async function recover(options: RecoveryOptions): Promise<Recovered> {
  const { journal, log } = options;
  let engine: Engine;
  const stored =
    options.ignoreSnapshots === true || options.from !== undefined
      ? undefined
      : options.snapshots?.latestValid();
  if (options.from !== undefined) {
    engine = options.from;
    log.info({ seq: engine.lastSeq }, `starting from the standby's state at seq ${engine.lastSeq}`);
  } else if (stored === undefined) {
    engine = new Engine(options.genesis);
  } else {
    engine = Engine.restore(stored.state as EngineSnapshot);
    const hash = engine.stateHash();
    if (hash !== stored.stateHash) {
      throw new Error(
        `snapshot ${stored.path}: state hash ${hash} does not match the recorded ${stored.stateHash}`,
      );
    }
    log.info(
      { seq: stored.lastSeq, stateHash: hash, path: stored.path },
      `restored the snapshot at seq ${stored.lastSeq}`,
    );
  }
  const snapshotSeq = engine.lastSeq;
  const total = journal.durableSeq - snapshotSeq;
  if (total < 0) {
    throw new Error(`the journal ends at seq ${journal.durableSeq}, before the snapshot at ${snapshotSeq}`);
  }
  if (total > 0) {
    log.info(
      { fromSeq: snapshotSeq + 1, toSeq: journal.durableSeq, records: total },
      `replaying ${total} journal records after seq ${snapshotSeq}`,
    );
  }
  const started = Date.now();
  let replayed = 0;
  let lastTime: number | undefined;
  let yieldedAt = performance.now();
  let batch: AppliedCommand[] = [];
  /** Applies one record; returns a full batch for `onReplayed` when one is due. */
  const replay = ({ seq, payload, tag }: JournalRecord): AppliedCommand[] | undefined => {
    if (seq !== engine.lastSeq + 1) {
      throw new Error(
        `the journal continues at seq ${seq} but the state is at ${engine.lastSeq}: records are missing`,
      );
    }
    const command = decodeCommand(seq, payload);
    const result = engine.apply(command);
    lastTime = command.time;
    replayed++;
    options.afterEach?.(seq, engine);
    if (options.onReplayed === undefined) return undefined;
    batch.push(
      tag === undefined ? { command, result, payload } : { command, result, payload, requestId: tag },
    );
    if (batch.length < REPLAY_BATCH_COMMANDS) return undefined;
    const full = batch;
    batch = [];
    return full;
  };
  /** Every REPLAY_BATCH_COMMANDS: tells the progress, and lets the event loop run when it is due. */
  const progressed = async (): Promise<void> => {
    options.progress?.(replayed, total);
    if (performance.now() - yieldedAt >= REPLAY_YIELD_EVERY_MS) {
      await new Promise((resolve) => setImmediate(resolve));
      yieldedAt = performance.now();
    }
  };
  const records = journal.read(snapshotSeq + 1);
  // A local journal is read synchronously: `for await` would cost a microtask per record.
  if (Symbol.asyncIterator in records) {
    for await (const record of records) {
      const full = replay(record);
      if (full !== undefined) await options.onReplayed?.(full);
      if (replayed % REPLAY_BATCH_COMMANDS === 0) await progressed();
    }
  } else {
    for (const record of records) {
      const full = replay(record);
      if (full !== undefined) await options.onReplayed?.(full);
      if (replayed % REPLAY_BATCH_COMMANDS === 0) await progressed();
    }
  }
  if (batch.length > 0) await options.onReplayed?.(batch);
  if (total > 0) options.progress?.(replayed, total);
  if (engine.lastSeq !== journal.durableSeq) {
    throw new Error(`replay stopped at seq ${engine.lastSeq}, the journal ends at ${journal.durableSeq}`);
  }
  if (replayed > 0) {
    const ms = Date.now() - started;
    log.info(
      { records: replayed, ms, perSecond: Math.round(replayed / Math.max(0.001, ms / 1000)) },
      `replayed ${replayed} records in ${ms} ms`,
    );
  }
  return { engine, snapshotSeq, replayed, lastTime: lastTime ?? (await lastJournaledTime(journal)) };
}

/** The time of the journal's last durable command, read from its record; undefined when there is none. */
async function lastJournaledTime(journal: JournalPort): Promise<number | undefined> {
  const seq = journal.durableSeq;
  if (seq === 0) return undefined;
  // One record: `for await` reads a local (synchronous) journal as well as a remote one.
  for await (const { payload } of journal.read(seq)) return decodeCommand(seq, payload).time;
  return undefined;
}
