/**
 * @module main — the composition root: the one module that wires every part together, and the
 * program `npm start` runs.
 *
 * Start-up order: options → logger → the data directory's lock (one process per directory) → genesis,
 * admin token → the venue's identity (genesis and master key checked against venue.json) → the
 * admin listener, answering only `/health` and `/ready` (503 to the rest) → journal, snapshots,
 * history store → recovery (snapshot + journal replay, history brought up to date) → sequencer
 * (on the wall clock, or a manual one) → market data, metrics → chains (the simulated chain, and
 * a first pass of the chain watcher) → HTTP (the API behind the trading page's files) and
 * WebSocket, the admin routes, then `listen.json` (where both listen), then the demo market when
 * this venue has one. The public API opens only after recovery has finished. The listen addresses
 * are checked before anything is created on disk, so that a busy port is one line and no new data
 * directory.
 */
import { mkdirSync, statSync } from 'node:fs';
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { join, resolve } from 'node:path';
import { adminRoutes } from './api/admin/admin-routes.ts';
import { AUDIT_FILE, FileAuditLog } from './api/admin/audit-log.ts';
import { ADMIN_ROLE, startAdminServer, type RunningAdminServer } from './api/admin/admin-server.ts';
import { createSecretSealer, generateApiCredentials } from './api/auth/secret-sealing.ts';
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
import { CONSOLE_HOME, CONSOLE_SCOPE, StaticSite, withStaticSite } from './api/http/static-site.ts';
import type { VenuePort } from './api/http/types.ts';
import { seedMarketData } from './api/market-data/seed-market-data.ts';
import { WsGateway } from './api/ws/ws-server.ts';
import { ChainWatcher } from './chain/chain-watcher.ts';
import { SimulatedChain } from './chain/simulated-chain.ts';
import { journalLocation, openJournal, openRateLimiter } from './config/adapters.ts';
import {
  ADMIN_TOKEN_FILE,
  DATA_UMASK,
  DIR_MODE,
  dataPaths,
  ensureAdminToken,
  tightenDataDir,
  type DataPaths,
} from './config/data-dir.ts';
import { acquireDataLock, type DataLock } from './config/data-lock.ts';
import {
  newInstanceId,
  removeListenFile,
  tcpEndpoint,
  writeListenFile,
  type Endpoint,
} from './config/listen-file.ts';
import {
  demoAsked,
  isLoopbackHost,
  loadOptions,
  serverUsage,
  shownOptions,
  wantsHelp,
  type ServerOptions,
} from './config/options.ts';
import { StartRefusedError } from './config/start-refusal.ts';
import { exitAfterClose, handleStopSignals } from './config/stop-signals.ts';
import { usableMarket, type PreparedParts } from './prepared-parts.ts';
import { ensureVenueGenesis, openVenue } from './config/venue-identity.ts';
import type { Engine } from './engine/engine.ts';
import { decideDemo, startDemoMarket, type DemoMarket } from './demo/demo-market.ts';
import { RESULTS } from './domain/result-codes.ts';
import { FileJournal } from './journal/file-journal.ts';
import { Health } from './observability/health.ts';
import { createLogger, type Component } from './observability/logger.ts';
import { VenueMetrics } from './observability/metrics.ts';
import { withProbes } from './observability/probes.ts';
import { progressReporter } from './observability/progress.ts';
import type { Log } from './sequencer/ports.ts';
import { SnapshotStore } from './journal/snapshot-store.ts';
import { MAX_CLOCK_ADVANCE_MS } from './sequencer/manual-clock.ts';
import { openVenueClock } from './sequencer/venue-clock.ts';
import { recover } from './sequencer/recovery.ts';
import { Sequencer, type AppliedCommand, type AppliedListener } from './sequencer/sequencer.ts';
import { HistoryCheckpointWatch, type HistoryProgress } from './store/history-checkpoint-watch.ts';
import { HistoryFollower } from './store/history-follower.ts';
import {
  describeHistoryLocation,
  historyLocation,
  openHistoryStore,
  readerLocation,
} from './store/history-location.ts';
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
  /** Liveness and readiness (`/health`, `/ready`). */
  readonly health: Health;
  /** The Prometheus metrics (`/metrics`), unless switched off with `--metrics=false`. */
  readonly metrics: VenueMetrics | undefined;
  /** Stops accepting requests, lets in-flight commands become durable, closes every file. */
  close(): Promise<void>;
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

/** What `startVenue` may be given besides the options and the log. */
export interface VenueHooks {
  /** Writes the log's queued lines (called before a fatal exit). */
  readonly flushLog?: () => void;
  /**
   * The engine to start from instead of the newest snapshot: a hot standby's replica, at or
   * behind the journal's end (src/cluster/engine-role.ts). Its history store must hold up to it.
   */
  readonly startFrom?: Engine;
  /** Also receives the commands replayed at start-up (the request ids a new leader must know). */
  readonly onReplayed?: (batch: readonly AppliedCommand[]) => void;
  /**
   * What a hot standby opened before it took the lease (src/cluster/ready-to-lead.ts), used
   * instead of opening it now: a takeover is then the lease, the fence and the journal's tail.
   */
  readonly prepared?: PreparedParts;
}

/**
 * Starts a venue with `options`; resolves once it is recovered and listening. Rejects with a
 * ListenError, before the data directory is touched, when an address is taken. `log` is the root
 * logger: each part logs through a child with its `component` (docs/operations.md, "Logs").
 */
export async function startVenue(
  options: ServerOptions,
  log: Log,
  hooks: VenueHooks = {},
): Promise<RunningVenue> {
  await refuseBusyAddresses(options);
  const paths = dataPaths(options.dataDir);
  // Everything this process creates in the data directory is the owner's only.
  process.umask(DATA_UMASK);
  // Before anything is written in it: one process per data directory.
  mkdirSync(paths.root, { recursive: true, mode: DIR_MODE });
  const lock = await acquireDataLock(paths.root, 'server', SERVER_LOCK_ADVICE);
  try {
    const loosened = tightenDataDir(paths.root);
    if (loosened.length > 0) {
      log
        .child({ component: 'main' })
        .warn(
          { paths: loosened.slice(0, 20) },
          `made ${loosened.length} entries of the data directory readable by the owner only (directories 0700, files 0600)`,
        );
    }
    return await startLocked(options, log, hooks, paths, lock);
  } catch (error) {
    await lock.release();
    throw error;
  }
}

/** A stop caused by the disk rather than a bug: a full one (its group 1 names which), or an I/O error. */
const DISK_FAILURE = /\b(ENOSPC|EDQUOT|EIO|EROFS)\b|(SQLITE_FULL|database or disk is full)/;

/** What a second server on a data directory is told. */
const SERVER_LOCK_ADVICE =
  'stop it first (one process per data directory; a copy of the directory may run elsewhere)';

/** `startVenue` once the data directory's lock is held; `close` releases it. */
async function startLocked(
  options: ServerOptions,
  log: Log,
  hooks: VenueHooks,
  paths: DataPaths,
  lock: DataLock,
): Promise<RunningVenue> {
  const at = (component: Component): Log => log.child({ component });
  const mainLog = at('main');
  const instance = newInstanceId();
  const genesis = ensureVenueGenesis(paths.root);
  const adminToken = ensureAdminToken(paths.root);
  const health = new Health({ maxHistoryLag: options.readyMaxHistoryLag });

  const { masterKey } = openVenue(paths.root, genesis, {
    masterKeyFile: options.masterKeyFile,
    info: (message) => mainLog.info(message),
    warn: (message) => mainLog.warn(message),
  });
  const sealer = createSecretSealer(masterKey);

  // The admin listener opens first, answering /health and /ready (and 503 to the rest) while the
  // venue recovers: a long replay is then visible to monitoring instead of looking dead.
  const adminLog = at('admin');
  let adminHandler: RequestListener = withProbes(recoveringHandler, { health, detail: true });
  const admin = await startAdminServer(adminTarget(options), (req, res) => adminHandler(req, res));
  const adminAt: Endpoint =
    admin.target.socket !== undefined
      ? { socket: admin.target.socket }
      : tcpEndpoint(admin.target.host, admin.target.port);
  adminLog.info(
    { admin: adminAt },
    `admin API on ${'socket' in adminAt ? `the Unix socket ${adminAt.socket}` : adminAt.url}`,
  );
  if (!('socket' in adminAt) && !isLoopbackHost(adminAt.host)) {
    adminLog.warn(
      { host: adminAt.host },
      `the admin API listens on ${adminAt.host}, not on loopback: keep that interface private`,
    );
  }
  try {
    return await startServing();
  } catch (error) {
    await admin.close();
    throw error;
  }

  async function startServing(): Promise<RunningVenue> {
    health.recovering();
    const journalLog = at('journal');
    const historyLog = at('history');
    const snapshotLog = at('snapshots');
    const journal = await openJournal(
      paths.root,
      paths.journal,
      journalLocation(options.journalUrl, paths.journal),
      { maxBatchDelayMs: options.groupCommitMaxDelayMs, log: journalLog },
    );
    const snapshots = new SnapshotStore(paths.snapshots, { onProblem: (p) => snapshotLog.warn(p) });
    for (const file of snapshots.removeLeftovers())
      snapshotLog.info({ path: file }, `removed ${file}, left by a snapshot cut short`);
    const historyPlace = historyLocation(options.historyUrl, paths.history);
    const prepared = hooks.startFrom === undefined ? undefined : hooks.prepared;
    const history =
      prepared?.history ??
      (await openHistoryStore(readerLocation(historyPlace), (message) => historyLog.warn(message)));
    historyLog.info(
      { store: describeHistoryLocation(historyPlace) },
      `history store: ${describeHistoryLocation(historyPlace)}`,
    );
    // Writes go through a worker thread with its own connection; reads stay on `history`. With
    // --write-history=false a `bourse history` process writes the store and this one only reads it.
    const historyWrites = options.writeHistory ? new HistoryWorker(historyPlace) : undefined;
    const writer = historyWrites && new HistoryWriter(historyWrites, (message) => historyLog.warn(message));
    const historyAt = await history.checkpoint();

    const started = Date.now();
    // History behind the newest snapshot (a new or lost database) needs the journal from genesis.
    const newestSnapshot = snapshots.list()[0]?.lastSeq ?? 0;
    const journalComplete = journal.firstSeq <= 1 || journal.durableSeq === 0;
    const rebuildHistory = writer !== undefined && historyAt < newestSnapshot && journalComplete;
    if (rebuildHistory) {
      historyLog.warn(
        { historySeq: historyAt, snapshotSeq: newestSnapshot },
        `history store at seq ${historyAt}, behind the snapshot at ${newestSnapshot}: replaying from genesis`,
      );
    } else if (writer !== undefined && historyAt < newestSnapshot) {
      historyLog.error(
        { historySeq: historyAt, snapshotSeq: newestSnapshot },
        `history store at seq ${historyAt}, but the journal before the snapshot at ${newestSnapshot} was pruned: that history is lost`,
      );
    }
    const recoveryLog = at('recovery');
    const showReplay = progressReporter({
      label: 'replay',
      unit: 'commands',
      tty: process.stderr.isTTY === true ? process.stderr : undefined,
      line: (text, figures) => recoveryLog.info({ ...figures }, text),
    });
    // Market data a standby seeded and kept current: it takes the replayed tail too.
    const preparedMarket = usableMarket(prepared, rebuildHistory, options.clock);
    const { engine, snapshotSeq, replayed, lastTime } = await recover({
      genesis,
      journal,
      snapshots,
      ignoreSnapshots: rebuildHistory,
      ...(hooks.startFrom === undefined || rebuildHistory ? {} : { from: hooks.startFrom }),
      log: recoveryLog,
      progress: (done, total) => {
        health.replayProgress(done, total);
        showReplay(done, total);
      },
      ...(writer === undefined && hooks.onReplayed === undefined && preparedMarket === undefined
        ? {}
        : {
            onReplayed: async (batch: readonly AppliedCommand[]) => {
              hooks.onReplayed?.(batch);
              preparedMarket?.apply(batch);
              if (writer === undefined) return;
              writer.enqueue(batch.filter((c) => c.command.seq > historyAt));
              if (writer.queued >= HISTORY_BATCH_ENTRIES * 4) await writer.drain();
            },
          }),
    });
    await writer?.drain();
    // From here on the history follows the journal's bytes on its own engine replica.
    await historyWrites?.close();
    engine.assertInvariants();
    recoveryLog.info(
      { seq: engine.lastSeq, snapshotSeq, replayed, historySeq: historyAt, ms: Date.now() - started },
      `recovered at seq ${engine.lastSeq} in ${Date.now() - started} ms`,
    );
    const startState = engine.snapshot();
    const follower: HistoryProgress = options.writeHistory
      ? new HistoryFollower(
          { store: historyPlace, snapshot: startState, stateHash: engine.stateHash(startState) },
          historyLog,
        )
      : new HistoryCheckpointWatch(history, historyAt, historyLog);
    if (!options.writeHistory) {
      historyLog.info(
        { historySeq: historyAt },
        `history store: written by a \`bourse history\` process (--write-history=false), at seq ${historyAt}`,
      );
    }

    // Venue time: the wall clock, or a sandbox's manual or speed clock from where the journal left
    // off (src/sequencer/venue-clock.ts). Rate limits, reqTime checks and timeouts stay on the wall clock.
    const venueClock = openVenueClock(options.clock, lastTime, at('clock'));
    const now = venueClock.now;
    const sequencer = new Sequencer(engine, journal, snapshots, {
      ...venueClock.sequencer,
      startTime: lastTime,
      maxInFlight: options.maxInFlightCommands,
      snapshotEveryCommands: options.snapshotEveryCommands,
      snapshotEveryMs: options.snapshotEveryMinutes * 60_000,
      keepSnapshots: options.keepSnapshots,
      pruneJournal: options.pruneJournal,
      log: at('sequencer'),
      snapshotLog,
    });
    // Consumers built from the live state join the applied feed at the next command.
    const fromNow = (listener: AppliedListener): void =>
      sequencer.subscribe(sequencer.appliedSeq + 1, listener);
    if (preparedMarket !== undefined && engine !== hooks.startFrom) {
      throw new Error('the prepared market data follow another engine than the one recovered');
    }
    const { marketData, klines } = preparedMarket ?? (await seedMarketData(engine, history, now));
    const venue: VenuePort = {
      engine,
      history,
      now,
      submit: (command) => sequencer.submit(command),
    };
    const trustedProxies = new TrustedProxies(options.trustedProxies);
    const ws = new WsGateway(
      {
        engine,
        marketData,
        klines,
        authenticator: new Authenticator(venue, sealer),
        now,
        wallClock: Date.now,
        log: at('ws'),
      },
      { trustedProxies },
    );
    const authLog = at('auth');
    const rateLimiter =
      prepared !== undefined ? prepared.rateLimiter : await openRateLimiter(options, authLog);
    const metrics = options.metrics
      ? new VenueMetrics({
          engine,
          sequencer,
          journal,
          history: follower,
          ws,
          ...(rateLimiter instanceof MemoryRateLimiter ? { rateLimiter } : {}),
          ready: health.isReady,
          openOrdersAtStart: startState.orders.map((o) => o[2]),
        })
      : undefined;
    if (metrics !== undefined) {
      fromNow(metrics.onApplied);
      if (journal instanceof FileJournal) journal.onFlushed(metrics.onFlushed);
    }
    fromNow((batch) => marketData.apply(batch));
    fromNow(klines.apply);
    if (follower instanceof HistoryFollower) {
      sequencer.subscribe(startState.lastSeq + 1, follower.enqueue);
      sequencer.addPressureSource(follower.overBound);
    }

    // Every coin and chain the engine knows (genesis and runtime changes) has its adapter.
    const chainLog = at('chain');
    const chain = SimulatedChain.open(engine.funds.config(), paths.chain, (message) =>
      chainLog.warn(message),
    );
    const watcher = new ChainWatcher({
      engine,
      submit: (command) => sequencer.submit(command),
      adapters: chain.adapters(),
      // A coin added at run time is carried by the simulated chain and watched from then on.
      carry: (funds) => chain.carry(funds),
      log: (message) => chainLog.warn(message),
    });
    fromNow(watcher.onApplied);
    // What the chain did while the venue was down (or mid-pass when it stopped) reaches the engine now.
    await watcher.start();

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
      ...venueInfoRoutes({ engine, clock: { mode: venueClock.mode === 'manual' ? 'manual' : 'real', now } }),
      ...signedRoutes({
        venue,
        sealer,
        reqTimeWindowMs: options.reqTimeWindowMs,
        rateLimiter: rateLimiter ?? UNLIMITED,
        log: authLog,
      }),
    ];
    const audit = new FileAuditLog(join(paths.root, AUDIT_FILE));
    const admins = adminRoutes({
      venue,
      token: adminToken,
      instance,
      log: adminLog,
      audit,
      views: {
        walletHoldings: (coin) => chain.holdings(coin),
        volume24h: (market) => marketData.tickerFigures(market)?.vol,
        probes: {
          ready: () => health.ready(),
          lastSnapshot: () => {
            if (sequencer.lastSnapshot !== undefined) return sequencer.lastSnapshot;
            const newest = snapshots.list()[0];
            if (newest === undefined) return undefined;
            const at = statSync(newest.path, { throwIfNoEntry: false })?.mtimeMs;
            return { seq: newest.lastSeq, at: at === undefined ? undefined : Math.round(at) };
          },
        },
        limits: rateLimiter,
      },
      snapshot: () => sequencer.snapshot(),
      funds: { chains: () => watcher.adapters(), simulator: chain, syncChains: () => watcher.sync() },
      keys: {
        issue: issueKey,
        renew: (accessKey) => {
          const c = generateApiCredentials();
          return { secretKey: c.secret, sealedSecret: sealer.seal(c.secretHash, accessKey) };
        },
        opens: (sealedSecret, accessKey) => sealer.unseal(sealedSecret, accessKey) !== undefined,
      },
      sandbox: {
        clock: venueClock.sandbox({
          nextDeadline: () => engine.nextDeadline(),
          submit: venue.submit,
          rearmTimers: () => sequencer.rearmTimers(),
        }),
        maxAdvanceMs: MAX_CLOCK_ADVANCE_MS,
      },
    });
    const site = StaticSite.load(WEB_DIST);
    const handler = withProbes(
      withStaticSite(
        site,
        createRequestHandler(routes, {
          strictUserAgent: options.strictUserAgent,
          log: at('http'),
          slowRequestMs: options.slowRequestMs,
          trustedProxies,
        }),
      ),
      { health, detail: false, metrics: options.publicMetrics ? metrics : undefined, log: at('http') },
    );
    fromNow(ws.apply);
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
    // The operator console (web/admin) is served at /admin on the admin listener only.
    const consoleSite = StaticSite.load(WEB_DIST, CONSOLE_SCOPE);
    // The CLI asks /admin/instance before every command (is this the server of listen.json?):
    // at debug, so that the log shows the command, not the question.
    const adminApi = createRequestHandler(admins, {
      log: adminLog,
      accessLog: true,
      quietPaths: new Set(['/admin/instance']),
    });
    adminHandler = withProbes(withStaticSite(consoleSite, adminApi, CONSOLE_HOME), {
      health,
      detail: true,
      metrics,
      log: adminLog,
    });
    const publicAt = tcpEndpoint(http.host, http.port);
    writeListenFile(paths.root, {
      pid: process.pid,
      instance,
      startedAt: new Date().toISOString(),
      public: publicAt,
      admin: adminAt,
    });
    health.running({ engine, journal, sequencer, history: follower });
    at('http').info(
      { public: publicAt, dataDir: resolve(paths.root) },
      `listening on http://${http.host}:${http.port} (data in ${resolve(paths.root)})`,
    );
    at('http').info(
      { built: site !== undefined },
      site === undefined
        ? `trading page: not built (run npm run build:web)`
        : `trading page: http://${http.host}:${http.port}/`,
    );
    if ('url' in adminAt) {
      adminLog.info(
        { built: consoleSite !== undefined },
        consoleSite === undefined
          ? 'operator console: not built (run npm run build:web)'
          : `operator console: ${adminAt.url}/admin (sign in with the token in ${join(resolve(paths.root), ADMIN_TOKEN_FILE)})`,
      );
    }

    const demoLog = at('demo');
    const decision = decideDemo(engine, demoAsked(options));
    let demo: DemoMarket | undefined;
    if (decision.run) {
      try {
        demo = await startDemoMarket({
          engine,
          submit: venue.submit,
          issueKey,
          baseUrl: `http://${http.host.includes(':') ? `[${http.host}]` : http.host}:${http.port}`,
          log: (message) => demoLog.info(message),
        });
        demoLog.info(
          { accessKey: demo.trader.accessKey },
          `demo trader: sign in on the page with API key ${demo.trader.accessKey} and secret ` +
            `${demo.trader.secretKey} (a new key at each start; bourse demo stop ends the demo)`,
        );
        const running = demo;
        fromNow((batch) => {
          if (batch.some((a) => a.command.type === 'StopDemo' && a.result.result === 'OK')) {
            void running.stop().then(() => demoLog.info('demo market stopped for good; its users stay'));
          }
        });
      } catch (error) {
        demoLog.warn({ err: error }, `demo market not started: ${(error as Error).message}`);
      }
    } else if (options.demo !== false) demoLog.info(decision.reason);

    let closing: Promise<void> | undefined;
    const close = (): Promise<void> =>
      (closing ??= (async () => {
        health.stopping();
        // First, so that a CLI started during the stop is told no server runs here.
        removeListenFile(paths.root, instance);
        await demo?.stop();
        await ws.close();
        await http.close();
        await admin.close();
        await watcher.stop();
        // A failed journal (a deposed or cut-off writer) is reported, after everything else is closed.
        const journalFailure = await sequencer.close().then(
          () => undefined,
          (error: unknown) => error,
        );
        await follower.close().catch(() => undefined);
        await history.close();
        await rateLimiter?.close();
        audit.close();
        await lock.release();
        if (journalFailure !== undefined) throw journalFailure;
      })());
    const fatal = (error: Error): void => {
      // Said once, whichever part failed first (the journal, the engine, the history follower).
      if (health.phase === 'failed') return;
      health.failed(error.message);
      // A full or failing disk is the operator's to fix, said plainly; a bug keeps its stack.
      const disk = DISK_FAILURE.exec(error.message);
      const advice =
        disk === null
          ? ''
          : disk[1] === 'EIO' || disk[1] === 'EROFS'
            ? `; check the device holding ${resolve(paths.root)}`
            : `; free space on the disk holding ${resolve(paths.root)}`;
      mainLog.fatal(
        { ...(disk === null ? { err: error } : {}), reason: error.message, seq: engine.lastSeq },
        `stopping: ${error.message}${advice}; a restart recovers from the journal`,
      );
      process.exitCode = 1;
      exitAfterClose(close, {
        late: (ms) => mainLog.warn(`parts still closing ${ms} ms after the stop: exiting now`),
        flush: () => hooks.flushLog?.(),
      });
    };
    sequencer.onFatal(fatal);
    follower.onFatal(fatal);
    return { sequencer, http, admin, ws, options, chain, watcher, demo, health, metrics, close };
  }
}

/** The admin listener's answer while the venue recovers (probes are answered before it). */
function recoveringHandler(_req: IncomingMessage, res: ServerResponse): void {
  const body = JSON.stringify({
    code: RESULTS.BUSY.code,
    message: 'the server is recovering (replaying its journal): retry once /ready answers 200',
  });
  res.writeHead(503, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
  });
  res.end(body);
}

async function main(): Promise<void> {
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
  const logger = createLogger({ level: options.logLevel, format: options.logFormat });
  const log = logger.component('main');
  // A bug that escapes every handler: its stack, once, then the exit node would make anyway.
  process.once('uncaughtException', (error) => {
    log.fatal({ err: error, reason: error.message }, `stopping: uncaught exception: ${error.message}`);
    logger.flushSync();
    process.exit(1);
  });
  log.info({ settings: shownOptions(options), node: process.version }, 'starting');
  const starting = startVenue(options, logger.log, { flushLog: logger.flushSync });
  // Signals are handled from the start: one that arrives while the venue starts (listen.json may
  // already be written, a long replay may be running) stops it as soon as it has started. The
  // copies of one Ctrl-C (the terminal's and npm's) are one request; a signal a second later ends
  // the process at once (as safe as kill -9: nothing acknowledged is lost).
  let started = false;
  const stop = (why: string, fields: Readonly<Record<string, unknown>>): void => {
    log.info(fields, started ? `stopping: ${why}` : `stopping: ${why}, once the start-up has finished`);
    void starting.then(
      (venue) =>
        venue.close().then(() => {
          log.info('stopped');
          logger.flushSync();
          process.exit(0);
        }),
      () => undefined,
    );
  };
  const stopRequest = handleStopSignals({
    stop,
    repeated: (why, fields) => log.debug(fields, `${why} again: already stopping`),
    now: (why, fields) => {
      log.info(fields, `stopping at once: ${why} again`);
      logger.flushSync();
      process.exit(1);
    },
  });
  try {
    await starting;
    started = true;
  } catch (error) {
    // A refusal (a busy address or data directory, an edited genesis, a missing key) or a full
    // disk is the operator's to fix, in one line; anything else is a bug: its stack.
    const disk = DISK_FAILURE.test((error as Error).message);
    const message = disk
      ? `${(error as Error).message} (in ${resolve(options.dataDir)}); free space on that disk, then start again`
      : (error as Error).message;
    const plain = error instanceof ListenError || error instanceof StartRefusedError || disk;
    const detail = plain ? message : ((error as Error).stack ?? String(error));
    log.fatal({ ...(plain ? {} : { err: error }), reason: message }, `cannot start: ${message}`);
    logger.flushSync();
    console.error(`bourse: cannot start: ${detail}`);
    process.exit(1);
  }
  // Under `npm start` the process a manager signals is npm (the script execs node, so npm's
  // SIGTERM reaches this process). If npm dies without passing a signal on (SIGKILL), stop too,
  // rather than run on as an orphan that nothing manages.
  if (process.env['npm_lifecycle_event'] !== undefined) {
    const parent = process.ppid;
    const watch = setInterval(() => {
      if (process.ppid === parent) return;
      clearInterval(watch);
      stopRequest(`npm (pid ${parent}), which started this server, is gone`, {});
    }, PARENT_CHECK_MS).unref();
  }
}

/** How often a server started by npm checks that npm still runs. */
const PARENT_CHECK_MS = 1_000;

if (import.meta.main) await main();
