/**
 * @module main — the composition root: the one module that wires every part together, and the
 * program `npm start` runs.
 *
 * Start-up order: options → data directory (genesis, admin token) → master key → journal,
 * snapshots, history store → recovery (snapshot + journal replay, history brought up to date) →
 * sequencer (on the wall clock, or a manual one) → market data → chains (the simulated chain, and
 * a first pass of the chain watcher) → HTTP (the API behind the trading page's files) and
 * WebSocket, then the admin listener, then `listen.json` (where both listen), then the demo market
 * when this venue has one. The API opens only after recovery has finished. The listen addresses
 * are checked before anything is created on disk, so that a busy port is one line and no new data
 * directory.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { adminRoutes } from './api/admin/admin-routes.ts';
import { ADMIN_ROLE, startAdminServer, type RunningAdminServer } from './api/admin/admin-server.ts';
import {
  createSecretSealer,
  generateApiCredentials,
  loadMasterKey,
  writeMasterKeyFile,
} from './api/auth/secret-sealing.ts';
import { Authenticator } from './api/auth/authenticate.ts';
import { MemoryRateLimiter, type RateLimiter } from './api/auth/rate-limit.ts';
import { TrustedProxies } from './api/http/client-ip.ts';
import {
  ListenError,
  listenProblem,
  probeListen,
  type ListenRole,
  type ListenTarget,
} from './api/http/listen-probe.ts';
import { publicRoutes } from './api/http/public/public-routes.ts';
import { venueInfoRoutes } from './api/http/public/venue-info.ts';
import { createRequestHandler, startHttpServer, type RunningHttpServer } from './api/http/server.ts';
import { signedRoutes } from './api/http/signed/index.ts';
import { StaticSite, withStaticSite } from './api/http/static-site.ts';
import type { VenuePort } from './api/http/types.ts';
import { LiveKlines } from './api/market-data/live-klines.ts';
import { MarketData } from './api/market-data/market-data.ts';
import { WsGateway } from './api/ws/ws-server.ts';
import { ChainWatcher } from './chain/chain-watcher.ts';
import { SimulatedChain } from './chain/simulated-chain.ts';
import { dataPaths, ensureAdminToken, ensureGenesis } from './config/data-dir.ts';
import {
  newInstanceId,
  removeListenFile,
  tcpEndpoint,
  writeListenFile,
  type Endpoint,
} from './config/listen-file.ts';
import {
  describeOptions,
  isLoopbackHost,
  loadOptions,
  serverUsage,
  wantsHelp,
  type ServerOptions,
} from './config/options.ts';
import { decideDemo, startDemoMarket, type DemoMarket } from './demo/demo-market.ts';
import { FileJournal } from './journal/file-journal.ts';
import { SnapshotStore } from './journal/snapshot-store.ts';
import { MAX_CLOCK_ADVANCE_MS, ManualClock } from './sequencer/manual-clock.ts';
import { recover } from './sequencer/recovery.ts';
import { Sequencer } from './sequencer/sequencer.ts';
import { HistoryFollower } from './store/history-follower.ts';
import { describeHistoryLocation, historyLocation, openHistoryStore } from './store/history-location.ts';
import { HistoryWorker } from './store/history-worker.ts';
import { HISTORY_BATCH_ENTRIES, HistoryWriter } from './store/history-writer.ts';

/** The built trading page (Vite's output; `npm install` builds it, see web/). */
export const WEB_DIST = join(import.meta.dirname, '..', 'web', 'dist');

/** The limiter when limits are switched off (`--rate-limits=false`, for load tests). */
const UNLIMITED: RateLimiter = { hitIp: () => ({ allowed: true }), hitKey: () => ({ allowed: true }) };

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
  /** Stops accepting requests, lets in-flight commands become durable, closes every file. */
  close(): Promise<void>;
}

/**
 * Where the master key lives when the operator names none: outside the data directory, in the
 * user's configuration directory, created on first start (mode 600).
 */
export function defaultMasterKeyFile(dataDir: string, env: NodeJS.ProcessEnv = process.env): string {
  const base = env['XDG_CONFIG_HOME'] ?? join(homedir(), '.config');
  const id = resolve(dataDir)
    .replace(/[^A-Za-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
  return join(base, 'bourse', `master-${id}.key`);
}

const PUBLIC_ROLE: ListenRole = {
  what: 'the public API',
  port: '--port or BOURSE_PORT',
  host: '--host or BOURSE_HOST',
};

/** Where the admin API listens: the Unix socket when one is set, else adminHost:adminPort. */
const adminTarget = (options: ServerOptions): ListenTarget =>
  options.adminSocket !== undefined
    ? { socket: options.adminSocket }
    : { host: options.adminHost, port: options.adminPort };

/** Throws a ListenError (one line) when the public or admin address cannot be listened on now. */
async function refuseBusyAddresses(options: ServerOptions): Promise<void> {
  const problem =
    (await probeListen({ host: options.host, port: options.port }, PUBLIC_ROLE)) ??
    (await probeListen(adminTarget(options), ADMIN_ROLE));
  if (problem !== undefined) throw new ListenError(problem);
}

/**
 * Starts a venue with `options`; resolves once it is recovered and listening. Rejects with a
 * ListenError, before the data directory is touched, when an address is taken.
 */
export async function startVenue(
  options: ServerOptions,
  log: (message: string) => void,
): Promise<RunningVenue> {
  await refuseBusyAddresses(options);
  const instance = newInstanceId();
  const paths = dataPaths(options.dataDir);
  const genesis = ensureGenesis(paths.root);
  const adminToken = ensureAdminToken(paths.root);

  const keyFile =
    options.masterKeyFile ??
    (process.env['BOURSE_MASTER_KEY'] ? undefined : defaultMasterKeyFile(paths.root));
  if (keyFile !== undefined && options.masterKeyFile === undefined && !existsSync(keyFile)) {
    mkdirSync(dirname(keyFile), { recursive: true, mode: 0o700 });
    writeMasterKeyFile(keyFile);
    log(
      `created the master key ${keyFile} (outside the data directory: back it up, it opens the API secrets)`,
    );
  }
  const sealer = createSecretSealer(loadMasterKey({ keyFile, dataDir: paths.root, warn: log }));

  const journal = FileJournal.open(paths.journal, { maxBatchDelayMs: options.groupCommitMaxDelayMs });
  if (journal.recovery.truncatedBytes > 0) log(`journal: ${journal.recovery.tail}`);
  const snapshots = new SnapshotStore(paths.snapshots, { onProblem: (p) => log(`snapshots: ${p}`) });
  const historyPlace = historyLocation(options.historyUrl, paths.history);
  const history = await openHistoryStore(historyPlace, log);
  log(`history store: ${describeHistoryLocation(historyPlace)}`);
  // Writes go through a worker thread with its own connection; reads stay on `history`.
  const historyWrites = new HistoryWorker(historyPlace);
  const writer = new HistoryWriter(historyWrites, log);
  const historyAt = await history.checkpoint();

  const started = Date.now();
  // History behind the newest snapshot (a new or lost database) needs the journal from genesis.
  const newestSnapshot = snapshots.list()[0]?.lastSeq ?? 0;
  const journalComplete = journal.firstSeq <= 1 || journal.durableSeq === 0;
  const rebuildHistory = historyAt < newestSnapshot && journalComplete;
  if (rebuildHistory)
    log(
      `history store at seq ${historyAt}, behind the snapshot at ${newestSnapshot}: replaying from genesis`,
    );
  else if (historyAt < newestSnapshot) {
    log(
      `history store at seq ${historyAt}, but the journal before the snapshot at ${newestSnapshot} was pruned: that history is lost`,
    );
  }
  const { engine, lastTime } = await recover({
    genesis,
    journal,
    snapshots,
    ignoreSnapshots: rebuildHistory,
    log,
    onReplayed: async (batch) => {
      writer.enqueue(batch.filter((c) => c.command.seq > historyAt));
      if (writer.queued >= HISTORY_BATCH_ENTRIES * 4) await writer.drain();
    },
  });
  await writer.drain();
  // From here on the history follows the journal's bytes on its own engine replica.
  await historyWrites.close();
  engine.assertInvariants();
  log(`recovered at seq ${engine.lastSeq} in ${Date.now() - started} ms`);
  const startState = engine.snapshot();
  const follower = new HistoryFollower(
    { store: historyPlace, snapshot: startState, stateHash: engine.stateHash(startState) },
    log,
  );

  // Venue time: the wall clock, or under --clock=manual one that moves only when advanced, from
  // where the journal left off. Rate limits, reqTime checks and timeouts stay on the wall clock.
  const manualClock = options.clock === 'manual' ? new ManualClock(lastTime ?? Date.now()) : undefined;
  const now = manualClock?.now ?? Date.now;
  if (manualClock !== undefined) {
    log(
      `clock: manual, standing at ${new Date(now()).toISOString()}; it moves only with bourse clock advance <duration>`,
    );
  } else if (lastTime !== undefined && lastTime > Date.now() + 60_000) {
    log(
      `clock: the journal's last time ${new Date(lastTime).toISOString()} is ahead of the wall clock ` +
        '(a manual clock was advanced): new commands carry that time until the wall clock passes it',
    );
  }
  const sequencer = new Sequencer(engine, journal, snapshots, {
    clock: now,
    armTimers: manualClock === undefined,
    startTime: lastTime,
    maxInFlight: options.maxInFlightCommands,
    snapshotEveryCommands: options.snapshotEveryCommands,
    snapshotEveryMs: options.snapshotEveryMinutes * 60_000,
    keepSnapshots: options.keepSnapshots,
    pruneJournal: options.pruneJournal,
    log,
  });
  const marketData = new MarketData(engine, { now });
  await marketData.seed(history);
  const klines = new LiveKlines();
  await klines.seed(
    history,
    engine.markets().map((m) => m.name),
  );
  sequencer.onApplied((batch) => marketData.apply(batch));
  sequencer.onApplied(klines.apply);
  sequencer.onApplied(follower.enqueue);
  sequencer.addPressureSource(follower.overBound);

  // The chain configuration is the genesis one: every coin and chain has its adapter.
  const chain = SimulatedChain.open(engine.funds.config(), paths.chain, log);
  const watcher = new ChainWatcher({
    engine,
    submit: (command) => sequencer.submit(command),
    adapters: chain.adapters(),
    log,
  });
  sequencer.onApplied(watcher.onApplied);
  // What the chain did while the venue was down (or mid-pass when it stopped) reaches the engine now.
  await watcher.start();

  const venue: VenuePort = {
    engine,
    history,
    now,
    submit: (command) => sequencer.submit(command),
  };
  const issueKey = (): { accessKey: string; secretKey: string; sealedSecret: string } => {
    const c = generateApiCredentials();
    return {
      accessKey: c.accessKey,
      secretKey: c.secret,
      sealedSecret: sealer.seal(c.secretHash, c.accessKey),
    };
  };
  const routes = [
    // The kline endpoint's per-IP spacing is a rate limit: on the wall clock, like the others.
    ...publicRoutes({ venue: { ...venue, now: Date.now }, marketData }),
    ...venueInfoRoutes({ engine, clock: { mode: options.clock, now } }),
    ...signedRoutes({
      venue,
      sealer,
      reqTimeWindowMs: options.reqTimeWindowMs,
      rateLimiter: options.rateLimits
        ? new MemoryRateLimiter({
            ipRequestsPerMinute: options.ipRequestsPerMinute,
            keyRequestsPerSecond: options.keyRequestsPerSecond,
          })
        : UNLIMITED,
    }),
  ];
  const admins = adminRoutes({
    venue,
    token: adminToken,
    instance,
    snapshot: () => sequencer.snapshot(),
    funds: { chains: chain.adapters(), simulator: chain, syncChains: () => watcher.sync() },
    keys: { issue: issueKey },
    sandbox: {
      clock: {
        manual: manualClock !== undefined,
        now,
        advance: (ms) =>
          (manualClock as ManualClock).advance(ms, {
            nextDeadline: () => engine.nextDeadline(),
            submit: venue.submit,
          }),
      },
      maxAdvanceMs: MAX_CLOCK_ADVANCE_MS,
    },
  });
  const trustedProxies = new TrustedProxies(options.trustedProxies);
  const site = StaticSite.load(WEB_DIST);
  const handler = withStaticSite(
    site,
    createRequestHandler(routes, { strictUserAgent: options.strictUserAgent, log, trustedProxies }),
  );
  const ws = new WsGateway(
    {
      engine,
      marketData,
      klines,
      authenticator: new Authenticator(venue, sealer),
      now,
      wallClock: Date.now,
      log,
    },
    { trustedProxies },
  );
  sequencer.onApplied(ws.apply);
  const http = await startHttpServer({
    host: options.host,
    port: options.port,
    handler,
    trustedProxies,
    limits: {
      maxConnections: options.maxConnections,
      maxConnectionsPerIp: options.maxConnectionsPerIp,
      headersTimeoutMs: options.headersTimeoutMs,
      requestTimeoutMs: options.requestTimeoutMs,
      keepAliveTimeoutMs: options.keepAliveTimeoutMs,
    },
  }).catch((error: unknown) => {
    throw new ListenError(listenProblem({ host: options.host, port: options.port }, PUBLIC_ROLE, error));
  });
  ws.attach(http.server);
  const admin = await startAdminServer(adminTarget(options), createRequestHandler(admins, { log })).catch(
    async (error: unknown) => {
      await http.close();
      throw error;
    },
  );
  const publicAt = tcpEndpoint(http.host, http.port);
  const adminAt: Endpoint =
    admin.target.socket !== undefined
      ? { socket: admin.target.socket }
      : tcpEndpoint(admin.target.host, admin.target.port);
  writeListenFile(paths.root, {
    pid: process.pid,
    instance,
    startedAt: new Date().toISOString(),
    public: publicAt,
    admin: adminAt,
  });
  log(`admin API on ${'socket' in adminAt ? `the Unix socket ${adminAt.socket}` : adminAt.url}`);
  if (!('socket' in adminAt) && !isLoopbackHost(adminAt.host)) {
    log(`warning: the admin API listens on ${adminAt.host}, not on loopback: keep that interface private`);
  }
  log(`listening on http://${http.host}:${http.port} (data in ${resolve(paths.root)})`);
  log(
    site === undefined
      ? `trading page: not built (run npm run build:web)`
      : `trading page: http://${http.host}:${http.port}/`,
  );

  const decision = decideDemo(engine, options.demo, isLoopbackHost(options.host));
  let demo: DemoMarket | undefined;
  if (decision.run) {
    try {
      demo = await startDemoMarket({
        engine,
        submit: venue.submit,
        issueKey,
        baseUrl: `http://${http.host.includes(':') ? `[${http.host}]` : http.host}:${http.port}`,
        log,
      });
      log(
        `demo trader: sign in on the page with API key ${demo.trader.accessKey} and secret ` +
          `${demo.trader.secretKey} (a new key at each start; bourse demo stop ends the demo)`,
      );
      const running = demo;
      sequencer.onApplied((batch) => {
        if (batch.some((a) => a.command.type === 'StopDemo' && a.result.result === 'OK')) {
          void running.stop().then(() => log('demo market stopped for good; its users stay'));
        }
      });
    } catch (error) {
      log(`demo market not started: ${(error as Error).message}`);
    }
  } else if (options.demo) log(decision.reason);

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> =>
    (closing ??= (async () => {
      // First, so that a CLI started during the stop is told no server runs here.
      removeListenFile(paths.root, instance);
      await demo?.stop();
      await ws.close();
      await http.close();
      await admin.close();
      await watcher.stop();
      await sequencer.close();
      await follower.close().catch(() => undefined);
      await history.close();
    })());
  const fatal = (error: Error): void => {
    log(`fatal: ${error.message}; stopping so that a restart recovers from the journal`);
    process.exitCode = 1;
    void close().finally(() => process.exit(1));
  };
  sequencer.onFatal(fatal);
  follower.onFatal(fatal);
  return { sequencer, http, admin, ws, options, chain, watcher, demo, close };
}

async function main(): Promise<void> {
  const log = (message: string): void => console.log(`${new Date().toISOString()} bourse: ${message}`);
  if (wantsHelp(process.argv.slice(2))) {
    console.log(serverUsage());
    return;
  }
  let options: ServerOptions;
  try {
    options = loadOptions(process.argv.slice(2), process.env);
  } catch (error) {
    console.error((error as Error).message);
    process.exit(2);
  }
  log(`starting with ${describeOptions(options)}`);
  const venue = await startVenue(options, log);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      log(`${signal}: closing`);
      void venue.close().then(() => process.exit(0));
    });
  }
}

if (import.meta.main) {
  main().catch((error: unknown) => {
    // A listen problem is the operator's to fix, in one line; anything else is a bug: its stack.
    const detail = error instanceof ListenError ? error.message : ((error as Error).stack ?? String(error));
    console.error(`bourse: cannot start: ${detail}`);
    process.exit(1);
  });
}
