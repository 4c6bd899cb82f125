/**
 * @module gateway — a gateway's composition (the `bourse gateway` role, docs/scale-out.md): the
 * public HTTP API and the WebSocket API on a read replica of the engine fed by the journal's
 * stream, with commands forwarded to the leading engine over NATS (command-link.ts).
 *
 * The same API as the embedded server, built by the same assembly (src/api/assembly.ts) under the
 * same flags, given a VenueState (the replica), a SubmitPort (RemoteSubmit) and an AppliedFeed (the
 * replica): it cannot tell the difference. `/ready` reads the replica (not failed) and the shared
 * history store's checkpoint.
 * Reads of order history, trades and klines come from the shared history store (PostgreSQL in a
 * cluster; the `bourse history` role or the engine writes it). API secrets are opened with the
 * venue's master key, checked against the venue's identity (venue.json) before anything listens.
 */
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { apiSettings, buildApi, type Api, type ApiSettings } from '../api/assembly.ts';
import type { RateLimiter } from '../api/auth/rate-limit.ts';
import { createSecretSealer } from '../api/auth/secret-sealing.ts';
import type { ConnectionLimits } from '../api/http/connection-guard.ts';
import { startHttpServer, type RunningHttpServer } from '../api/http/server.ts';
import { seedMarketData } from '../api/market-data/seed-market-data.ts';
import { masterKeyId } from '../config/master-key.ts';
import { DEFAULT_OPTIONS } from '../config/options.ts';
import { StartRefusedError } from '../config/start-refusal.ts';
import type { VenueIdentity } from '../config/venue-identity.ts';
import type { Log } from '../domain/log.ts';
import { Engine } from '../engine/engine.ts';
import type { EngineSnapshot } from '../engine/snapshot.ts';
import { Health } from '../observability/health.ts';
import { HistoryCheckpointWatch } from '../store/history-checkpoint-watch.ts';
import type { HistoryStore } from '../store/history-store.ts';
import { followStateHashes, RemoteSubmit, type RemoteSubmitOptions } from './command-link.ts';
import { StreamReplica } from './stream-replica.ts';

export interface GatewayOptions {
  /** The venue's identity (venue.json: genesis, master key id). */
  readonly identity: VenueIdentity;
  /** The venue's master key (opens API secrets); must match `identity.masterKeyId`. */
  readonly masterKey: Buffer;
  /** Where the replica starts: a snapshot of the engine (from the snapshot store), else genesis. */
  readonly snapshot?: EngineSnapshot;
  /** NATS servers of the journal's stream and of the command subject. */
  readonly servers: string | readonly string[];
  readonly stream?: string;
  readonly subject?: string;
  readonly commands?: RemoteSubmitOptions;
  /** The shared history store (reads only). */
  readonly history: HistoryStore;
  /** Shared limits (Redis in a cluster), or undefined for none. */
  readonly rateLimiter: RateLimiter | undefined;
  readonly host: string;
  readonly port: number;
  /** The API's settings: the server's flags (`apiSettings(options)`); default the server's defaults. */
  readonly settings?: ApiSettings;
  /** `/ready` answers 503 while the history store is more commands than this behind the replica. */
  readonly readyMaxHistoryLag?: number;
  /** The public listener's connection limits (the server's `--max-connections…` flags); defaults otherwise. */
  readonly limits?: Partial<ConnectionLimits>;
  readonly log: Log;
}

export interface RunningGateway {
  readonly http: RunningHttpServer;
  readonly api: Api;
  readonly health: Health;
  readonly replica: StreamReplica;
  readonly submit: RemoteSubmit;
  close(): Promise<void>;
}

/** Starts a gateway; resolves once its replica follows the stream and it listens. */
export async function startGateway(options: GatewayOptions): Promise<RunningGateway> {
  const keyId = masterKeyId(options.masterKey);
  if (keyId !== options.identity.masterKeyId) {
    throw new StartRefusedError(
      `the master key (key id ${keyId}) does not open this venue: its API secrets are sealed with master key ${options.identity.masterKeyId}`,
    );
  }
  const at = (component: string): Log => options.log.child({ component });
  const engine =
    options.snapshot === undefined ? new Engine(options.identity.genesis) : Engine.restore(options.snapshot);
  const health = new Health({
    maxHistoryLag: options.readyMaxHistoryLag ?? DEFAULT_OPTIONS.readyMaxHistoryLag,
  });
  health.recovering();
  const replica = await StreamReplica.open({
    servers: options.servers,
    engine,
    log: at('replica'),
    ...(options.stream === undefined ? {} : { stream: options.stream }),
    ...(options.subject === undefined ? {} : { subject: options.subject }),
  });
  let nc: NatsConnection | undefined;
  let historyWatch: HistoryCheckpointWatch | undefined;
  try {
    nc = await connect({
      servers: typeof options.servers === 'string' ? [options.servers] : [...options.servers],
      name: 'bourse-gateway',
      maxReconnectAttempts: -1,
    });
    const submit = new RemoteSubmit(nc, replica, options.commands);
    // The engine's state hashes: a replica that differs stops (the role exits) rather than serve it.
    followStateHashes(nc, replica);
    const state = replica.state;
    const venue = { engine: state, history: options.history, now: Date.now, submit: submit.submit };
    // Built from the replica as it stands: they follow it from the next record on.
    const { marketData, klines } = await seedMarketData(state, options.history, Date.now);
    const api = buildApi(
      {
        venue,
        feed: replica,
        marketData,
        klines,
        sealer: createSecretSealer(options.masterKey),
        rateLimiter: options.rateLimiter,
        health,
        log: options.log,
      },
      options.settings ?? apiSettings(DEFAULT_OPTIONS),
    );
    historyWatch = new HistoryCheckpointWatch(
      options.history,
      await options.history.checkpoint(),
      at('history'),
    );
    const http = await startHttpServer({
      host: options.host,
      port: options.port,
      handler: api.handler,
      trustedProxies: api.trustedProxies,
      ...(options.limits === undefined ? {} : { limits: options.limits }),
    });
    http.server.on('upgrade', api.upgrade);
    // A gateway journals nothing: its "journal" is the replica, durable up to what it applied.
    health.running({
      engine: state,
      journal: {
        get durableSeq() {
          return replica.appliedSeq;
        },
        failure: null,
      },
      sequencer: {
        get failure() {
          return replica.failure;
        },
      },
      history: historyWatch,
    });
    const connection = nc;
    const watch = historyWatch;
    const close = async (): Promise<void> => {
      health.stopping();
      await api.close();
      await http.close();
      await watch.close();
      await connection.close();
      await replica.close();
    };
    return { http, api, health, replica, submit, close };
  } catch (error) {
    await historyWatch?.close();
    await nc?.close();
    await replica.close();
    throw error;
  }
}
