/**
 * @module gateway-role — the `bourse gateway` process (docs/scale-out.md, "Roles"): HTTP and
 * WebSocket on its own replica (gateway.ts). It takes the server's flags: `--data` names a
 * directory holding the venue's identity (venue.json: a copy of the engine's will do) and, when
 * it has one, its newest snapshot is where the replica starts; `--journal-url` the stream;
 * `--history-url` the shared history store (PostgreSQL across machines; without it the SQLite
 * file of that directory); `--limits-url` the shared limits (Redis); `--master-key-file` the key.
 * It holds no lock on the directory and writes nothing in it.
 */
import { loadMasterKey } from '../api/auth/secret-sealing.ts';
import { openRateLimiter } from '../config/adapters.ts';
import { dataPaths } from '../config/data-dir.ts';
import { parseJournalUrl } from '../config/journal-url.ts';
import { loadOptions } from '../config/options.ts';
import { readVenueIdentity } from '../config/venue-identity.ts';
import type { EngineSnapshot } from '../engine/snapshot.ts';
import { SnapshotStore } from '../journal/snapshot-store.ts';
import { createLogger } from '../observability/logger.ts';
import { historyLocation, openHistoryStore } from '../store/history-location.ts';
import { startGateway } from './gateway.ts';

async function main(): Promise<void> {
  const options = loadOptions(process.argv.slice(2), process.env);
  if (options.journalUrl === undefined)
    throw new Error('bourse gateway needs --journal-url nats://… (its replica follows that stream)');
  const location = parseJournalUrl(options.journalUrl);
  const paths = dataPaths(options.dataDir);
  const identity = readVenueIdentity(paths.root);
  if (identity === undefined) {
    throw new Error(`${paths.root} holds no venue.json: copy it from the engine's data directory`);
  }
  const logger = createLogger({ level: options.logLevel, format: options.logFormat });
  const log = logger.log.child({ component: 'main' });
  const masterKey = loadMasterKey({
    keyFile: options.masterKeyFile,
    dataDir: paths.root,
    warn: (message) => log.warn(message),
  });
  const newest = new SnapshotStore(paths.snapshots).latestValid();
  const history = await openHistoryStore(historyLocation(options.historyUrl, paths.history), (m) =>
    log.warn(m),
  );
  const rateLimiter = await openRateLimiter(options, logger.log.child({ component: 'auth' }));
  const gateway = await startGateway({
    identity,
    masterKey,
    ...(newest === undefined ? {} : { snapshot: newest.state as EngineSnapshot }),
    servers: location.servers,
    stream: location.stream,
    subject: location.subject,
    history,
    rateLimiter,
    host: options.host,
    port: options.port,
    trustedProxies: options.trustedProxies,
    reqTimeWindowMs: options.reqTimeWindowMs,
    log: logger.log,
  });
  log.info(
    { seq: gateway.replica.appliedSeq },
    `listening on http://${gateway.http.host}:${gateway.http.port} (gateway; replica at seq ${gateway.replica.appliedSeq})`,
  );
  gateway.replica.onFatal((error) => {
    log.fatal({ reason: error.message }, `stopping: the replica stopped: ${error.message}`);
    logger.flushSync();
    process.exit(1);
  });
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) process.exit(1);
    stopping = true;
    log.info({ signal }, `stopping: ${signal}`);
    void gateway
      .close()
      .then(() => history.close())
      .then(() => rateLimiter?.close())
      .finally(() => {
        logger.flushSync();
        process.exit(0);
      });
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => stop(signal));
}

if (import.meta.main) {
  await main().catch((error: unknown) => {
    console.error(`bourse gateway: cannot start: ${(error as Error).message}`);
    process.exit(1);
  });
}
