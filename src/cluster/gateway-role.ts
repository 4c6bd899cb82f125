/**
 * @module gateway-role — the `bourse gateway` process (docs/scale-out.md, "Roles"): HTTP and
 * WebSocket on its own replica (gateway.ts). It takes the server's flags: `--data` names a
 * directory holding the venue's identity (venue.json: a copy of the engine's will do) and, when
 * it has one, its newest snapshot is where the replica starts; `--journal-url` the stream;
 * `--history-url` the shared history store (PostgreSQL across machines; without it the SQLite
 * file of that directory); `--limits-url` the shared limits (Redis); `--master-key-file` the key.
 * It holds no lock on the directory and writes nothing in it. Its API is the embedded server's
 * (src/api/assembly.ts), under the same flags: the probes, the page, the slow-request log.
 */
import { apiSettings } from '../api/assembly.ts';
import { loadMasterKey } from '../config/master-key.ts';
import { openRateLimiter } from '../api/auth/open-rate-limiter.ts';
import type { EngineSnapshot } from '../engine/snapshot.ts';
import { SnapshotStore } from '../journal/snapshot-store.ts';
import { historyLocation, openHistoryStore, readerLocation } from '../store/history-location.ts';
import { followerSetup, runRole, runUntilStopped } from './follower-process.ts';
import { startGateway } from './gateway.ts';

async function main(): Promise<void> {
  const setup = followerSetup('gateway', 'its replica follows that stream');
  const { options, location, paths, identity, logger } = setup;
  const log = logger.log.child({ component: 'main' });
  const masterKey = loadMasterKey({
    keyFile: options.masterKeyFile,
    dataDir: paths.root,
    warn: (message) => log.warn(message),
  });
  const newest = new SnapshotStore(paths.snapshots).latestValid();
  const history = await openHistoryStore(
    readerLocation(historyLocation(options.historyUrl, paths.history)),
    (m) => log.warn(m),
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
    settings: apiSettings(options),
    readyMaxHistoryLag: options.readyMaxHistoryLag,
    limits: {
      maxConnections: options.maxConnections,
      maxConnectionsPerIp: options.maxConnectionsPerIp,
      headersTimeoutMs: options.headersTimeoutMs,
      requestTimeoutMs: options.requestTimeoutMs,
      keepAliveTimeoutMs: options.keepAliveTimeoutMs,
    },
    log: logger.log,
  });
  log.info(
    { seq: gateway.replica.appliedSeq },
    `listening on http://${gateway.http.host}:${gateway.http.port} (gateway; replica at seq ${gateway.replica.appliedSeq})`,
  );
  runUntilStopped(setup, log, gateway.replica, async () => {
    await gateway.close();
    await history.close();
    await rateLimiter?.close();
  });
}

if (import.meta.main) await runRole('gateway', main);
