/**
 * @module boot-mode — how a venue comes up, named once from what it finds (exchange-core's
 * InitialStateConfiguration: clean start, from snapshot, from journal) rather than as a
 * combination of flags:
 *
 * - `clean`: no snapshot; the engine starts from genesis and replays the whole journal (empty on
 *   a first start);
 * - `from-snapshot`: the newest valid snapshot, then the journal after it;
 * - `from-journal`: the snapshots are ignored and the whole journal is replayed from genesis, to
 *   rebuild a history store that is behind the newest snapshot (a new or lost database);
 * - `from-standby`: a hot standby's replica (src/cluster/engine-role.ts), then the journal's tail.
 *
 * A venue that lets a `bourse history` process write its history (`--write-history=false`) never
 * rebuilds it. The recovery itself is recovery.ts; `bootEngine` chooses the mode and runs it.
 */
import type { VenueConfig } from '../domain/specs.ts';
import type { Log } from '../domain/log.ts';
import type { Engine } from '../engine/engine.ts';
import type { JournalPort } from './ports.ts';
import { recover, type Recovered, type RecoveryOptions } from './recovery.ts';
import type { AppliedCommand } from './sequencer.ts';

export type BootMode =
  | { readonly kind: 'clean' }
  | { readonly kind: 'from-snapshot'; readonly snapshotSeq: number }
  | { readonly kind: 'from-journal'; readonly historySeq: number; readonly snapshotSeq: number }
  | { readonly kind: 'from-standby'; readonly engine: Engine };

/** What the choice reads: the standby's engine, who writes history, and where each store stands. */
export interface BootFacts {
  /** A hot standby's replica to start from, if this venue is taking over. */
  readonly standby: Engine | undefined;
  /** Whether this process writes the history store (else a `bourse history` process does). */
  readonly writesHistory: boolean;
  /** The history store's checkpoint. */
  readonly historySeq: number;
  /** The newest snapshot's last seq (0: none). */
  readonly snapshotSeq: number;
  /** Whether the journal still holds every command from genesis (never pruned). */
  readonly journalComplete: boolean;
}

/**
 * The mode for `facts`. History behind the newest snapshot needs the journal from genesis: when
 * this process writes history and the journal is whole, that is `from-journal`, even for a
 * standby (whose market data would count the rebuilt trades twice). When the journal was pruned,
 * the history before the snapshot is lost: the venue starts anyway and says so (`describeBoot`).
 */
export function chooseBootMode(facts: BootFacts): BootMode {
  const historyBehind = facts.writesHistory && facts.historySeq < facts.snapshotSeq;
  if (historyBehind && facts.journalComplete) {
    return { kind: 'from-journal', historySeq: facts.historySeq, snapshotSeq: facts.snapshotSeq };
  }
  if (facts.standby !== undefined) return { kind: 'from-standby', engine: facts.standby };
  return facts.snapshotSeq > 0
    ? { kind: 'from-snapshot', snapshotSeq: facts.snapshotSeq }
    : { kind: 'clean' };
}

/** What recovery.ts is told for `mode`. */
export function recoveryStart(mode: BootMode): Pick<RecoveryOptions, 'ignoreSnapshots' | 'from'> {
  switch (mode.kind) {
    case 'from-journal':
      return { ignoreSnapshots: true };
    case 'from-standby':
      return { from: mode.engine };
    default:
      return {};
  }
}

/** Logs the choice where it is news: a history rebuild (warn), history lost to a pruned journal (error). */
export function describeBoot(mode: BootMode, facts: BootFacts, historyLog: Log): void {
  const seqs = { historySeq: facts.historySeq, snapshotSeq: facts.snapshotSeq };
  if (mode.kind === 'from-journal') {
    historyLog.warn(
      seqs,
      `history store at seq ${facts.historySeq}, behind the snapshot at ${facts.snapshotSeq}: replaying from genesis`,
    );
  } else if (facts.writesHistory && facts.historySeq < facts.snapshotSeq) {
    historyLog.error(
      seqs,
      `history store at seq ${facts.historySeq}, but the journal before the snapshot at ${facts.snapshotSeq} was pruned: that history is lost`,
    );
  }
}

/** The history store as the boot sees it (src/store/history-boot.ts). */
export interface HistoryAtBoot {
  readonly seq: number;
  readonly writes: boolean;
  /** Writes replayed commands the store lacks; undefined when another process writes it. */
  readonly onReplayed: ((batch: readonly AppliedCommand[]) => Promise<void>) | undefined;
  /** After the replay: the replayed writes are durable. */
  replayed(): Promise<void>;
}

export interface BootParts {
  readonly genesis: VenueConfig;
  readonly journal: JournalPort & { readonly firstSeq: number };
  readonly snapshots: NonNullable<RecoveryOptions['snapshots']>;
  readonly history: HistoryAtBoot;
  /** A hot standby's replica, when this venue takes over. */
  readonly standby: Engine | undefined;
  /** Others that take the replayed commands (a new leader's request ids; a standby's market data, given the mode). */
  readonly replayedTo: (mode: BootMode) => readonly ((batch: readonly AppliedCommand[]) => void)[];
  readonly progress: (replayed: number, total: number) => void;
  /** `recovery`'s log, and `history`'s for the choice. */
  readonly log: Log;
  readonly historyLog: Log;
}

/** Chooses the mode from what `parts` hold, recovers in it, checks the engine; logs the outcome. */
export async function bootEngine(parts: BootParts): Promise<Recovered & { readonly mode: BootMode }> {
  const { journal, history, log } = parts;
  const started = Date.now();
  const facts: BootFacts = {
    standby: parts.standby,
    writesHistory: history.writes,
    historySeq: history.seq,
    snapshotSeq: parts.snapshots.list()[0]?.lastSeq ?? 0,
    journalComplete: journal.firstSeq <= 1 || journal.durableSeq === 0,
  };
  const mode = chooseBootMode(facts);
  describeBoot(mode, facts, parts.historyLog);
  const write = history.onReplayed;
  const others = parts.replayedTo(mode);
  const recovered = await recover({
    genesis: parts.genesis,
    journal,
    snapshots: parts.snapshots,
    ...recoveryStart(mode),
    log,
    progress: parts.progress,
    // Only when someone takes the replayed commands: gathering them costs the replay time.
    ...(write === undefined && others.length === 0
      ? {}
      : {
          onReplayed: async (batch: readonly AppliedCommand[]) => {
            for (const take of others) take(batch);
            await write?.(batch);
          },
        }),
  });
  await history.replayed();
  const { engine, snapshotSeq, replayed } = recovered;
  engine.assertInvariants();
  const ms = Date.now() - started;
  log.info(
    { seq: engine.lastSeq, snapshotSeq, replayed, historySeq: history.seq, ms },
    `recovered at seq ${engine.lastSeq} in ${ms} ms`,
  );
  return { ...recovered, mode };
}
