/**
 * @module follower-process — what the processes that follow the journal's stream (`bourse
 * gateway`, `bourse history`) share: the server's flags with `--journal-url` required, the
 * venue's identity from `--data` (venue.json, a copy of the engine's will do), a logger, and the
 * process's end: on SIGINT or SIGTERM it closes and exits 0; when its replica stops (a gap, a
 * state hash that differs from the engine's) it exits 1 rather than serve or write that state.
 */
import { dataPaths, type DataPaths } from '../config/data-dir.ts';
import { parseJournalUrl, type JetStreamLocation } from '../config/journal-url.ts';
import { loadOptions, wantsHelp, type ServerOptions } from '../config/options.ts';
import { roleUsage, type RoleName } from '../config/role-usage.ts';
import { handleStopSignals } from '../config/stop-signals.ts';
import { readVenueIdentity, type VenueIdentity } from '../config/venue-identity.ts';
import { createLogger } from '../observability/logger.ts';
import type { Log } from '../domain/log.ts';
import type { StreamReplica } from './stream-replica.ts';

export interface FollowerSetup {
  readonly options: ServerOptions;
  readonly location: JetStreamLocation;
  readonly paths: DataPaths;
  readonly identity: VenueIdentity;
  readonly logger: ReturnType<typeof createLogger>;
}

/** Reads the process's flags; throws saying what is missing (`purpose`: what it follows the stream for). */
export function followerSetup(role: string, purpose: string): FollowerSetup {
  const options = loadOptions(process.argv.slice(2), process.env);
  if (options.journalUrl === undefined)
    throw new Error(`bourse ${role} needs --journal-url nats://… (${purpose})`);
  const location = parseJournalUrl(options.journalUrl);
  const paths = dataPaths(options.dataDir);
  const identity = readVenueIdentity(paths.root);
  if (identity === undefined) {
    throw new Error(`${paths.root} holds no venue.json: copy it from the engine's data directory`);
  }
  const logger = createLogger({ level: options.logLevel, format: options.logFormat });
  return { options, location, paths, identity, logger };
}

/** Ends the process when its replica stops (exit 1) or on SIGINT/SIGTERM (after `close`, exit 0). */
export function runUntilStopped(
  setup: FollowerSetup,
  log: Log,
  replica: StreamReplica,
  close: () => Promise<unknown>,
): void {
  const { logger } = setup;
  replica.onFatal((error) => {
    log.fatal({ reason: error.message }, `stopping: the replica stopped: ${error.message}`);
    logger.flushSync();
    process.exit(1);
  });
  const stop = (signal: string): void => {
    log.info({ signal, seq: replica.appliedSeq }, `stopping: ${signal}`);
    void close().finally(() => {
      logger.flushSync();
      process.exit(0);
    });
  };
  // The copies of one Ctrl-C are one request; a signal a second later ends the process at once.
  handleStopSignals({ stop, now: () => process.exit(1) });
}

/** Runs a role's `main` (or prints its `--help`); a start that fails is said on stderr with exit code 1. */
export async function runRole(role: RoleName, main: () => Promise<void>): Promise<void> {
  if (wantsHelp(process.argv.slice(2))) {
    console.log(roleUsage(role));
    return;
  }
  await main().catch((error: unknown) => {
    console.error(`bourse ${role}: cannot start: ${(error as Error).message}`);
    process.exit(1);
  });
}
