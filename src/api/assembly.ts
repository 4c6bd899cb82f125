/**
 * @module assembly — the whole API built once, from its ports and settings, without listening
 * (fastify's factory and its "build vs listen"; hono's app as a plain value): the public and
 * signed HTTP routes behind the probes, the trading page and the slow-request log, the WebSocket
 * API, and the admin API behind its own probes and the operator console. It returns a request
 * listener and an upgrade listener; whoever listens (src/main.ts, `bourse gateway`, a test's
 * server or `inject`) chooses where. The embedded server and a gateway therefore serve the same
 * API, under the same flags (`apiSettings`), by construction.
 *
 * The live views (market data, klines, the WebSocket pushes) join the applied feed at the next
 * command, in that order (the pushes read the market data); build the API right after seeding
 * the market data, with no await between.
 */
import type { IncomingMessage, RequestListener } from 'node:http';
import type { Duplex } from 'node:stream';
import type { ServerOptions } from '../config/options.ts';
import type { Log } from '../domain/log.ts';
import type { Health } from '../observability/health.ts';
import type { VenueMetrics } from '../observability/metrics.ts';
import { withProbes } from '../observability/probes.ts';
import type { AppliedFeed } from '../sequencer/venue-ports.ts';
import type { ClockMode } from '../domain/clock-speed.ts';
import { adminRoutes, type AdminDeps, type KeyIssuer } from './admin/admin-routes.ts';
import { Replays } from '../replay/run-replay.ts';
import { Authenticator } from './auth/authenticate.ts';
import { keyIssuer } from './auth/key-issuer.ts';
import type { RateLimiter } from './auth/rate-limit.ts';
import type { SecretSealer } from './auth/secret-sealing.ts';
import { TrustedProxies } from './http/client-ip.ts';
import { publicRoutes } from './http/public/public-routes.ts';
import { venueInfoRoutes } from './http/public/venue-info.ts';
import { createRequestHandler } from './http/server.ts';
import { DEFAULT_HISTORY_WAIT_MS, signedRoutes } from './http/signed/index.ts';
import { CONSOLE_HOME, CONSOLE_SCOPE, StaticSite, WEB_DIST, withStaticSite } from './http/static-site.ts';
import type { Route, VenuePort } from './http/types.ts';
import type { LiveKlines } from './market-data/live-klines.ts';
import type { MarketData } from './market-data/market-data.ts';
import { WsGateway, type WsGatewayOptions } from './ws/ws-server.ts';

/** The limiter when limits are switched off (`--rate-limits=false`, for load tests). */
const UNLIMITED: RateLimiter = { hitIp: () => ({ allowed: true }), hitKey: () => ({ allowed: true }) };

/** What the admin API needs beyond what the assembly already has (the venue, its log, the keys, the market data). */
export type AdminPorts = Omit<AdminDeps, 'venue' | 'log' | 'keys' | 'views'> & {
  readonly views: Omit<NonNullable<AdminDeps['views']>, 'volume24h'>;
};

/** The parts the API serves: each a port, the same in the embedded server, a gateway and a test. */
export interface ApiPorts {
  /** The venue's state (read-only), history store, venue time and submit. */
  readonly venue: VenuePort;
  /** The applied commands the live views follow (the sequencer, or a gateway's replica). */
  readonly feed: AppliedFeed;
  /** Seeded from `venue` (seed-market-data.ts) at `feed.appliedSeq`. */
  readonly marketData: MarketData;
  readonly klines: LiveKlines;
  /** Opens the API secrets (the master key's sealer). */
  readonly sealer: SecretSealer;
  /** Undefined: no limits (`--rate-limits=false`). */
  readonly rateLimiter: RateLimiter | undefined;
  /** The wall clock, which rate limits, reqTime and request times use whatever the venue's time (default Date.now). */
  readonly wallClock?: () => number;
  /** `manual` or `speed` under `--clock=manual|speed:<n>` (venueInfo says so); default `real`. */
  readonly clockMode?: ClockMode;
  /** Liveness and readiness: with it, `/health` and `/ready` are answered on both listeners. */
  readonly health?: Health;
  /** The metrics, made once the WebSocket gateway they count exists (absent: no `/metrics`). */
  readonly metrics?: (parts: { readonly ws: WsGateway }) => VenueMetrics | undefined;
  /** The admin API's parts (absent: no admin API, as on a gateway). */
  readonly admin?: AdminPorts;
  /** The root log: the parts log as `http`, `ws`, `auth` and `admin`. */
  readonly log: Log;
}

/** How the API behaves: the server's flags (`apiSettings`), or a test's choice. */
export interface ApiSettings {
  /** Refuse User-Agents that do not start with `Mozilla/` (`--strict-user-agent`). */
  readonly strictUserAgent: boolean;
  /** A routed request slower than this is logged at warn (`--slow-request-ms`; 0: never). */
  readonly slowRequestMs: number;
  /** Proxies whose X-Forwarded-For names the client (`--trusted-proxies`). */
  readonly trustedProxies: readonly string[];
  /** Allowed |reqTime − arrival| of a signed request in ms (`--req-time-window-ms`). */
  readonly reqTimeWindowMs?: number;
  /** Serve `/metrics` on the public listener too (`--public-metrics`). */
  readonly publicMetrics?: boolean;
  /** The built page and console (absent: no static site, the API only, as in unit tests). */
  readonly site?: string;
  /** Longest wait for history before a history read (signed API; default its own). */
  readonly historyWaitMs?: number;
  /** Per-IP spacing of kline requests (default the public API's own). */
  readonly klineMinIntervalMs?: number;
  /** The WebSocket gateway's bounds (default its own). */
  readonly ws?: Omit<WsGatewayOptions, 'trustedProxies'>;
  /** A sandbox (`--sandbox`): the admin API replays history (src/replay/run-replay.ts). */
  readonly sandbox?: boolean;
}

/** The API, built and not listening. */
export interface Api {
  /** The public listener's requests: probes, the page, the public and signed API. */
  readonly handler: RequestListener;
  /** The public listener's `upgrade` events: the WebSocket API. */
  readonly upgrade: (request: IncomingMessage, socket: Duplex, head: Buffer) => void;
  /** The admin listener's requests (probes, console, admin API), when `ports.admin` was given. */
  readonly admin: RequestListener | undefined;
  readonly ws: WsGateway;
  /** The public and signed routes, by path (for tests that call a route without HTTP). */
  readonly routes: readonly Route[];
  readonly keys: KeyIssuer & Required<Pick<KeyIssuer, 'renew' | 'opens'>>;
  readonly metrics: VenueMetrics | undefined;
  readonly trustedProxies: TrustedProxies;
  /** Whether the trading page and the operator console were found built. */
  readonly built: { readonly page: boolean; readonly console: boolean };
  /** A sandbox's replays of history (with the admin API on a sandbox), for start-up to resume and start. */
  readonly replays: Replays | undefined;
  /** Closes the WebSocket connections (the listeners are the caller's). */
  close(): Promise<void>;
}

/** The settings the server's flags give: the embedded server and `bourse gateway` both use this. */
export function apiSettings(options: ServerOptions): ApiSettings {
  return {
    strictUserAgent: options.strictUserAgent,
    slowRequestMs: options.slowRequestMs,
    trustedProxies: options.trustedProxies,
    reqTimeWindowMs: options.reqTimeWindowMs,
    publicMetrics: options.publicMetrics,
    site: WEB_DIST,
    sandbox: options.sandbox,
  };
}

/** Builds the API (the module comment): subscribes the live views to `ports.feed` from the next command. */
export function buildApi(ports: ApiPorts, settings: ApiSettings): Api {
  const { venue, marketData, klines, sealer, health } = ports;
  const wallClock = ports.wallClock ?? Date.now;
  const at = (component: string): Log => ports.log.child({ component });
  const httpLog = at('http');
  const trustedProxies = new TrustedProxies(settings.trustedProxies);
  const wsAuthenticator = new Authenticator(venue, sealer);
  const rateLimiter = ports.rateLimiter ?? UNLIMITED;
  const ws = new WsGateway(
    {
      engine: venue.engine,
      marketData,
      klines,
      authenticator: wsAuthenticator,
      now: venue.now,
      wallClock,
      log: at('ws'),
      // The request channels: the signed endpoints over the WebSocket, with the same rate limiter.
      requests: {
        venue,
        authenticator: wsAuthenticator,
        limiter: rateLimiter,
        historyWaitMs: settings.historyWaitMs ?? DEFAULT_HISTORY_WAIT_MS,
        sealer,
        log: at('ws'),
        wallClock,
      },
    },
    { ...settings.ws, trustedProxies },
  );
  // Made before the views join the feed: metrics that follow it see each batch first.
  const metrics = ports.metrics?.({ ws });
  const from = ports.feed.appliedSeq + 1;
  ports.feed.subscribe(from, (batch) => marketData.apply(batch));
  ports.feed.subscribe(from, klines.apply);
  ports.feed.subscribe(from, ws.apply);

  const routes = [
    // The kline endpoint's per-IP spacing is a rate limit: on the wall clock, like the others.
    ...publicRoutes({
      venue: { ...venue, now: wallClock },
      marketData,
      ...(settings.klineMinIntervalMs === undefined
        ? {}
        : { klineMinIntervalMs: settings.klineMinIntervalMs }),
    }),
    ...venueInfoRoutes({ engine: venue.engine, clock: { mode: ports.clockMode ?? 'real', now: venue.now } }),
    ...signedRoutes({
      venue,
      sealer,
      rateLimiter,
      log: at('auth'),
      ...(settings.reqTimeWindowMs === undefined ? {} : { reqTimeWindowMs: settings.reqTimeWindowMs }),
      ...(settings.historyWaitMs === undefined ? {} : { historyWaitMs: settings.historyWaitMs }),
    }),
  ];
  const apiHandler = createRequestHandler(routes, {
    strictUserAgent: settings.strictUserAgent,
    slowRequestMs: settings.slowRequestMs,
    log: httpLog,
    now: wallClock,
    trustedProxies,
  });
  const page = settings.site === undefined ? undefined : StaticSite.load(settings.site);
  const paged = settings.site === undefined ? apiHandler : withStaticSite(page, apiHandler);
  const handler =
    health === undefined
      ? paged
      : withProbes(paged, {
          health,
          detail: false,
          metrics: settings.publicMetrics === true ? metrics : undefined,
          log: httpLog,
        });

  const keys = keyIssuer(sealer);
  let admin: RequestListener | undefined;
  let consoleSite: StaticSite | undefined;
  const replays =
    ports.admin !== undefined && settings.sandbox === true ? sandboxReplays(ports, at('replay')) : undefined;
  if (ports.admin !== undefined) {
    const adminLog = at('admin');
    const adminApi = createRequestHandler(
      adminRoutes({
        ...ports.admin,
        replays,
        venue,
        log: adminLog,
        keys,
        views: { ...ports.admin.views, volume24h: (market) => marketData.tickerFigures(market)?.vol },
      }),
      // The CLI asks /admin/instance before every command (is this the server of listen.json?):
      // at debug, so that the log shows the command, not the question.
      { log: adminLog, accessLog: true, quietPaths: new Set(['/admin/instance']) },
    );
    // The operator console (web/admin) is served at /admin on the admin listener only.
    consoleSite = settings.site === undefined ? undefined : StaticSite.load(settings.site, CONSOLE_SCOPE);
    const consoled =
      settings.site === undefined ? adminApi : withStaticSite(consoleSite, adminApi, CONSOLE_HOME);
    admin =
      health === undefined
        ? consoled
        : withProbes(consoled, { health, detail: true, metrics, log: adminLog });
  }
  return {
    handler,
    upgrade: ws.upgrade,
    admin,
    ws,
    routes,
    keys,
    metrics,
    trustedProxies,
    built: { page: page !== undefined, console: consoleSite !== undefined },
    replays,
    close: () => ws.close(),
  };
}

/** A sandbox's replays, on the venue's time (a speed clock's replay sleeps its wall share of a wait). */
function sandboxReplays(ports: ApiPorts, log: Log): Replays {
  const { venue } = ports;
  const clock = ports.admin?.sandbox?.clock;
  return new Replays({
    engine: venue.engine,
    submit: (command) => venue.submit(command),
    now: venue.now,
    wallDelay: (ms) => ms / (clock?.speed?.() ?? 1),
    log,
  });
}
