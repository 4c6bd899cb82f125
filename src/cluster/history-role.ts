/**
 * @module history-role — the `bourse history` process (docs/scale-out.md, "Roles"): writes the
 * history store (SQLite or PostgreSQL, `--history-url`) from the journal's stream, so that the
 * engine (`--write-history=false`) does not.
 *
 * Like every consumer of applied commands it joins the stream from a sequence number: the one
 * after the store's checkpoint. The store's rows follow from the engine's events, and the events
 * from the engine's state, so the role holds its own replica of the engine: from the newest
 * snapshot of `--data` at or before the checkpoint (else from genesis, `venue.json`), it applies
 * the stream's records and writes those after the checkpoint. The store skips entries at or
 * below its checkpoint, which moves in the same transaction as the rows: a role killed at any
 * point and started again writes nothing twice and misses nothing. The replica checks its state
 * hash against the engine's (`bourse.state`), as a gateway's does, and the role stops on a
 * difference rather than write rows the engine's state does not back.
 */
import { connect, type NatsConnection } from '@nats-io/transport-node';
import type { VenueIdentity } from '../config/venue-identity.ts';
import { Engine } from '../engine/engine.ts';
import type { EngineSnapshot } from '../engine/snapshot.ts';
import { SnapshotStore } from '../journal/snapshot-store.ts';
import type { Log } from '../domain/log.ts';
import type { HistoryStore } from '../store/history-store.ts';
import {
  describeHistoryLocation,
  historyLocation,
  openHistoryStore,
  type HistoryLocation,
} from '../store/history-location.ts';
import { HistoryWriter } from '../store/history-writer.ts';
import { followStateHashes } from './command-link.ts';
import { followerSetup, runRole, runUntilStopped } from './follower-process.ts';
import { StreamReplica } from './stream-replica.ts';

export interface HistoryRoleOptions {
  readonly identity: VenueIdentity;
  /** The store to write. */
  readonly store: HistoryLocation;
  /** Snapshots of the engine to start the replica from (a copy of the engine's snapshot directory). */
  readonly snapshots?: SnapshotStore;
  /** NATS servers of the journal's stream. */
  readonly servers: string | readonly string[];
  readonly stream?: string;
  readonly subject?: string;
  readonly log: Log;
}

export interface RunningHistoryRole {
  readonly replica: StreamReplica;
  /** The store's checkpoint when the role started: it writes from the next seq. */
  readonly startedAt: number;
  /** The last seq the role has written (its checkpoint), or `startedAt` before its first write. */
  readonly writtenSeq: () => number;
  /** Resolves once everything the replica has applied so far is written. */
  drain(): Promise<void>;
  close(): Promise<void>;
}

/** The engine to start the replica from: the newest valid snapshot at or before `seq`, else genesis. */
function startingEngine(
  identity: VenueIdentity,
  seq: number,
  snapshots: SnapshotStore | undefined,
  log: Log,
): Engine {
  for (const entry of snapshots?.list() ?? []) {
    if (entry.lastSeq > seq) continue;
    try {
      return Engine.restore(snapshots?.load(entry.path).state as EngineSnapshot);
    } catch (error) {
      log.warn({ path: entry.path }, `snapshot ${entry.path} skipped: ${(error as Error).message}`);
    }
  }
  return new Engine(identity.genesis);
}

/** Opens the store and follows the stream from the record after its checkpoint. */
export async function startHistoryRole(options: HistoryRoleOptions): Promise<RunningHistoryRole> {
  const { log } = options;
  const store: HistoryStore = await openHistoryStore(options.store, (message) => log.warn(message));
  let nc: NatsConnection | undefined;
  try {
    const startedAt = await store.checkpoint();
    const engine = startingEngine(options.identity, startedAt, options.snapshots, log);
    const writer = new HistoryWriter(store, (message) => log.warn(message));
    let writtenSeq = startedAt;
    const replicaFrom = engine.lastSeq;
    const replica = await StreamReplica.open({
      servers: options.servers,
      engine,
      log,
      ...(options.stream === undefined ? {} : { stream: options.stream }),
      ...(options.subject === undefined ? {} : { subject: options.subject }),
      // Records up to the checkpoint only bring the replica's state there; the rest are written.
      listener: (batch) => {
        const fresh = batch.filter((c) => c.command.seq > startedAt);
        if (fresh.length === 0) return;
        writer.enqueue(fresh);
        const last = (fresh[fresh.length - 1] as (typeof fresh)[number]).command.seq;
        void writer.drain().then(() => (writtenSeq = Math.max(writtenSeq, last)));
      },
    });
    nc = await connect({
      servers: typeof options.servers === 'string' ? [options.servers] : [...options.servers],
      name: 'bourse-history',
      maxReconnectAttempts: -1,
    });
    followStateHashes(nc, replica);
    log.info(
      { historySeq: startedAt, replicaSeq: replicaFrom, store: describeHistoryLocation(options.store) },
      `history: writing ${describeHistoryLocation(options.store)} from seq ${startedAt + 1} (replica from seq ${replicaFrom})`,
    );
    const connection = nc;
    return {
      replica,
      startedAt,
      writtenSeq: () => writtenSeq,
      drain: () => writer.drain(),
      close: async () => {
        await replica.close();
        await writer.drain();
        await connection.close();
        await store.close();
      },
    };
  } catch (error) {
    await nc?.close();
    await store.close();
    throw error;
  }
}

async function main(): Promise<void> {
  const setup = followerSetup('history', 'it writes the history from that stream');
  const { options, location, paths, identity } = setup;
  const log = setup.logger.log.child({ component: 'history' });
  const role = await startHistoryRole({
    identity,
    store: historyLocation(options.historyUrl, paths.history),
    snapshots: new SnapshotStore(paths.snapshots, { onProblem: (p) => log.warn(p) }),
    servers: location.servers,
    stream: location.stream,
    subject: location.subject,
    log,
  });
  runUntilStopped(setup, log, role.replica, role.close);
}

if (import.meta.main) await runRole('history', main);
