/**
 * @module adapters — which journal the venue uses, from its options: files in the data directory,
 * or a JetStream stream with `--journal-url`. The history store's choice is
 * store/history-location.ts, the rate limits' src/api/auth/open-rate-limiter.ts. main.ts calls these; docs/scale-out.md describes the settings.
 *
 * A data directory records which journal it uses (`journal.json`): its snapshots and the rest of
 * its state belong to that journal, so a venue started with another one is refused instead of
 * starting a second, diverging journal. `bourse journal copy` moves the journal and the record.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { FileJournal } from '../journal/file-journal.ts';
import { JetStreamJournal, JournalContendedError } from '../journal/jetstream-journal.ts';
import type { Log } from '../domain/log.ts';
import { writeAtomic } from './data-dir.ts';
import { StartRefusedError } from './start-refusal.ts';
import { describeJetStream, parseJournalUrl, type JetStreamLocation } from './journal-url.ts';

// ───────────────────────────── the journal ─────────────────────────────

export type JournalLocation =
  | { readonly kind: 'file'; readonly dir: string }
  | ({ readonly kind: 'jetstream'; readonly url: string } & JetStreamLocation);

/** Either journal adapter: the sequencer sees a JournalPort, health and metrics a little more. */
export type VenueJournal = FileJournal | JetStreamJournal;

/** The stream named by `url` (`--journal-url`), else the file journal in `dir`. */
export function journalLocation(url: string | undefined, dir: string): JournalLocation {
  return url === undefined ? { kind: 'file', dir } : { kind: 'jetstream', url, ...parseJournalUrl(url) };
}

export function describeJournalLocation(location: JournalLocation): string {
  return location.kind === 'file' ? `files in ${location.dir}` : describeJetStream(location);
}

/** What `journal.json` in a data directory says. */
export type JournalRecordOfDataDir =
  | { readonly kind: 'file' }
  | {
      readonly kind: 'jetstream';
      readonly stream: string;
      readonly servers: readonly string[];
      /** The whole `--journal-url` (with its monitoring endpoints), for `bourse journal copy`. */
      readonly url: string;
    };

const MARKER = 'journal.json';

/** The journal a data directory was recorded with, or undefined when it has no record. */
export function readJournalRecord(dataDir: string): JournalRecordOfDataDir | undefined {
  const file = join(dataDir, MARKER);
  if (!existsSync(file)) return undefined;
  const parsed = JSON.parse(readFileSync(file, 'utf8')) as JournalRecordOfDataDir;
  if (parsed.kind !== 'file' && parsed.kind !== 'jetstream') {
    throw new Error(`${file}: unknown journal kind ${JSON.stringify((parsed as { kind: unknown }).kind)}`);
  }
  return parsed;
}

/** Records in the data directory that its journal is at `location` (atomically). */
export function writeJournalRecord(dataDir: string, location: JournalLocation): void {
  const record: JournalRecordOfDataDir =
    location.kind === 'file'
      ? { kind: 'file' }
      : { kind: 'jetstream', stream: location.stream, servers: location.servers, url: location.url };
  // Mode 600: a journal URL may carry a password (the data directory holds the admin token too).
  writeAtomic(join(dataDir, MARKER), `${JSON.stringify(record)}\n`, 0o600);
}

/** Whether the file journal directory holds any segment (a venue that ran on files before records existed). */
function fileJournalUsed(dir: string): boolean {
  return existsSync(dir) && readdirSync(dir).some((name) => !name.startsWith('.'));
}

/**
 * Refuses (throws) when the data directory's journal is not `location`: its snapshots and state
 * belong to the journal it recorded. A data directory without a record and with journal files
 * is on files; one with neither is new, and takes `location`.
 */
export function checkJournalOfDataDir(dataDir: string, location: JournalLocation, fileDir: string): void {
  const recorded: JournalRecordOfDataDir | undefined =
    readJournalRecord(dataDir) ?? (fileJournalUsed(fileDir) ? { kind: 'file' } : undefined);
  if (recorded === undefined) return;
  const same =
    recorded.kind === location.kind &&
    (recorded.kind === 'file' || (location.kind === 'jetstream' && recorded.stream === location.stream));
  if (same) return;
  const was =
    recorded.kind === 'file'
      ? `the file journal in ${fileDir}`
      : `the JetStream stream ${recorded.stream} on ${recorded.servers.join(',')}`;
  const fix =
    recorded.kind === 'file'
      ? 'start without --journal-url'
      : `start with --journal-url naming stream=${recorded.stream}`;
  throw new StartRefusedError(
    `the data directory ${dataDir} belongs to ${was}, not ${describeJournalLocation(location)}: ` +
      `${fix}, or move the journal first with \`bourse journal copy --to …\` (docs/scale-out.md)`,
  );
}

export interface OpenJournalOptions {
  /** The file journal's group commit delay (ms). */
  readonly maxBatchDelayMs: number;
  readonly log: Log;
}

/**
 * Opens the venue's journal at `location` after checking it is the data directory's own, records
 * it in the data directory, and logs where it is and where it ends. A stream whose server does
 * not fsync every write is refused (JournalUnsafeServerError).
 */
export async function openJournal(
  dataDir: string,
  fileDir: string,
  location: JournalLocation,
  options: OpenJournalOptions,
): Promise<VenueJournal> {
  const { log } = options;
  checkJournalOfDataDir(dataDir, location, fileDir);
  let journal: VenueJournal;
  if (location.kind === 'file') {
    const file = FileJournal.open(location.dir, { maxBatchDelayMs: options.maxBatchDelayMs });
    log.info(
      { dir: location.dir, segments: file.recovery.segments, lastSeq: file.recovery.lastSeq },
      `journal opened at seq ${file.recovery.lastSeq}`,
    );
    if (file.recovery.truncatedBytes > 0) {
      log.warn(
        { truncatedBytes: file.recovery.truncatedBytes, tail: file.recovery.tail },
        `journal: ${file.recovery.tail}`,
      );
    }
    file.onSegmentCreated((name, firstSeq) =>
      log.info({ file: name, firstSeq }, `new journal segment from seq ${firstSeq}`),
    );
    journal = file;
  } else {
    const stream = await JetStreamJournal.open({
      servers: location.servers,
      monitorUrls: location.monitorUrls,
      stream: location.stream,
      subject: location.subject,
      log: (message) => log.warn(message),
      // The venue's writer deposes every earlier one as it opens (a paused engine that wakes up).
      fence: true,
    }).catch((error: unknown) => {
      if (error instanceof JournalContendedError) throw error;
      throw new StartRefusedError(
        `the journal on ${describeJetStream(location)}: ${(error as Error).message}`,
      );
    });
    log.info(
      { stream: location.stream, servers: location.servers, lastSeq: stream.durableSeq },
      `journal: ${describeJetStream(location)}, opened at seq ${stream.durableSeq}`,
    );
    journal = stream;
  }
  writeJournalRecord(dataDir, location);
  return journal;
}

/** The venue's journal from its options: `--journal-url`, else the files of the data directory. */
export function openVenueJournal(
  options: { readonly journalUrl: string | undefined; readonly groupCommitMaxDelayMs: number },
  paths: { readonly root: string; readonly journal: string },
  log: Log,
): Promise<VenueJournal> {
  const location = journalLocation(options.journalUrl, paths.journal);
  return openJournal(paths.root, paths.journal, location, {
    maxBatchDelayMs: options.groupCommitMaxDelayMs,
    log,
  });
}
