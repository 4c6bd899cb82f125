/**
 * @module engine-role — the `bourse engine` process (docs/scale-out.md, "Roles" and "Hot standby
 * and failover"): the venue as `npm start` runs it, on the JetStream journal (`--journal-url` is
 * required), also taking the gateways' commands over NATS (command-link.ts) while it leads.
 *
 * Every engine process on a stream is a candidate. It takes the stream's lease
 * (leader-lease.ts) when it is free and leads; otherwise it stands by (standby.ts): it follows
 * the stream into its own engine and history, takes no commands, and polls the lease. When the
 * leader stops renewing (killed, paused, cut off), the lease lapses after its TTL and a standby
 * takes it: it stops following, opens the journal with a fence (every earlier writer is refused
 * from then on), replays what the stream holds after its replica (what was in flight), and
 * subscribes to the commands, knowing the request ids of the recent commands.
 *
 * A leader that loses its lease (a pause past the TTL) steps down: it stops taking commands and
 * exits (status 1); a process manager that restarts it makes it a standby. Its appends after the
 * takeover are refused by the fence, so it never forks the journal.
 *
 * `--lease-ttl-ms` (only when the lease bucket is created; default 1000) is this role's own flag.
 */
import { connect } from '@nats-io/transport-node';
import { parseJournalUrl } from '../config/journal-url.ts';
import { loadOptions, wantsHelp, type ServerOptions } from '../config/options.ts';
import { roleUsage } from '../config/role-usage.ts';
import { handleStopSignals } from '../config/stop-signals.ts';
import type { Engine } from '../engine/engine.ts';
import { JournalContendedError } from '../journal/jetstream-journal.ts';
import { startVenue, type RunningVenue } from '../main.ts';
import type { PreparedParts } from '../prepared-parts.ts';
import { createLogger } from '../observability/logger.ts';
import { CommandService, JournaledAnswers, publishStateHashes } from './command-link.ts';
import { DEFAULT_LEASE_TTL_MS, LeaderLease } from './leader-lease.ts';
import { ReadyToLead } from './ready-to-lead.ts';
import { RECENT_IDS_MS, readRecentIds } from './recent-ids.ts';
import { Standby } from './standby.ts';

/** How often the engine publishes its state hash for the replicas to check (ms). */
const STATE_HASH_EVERY_MS = 1_000;
/**
 * The longest a stepping-down engine waits for its venue to close before it exits anyway (ms):
 * more than the journal's acknowledgement timeout (10 s) and the listeners' grace (2 s).
 */
const STEP_DOWN_EXIT_MS = 20_000;
/** Opens of the journal a new leader tries when another writer appends meanwhile. */
const FENCE_ATTEMPTS = 5;

/** The role's own flags, taken out before the server's are parsed. */
function roleFlags(argv: readonly string[]): { rest: string[]; leaseTtlMs: number } {
  const rest: string[] = [];
  let leaseTtlMs = DEFAULT_LEASE_TTL_MS;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const m = /^--lease-ttl-ms(?:=(.*))?$/.exec(arg);
    if (m === null) {
      rest.push(arg);
      continue;
    }
    const value = m[1] ?? argv[++i];
    leaseTtlMs = Number(value);
    if (!Number.isInteger(leaseTtlMs) || leaseTtlMs < 100) {
      throw new Error(`--lease-ttl-ms must be an integer of at least 100 (ms), not ${value ?? 'nothing'}`);
    }
  }
  return { rest, leaseTtlMs };
}

async function main(): Promise<void> {
  if (wantsHelp(process.argv.slice(2))) {
    console.log(roleUsage('engine'));
    return;
  }
  let options: ServerOptions;
  let leaseTtlMs: number;
  try {
    const flags = roleFlags(process.argv.slice(2));
    leaseTtlMs = flags.leaseTtlMs;
    options = loadOptions(flags.rest, process.env);
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
  const die = (message: string): never => {
    log.fatal({ reason: message }, message);
    logger.flushSync();
    process.exit(1);
  };
  const nc = await connect({
    servers: [...location.servers],
    name: 'bourse-engine',
    maxReconnectAttempts: -1,
  });
  const lease = await LeaderLease.open(nc, { stream: location.stream, ttlMs: leaseTtlMs });
  const answers = new JournaledAnswers();
  let stopping = false;
  let venue: RunningVenue | undefined;
  let service: CommandService | undefined = undefined;
  const standingBy = new AbortController();
  /** While standing by: stopped on a signal, so that its history is written up to its seq. */
  let standbyNow: Standby | undefined;
  /** What the standby opened to lead: closed on a signal before it leads. */
  let readyNow: ReadyToLead | undefined;
  const stop = (signal: string): void => {
    stopping = true;
    log.info({ signal }, `stopping: ${signal}`);
    standingBy.abort();
    void (async () => {
      await standbyNow?.stop().catch(() => undefined);
      await readyNow?.close().catch(() => undefined);
      await service?.close();
      await venue?.close();
      // Freed at once: a standby takes over without waiting for the lease to lapse.
      await lease.release();
      await nc.close();
    })().finally(() => {
      logger.flushSync();
      process.exit(0);
    });
  };
  // The copies of one Ctrl-C are one request; a signal a second later ends the process at once.
  handleStopSignals({ stop, now: () => process.exit(1) });

  let startFrom: Engine | undefined;
  let prepared: PreparedParts | undefined;
  if (!(await lease.tryAcquire())) {
    const standby = await Standby.start({
      dataDir: options.dataDir,
      historyUrl: options.historyUrl,
      writeHistory: options.writeHistory,
      servers: location.servers,
      stream: location.stream,
      subject: location.subject,
      nc,
      answers,
      onFatal: (error) => die(`stopping: the standby cannot follow the stream: ${error.message}`),
      log: logger.log,
    }).catch((error: unknown) => die(`bourse engine: cannot stand by: ${(error as Error).message}`));
    standbyNow = standby;
    // Ready to lead: the stores open and the market data seeded now, not after the lease.
    const ready = await ReadyToLead.open(options, logger.log, standby.replica).catch((error: unknown) =>
      die(`bourse engine: cannot stand by: ${(error as Error).message}`),
    );
    readyNow = ready;
    const leader = await lease.current();
    log.info(
      { leader: leader?.holder, seq: standby.replica.appliedSeq, leaseTtlMs: lease.ttlMs },
      `standing by: ${leader?.holder ?? 'another engine'} leads stream ${location.stream}; following it from seq ${standby.replica.appliedSeq} (lease ${lease.ttlMs} ms)`,
    );
    try {
      await lease.acquire(standingBy.signal);
    } catch {
      return; // stopping
    }
    log.info(
      { seq: standby.replica.appliedSeq, holder: lease.holder },
      `taking over: the lease of stream ${location.stream} lapsed; this engine leads from seq ${standby.replica.appliedSeq}`,
    );
    standbyNow = undefined;
    startFrom = await standby.stop();
    readyNow = undefined;
    prepared = ready.handOver();
  }
  if (startFrom === undefined) {
    // Leading from a snapshot: the ids journaled just before it, which the replay does not bring.
    answers.addJournaled(
      await readRecentIds(nc, {
        stream: location.stream,
        subject: location.subject,
        sinceMs: Date.now() - RECENT_IDS_MS,
      }),
    );
  }
  lease.onLost((reason) => {
    if (stopping) return;
    stopping = true;
    log.warn(
      { reason },
      `stepping down: ${reason}; this engine takes no more commands and exits (restarted, it stands by)`,
    );
    service?.abandon();
    // The venue closes within bounds (its listeners' grace, the journal's acknowledgement
    // timeout); should anything still hang, the process goes all the same.
    const late = setTimeout(() => {
      log.error(
        { ms: STEP_DOWN_EXIT_MS },
        `stepping down: not closed after ${STEP_DOWN_EXIT_MS} ms; exiting now`,
      );
      logger.flushSync();
      process.exit(1);
    }, STEP_DOWN_EXIT_MS);
    late.unref();
    void (async () => {
      await venue?.close().catch(() => undefined);
    })().finally(() => {
      logger.flushSync();
      process.exit(1);
    });
  });

  for (let attempt = 1; venue === undefined; attempt++) {
    try {
      venue = await startVenue(options, logger.log, {
        flushLog: logger.flushSync,
        ...(startFrom === undefined ? {} : { startFrom }),
        ...(prepared === undefined ? {} : { prepared }),
        onReplayed: answers.add,
      });
    } catch (error) {
      // Another writer appended between the journal's open and its fence: a deposed leader's
      // last message. Open again, after it (the replica's engine only moves forward).
      if (error instanceof JournalContendedError && attempt < FENCE_ATTEMPTS && lease.held) {
        log.warn({ attempt }, `opening the journal again: ${error.message}`);
        continue;
      }
      await lease.release();
      const message = (error as Error).message;
      log.fatal({ reason: message }, `cannot start: ${message}`);
      logger.flushSync();
      console.error(`bourse engine: cannot start: ${message}`);
      process.exit(1);
    }
  }
  const running = venue;
  service = new CommandService(nc, running.sequencer, {
    journaled: answers.values(),
    log: logger.log.child({ component: 'main' }),
  });
  // A failed sequencer (a deposed writer's refused append) takes no more commands at once.
  running.sequencer.onFatal(() => service?.abandon());
  await service.ready();
  const stopHashes = publishStateHashes(nc, running.sequencer.engine, STATE_HASH_EVERY_MS);
  process.once('exit', stopHashes);
  log.info(
    { holder: lease.holder, seq: running.sequencer.appliedSeq, requestIds: service.remembered },
    `engine: leading stream ${location.stream} at seq ${running.sequencer.appliedSeq}; taking the gateways’ commands over NATS`,
  );
}

if (import.meta.main) await main();
