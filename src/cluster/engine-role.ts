/**
 * @module engine-role — the `bourse engine` process (docs/scale-out.md, "Roles"): the venue as
 * `npm start` runs it, on the JetStream journal (`--journal-url` is required), also taking the
 * gateways' commands over NATS (command-link.ts). Its own HTTP listener still serves, like the
 * embedded server's; gateways read from their replicas, not from it.
 *
 * Not yet here (issue 18): the leadership lease of a hot standby. Two engine processes on one
 * stream are kept from forking it by the journal's fencing (the second writer's appends are
 * refused and it stops), not by a lease.
 */
import { connect } from '@nats-io/transport-node';
import { parseJournalUrl } from '../config/journal-url.ts';
import { loadOptions } from '../config/options.ts';
import { startVenue } from '../main.ts';
import { createLogger } from '../observability/logger.ts';
import { CommandService, publishStateHashes } from './command-link.ts';

/** How often the engine publishes its state hash for the replicas to check (ms). */
const STATE_HASH_EVERY_MS = 1_000;

async function main(): Promise<void> {
  let options;
  try {
    options = loadOptions(process.argv.slice(2), process.env);
    if (options.journalUrl === undefined) {
      throw new Error('bourse engine needs --journal-url nats://… (the gateways follow that stream)');
    }
  } catch (error) {
    console.error((error as Error).message);
    process.exit(2);
  }
  const location = parseJournalUrl(options.journalUrl);
  const logger = createLogger({ level: options.logLevel, format: options.logFormat });
  const log = logger.component('main');
  let venue;
  try {
    venue = await startVenue(options, logger.log, { flushLog: logger.flushSync });
  } catch (error) {
    log.fatal({ reason: (error as Error).message }, `cannot start: ${(error as Error).message}`);
    logger.flushSync();
    console.error(`bourse engine: cannot start: ${(error as Error).message}`);
    process.exit(1);
  }
  const nc = await connect({
    servers: [...location.servers],
    name: 'bourse-engine',
    maxReconnectAttempts: -1,
  });
  const service = new CommandService(nc, venue.sequencer, { log: logger.log.child({ component: 'main' }) });
  const stopHashes = publishStateHashes(nc, venue.sequencer.engine, STATE_HASH_EVERY_MS);
  log.info('engine: taking the gateways’ commands over NATS');
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) process.exit(1);
    stopping = true;
    log.info({ signal }, `stopping: ${signal}`);
    stopHashes();
    void service
      .close()
      .then(() => venue.close())
      .then(() => nc.close())
      .finally(() => {
        logger.flushSync();
        process.exit(0);
      });
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => stop(signal));
}

if (import.meta.main) await main();
