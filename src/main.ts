/**
 * @module main — the composition root and the program `npm start` runs: open the adapters from the
 * settings, boot the venue in a named mode (src/sequencer/boot-mode.ts), build the API once
 * (src/api/assembly.ts), listen. The policy lives beside what it is about: recovery's choice in
 * boot-mode.ts, the history store's part in src/store/history-boot.ts, the clock's in
 * src/sequencer/venue-clock.ts, the demo's in src/demo/run-demo.ts, a failed disk's advice in
 * src/observability/disk-failure.ts and fatal-stop.ts.
 *
 * Start-up order: the listen addresses checked (a busy port is one line and no new data directory)
 * → the data directory's lock → genesis, admin token, the venue's identity (genesis and master key
 * checked against venue.json) → the admin listener, answering only `/health` and `/ready` → journal,
 * snapshots, history store → recovery → sequencer → chains → the API, then `listen.json`, then the
 * demo market and replays when this venue has them. The public API opens only after recovery.
 */
import { join, resolve } from 'node:path';
import { openAdminRecords } from './api/admin/admin-records.ts';
import { apiSettings, buildApi } from './api/assembly.ts';
import { openRateLimiter } from './api/auth/open-rate-limiter.ts';
import { MemoryRateLimiter } from './api/auth/rate-limit.ts';
import { createSecretSealer } from './api/auth/secret-sealing.ts';
import { listenPublic, openAdminListener, refuseBusyAddresses, type AdminListener } from './api/listeners.ts';
import { seedMarketData, type SeededMarketData } from './api/market-data/seed-market-data.ts';
import { openVenueChain } from './chain/venue-chain.ts';
import { openVenueJournal } from './config/adapters.ts';
import { ADMIN_TOKEN_FILE, dataPaths, ensureAdminToken } from './config/data-dir.ts';
import { newInstanceId, removeListenFile, tcpEndpoint, writeListenFile } from './config/listen-file.ts';
import { lockDataDir } from './config/open-data-dir.ts';
import type { ServerOptions } from './config/options.ts';
import { exitAfterClose } from './config/stop-signals.ts';
import { ensureVenueGenesis, openVenue } from './config/venue-identity.ts';
import { traderKeyFile } from './demo/demo-market.ts';
import { replayStart, runDemo, runReplay } from './demo/run-demo.ts';
import type { Command } from './domain/commands.ts';
import type { Log } from './domain/log.ts';
import type { ApplyResult } from './engine/engine.ts';
import { boundHeapGrowth } from './observability/heap-growth.ts';
import { SnapshotStore } from './journal/snapshot-store.ts';
import { fatalStop } from './observability/fatal-stop.ts';
import { Health } from './observability/health.ts';
import type { Component } from './observability/logger.ts';
import { followedMetrics } from './observability/metrics.ts';
import { replayReporter } from './observability/progress.ts';
import { logServing } from './observability/start-lines.ts';
import { usableMarket, type RunningVenue, type VenueHooks } from './prepared-parts.ts';
import { bootEngine, type BootMode } from './sequencer/boot-mode.ts';
import { Sequencer } from './sequencer/sequencer.ts';
import { openVenueClock } from './sequencer/venue-clock.ts';
import { sandboxAdmin } from './sandbox/sandbox-admin.ts';
import { runServer } from './server-program.ts';
import { HistoryBoot } from './store/history-boot.ts';
import { HistoryFollower } from './store/history-follower.ts';

export type { RunningVenue } from './prepared-parts.ts';

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
  boundHeapGrowth();
  await refuseBusyAddresses(options);
  const at = (component: Component): Log => log.child({ component });
  const paths = dataPaths(options.dataDir);
  const lock = await lockDataDir(paths.root, at('main'));
  let admin: AdminListener | undefined;
  try {
    const genesis = ensureVenueGenesis(paths.root);
    const adminToken = ensureAdminToken(paths.root);
    const health = new Health({ maxHistoryLag: options.readyMaxHistoryLag });
    const mainLog = at('main');
    const { masterKey } = openVenue(paths.root, genesis, {
      masterKeyFile: options.masterKeyFile,
      info: (message) => mainLog.info(message),
      warn: (message) => mainLog.warn(message),
    });
    admin = await openAdminListener(options, health, at('admin'));
    health.recovering();
    // The adapters, from the settings (or as a standby prepared them).
    const journal = await openVenueJournal(options, paths, at('journal'));
    const snapshotLog = at('snapshots');
    const snapshots = SnapshotStore.openForVenue(paths.snapshots, snapshotLog);
    const prepared = hooks.startFrom === undefined ? undefined : hooks.prepared;
    const historyLog = at('history');
    const history = await HistoryBoot.open({
      ...{ url: options.historyUrl, sqlitePath: paths.history, writes: options.writeHistory },
      ...{ opened: prepared?.history, log: historyLog },
    });

    // Boot in a named mode (boot-mode.ts); a standby's market data takes the replayed tail too.
    const recoveryLog = at('recovery');
    const showReplay = replayReporter(recoveryLog);
    const marketOf = (mode: BootMode): SeededMarketData | undefined =>
      usableMarket(prepared, mode.kind === 'from-journal', options.clock);
    const { engine, lastTime, mode } = await bootEngine({
      ...{ genesis, journal, snapshots, history, standby: hooks.startFrom, log: recoveryLog, historyLog },
      replayedTo: (boot) => [hooks.onReplayed, marketOf(boot)?.apply].filter((f) => f !== undefined),
      progress: (done, total) => {
        health.replayProgress(done, total);
        showReplay(done, total);
      },
    });
    const startState = engine.snapshot();
    const follower = history.running(engine, startState);
    const clock = openVenueClock(options.clock, lastTime, at('clock'), replayStart(options.replay));
    const now = clock.now;
    const sequencer = new Sequencer(engine, journal, snapshots, {
      ...{ ...clock.sequencer, startTime: lastTime, snapshotLog },
      ...{ maxInFlight: options.maxInFlightCommands, snapshotEveryCommands: options.snapshotEveryCommands },
      ...{ snapshotEveryMs: options.snapshotEveryMinutes * 60_000, keepSnapshots: options.keepSnapshots },
      ...{ pruneJournal: options.pruneJournal, log: at('sequencer'), reuseEvents: true },
    });
    const preparedMarket = marketOf(mode);
    if (preparedMarket !== undefined && engine !== hooks.startFrom) {
      throw new Error('the prepared market data follow another engine than the one recovered');
    }
    const rateLimiter =
      prepared !== undefined ? prepared.rateLimiter : await openRateLimiter(options, at('auth'));
    if (follower instanceof HistoryFollower) {
      sequencer.subscribe(startState.lastSeq + 1, follower.enqueue);
      sequencer.addPressureSource(follower.overBound);
    }
    const submit = (command: Command): Promise<ApplyResult> => sequencer.submit(command);
    const { chain, watcher } = openVenueChain(engine, paths.chain, submit, at('chain'));
    const records = openAdminRecords(paths.root);
    const instance = newInstanceId();
    const { marketData, klines } = preparedMarket ?? (await seedMarketData(engine, history.store, now));
    // The API, built on the market data just seeded (no await between): it follows the next command.
    const sealer = createSecretSealer(masterKey);
    const api = buildApi(
      {
        venue: { engine, history: history.store, now, submit },
        feed: sequencer,
        marketData,
        klines,
        sealer,
        rateLimiter,
        clockMode: clock.mode,
        health,
        log,
        metrics: ({ ws }) => {
          if (!options.metrics) return undefined;
          const limiter = rateLimiter instanceof MemoryRateLimiter ? { rateLimiter } : {};
          const openOrdersAtStart = startState.orders.map((o) => o[2]);
          const sources = { engine, sequencer, journal, history: follower, ws, ready: health.isReady };
          return followedMetrics({ ...sources, ...limiter, openOrdersAtStart }, sequencer, journal);
        },
        admin: {
          token: adminToken,
          instance,
          ...records,
          views: {
            walletHoldings: (coin) => chain.holdings(coin),
            probes: {
              ready: health.ready.bind(health),
              lastSnapshot: () => sequencer.lastSnapshot ?? snapshots.newest(),
            },
            limits: rateLimiter,
          },
          snapshot: () => sequencer.snapshot(),
          funds: { chains: () => watcher.adapters(), simulator: chain, syncChains: () => watcher.sync() },
          sandbox: {
            clock: clock.sandbox({
              ...{ nextDeadline: () => engine.nextDeadline(), submit },
              rearmTimers: () => sequencer.rearmTimers(),
            }),
            ...sandboxAdmin(options.sandbox, paths.root, genesis),
          },
        },
      },
      apiSettings(options),
    );
    sequencer.subscribe(sequencer.appliedSeq + 1, watcher.onApplied);
    // What the chain did while the venue was down (or mid-pass when it stopped) reaches the engine now.
    await watcher.start();
    const http = await listenPublic(options, api);
    const adminListener = admin;
    adminListener.serve(api.admin as NonNullable<typeof api.admin>);
    const publicAt = tcpEndpoint(http.host, http.port);
    const startedAt = new Date().toISOString();
    writeListenFile(paths.root, { pid: process.pid, instance, startedAt, public: publicAt, admin: admin.at });
    health.running({ engine, journal, sequencer, history: follower });
    const root = resolve(paths.root);
    const tokenFile = join(root, ADMIN_TOKEN_FILE);
    logServing({ at, http, publicAt, adminAt: admin.at, dataDir: root, built: api.built, tokenFile });
    const demo = await runDemo({
      settings: options,
      engine,
      submit,
      issueKey: api.keys.issue,
      traderKey: traderKeyFile(paths.root, sealer),
      host: http.host,
      port: http.port,
      feed: sequencer,
      log: at('demo'),
    });
    const replays = await runReplay(api.replays, options.replay);

    let closing: Promise<void> | undefined;
    const close = (): Promise<void> =>
      (closing ??= (async () => {
        health.stopping();
        // First, so that a CLI started during the stop is told no server runs here.
        removeListenFile(paths.root, instance);
        await Promise.all([demo?.stop(), replays?.stop()]);
        await api.close();
        await http.close();
        await adminListener.server.close();
        await watcher.stop();
        // A failed journal (a deposed or cut-off writer) is reported, after everything else is closed.
        const journalFailure = await sequencer.close().then(
          () => undefined,
          (error: unknown) => error,
        );
        await follower.close().catch(() => undefined);
        await history.store.close();
        await rateLimiter?.close();
        records.audit.close();
        await lock.release();
        if (journalFailure !== undefined) throw journalFailure;
      })());
    const fatal = fatalStop({
      health,
      log: mainLog,
      dataDir: paths.root,
      seq: () => engine.lastSeq,
      stop: () =>
        exitAfterClose(close, {
          late: (ms) => mainLog.warn(`parts still closing ${ms} ms after the stop: exiting now`),
          flush: () => hooks.flushLog?.(),
        }),
    });
    sequencer.onFatal(fatal);
    follower.onFatal(fatal);
    const parts = { sequencer, http, options, chain, watcher, demo, health, close };
    return { ...parts, admin: admin.server, ws: api.ws, metrics: api.metrics };
  } catch (error) {
    await admin?.server.close();
    await lock.release();
    throw error;
  }
}

if (import.meta.main) await runServer(process.argv.slice(2), startVenue);
