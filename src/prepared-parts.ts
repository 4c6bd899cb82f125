/**
 * @module prepared-parts — what `startVenue` (src/main.ts) is given and gives: the parts of a venue a
 * hot standby opens while it stands by (src/cluster/ready-to-lead.ts) and hands over when it takes
 * the lease, so that a takeover is the lease, the fence and the journal's tail (issue 30; the venue
 * that takes them closes them), the other hooks, and the running venue.
 */
import type { RunningAdminServer } from './api/admin/admin-server.ts';
import type { RunningHttpServer } from './api/http/server.ts';
import type { SeededMarketData } from './api/market-data/seed-market-data.ts';
import type { WsGateway } from './api/ws/ws-server.ts';
import type { ChainWatcher } from './chain/chain-watcher.ts';
import type { SimulatedChain } from './chain/simulated-chain.ts';
import type { ClockSetting, ServerOptions } from './config/options.ts';
import type { DemoMarket } from './demo/demo-market.ts';
import type { Health } from './observability/health.ts';
import type { VenueMetrics } from './observability/metrics.ts';
import type { Sequencer } from './sequencer/sequencer.ts';
import type { VenueRateLimiter } from './api/auth/open-rate-limiter.ts';
import type { Engine } from './engine/engine.ts';
import type { AppliedCommand } from './sequencer/sequencer.ts';
import type { HistoryStore } from './store/history-store.ts';

/** What a standby opened before it leads (the module comment). */
export interface PreparedParts {
  /** The history store, open for reads. */
  readonly history: HistoryStore;
  /** The rate limiter (connected to Redis with --limits-url), undefined with --rate-limits=false. */
  readonly rateLimiter: VenueRateLimiter | undefined;
  /**
   * Market data and live klines of `startFrom`'s engine, seeded and fed up to its seq (on the
   * wall clock only: under --clock=manual the venue's time is known only after recovery).
   */
  readonly market: SeededMarketData | undefined;
}

/**
 * The market data a standby seeded and kept current, when the venue may take them: not while it
 * rebuilds history (they would count the rebuilt trades twice) and only on the wall clock.
 */
export function usableMarket(
  prepared: PreparedParts | undefined,
  rebuildHistory: boolean,
  clock: ClockSetting,
): SeededMarketData | undefined {
  return prepared?.market !== undefined && !rebuildHistory && clock === 'real' ? prepared.market : undefined;
}

/** What `startVenue` (src/main.ts) may be given besides the options and the log. */
export interface VenueHooks {
  /** Writes the log's queued lines (called before a fatal exit). */
  readonly flushLog?: () => void;
  /** A hot standby's replica to start from (the `from-standby` boot mode, src/cluster/engine-role.ts). */
  readonly startFrom?: Engine;
  /** Also receives the commands replayed at start-up (the request ids a new leader must know). */
  readonly onReplayed?: (batch: readonly AppliedCommand[]) => void;
  /** What a hot standby opened before it took the lease, used instead of opening it now. */
  readonly prepared?: PreparedParts;
}

/** A started venue (`startVenue`). */
export interface RunningVenue {
  readonly sequencer: Sequencer;
  readonly http: RunningHttpServer;
  /** The admin API's own listener (loopback TCP or a Unix socket). */
  readonly admin: RunningAdminServer;
  readonly ws: WsGateway;
  readonly options: ServerOptions;
  /** The simulated chain every coin moves on, and the watcher that reports it to the engine. */
  readonly chain: SimulatedChain;
  readonly watcher: ChainWatcher;
  /** The demo market's bots, when they run (docs/sandbox.md). */
  readonly demo: DemoMarket | undefined;
  /** Liveness and readiness (`/health`, `/ready`). */
  readonly health: Health;
  /** The Prometheus metrics (`/metrics`), unless switched off with `--metrics=false`. */
  readonly metrics: VenueMetrics | undefined;
  /** Stops accepting requests, lets in-flight commands become durable, closes every file. */
  close(): Promise<void>;
}
