/**
 * @module standby — a hot standby engine while it stands by (docs/scale-out.md, "Hot standby and
 * failover"): the engine of its own data directory, kept at the leader's state by following the
 * journal's stream (a StreamReplica, checked against the leader's published state hashes), its
 * history store kept current from the same commands, and the request ids of the recent commands
 * collected. It takes no commands. `stop` hands the engine over to the venue that takes over
 * (src/main.ts, `startFrom`), which replays only what the stream holds after it.
 *
 * `start` resolves once the replica has caught up with the stream's end. Its data directory
 * holds a copy of the leader's `venue.json` (and `admin.token`, for the same admin token after a
 * takeover); its history store is its own (SQLite there) or the shared one (`--history-url`).
 * The replica starts from the directory's newest snapshot when the history store holds up to it,
 * else from genesis.
 */
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { acquireDataLock, type DataLock } from '../config/data-lock.ts';
import { dataPaths } from '../config/data-dir.ts';
import { StartRefusedError } from '../config/start-refusal.ts';
import { readVenueIdentity } from '../config/venue-identity.ts';
import { Engine } from '../engine/engine.ts';
import type { EngineSnapshot } from '../engine/snapshot.ts';
import { SnapshotStore } from '../journal/snapshot-store.ts';
import type { Log } from '../domain/log.ts';
import { HistoryFollower } from '../store/history-follower.ts';
import { historyLocation, openHistoryStore } from '../store/history-location.ts';
import { followStateHashes, type JournaledAnswers } from './command-link.ts';
import { RECENT_IDS_MS, readRecentIds } from './recent-ids.ts';
import { StreamReplica } from './stream-replica.ts';

export interface StandbyOptions {
  readonly dataDir: string;
  readonly historyUrl: string | undefined;
  /**
   * Whether this engine writes the history store (true unless another process, the `bourse
   * history` role, writes it): the standby then keeps it current while it stands by.
   */
  readonly writeHistory: boolean;
  readonly servers: readonly string[];
  readonly stream: string;
  readonly subject: string;
  /** For the leader's state hashes. */
  readonly nc: NatsConnection;
  /** Collects the request ids a new leader must know: the recent ones, then every applied batch's. */
  readonly answers: JournaledAnswers;
  /** Called once if the standby cannot go on (its replica or history failed). */
  readonly onFatal: (error: Error) => void;
  readonly log: Log;
}

const STANDBY_LOCK_ADVICE = 'stop it first (one engine per data directory: give each standby its own)';

export class Standby {
  readonly replica: StreamReplica;
  readonly #engine: Engine;
  readonly #follower: HistoryFollower | undefined;
  readonly #hashes: Subscription;
  readonly #lock: DataLock;

  private constructor(
    replica: StreamReplica,
    engine: Engine,
    follower: HistoryFollower | undefined,
    hashes: Subscription,
    lock: DataLock,
  ) {
    this.replica = replica;
    this.#engine = engine;
    this.#follower = follower;
    this.#hashes = hashes;
    this.#lock = lock;
  }

  /** Starts following the stream; resolves once the replica follows it. */
  static async start(options: StandbyOptions): Promise<Standby> {
    const paths = dataPaths(options.dataDir);
    const identity = readVenueIdentity(paths.root);
    if (identity === undefined) {
      throw new StartRefusedError(
        `${paths.root} holds no venue.json: a standby needs a copy of the leader's venue.json (and admin.token) in its data directory`,
      );
    }
    const lock = await acquireDataLock(paths.root, 'standby', STANDBY_LOCK_ADVICE);
    try {
      const place = historyLocation(options.historyUrl, paths.history);
      let historyAt = Infinity;
      if (options.writeHistory) {
        const history = await openHistoryStore(place, (m) => options.log.warn(m));
        historyAt = await history.checkpoint();
        await history.close();
      }
      // The follower writes from the replica's start: the store must not miss what lies before it.
      const newest = new SnapshotStore(paths.snapshots).latestValid();
      const engine =
        newest !== undefined && newest.lastSeq <= historyAt
          ? Engine.restore(newest.state as EngineSnapshot)
          : new Engine(identity.genesis);
      let follower: HistoryFollower | undefined;
      if (options.writeHistory) {
        const start = engine.snapshot();
        follower = new HistoryFollower(
          { store: place, snapshot: start, stateHash: engine.stateHash(start) },
          options.log.child({ component: 'history' }),
        );
        follower.onFatal(options.onFatal);
      }
      // Ids journaled just before the replica's start: a gateway may still send them again.
      options.answers.addJournaled(
        await readRecentIds(options.nc, {
          stream: options.stream,
          subject: options.subject,
          sinceMs: Date.now() - RECENT_IDS_MS,
        }),
      );
      const replica = await StreamReplica.open({
        servers: options.servers,
        stream: options.stream,
        subject: options.subject,
        engine,
        log: options.log.child({ component: 'replica' }),
      });
      const next = replica.appliedSeq + 1;
      if (follower !== undefined) replica.subscribe(next, follower.enqueue);
      replica.subscribe(next, options.answers.add);
      replica.onFatal(options.onFatal);
      const hashes = followStateHashes(options.nc, replica);
      // Standing by means ready to take over: at the stream's end, not still replaying it.
      await replica.whenCaughtUp();
      return new Standby(replica, engine, follower, hashes, lock);
    } catch (error) {
      await lock.release();
      throw error;
    }
  }

  /**
   * Stops following and writing history (both at the same seq), frees the data directory and
   * hands over the engine: the venue taking over starts from it.
   */
  async stop(): Promise<Engine> {
    this.#hashes.unsubscribe();
    await this.replica.close();
    await this.#follower?.close();
    await this.#lock.release();
    return this.#engine;
  }
}
