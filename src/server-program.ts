/**
 * @module server-program — the server as a process (`npm start`, src/main.ts): the options read
 * (exit 2 on a bad one), the logger, SIGINT and SIGTERM (src/config/stop-signals.ts), an uncaught
 * exception said once, and a start that fails said in one line when it is the operator's to fix (a
 * busy address or data directory, an edited genesis, a missing key, a full disk) or with its stack
 * when it is a bug.
 */
import { resolve } from 'node:path';
import { ListenError } from './api/http/listen-probe.ts';
import { loadOptions, serverUsage, shownOptions, wantsHelp, type ServerOptions } from './config/options.ts';
import { StartRefusedError } from './config/start-refusal.ts';
import { handleStopSignals, stopWithNpm } from './config/stop-signals.ts';
import type { Log } from './domain/log.ts';
import { diskFailure } from './observability/disk-failure.ts';
import { createLogger } from './observability/logger.ts';

/** What the program starts and stops. */
export type StartServer = (
  options: ServerOptions,
  log: Log,
  hooks: { readonly flushLog: () => void },
) => Promise<{ close(): Promise<void> }>;

/** Runs the server process on `argv` (the module comment). */
export async function runServer(argv: readonly string[], start: StartServer): Promise<void> {
  if (wantsHelp(argv)) return console.log(serverUsage());
  let options: ServerOptions;
  try {
    options = loadOptions(argv, process.env);
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
  const starting = start(options, logger.log, { flushLog: logger.flushSync });
  // Signals are handled from the start: one that arrives while the venue starts (listen.json may
  // already be written, a long replay may be running) stops it as soon as it has started. The
  // copies of one Ctrl-C are one request; a signal a second later ends the process at once.
  let started = false;
  const stopRequest = handleStopSignals({
    stop: (why, fields) => {
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
    },
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
    const text = (error as Error).message;
    const disk = diskFailure(text) !== undefined;
    const message = disk
      ? `${text} (in ${resolve(options.dataDir)}); free space on that disk, then start again`
      : text;
    const plain = error instanceof ListenError || error instanceof StartRefusedError || disk;
    const detail = plain ? message : ((error as Error).stack ?? String(error));
    log.fatal({ ...(plain ? {} : { err: error }), reason: message }, `cannot start: ${message}`);
    logger.flushSync();
    console.error(`bourse: cannot start: ${detail}`);
    process.exit(1);
  }
  stopWithNpm(stopRequest);
}
