/**
 * @module journal-copy — `bourse journal copy --to <file|nats-url>`: moves a stopped venue's
 * journal between the files in its data directory and a JetStream stream, without loss.
 *
 * The source is the journal the data directory records (`journal.json`; files when it records
 * none), or `--from <nats-url>`. Every record is copied from seq 1 in order, with its bytes
 * unchanged, into an empty destination (a stream with no message; the data directory's journal
 * directory, an old one being moved aside first). Then the move is verified: both journals are
 * replayed from genesis and must end at the same seq with the same state hash, and their records
 * must have the same digest. Only then does the data directory record the destination, so the
 * next start (with or without `--journal-url`) uses it; snapshots stay valid, since the seqs
 * and commands are the same. A failed verification changes nothing in the data directory.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, renameSync } from 'node:fs';
import { resolve } from 'node:path';
import {
  describeJournalLocation,
  journalLocation,
  readJournalRecord,
  writeJournalRecord,
  type JournalLocation,
} from '../config/adapters.ts';
import { dataPaths, readGenesis, type DataPaths } from '../config/data-dir.ts';
import { acquireDataLock } from '../config/data-lock.ts';
import type { VenueConfig } from '../domain/specs.ts';
import { FileJournal } from '../journal/file-journal.ts';
import { JetStreamJournal } from '../journal/jetstream-journal.ts';
import { SILENT_LOG } from '../observability/memory-log.ts';
import { recover } from '../sequencer/recovery.ts';
import type { CliIo } from './bourse.ts';

/** Records appended before the copy waits for them to be durable (bounds the memory it holds). */
const COPY_CHUNK_RECORDS = 20_000;

type Journal = FileJournal | JetStreamJournal;

export interface JournalCopyResult {
  readonly from: string;
  readonly to: string;
  readonly records: number;
  readonly stateHash: string;
  /** sha256 over every record's seq and payload, the same on both sides. */
  readonly digest: string;
  /** Where an old file journal was moved aside, if one was. */
  readonly movedAside?: string;
}

async function open(location: JournalLocation): Promise<Journal> {
  return location.kind === 'file'
    ? FileJournal.open(location.dir)
    : JetStreamJournal.open({
        servers: location.servers,
        monitorUrls: location.monitorUrls,
        stream: location.stream,
        subject: location.subject,
      });
}

/** Replays `journal` from genesis: the seq reached, its state hash, and the records' digest. */
async function replay(
  journal: Journal,
  genesis: VenueConfig,
): Promise<{ seq: number; stateHash: string; digest: string }> {
  const hash = createHash('sha256');
  const seqBytes = Buffer.alloc(8);
  for await (const { seq, payload } of journal.read(1)) {
    seqBytes.writeBigUInt64LE(BigInt(seq));
    hash.update(seqBytes).update(payload);
  }
  const { engine } = await recover({
    genesis,
    journal,
    snapshots: undefined,
    ignoreSnapshots: true,
    log: SILENT_LOG,
  });
  engine.assertInvariants();
  return { seq: engine.lastSeq, stateHash: engine.stateHash(), digest: hash.digest('hex') };
}

/**
 * Copies the journal of the stopped venue in `dataDir` to `to` (`file`, or a nats:// URL as
 * `--journal-url` takes it), verifies it, and records it as the venue's journal. Throws an Error
 * for the operator (nothing recorded) when the venue runs, the source is pruned or the same as
 * the destination, the destination is not empty, or the verification fails.
 */
export async function copyJournal(
  dataDir: string,
  to: string,
  from: string | undefined,
  progress: (line: string) => void = () => undefined,
): Promise<JournalCopyResult> {
  const paths = dataPaths(dataDir);
  if (!existsSync(paths.root)) throw new Error(`the data directory ${resolve(paths.root)} does not exist`);
  // The venue must be stopped, and stay so: the copy holds the data directory's lock throughout.
  const lock = await acquireDataLock(
    paths.root,
    'journal copy',
    'stop it first: journal copy works on a stopped venue',
  );
  try {
    return await copyLocked(paths, to, from, progress);
  } finally {
    await lock.release();
  }
}

async function copyLocked(
  paths: DataPaths,
  to: string,
  from: string | undefined,
  progress: (line: string) => void,
): Promise<JournalCopyResult> {
  const genesis = readGenesis(paths.root);
  const recorded = readJournalRecord(paths.root);
  const source: JournalLocation = journalLocation(
    from ?? (recorded?.kind === 'jetstream' ? recorded.url : undefined),
    paths.journal,
  );
  const target: JournalLocation = journalLocation(to === 'file' ? undefined : to, paths.journal);
  const fromText = describeJournalLocation(source);
  const toText = describeJournalLocation(target);
  if (source.kind === target.kind && (source.kind === 'file' || sameStream(source, target))) {
    throw new Error(`the journal is already ${toText}`);
  }

  const src = await open(source);
  let movedAside: string | undefined;
  try {
    if (src.firstSeq > 1) {
      throw new Error(
        `${fromText} starts at seq ${src.firstSeq} (older records were pruned): a copy needs the whole journal`,
      );
    }
    const total = src.durableSeq;
    if (target.kind === 'file' && existsSync(target.dir) && readdirSync(target.dir).length > 0) {
      // The files a venue left when it moved to a stream: superseded, kept aside, never appended to.
      movedAside = `${target.dir}.replaced-${stamp()}`;
      renameSync(target.dir, movedAside);
      progress(`moved the old file journal aside to ${movedAside}`);
    }
    const dst = await open(target);
    try {
      if (dst.durableSeq !== 0) {
        throw new Error(
          `${toText} is not empty (it ends at seq ${dst.durableSeq}): copy into a new stream (?stream=NAME) or delete that one`,
        );
      }
      let failure: Error | undefined;
      dst.onError((error) => (failure = error));
      let copied = 0;
      for await (const { seq, payload } of src.read(1)) {
        if (failure !== undefined) throw failure;
        dst.append(seq, payload);
        copied = seq;
        if (seq % COPY_CHUNK_RECORDS === 0) {
          await dst.whenDurable(seq);
          progress(`copied ${seq} of ${total} records`);
        }
      }
      if (copied > 0) await dst.whenDurable(copied);
      if (failure !== undefined) throw failure;
    } finally {
      await dst.close();
    }
  } catch (error) {
    await src.close();
    // Nothing was recorded: the partial copy goes aside and the old files come back.
    if (movedAside !== undefined && target.kind === 'file') {
      if (existsSync(target.dir)) renameSync(target.dir, `${target.dir}.failed-copy-${stamp()}`);
      renameSync(movedAside, target.dir);
    }
    throw error;
  }

  // Verification: both journals, reopened, replayed from genesis.
  progress('verifying: replaying both journals from genesis');
  const left = await replay(src, genesis).finally(() => src.close());
  const reopened = await open(target);
  const right = await replay(reopened, genesis).finally(() => reopened.close());
  const problems: string[] = [];
  if (right.seq !== left.seq) problems.push(`${toText} ends at seq ${right.seq}, ${fromText} at ${left.seq}`);
  if (right.digest !== left.digest) problems.push('the records differ');
  if (right.stateHash !== left.stateHash) {
    problems.push(`state hash ${right.stateHash} after the copy, ${left.stateHash} before`);
  }
  // A source that grew meanwhile had a writer: the copy would miss its records.
  const again = await open(source);
  const sourceEnd = again.durableSeq;
  await again.close();
  if (sourceEnd !== left.seq)
    problems.push(`${fromText} grew to seq ${sourceEnd} during the copy: is a server writing it?`);
  if (problems.length > 0) {
    throw new Error(
      `the copy does not match its source (${problems.join('; ')}); the venue's journal is still ${fromText}`,
    );
  }
  writeJournalRecord(paths.root, target);
  return {
    from: fromText,
    to: toText,
    records: left.seq,
    stateHash: left.stateHash,
    digest: left.digest,
    ...(movedAside === undefined ? {} : { movedAside }),
  };
}

function sameStream(a: JournalLocation, b: JournalLocation): boolean {
  return a.kind === 'jetstream' && b.kind === 'jetstream' && a.stream === b.stream;
}

/** Now, for file names: 2026-11-24T07-30-00-000Z. */
const stamp = (): string => new Date().toISOString().replace(/[:.]/g, '-');

/** The CLI's `journal copy`: exit 0 copied and verified, 1 refused or failed. */
export async function journalCopyCommand(
  dataDir: string,
  io: CliIo,
  json: boolean,
  to: string,
  from: string | undefined,
): Promise<number> {
  let result: JournalCopyResult;
  try {
    result = await copyJournal(dataDir, to, from, (line) => io.err(`journal copy: ${line}`));
  } catch (error) {
    io.err(`journal copy: ${(error as Error).message}`);
    return 1;
  }
  if (json) io.out(JSON.stringify(result));
  else {
    io.out(
      `journal copy: ${result.records} records from ${result.from} to ${result.to}, verified (state hash ${result.stateHash}); ` +
        (to === 'file'
          ? 'start the server without --journal-url'
          : `start the server with --journal-url ${JSON.stringify(to)}`),
    );
  }
  return 0;
}
