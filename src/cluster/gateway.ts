/**
 * @module gateway — a gateway's composition (the `bourse gateway` role, docs/scale-out.md): the
 * public HTTP API and the WebSocket API on a read replica of the engine fed by the journal's
 * stream, with commands forwarded to the leading engine over NATS (command-link.ts).
 *
 * The same routes and WebSocket gateway as the embedded server, given a VenueState (the replica),
 * a SubmitPort (RemoteSubmit) and an AppliedFeed (the replica): they cannot tell the difference.
 * Reads of order history, trades and klines come from the shared history store (PostgreSQL in a
 * cluster; the `bourse history` role or the engine writes it). API secrets are opened with the
 * venue's master key, checked against the venue's identity (venue.json) before anything listens.
 */
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { Authenticator } from '../api/auth/authenticate.ts';
import type { RateLimiter } from '../api/auth/rate-limit.ts';
import { createSecretSealer } from '../api/auth/secret-sealing.ts';
import { masterKeyId } from '../config/master-key.ts';
import { TrustedProxies } from '../api/http/client-ip.ts';
import type { ConnectionLimits } from '../api/http/connection-guard.ts';
import { publicRoutes } from '../api/http/public/public-routes.ts';
import { venueInfoRoutes } from '../api/http/public/venue-info.ts';
import { createRequestHandler, startHttpServer, type RunningHttpServer } from '../api/http/server.ts';
import { signedRoutes } from '../api/http/signed/index.ts';
import type { VenuePort } from '../api/http/types.ts';
import { seedMarketData } from '../api/market-data/seed-market-data.ts';
import { WsGateway } from '../api/ws/ws-server.ts';
import { StartRefusedError } from '../config/start-refusal.ts';
import type { VenueIdentity } from '../config/venue-identity.ts';
import { Engine } from '../engine/engine.ts';
import type { EngineSnapshot } from '../engine/snapshot.ts';
import type { Log } from '../domain/log.ts';
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
  readonly trustedProxies?: readonly string[];
  readonly reqTimeWindowMs?: number;
  /** The public listener's connection limits (the server's `--max-connections…` flags); defaults otherwise. */
  readonly limits?: Partial<ConnectionLimits>;
  readonly log: Log;
}

export interface RunningGateway {
  readonly http: RunningHttpServer;
  readonly ws: WsGateway;
  readonly replica: StreamReplica;
  readonly submit: RemoteSubmit;
  close(): Promise<void>;
}

const UNLIMITED: RateLimiter = { hitIp: () => ({ allowed: true }), hitKey: () => ({ allowed: true }) };

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
  const replica = await StreamReplica.open({
    servers: options.servers,
    engine,
    log: at('replica'),
    ...(options.stream === undefined ? {} : { stream: options.stream }),
    ...(options.subject === undefined ? {} : { subject: options.subject }),
  });
  let nc: NatsConnection | undefined;
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
    const sealer = createSecretSealer(options.masterKey);
    const venue: VenuePort = {
      engine: state,
      history: options.history,
      now: Date.now,
      submit: submit.submit,
    };
    const { marketData, klines } = await seedMarketData(state, options.history, Date.now);
    const trustedProxies = new TrustedProxies(options.trustedProxies ?? []);
    const ws = new WsGateway(
      {
        engine: state,
        marketData,
        klines,
        authenticator: new Authenticator(venue, sealer),
        now: Date.now,
        log: at('ws'),
      },
      { trustedProxies },
    );
    // Built from the replica as it stands: they follow it from the next record on.
    const from = replica.appliedSeq + 1;
    replica.subscribe(from, (batch) => marketData.apply(batch));
    replica.subscribe(from, klines.apply);
    replica.subscribe(from, ws.apply);
    const routes = [
      ...publicRoutes({ venue, marketData }),
      ...venueInfoRoutes({ engine: state, clock: { mode: 'real', now: Date.now } }),
      ...signedRoutes({
        venue,
        sealer,
        rateLimiter: options.rateLimiter ?? UNLIMITED,
        log: at('auth'),
        ...(options.reqTimeWindowMs === undefined ? {} : { reqTimeWindowMs: options.reqTimeWindowMs }),
      }),
    ];
    const http = await startHttpServer({
      host: options.host,
      port: options.port,
      handler: createRequestHandler(routes, { strictUserAgent: false, log: at('http'), trustedProxies }),
      trustedProxies,
      ...(options.limits === undefined ? {} : { limits: options.limits }),
    });
    ws.attach(http.server);
    const connection = nc;
    const close = async (): Promise<void> => {
      await ws.close();
      await http.close();
      await connection.close();
      await replica.close();
    };
    return { http, ws, replica, submit, close };
  } catch (error) {
    await nc?.close();
    await replica.close();
    throw error;
  }
}
