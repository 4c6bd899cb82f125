/**
 * @module file-journal — a durable, segmented, group-committed log of opaque records keyed by
 * sequence number, kept in local files (the embedded journal adapter; format in
 * docs/journal-format.md).
 *
 * Appends are buffered into a batch on the event loop; a batch is written with one `write` and
 * made durable with one `fdatasync`, both in libuv's thread pool, while the next batch
 * accumulates. Flushes are pipelined: once a flush's write is done, the next flush may be written
 * and synced while the first one's fdatasync is still running (`pipelineDepth` syncs at most), so
 * a record waits for about one fdatasync, not for the rest of the previous one plus its own.
 * Durability is reported as a watermark (`durableSeq`, `onDurable`, `whenDurable`) that advances
 * in order, over flushes whose own fdatasync has completed (an fdatasync covers everything written
 * to the file before it was called): a caller acknowledges a command only once the watermark has
 * reached its sequence number.
 */
import fs from 'node:fs';
import path from 'node:path';
import { crc32 } from 'node:zlib';
import { DurabilityReports, JournalFailedError, subscribe } from './durability.ts';

export { JournalFailedError };

/** First bytes of every segment file: "BJNL". */
const SEGMENT_MAGIC = 0x4c4e4a42;
/** Layout version written into each segment header; a change of framing bumps it. */
export const JOURNAL_FORMAT_VERSION = 1;
/** magic u32, version u16, header length u16, first seq u64, reserved u32, crc32 of bytes 0–19 u32. */
export const SEGMENT_HEADER_BYTES = 24;
/** payload length u32, seq u64, crc32 (seq + payload) u32. */
export const RECORD_HEADER_BYTES = 16;
/** Largest payload a record may carry; a larger length field is damage, not data. */
export const MAX_RECORD_PAYLOAD_BYTES = 16 * 1024 * 1024;
/** Segments are read whole, so a segment must stay well under Node's 2 GiB single-read limit. */
const MAX_SEGMENT_BYTES = 1024 * 1024 * 1024;
const SEGMENT_NAME = /^(\d{20})\.seg$/;
const TWO_POW_32 = 4294967296;
/** Initial capacity of a batch buffer; it doubles when a batch outgrows it. */
const BATCH_BUFFER_INITIAL_BYTES = 256 * 1024;
/** Buffers kept for reuse after their batch is durable (one in flight, one filling, one spare). */
const BATCH_BUFFERS_POOLED = 3;
/** Most batches one flush carries (one pwritev: far below the kernel's IOV_MAX of 1024). */
const MAX_BATCHES_PER_WRITE = 64;

/** Tuning of a `FileJournal`; every field has a default (`DEFAULT_JOURNAL_OPTIONS`). */
export interface JournalOptions {
  /** A segment rolls (the next batch starts a new file) once it has reached this size. */
  segmentBytes: number;
  /** Longest a batch waits for company after its first record (ms). */
  maxBatchDelayMs: number;
  /**
   * Also close a batch at the end of the event-loop turn in which its first record arrived
   * (`setImmediate`): everything one turn of I/O callbacks appended shares one fsync, and an
   * idle journal adds no timer delay. While a flush is in flight the batch keeps growing anyway.
   */
  closeBatchAtTurnEnd: boolean;
  /** A batch closes when it reaches this many bytes (framing included)… */
  maxBatchBytes: number;
  /** …or this many records. */
  maxBatchRecords: number;
  /**
   * Flushes whose fdatasync may run at the same time (1: each flush waits for the previous one's
   * fdatasync). A flush that must start a new segment waits for every sync in flight.
   */
  pipelineDepth: number;
  /**
   * `false` skips every fdatasync (and directory fsync): records are only written to the page
   * cache. For tests and benchmarks that say so explicitly; never for a real exchange.
   */
  fsync: boolean;
}

export const DEFAULT_JOURNAL_OPTIONS: Readonly<JournalOptions> = Object.freeze({
  segmentBytes: 64 * 1024 * 1024,
  maxBatchDelayMs: 1,
  closeBatchAtTurnEnd: true,
  maxBatchBytes: 1024 * 1024,
  maxBatchRecords: 16_384,
  pipelineDepth: 2,
  fsync: true,
});

/** What `FileJournal.open` found and repaired. */
export interface JournalRecovery {
  /** Last sequence number after recovery (0: empty journal). */
  readonly lastSeq: number;
  /** Bytes cut from the tail of the last segment (0: the journal ended cleanly). */
  readonly truncatedBytes: number;
  /** Segment files in the journal after recovery. */
  readonly segments: number;
  /** What was cut and why, or null when nothing was. */
  readonly tail: string | null;
}

/** Counters for tests and metrics. */
export interface JournalStats {
  /** Batches closed and written. */
  readonly batches: number;
  /** Write calls on segment files: one per flush, which carries one or more batches. */
  readonly writes: number;
  /** fdatasync calls on segment files: one per flush when `fsync` is on. */
  readonly fsyncs: number;
  readonly recordsWritten: number;
  readonly bytesWritten: number;
  /** Segments created by this instance. */
  readonly segmentsCreated: number;
}

/** One flush made durable: what `onFlushed` listeners receive (for metrics). */
export interface FlushReport {
  /** Records the flush carried (every batch closed since the previous flush). */
  readonly records: number;
  /** Bytes it wrote, framing included. */
  readonly bytes: number;
  /** How long its fdatasync took (ms; 0 with `fsync: false`). */
  readonly syncMs: number;
}

/** Result of the read-only `FileJournal.verify`. */
export interface JournalVerification {
  readonly segments: number;
  readonly records: number;
  /** Last intact sequence number (0: none). */
  readonly lastSeq: number;
  /** One line per problem, each naming the segment file and byte offset; empty when clean. */
  readonly problems: string[];
}

/** The journal's files are damaged in a way recovery must not paper over. */
export class JournalCorruptError extends Error {
  /** Path of the damaged segment file. */
  readonly file: string;
  /** Byte offset of the damage in that file. */
  readonly offset: number;

  constructor(file: string, offset: number, reason: string) {
    super(`journal corrupt: ${file} at byte ${offset}: ${reason}`);
    this.name = 'JournalCorruptError';
    this.file = file;
    this.offset = offset;
  }
}

interface Segment {
  readonly file: string;
  readonly firstSeq: number;
}

/** Records being gathered or written together: one write, one fdatasync. */
interface Batch {
  buf: Buffer;
  used: number;
  records: number;
  firstSeq: number;
  lastSeq: number;
  /** Its turn-end or delay trigger has fired: flush as soon as nothing is in flight. */
  due: boolean;
  timer: NodeJS.Timeout | null;
}

/** One write of batches, then its fdatasync. */
interface Flush {
  readonly batches: Batch[];
  /** Its fdatasync has completed (it may still wait for an earlier flush's). */
  synced: boolean;
}

/**
 * A journal over the segment files of one directory. One instance per directory (there is no
 * cross-process lock). Not reentrant from listeners: listeners may call `append`.
 */
export class FileJournal {
  /** What `open` found and repaired. */
  readonly recovery: JournalRecovery;
  readonly dir: string;
  readonly #options: JournalOptions;
  readonly #segments: Segment[];
  #fd: number | null = null;
  /** Size of the active segment: where the next batch is written. */
  #fileSize = 0;
  #lastSeq: number;
  #durableSeq: number;
  #pendingBytes = 0;
  #open: Batch | null = null;
  readonly #sealed: Batch[] = [];
  /** A flush's write is running (one at a time, in order). */
  #writing = false;
  /** Written flushes, oldest first, until they and every flush before them are synced. */
  readonly #syncing: Flush[] = [];
  #immediate: NodeJS.Immediate | null = null;
  readonly #freeBuffers: Buffer[] = [];
  #failure: JournalFailedError | null = null;
  #closing: Promise<void> | null = null;
  readonly #reports = new DurabilityReports();
  readonly #flushListeners: ((report: FlushReport) => void)[] = [];
  readonly #segmentListeners: ((file: string, firstSeq: number) => void)[] = [];
  #batches = 0;
  #writes = 0;
  #fsyncs = 0;
  #recordsWritten = 0;
  #bytesWritten = 0;
  #segmentsCreated = 0;

  private constructor(
    dir: string,
    options: JournalOptions,
    segments: Segment[],
    fd: number | null,
    fileSize: number,
    recovery: JournalRecovery,
  ) {
    this.dir = dir;
    this.#options = options;
    this.#segments = segments;
    this.#fd = fd;
    this.#fileSize = fileSize;
    this.#lastSeq = recovery.lastSeq;
    this.#durableSeq = recovery.lastSeq;
    this.recovery = recovery;
  }

  /**
   * Opens (creating if needed) the journal in `dir`: scans and verifies every record of every
   * segment, cuts a torn tail off the last segment (ftruncate + fsync, reported in `recovery`),
   * and makes what remains durable. Throws `JournalCorruptError` (naming file and offset) for
   * damage that is not a torn tail: a bad record followed by intact data, any bad record in a
   * segment other than the last, a sequence gap or repeat, a bad segment header.
   */
  static open(dir: string, options: Partial<JournalOptions> = {}): FileJournal {
    const opts = resolveOptions(options);
    fs.mkdirSync(dir, { recursive: true });
    const names = listSegmentNames(dir);
    const segments: Segment[] = [];
    let lastSeq = 0;
    let truncatedBytes = 0;
    let tail: string | null = null;
    let fd: number | null = null;
    let fileSize = 0;
    for (let i = 0; i < names.length; i++) {
      const name = names[i] as string;
      const file = path.join(dir, name);
      const isLast = i === names.length - 1;
      const data = fs.readFileSync(file);
      const scan = scanSegment(file, data, isLast);
      if (scan.headerDamage !== null) {
        if (scan.headerDamage.torn) {
          // A segment whose creation never completed (its header is fsynced before any record
          // is written): it holds nothing, so it goes.
          fs.unlinkSync(file);
          if (opts.fsync) fsyncDirSync(dir);
          truncatedBytes += data.length;
          tail = `removed ${file}: ${scan.headerDamage.reason}`;
          continue;
        }
        throw new JournalCorruptError(file, scan.headerDamage.offset, scan.headerDamage.reason);
      }
      // The first segment may start anywhere (retention removes older ones); the rest continue it.
      if (segments.length > 0 && scan.firstSeq !== lastSeq + 1) {
        throw new JournalCorruptError(
          file,
          0,
          `segment starts at seq ${scan.firstSeq} but the previous one ends at ${lastSeq}`,
        );
      }
      if (scan.damage !== null) {
        if (!scan.damage.torn) throw new JournalCorruptError(file, scan.damage.offset, scan.damage.reason);
        const cut = data.length - scan.validEnd;
        const cutFd = fs.openSync(file, 'r+');
        try {
          fs.ftruncateSync(cutFd, scan.validEnd);
          if (opts.fsync) fs.fsyncSync(cutFd);
        } finally {
          fs.closeSync(cutFd);
        }
        truncatedBytes += cut;
        tail = `cut ${cut} bytes from ${file} at byte ${scan.validEnd}: ${scan.damage.reason}`;
      }
      segments.push({ file, firstSeq: scan.firstSeq });
      lastSeq = scan.lastSeq;
      if (isLast) {
        fd = fs.openSync(file, 'r+');
        fileSize = scan.validEnd;
        // Records a crashed process wrote without syncing are still only in the page cache.
        if (opts.fsync) fs.fdatasyncSync(fd);
      }
    }
    return new FileJournal(dir, opts, segments, fd, fileSize, {
      lastSeq,
      truncatedBytes,
      segments: segments.length,
      tail,
    });
  }

  /**
   * Checks every segment of `dir` without changing anything (for `bourse verify`). A torn tail
   * that `open` would cut is listed as a problem too.
   */
  static verify(dir: string): JournalVerification {
    const problems: string[] = [];
    const names = fs.existsSync(dir) ? listSegmentNames(dir) : [];
    let records = 0;
    let lastSeq = 0;
    let previousEnd: number | null = null;
    for (let i = 0; i < names.length; i++) {
      const file = path.join(dir, names[i] as string);
      const isLast = i === names.length - 1;
      let data: Buffer;
      try {
        data = fs.readFileSync(file);
      } catch (error) {
        problems.push(`${file}: unreadable: ${(error as Error).message}`);
        previousEnd = null;
        continue;
      }
      const scan = scanSegment(file, data, isLast);
      if (scan.headerDamage !== null) {
        problems.push(
          `${file} at byte ${scan.headerDamage.offset}: ${scan.headerDamage.reason}` +
            (scan.headerDamage.torn ? ' (an unfinished segment: open() would remove it)' : ''),
        );
        previousEnd = null;
        continue;
      }
      if (previousEnd !== null && scan.firstSeq !== previousEnd + 1) {
        problems.push(
          `${file} at byte 0: starts at seq ${scan.firstSeq}, the previous segment ends at ${previousEnd}`,
        );
      }
      if (scan.damage !== null) {
        problems.push(
          `${file} at byte ${scan.damage.offset}: ${scan.damage.reason}` +
            (scan.damage.torn ? ` (torn tail: open() would cut ${data.length - scan.validEnd} bytes)` : ''),
        );
      }
      records += scan.records;
      if (scan.records > 0) lastSeq = scan.lastSeq;
      previousEnd = scan.lastSeq;
    }
    return { segments: names.length, records, lastSeq, problems };
  }

  /** Highest sequence number appended (durable or not). */
  get lastSeq(): number {
    return this.#lastSeq;
  }

  /** Highest sequence number known durable: every record up to it is written and fdatasynced. */
  get durableSeq(): number {
    return this.#durableSeq;
  }

  /** Oldest sequence number still stored (`lastSeq + 1` when the journal is empty). */
  get firstSeq(): number {
    return this.#segments[0]?.firstSeq ?? this.#lastSeq + 1;
  }

  /** Records appended but not yet durable (for backpressure). */
  get pending(): number {
    return this.#lastSeq - this.#durableSeq;
  }

  /** Bytes (framing included) appended but not yet durable (for backpressure). */
  get pendingBytes(): number {
    return this.#pendingBytes;
  }

  /** The failure that stopped the journal, or null while healthy. */
  get failure(): Error | null {
    return this.#failure;
  }

  get stats(): JournalStats {
    return {
      batches: this.#batches,
      writes: this.#writes,
      fsyncs: this.#fsyncs,
      recordsWritten: this.#recordsWritten,
      bytesWritten: this.#bytesWritten,
      segmentsCreated: this.#segmentsCreated,
    };
  }

  /** Paths of the segment files, oldest first. */
  get segmentFiles(): string[] {
    return this.#segments.map((s) => s.file);
  }

  /**
   * Buffers a record into the current batch. `seq` must be `lastSeq + 1`. Throws (and changes
   * nothing) on a wrong seq, an oversized payload, after `close()` or after a failure. The
   * payload is copied, so the caller may reuse its buffer.
   */
  append(seq: number, payload: Uint8Array): void {
    if (this.#failure !== null) throw this.#failure;
    if (this.#closing !== null) throw new Error('journal is closed');
    if (seq !== this.#lastSeq + 1) {
      throw new RangeError(`journal append: seq ${seq} does not follow the last seq ${this.#lastSeq}`);
    }
    const length = payload.length;
    if (length > MAX_RECORD_PAYLOAD_BYTES) {
      throw new RangeError(`journal append: payload of ${length} bytes exceeds ${MAX_RECORD_PAYLOAD_BYTES}`);
    }
    const size = RECORD_HEADER_BYTES + length;
    let batch = this.#open;
    if (batch === null) batch = this.#startBatch(seq, size);
    else if (batch.used + size > batch.buf.length) growBatch(batch, size);
    const buf = batch.buf;
    const at = batch.used;
    buf.writeUInt32LE(length, at);
    const lo = seq >>> 0;
    const hi = (seq - lo) / TWO_POW_32;
    buf.writeUInt32LE(lo, at + 4);
    buf.writeUInt32LE(hi, at + 8);
    buf.writeUInt32LE(crc32(payload, crc32OfSeq(lo, hi)), at + 12);
    buf.set(payload, at + RECORD_HEADER_BYTES);
    batch.used = at + size;
    batch.records++;
    batch.lastSeq = seq;
    this.#lastSeq = seq;
    this.#pendingBytes += size;
    if (batch.used >= this.#options.maxBatchBytes || batch.records >= this.#options.maxBatchRecords) {
      this.#seal(batch);
      this.#pump();
    }
  }

  /**
   * Subscribes to the durability watermark: called after each completed fdatasync with the new
   * `durableSeq`. A listener must not throw (an exception is rethrown asynchronously, uncaught).
   * Returns a function that unsubscribes.
   */
  onDurable(listener: (durableSeq: number) => void): () => void {
    return this.#reports.onDurable(listener);
  }

  /**
   * Subscribes to the failure of a write, fsync or segment roll; called once. After it nothing
   * more is appended or acknowledged. With no listener the error is thrown asynchronously
   * (uncaught), so a failure is never silent. Returns a function that unsubscribes.
   */
  onError(listener: (error: Error) => void): () => void {
    return this.#reports.onError(listener);
  }

  /**
   * Subscribes to each flush once its fdatasync has completed (before the watermark moves), for
   * metrics: records, bytes and fdatasync time. Must not throw. Returns a function that unsubscribes.
   */
  onFlushed(listener: (report: FlushReport) => void): () => void {
    return subscribe(this.#flushListeners, listener);
  }

  /** Subscribes to the creation of each new segment file (its path and first seq). Must not throw. */
  onSegmentCreated(listener: (file: string, firstSeq: number) => void): () => void {
    return subscribe(this.#segmentListeners, listener);
  }

  /** Resolves once `durableSeq >= seq`; rejects if the journal fails first. */
  whenDurable(seq: number): Promise<void> {
    if (seq <= this.#durableSeq) return Promise.resolve();
    if (this.#failure !== null) return Promise.reject(this.#failure);
    return this.#reports.waitFor(seq);
  }

  /**
   * Records from `fromSeq` up to the `durableSeq` at the time of the call, in order, across
   * segments (for replay). Each segment is read with one call; payloads are views into that
   * segment's buffer (copy one to keep it without pinning the whole segment). Throws RangeError
   * when `fromSeq` precedes the oldest stored record, and JournalCorruptError when a record read
   * does not verify.
   */
  read(fromSeq: number): Generator<{ seq: number; payload: Uint8Array }> {
    const first = this.firstSeq;
    const endSeq = this.#durableSeq;
    if (fromSeq < first && fromSeq <= endSeq) {
      throw new RangeError(`journal read from seq ${fromSeq}: the oldest stored record is ${first}`);
    }
    return readSegments(this.#segments.slice(), Math.max(fromSeq, 1), endSeq);
  }

  /**
   * Deletes whole segments, oldest first, whose records all precede `seq` — never the active
   * (last) segment. Returns the paths deleted. Used by retention once a snapshot covers them.
   */
  removeSegmentsBefore(seq: number): string[] {
    const removed: string[] = [];
    while (this.#segments.length > 1 && (this.#segments[1] as Segment).firstSeq <= seq) {
      const segment = this.#segments.shift() as Segment;
      fs.unlinkSync(segment.file);
      removed.push(segment.file);
    }
    // No directory fsync: if a crash forgets a deletion, the segment comes back whole, still
    // continuous with the next one, and the next retention deletes it again.
    return removed;
  }

  /**
   * Flushes and fsyncs every appended record, then closes the files. Appends are refused from
   * the call on. Rejects with the failure if the journal failed (files are closed either way).
   */
  close(): Promise<void> {
    if (this.#closing === null) this.#closing = this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    const open = this.#open;
    if (open !== null) {
      open.due = true;
      this.#pump();
    }
    try {
      await this.whenDurable(this.#lastSeq);
    } finally {
      if (this.#immediate !== null) clearImmediate(this.#immediate);
      this.#immediate = null;
      // Waiters for records that were never appended would otherwise wait forever.
      this.#reports.rejectWaiters(new Error('journal is closed'));
      const fd = this.#fd;
      this.#fd = null;
      // After a failure a write may still be running on the fd; it fails harmlessly once closed.
      if (fd !== null) await new Promise<void>((resolve) => fs.close(fd, () => resolve()));
    }
  }

  #startBatch(seq: number, firstRecordBytes: number): Batch {
    let buf = this.#freeBuffers.pop();
    if (buf === undefined || buf.length < firstRecordBytes) {
      buf = Buffer.allocUnsafeSlow(Math.max(BATCH_BUFFER_INITIAL_BYTES, firstRecordBytes * 2));
    }
    const batch: Batch = {
      buf,
      used: 0,
      records: 0,
      firstSeq: seq,
      lastSeq: seq - 1,
      due: false,
      timer: null,
    };
    this.#open = batch;
    if (this.#options.closeBatchAtTurnEnd) {
      this.#immediate ??= setImmediate(() => {
        this.#immediate = null;
        this.#markDue();
      });
    }
    if (Number.isFinite(this.#options.maxBatchDelayMs)) {
      batch.timer = setTimeout(() => {
        batch.timer = null;
        if (this.#open === batch) this.#markDue();
      }, this.#options.maxBatchDelayMs);
    }
    return batch;
  }

  #markDue(): void {
    const open = this.#open;
    if (open === null) return;
    open.due = true;
    this.#pump();
  }

  #seal(batch: Batch): void {
    if (batch.timer !== null) clearTimeout(batch.timer);
    batch.timer = null;
    this.#open = null;
    this.#sealed.push(batch);
  }

  /**
   * Starts the next flush if no write is running and the pipeline has room. A flush carries every
   * closed batch waiting (they all waited for the disk, so one fdatasync serves them all) and the
   * open batch with them; alone, the open batch goes once its turn-end or delay trigger has fired.
   */
  #pump(): void {
    if (this.#writing || this.#failure !== null) return;
    const syncing = this.#syncing.length;
    if (syncing >= this.#options.pipelineDepth) return;
    const open = this.#open;
    if (this.#sealed.length === 0 && (open === null || !open.due)) return;
    // A roll closes the previous segment's fd: no fdatasync may still be running on it.
    const rollDue = this.#fd === null || this.#fileSize >= this.#options.segmentBytes;
    if (rollDue && syncing > 0) return;
    if (open !== null && this.#sealed.length < MAX_BATCHES_PER_WRITE) this.#seal(open);
    const flush: Flush = { batches: this.#sealed.splice(0, MAX_BATCHES_PER_WRITE), synced: false };
    this.#writing = true;
    this.#write(flush.batches, rollDue).then(
      (fd) => {
        this.#writing = false;
        if (this.#failure !== null) return;
        this.#syncing.push(flush);
        if (!this.#options.fsync) {
          this.#reportFlush(flush, 0);
          this.#synced(flush);
          return;
        }
        const syncStarted = performance.now();
        fdatasync(fd).then(
          () => {
            this.#fsyncs++;
            this.#reportFlush(flush, performance.now() - syncStarted);
            this.#synced(flush);
          },
          (error: unknown) => this.#fail(error),
        );
        // The next flush's write overlaps this fdatasync.
        this.#pump();
      },
      (error: unknown) => this.#fail(error),
    );
  }

  #reportFlush(flush: Flush, syncMs: number): void {
    if (this.#flushListeners.length === 0) return;
    let records = 0;
    let bytes = 0;
    for (const batch of flush.batches) {
      records += batch.records;
      bytes += batch.used;
    }
    const report: FlushReport = { records, bytes, syncMs };
    for (const listener of this.#flushListeners) listener(report);
  }

  /** One write (pwritev) of the batches, after starting a new segment if due; resolves with its fd. */
  async #write(batches: Batch[], roll: boolean): Promise<number> {
    if (roll) await this.#roll((batches[0] as Batch).firstSeq);
    const fd = this.#fd as number;
    const bytes = await writeBatches(fd, batches, this.#fileSize);
    this.#writes++;
    this.#fileSize += bytes;
    return fd;
  }

  /** Marks a flush synced and reports every flush, oldest first, that is synced with all before it. */
  #synced(flush: Flush): void {
    if (this.#failure !== null) return;
    flush.synced = true;
    const syncing = this.#syncing;
    let n = 0;
    while (n < syncing.length && (syncing[n] as Flush).synced) n++;
    if (n === 0) return;
    const done = syncing.splice(0, n);
    this.#flushed(n === 1 ? (done[0] as Flush).batches : done.flatMap((f) => f.batches));
  }

  /**
   * Starts a new segment for `firstSeq`. Its header is made durable (file and directory entry)
   * before any record goes in, so a segment with records always has a valid header and a
   * segment with a bad header and no records can only be one whose creation was cut short.
   */
  async #roll(firstSeq: number): Promise<void> {
    const file = path.join(this.dir, segmentName(firstSeq));
    const fd = await fsOpen(file, 'wx');
    try {
      await writeAll(fd, encodeSegmentHeader(firstSeq), SEGMENT_HEADER_BYTES, 0);
      if (this.#options.fsync) {
        await fdatasync(fd);
        await fsyncDir(this.dir);
      }
    } catch (error) {
      await new Promise<void>((resolve) => fs.close(fd, () => resolve()));
      throw error;
    }
    const previous = this.#fd;
    this.#fd = fd;
    this.#fileSize = SEGMENT_HEADER_BYTES;
    this.#segments.push({ file, firstSeq });
    this.#segmentsCreated++;
    for (const listener of this.#segmentListeners) listener(file, firstSeq);
    // The previous segment's records were all fdatasynced by their own batches.
    if (previous !== null) fs.close(previous, () => undefined);
  }

  #flushed(batches: Batch[]): void {
    for (const batch of batches) {
      this.#batches++;
      this.#recordsWritten += batch.records;
      this.#bytesWritten += batch.used;
      this.#pendingBytes -= batch.used;
      if (this.#freeBuffers.length < BATCH_BUFFERS_POOLED) this.#freeBuffers.push(batch.buf);
    }
    const durable = (batches.at(-1) as Batch).lastSeq;
    this.#durableSeq = durable;
    // Start the next flush before telling anyone, so the disk is never idle while work waits.
    this.#pump();
    this.#reports.reached(durable);
  }

  #fail(cause: unknown): void {
    if (this.#failure !== null) return;
    const message = cause instanceof Error ? cause.message : String(cause);
    const failure = new JournalFailedError(
      `journal failed after durable seq ${this.#durableSeq}: ${message}; nothing after it is acknowledged`,
      cause,
    );
    this.#failure = failure;
    if (this.#immediate !== null) clearImmediate(this.#immediate);
    this.#immediate = null;
    for (const batch of [this.#open, ...this.#sealed]) if (batch?.timer) clearTimeout(batch.timer);
    this.#reports.failed(failure);
  }
}

function resolveOptions(options: Partial<JournalOptions>): JournalOptions {
  const opts: JournalOptions = { ...DEFAULT_JOURNAL_OPTIONS };
  for (const [key, value] of Object.entries(options)) {
    if (value !== undefined) (opts as unknown as Record<string, unknown>)[key] = value;
  }
  if (!(opts.segmentBytes > SEGMENT_HEADER_BYTES && opts.segmentBytes <= MAX_SEGMENT_BYTES)) {
    throw new RangeError(`journal segmentBytes must be in (${SEGMENT_HEADER_BYTES}, ${MAX_SEGMENT_BYTES}]`);
  }
  if (!(opts.maxBatchDelayMs >= 0)) throw new RangeError('journal maxBatchDelayMs must be ≥ 0');
  if (!(opts.maxBatchBytes > 0) || !(opts.maxBatchRecords >= 1)) {
    throw new RangeError('journal maxBatchBytes and maxBatchRecords must be positive');
  }
  if (!(Number.isInteger(opts.pipelineDepth) && opts.pipelineDepth >= 1)) {
    throw new RangeError('journal pipelineDepth must be an integer ≥ 1');
  }
  if (!opts.closeBatchAtTurnEnd && !Number.isFinite(opts.maxBatchDelayMs)) {
    throw new RangeError('journal batches need a trigger: closeBatchAtTurnEnd or a finite maxBatchDelayMs');
  }
  return opts;
}

function growBatch(batch: Batch, recordBytes: number): void {
  let capacity = batch.buf.length * 2;
  while (capacity < batch.used + recordBytes) capacity *= 2;
  const bigger = Buffer.allocUnsafeSlow(capacity);
  batch.buf.copy(bigger, 0, 0, batch.used);
  batch.buf = bigger;
}

/** `00000000000000000001.seg`: zero-padded so that lexical order is seq order. */
export function segmentName(firstSeq: number): string {
  return `${String(firstSeq).padStart(20, '0')}.seg`;
}

function listSegmentNames(dir: string): string[] {
  return fs
    .readdirSync(dir)
    .filter((name) => SEGMENT_NAME.test(name))
    .sort();
}

function encodeSegmentHeader(firstSeq: number): Buffer {
  const header = Buffer.alloc(SEGMENT_HEADER_BYTES);
  header.writeUInt32LE(SEGMENT_MAGIC, 0);
  header.writeUInt16LE(JOURNAL_FORMAT_VERSION, 4);
  header.writeUInt16LE(SEGMENT_HEADER_BYTES, 6);
  header.writeUInt32LE(firstSeq >>> 0, 8);
  header.writeUInt32LE(Math.floor(firstSeq / TWO_POW_32), 12);
  header.writeUInt32LE(crc32(header.subarray(0, 20)), 20);
  return header;
}

/** CRC-32 (IEEE, as zlib) lookup table, for the 8 seq bytes that start each record's checksum. */
const CRC_TABLE = (() => {
  const table = new Int32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c;
  }
  return table;
})();

/**
 * crc32 of the seq as 8 little-endian bytes, computed in JS: zlib's crc32 then continues it over
 * the payload, so a record costs one native call and no extra buffer.
 */
function crc32OfSeq(lo: number, hi: number): number {
  let c = -1;
  for (let i = 0; i < 4; i++) c = (CRC_TABLE[(c ^ (lo >>> (8 * i))) & 0xff] as number) ^ (c >>> 8);
  for (let i = 0; i < 4; i++) c = (CRC_TABLE[(c ^ (hi >>> (8 * i))) & 0xff] as number) ^ (c >>> 8);
  return (c ^ -1) >>> 0;
}

function recordChecksum(data: Buffer, at: number, length: number): number {
  const seqCrc = crc32OfSeq(data.readUInt32LE(at + 4), data.readUInt32LE(at + 8));
  const start = at + RECORD_HEADER_BYTES;
  return crc32(data.subarray(start, start + length), seqCrc);
}

interface Damage {
  readonly offset: number;
  readonly reason: string;
  /** Nothing intact follows it in the last segment: an unfinished write, cut on open. */
  readonly torn: boolean;
}

interface SegmentScan {
  firstSeq: number;
  records: number;
  /** Seq of the last intact record (firstSeq - 1 when none). */
  lastSeq: number;
  /** Byte offset just past the last intact record. */
  validEnd: number;
  headerDamage: Damage | null;
  damage: Damage | null;
}

/**
 * Verifies a segment's header and records. A bad record is a torn tail only in the last segment
 * and only when no intact record follows it (it runs to or past the end of the file, or only
 * garbage follows); anything else is corruption.
 */
function scanSegment(file: string, data: Buffer, isLast: boolean): SegmentScan {
  const size = data.length;
  const scan: SegmentScan = {
    firstSeq: 0,
    records: 0,
    lastSeq: 0,
    validEnd: 0,
    headerDamage: null,
    damage: null,
  };
  const nameSeq = Number(SEGMENT_NAME.exec(path.basename(file))?.[1]);
  const headerProblem = checkSegmentHeader(data, nameSeq);
  if (headerProblem !== null) {
    // The header is made durable before any record is written, so only a segment with nothing
    // after its header slot (or only zeros, which some filesystems leave after a crash) can be
    // an unfinished creation.
    const torn = isLast && (size <= SEGMENT_HEADER_BYTES || isAllZero(data, SEGMENT_HEADER_BYTES));
    scan.headerDamage = { offset: 0, reason: headerProblem, torn };
    return scan;
  }
  scan.firstSeq = nameSeq;
  let expected = nameSeq;
  let at = SEGMENT_HEADER_BYTES;
  while (at < size) {
    let problem: string | null = null;
    let end = size;
    if (size - at < RECORD_HEADER_BYTES) {
      problem = `incomplete record header (${size - at} of ${RECORD_HEADER_BYTES} bytes)`;
    } else {
      const length = data.readUInt32LE(at);
      end = at + RECORD_HEADER_BYTES + length;
      if (length > MAX_RECORD_PAYLOAD_BYTES) {
        problem = `record length ${length} exceeds the maximum ${MAX_RECORD_PAYLOAD_BYTES}`;
        end = size;
      } else if (end > size) {
        problem = `incomplete record: ${length}-byte payload needs ${end - size} more bytes than the file has`;
        end = size;
      } else if (recordChecksum(data, at, length) !== data.readUInt32LE(at + 12)) {
        problem = `checksum mismatch in the record expected to be seq ${expected}`;
      } else {
        const seq = data.readUInt32LE(at + 4) + data.readUInt32LE(at + 8) * TWO_POW_32;
        if (seq !== expected) {
          // An intact record with the wrong number is never a torn write.
          scan.damage = {
            offset: at,
            reason: `sequence ${seq < expected ? 'repeat' : 'gap'}: found seq ${seq}, expected ${expected}`,
            torn: false,
          };
          break;
        }
      }
    }
    if (problem !== null) {
      const torn = isLast && !hasIntactRecordAfter(data, at + 1, expected);
      scan.damage = {
        offset: at,
        reason: torn ? problem : `${problem}, with intact records after it`,
        torn,
      };
      break;
    }
    expected++;
    scan.records++;
    at = end;
  }
  scan.lastSeq = expected - 1;
  scan.validEnd = at;
  return scan;
}

function checkSegmentHeader(data: Buffer, nameSeq: number): string | null {
  if (data.length < SEGMENT_HEADER_BYTES) {
    return `incomplete segment header (${data.length} of ${SEGMENT_HEADER_BYTES} bytes)`;
  }
  if (data.readUInt32LE(0) !== SEGMENT_MAGIC) return 'bad segment magic';
  if (data.readUInt32LE(20) !== crc32(data.subarray(0, 20))) return 'segment header checksum mismatch';
  const version = data.readUInt16LE(4);
  if (version !== JOURNAL_FORMAT_VERSION) return `unsupported segment format version ${version}`;
  if (data.readUInt16LE(6) !== SEGMENT_HEADER_BYTES)
    return `unexpected segment header length ${data.readUInt16LE(6)}`;
  const firstSeq = data.readUInt32LE(8) + data.readUInt32LE(12) * TWO_POW_32;
  if (firstSeq !== nameSeq) return `segment header says first seq ${firstSeq}, the file name ${nameSeq}`;
  if (firstSeq < 1) return 'segment first seq must be ≥ 1';
  return null;
}

function isAllZero(data: Buffer, from: number): boolean {
  for (let i = from; i < data.length; i++) if (data[i] !== 0) return false;
  return true;
}

/**
 * Whether an intact record (valid checksum, a plausible seq ≥ `expected`) starts anywhere at or
 * after `from`. It tells a flipped bit in the middle (refuse to start: acknowledged records
 * follow) from an unfinished final write (cut it). Linear in the bytes after `from`, and only
 * run when a record is already bad.
 */
function hasIntactRecordAfter(data: Buffer, from: number, expected: number): boolean {
  const size = data.length;
  for (let at = from; at + RECORD_HEADER_BYTES <= size; at++) {
    const lo = data.readUInt32LE(at + 4);
    const hi = data.readUInt32LE(at + 8);
    const seq = lo + hi * TWO_POW_32;
    // Each later record takes at least RECORD_HEADER_BYTES, which bounds how far seq can be.
    if (seq < expected || seq > expected + (size - at) / RECORD_HEADER_BYTES) continue;
    const length = data.readUInt32LE(at);
    if (at + RECORD_HEADER_BYTES + length > size) continue;
    if (recordChecksum(data, at, length) === data.readUInt32LE(at + 12)) return true;
  }
  return false;
}

function* readSegments(
  segments: Segment[],
  fromSeq: number,
  endSeq: number,
): Generator<{ seq: number; payload: Uint8Array }> {
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i] as Segment;
    const next = segments[i + 1];
    if (segment.firstSeq > endSeq) return;
    if (next !== undefined && next.firstSeq <= fromSeq) continue;
    const data = fs.readFileSync(segment.file);
    const size = data.length;
    let at = SEGMENT_HEADER_BYTES;
    let seq = segment.firstSeq;
    while (seq <= endSeq && (next === undefined || seq < next.firstSeq)) {
      if (at + RECORD_HEADER_BYTES > size) {
        throw new JournalCorruptError(segment.file, at, `record seq ${seq} missing (file ends)`);
      }
      const length = data.readUInt32LE(at);
      const start = at + RECORD_HEADER_BYTES;
      const end = start + length;
      if (end > size) throw new JournalCorruptError(segment.file, at, `record seq ${seq} incomplete`);
      if (seq >= fromSeq) {
        const stored = data.readUInt32LE(at + 4) + data.readUInt32LE(at + 8) * TWO_POW_32;
        if (stored !== seq || recordChecksum(data, at, length) !== data.readUInt32LE(at + 12)) {
          throw new JournalCorruptError(segment.file, at, `record seq ${seq} does not verify`);
        }
        yield { seq, payload: data.subarray(start, end) };
      }
      at = end;
      seq++;
    }
  }
}

function writeAll(fd: number, buf: Buffer, length: number, position: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let done = 0;
    const step = (): void => {
      fs.write(fd, buf, done, length - done, position + done, (error, written) => {
        if (error !== null) return reject(error);
        done += written;
        if (done < length) {
          if (written === 0) return reject(new Error('write made no progress'));
          return step();
        }
        resolve();
      });
    };
    step();
  });
}

/** Writes the batches contiguously from `position` with one pwritev (more only if it comes up short). */
async function writeBatches(fd: number, batches: Batch[], position: number): Promise<number> {
  const total = batches.reduce((n, b) => n + b.used, 0);
  if (batches.length === 1) {
    await writeAll(fd, (batches[0] as Batch).buf, total, position);
    return total;
  }
  const views = batches.map((b) => b.buf.subarray(0, b.used));
  const written = await new Promise<number>((resolve, reject) =>
    fs.writev(fd, views, position, (error, n) => (error ? reject(error) : resolve(n))),
  );
  // Regular files take the whole pwritev in practice; finish a short one buffer by buffer.
  let at = 0;
  for (const view of views) {
    const done = Math.min(Math.max(written - at, 0), view.length);
    if (done < view.length) await writeAll(fd, view.subarray(done), view.length - done, position + at + done);
    at += view.length;
  }
  return total;
}

function fdatasync(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fs.fdatasync(fd, (error) => (error ? reject(error) : resolve())));
}

function fsOpen(file: string, flags: string): Promise<number> {
  return new Promise((resolve, reject) =>
    fs.open(file, flags, (error, fd) => (error ? reject(error) : resolve(fd))),
  );
}

/** Makes a directory's entries (created, renamed, removed files) durable. */
function fsyncDirSync(dir: string): void {
  const fd = fs.openSync(dir, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

async function fsyncDir(dir: string): Promise<void> {
  const fd = await fsOpen(dir, 'r');
  try {
    await new Promise<void>((resolve, reject) =>
      fs.fsync(fd, (error) => (error ? reject(error) : resolve())),
    );
  } finally {
    await new Promise<void>((resolve) => fs.close(fd, () => resolve()));
  }
}
