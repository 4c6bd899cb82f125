/**
 * @module offline — CLI commands that work on a stopped server's data directory:
 * `bourse verify` (every segment and snapshot checked, each snapshot restored with the engine's
 * invariants as the start restores it, then a replay from scratch compared with each snapshot's
 * state hash and checked against the invariants there and at the end, as the start checks them) and `bourse rebuild-history` (the history store, SQLite or
 * PostgreSQL, rebuilt from the journal and swapped in atomically).
 */
import { existsSync, renameSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { readJournalRecord } from '../config/adapters.ts';
import { DATA_UMASK, dataPaths, readGenesis } from '../config/data-dir.ts';
import { acquireDataLock, type DataLock } from '../config/data-lock.ts';
import { StartRefusedError } from '../config/start-refusal.ts';
import { checkGenesis, readVenueIdentity } from '../config/venue-identity.ts';
import type { VenueConfig } from '../domain/specs.ts';
import { Engine } from '../engine/engine.ts';
import type { EngineSnapshot } from '../engine/snapshot.ts';
import { FileJournal } from '../journal/file-journal.ts';
import { SnapshotStore } from '../journal/snapshot-store.ts';
import { SILENT_LOG } from '../observability/memory-log.ts';
import { progressReporter } from '../observability/progress.ts';
import { recover } from '../sequencer/recovery.ts';
import { HISTORY_BATCH_ENTRIES, HistoryWriter } from '../store/history-writer.ts';
import type { HistoryStore } from '../store/history-store.ts';
import { PgHistoryStore, redactUrl } from '../store/pg-history-store.ts';
import { SqliteHistoryStore } from '../store/sqlite-history-store.ts';
import type { CliIo, OfflineCommands } from './bourse.ts';
import { journalCopyCommand } from './journal-copy.ts';

/**
 * Progress of a replay on standard error: a line redrawn in place (done / total, rate, ETA) on a
 * terminal, a plain line every few seconds otherwise.
 */
function progress(io: CliIo, label: string): (done: number, total: number) => void {
  return progressReporter({
    label,
    unit: 'commands',
    tty: process.stderr.isTTY === true ? process.stderr : undefined,
    line: (text) => io.err(text),
  });
}

/**
 * The refusal when the data directory's journal is on a stream: these tools read the file
 * journal, and the files left there (if any) are an old, superseded journal.
 */
function journalOnStream(dataDir: string, tool: string): string | undefined {
  const recorded = readJournalRecord(dataDir);
  return recorded?.kind === 'jetstream'
    ? `${tool}: the journal of ${dataDir} is the JetStream stream ${recorded.stream}; ${tool} reads the file journal: move it back first with \`bourse journal copy --to file\``
    : undefined;
}

/** What an offline tool is told when a server (or another tool) holds the data directory. */
const OFFLINE_LOCK_ADVICE =
  'stop it first: verify and rebuild-history work on a stopped venue (a running one is checked through its admin API)';

/**
 * Runs `work` holding the data directory's lock (docs/operations.md, "One process per data
 * directory"); refused in one line, touching nothing, while another process holds it.
 */
async function withDataLock(
  dataDir: string,
  role: string,
  io: CliIo,
  work: () => Promise<number>,
): Promise<number> {
  if (!existsSync(dataDir)) {
    io.err(`${role}: the data directory ${resolve(dataDir)} does not exist`);
    return 1;
  }
  // What a tool creates there (a rebuilt history store) is the owner's only, like the server's.
  process.umask(DATA_UMASK);
  let lock: DataLock;
  try {
    lock = await acquireDataLock(dataDir, role, OFFLINE_LOCK_ADVICE);
  } catch (error) {
    if (!(error instanceof StartRefusedError)) throw error;
    io.err(`${role}: ${error.message}`);
    return 1;
  }
  try {
    return await work();
  } finally {
    await lock.release();
  }
}

/**
 * The genesis to replay from: `genesis.json`, refused (StartRefusedError) when it differs from the
 * one recorded in `venue.json` at the venue's first start.
 */
function recordedGenesis(dataDir: string): VenueConfig {
  const genesis = readGenesis(dataDir);
  const identity = readVenueIdentity(dataDir);
  if (identity !== undefined) checkGenesis(dataDir, identity, genesis);
  return genesis;
}

/** The message `check` throws (a broken invariant: what the start would refuse), or undefined. */
function startRefusal(check: () => unknown): string | undefined {
  try {
    check();
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

function verify(dataDir: string, io: CliIo, json: boolean): Promise<number> {
  return withDataLock(dataDir, 'verify', io, () => verifyLocked(dataDir, io, json));
}

async function verifyLocked(dataDir: string, io: CliIo, json: boolean): Promise<number> {
  const onStream = journalOnStream(dataDir, 'verify');
  if (onStream !== undefined) {
    io.err(onStream);
    return 1;
  }
  const paths = dataPaths(dataDir);
  const problems: string[] = [];
  const journalCheck = FileJournal.verify(paths.journal);
  problems.push(...journalCheck.problems);
  const snapshots = new SnapshotStore(paths.snapshots);
  // A snapshot cut short by a kill is no problem: its temp file goes (verify holds the lock).
  const removed = snapshots.removeLeftovers();
  problems.push(...snapshots.verifyAll());
  const expected = new Map<number, string>();
  for (const entry of snapshots.list()) {
    try {
      const loaded = snapshots.load(entry.path);
      expected.set(entry.lastSeq, loaded.stateHash);
      // What the start does with it (recovery.ts): restored with the engine's invariants.
      const refusal = startRefusal(() => Engine.restore(loaded.state as EngineSnapshot));
      if (refusal !== undefined) problems.push(`${entry.path}: the start would refuse it: ${refusal}`);
    } catch (error) {
      problems.push(`${entry.path}: ${(error as Error).message}`);
    }
  }
  let replayed = 0;
  let hashesCompared = 0;
  let genesis: VenueConfig | undefined;
  try {
    genesis = recordedGenesis(dataDir);
  } catch (error) {
    problems.push((error as Error).message);
  }
  if (journalCheck.problems.length === 0 && genesis !== undefined) {
    const journal = FileJournal.open(paths.journal);
    try {
      const bar = progress(io, 'replay');
      const recovered = await recover({
        genesis,
        journal,
        snapshots: undefined,
        ignoreSnapshots: true,
        log: SILENT_LOG,
        progress: bar,
        afterEach: (seq, engine) => {
          const want = expected.get(seq);
          if (want === undefined) return;
          const broken = startRefusal(() => engine.assertInvariants());
          if (broken !== undefined)
            problems.push(
              `replay at seq ${seq} breaks an engine invariant (the start would refuse it): ${broken}`,
            );
          hashesCompared++;
          const hash = engine.stateHash();
          if (hash !== want)
            problems.push(`replay at seq ${seq} gives state hash ${hash}, the snapshot records ${want}`);
        },
      });
      replayed = recovered.replayed;
      // The start checks the recovered state's invariants before it serves (main.ts).
      const broken = startRefusal(() => recovered.engine.assertInvariants());
      if (broken !== undefined)
        problems.push(
          `the replayed state at seq ${recovered.engine.lastSeq} breaks an engine invariant (the start would refuse it): ${broken}`,
        );
    } catch (error) {
      problems.push(`replay from scratch failed: ${(error as Error).message}`);
    } finally {
      await journal.close();
    }
  }
  const report = {
    segments: journalCheck.segments,
    records: journalCheck.records,
    snapshots: expected.size,
    replayed,
    hashesCompared,
    removed,
    problems,
  };
  if (json) io.out(JSON.stringify(report));
  else {
    io.out(
      `journal: ${report.segments} segments, ${report.records} records; snapshots: ${report.snapshots}; replayed ${replayed}`,
    );
    for (const file of removed) io.out(`removed ${file}, left by a snapshot cut short`);
    for (const p of problems) io.out(`problem: ${p}`);
    io.out(problems.length === 0 ? 'verify: OK' : `verify: ${problems.length} problem(s)`);
  }
  return problems.length === 0 ? 0 : 1;
}

/**
 * Rebuilds the history store from the journal, from genesis, into a fresh store beside the live
 * one, then swaps it in whole: the SQLite file by rename, a PostgreSQL schema by dropping the old
 * one and renaming the new one in one transaction. `historyUrl` names a PostgreSQL store
 * (`--history-url`, BOURSE_HISTORY_URL); without it, the SQLite file in the data directory.
 */
function rebuildHistory(dataDir: string, io: CliIo, json: boolean, historyUrl?: string): Promise<number> {
  return withDataLock(dataDir, 'rebuild-history', io, () =>
    rebuildHistoryLocked(dataDir, io, json, historyUrl),
  );
}

async function rebuildHistoryLocked(
  dataDir: string,
  io: CliIo,
  json: boolean,
  historyUrl?: string,
): Promise<number> {
  const onStream = journalOnStream(dataDir, 'rebuild-history');
  if (onStream !== undefined) {
    io.err(onStream);
    return 1;
  }
  const paths = dataPaths(dataDir);
  if (historyUrl !== undefined) {
    try {
      PgHistoryStore.schemaOf(historyUrl);
    } catch (error) {
      io.err(`rebuild-history: ${(error as Error).message}`);
      return 2;
    }
  }
  const journal = FileJournal.open(paths.journal);
  let target: string;
  let result: { records: number; entries: number } | undefined;
  try {
    if (journal.firstSeq > 1) {
      io.err(
        `rebuild-history: the journal starts at seq ${journal.firstSeq}; earlier segments were pruned, so history cannot be rebuilt from genesis`,
      );
      return 1;
    }
    if (historyUrl === undefined) {
      target = paths.history;
      const temp = `${paths.history}.rebuild`;
      for (const suffix of ['', '-wal', '-shm']) rmSync(temp + suffix, { force: true });
      result = await replayInto(SqliteHistoryStore.open(temp), journal, dataDir, io);
      for (const suffix of ['-wal', '-shm']) rmSync(paths.history + suffix, { force: true });
      if (existsSync(temp)) renameSync(temp, paths.history);
    } else {
      const schema = PgHistoryStore.schemaOf(historyUrl);
      const temp = `${schema}_rebuild`;
      target = `${redactUrl(historyUrl)} (schema ${schema})`;
      await PgHistoryStore.dropSchema(historyUrl, temp);
      result = await replayInto(
        await PgHistoryStore.open(historyUrl, { schema: temp }),
        journal,
        dataDir,
        io,
      );
      await PgHistoryStore.replaceSchema(historyUrl, temp, schema);
    }
  } catch (error) {
    io.err(`rebuild-history: ${(error as Error).message}; the history store was not replaced`);
    return 1;
  } finally {
    await journal.close();
  }
  if (json) io.out(JSON.stringify(result));
  else io.out(`rebuild-history: ${result.records} journal records replayed into ${target}`);
  return 0;
}

/** Replays the whole journal through a fresh engine into `store`, then closes the store. */
async function replayInto(
  store: HistoryStore,
  journal: FileJournal,
  dataDir: string,
  io: CliIo,
): Promise<{ records: number; entries: number }> {
  // A rebuild drains the queue itself: nothing to gather.
  const writer = new HistoryWriter(store, (m) => io.err(m), { gatherMs: 0 });
  const bar = progress(io, 'rebuild-history');
  const total = journal.durableSeq;
  try {
    await recover({
      genesis: recordedGenesis(dataDir),
      journal,
      snapshots: undefined,
      ignoreSnapshots: true,
      log: SILENT_LOG,
      progress: bar,
      onReplayed: async (batch) => {
        writer.enqueue(batch);
        if (writer.queued >= HISTORY_BATCH_ENTRIES * 4) await writer.drain();
      },
    });
    await writer.drain();
  } finally {
    await store.close();
  }
  return { records: total, entries: writer.written };
}

export const offlineCommands: OfflineCommands = { verify, rebuildHistory, journalCopy: journalCopyCommand };
