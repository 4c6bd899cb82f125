import { spawn } from 'node:child_process';
import { after, describe, it, mock } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { crc32 } from 'node:zlib';
import {
  FileJournal,
  JournalCorruptError,
  JournalFailedError,
  RECORD_HEADER_BYTES,
  SEGMENT_HEADER_BYTES,
  segmentName,
  type JournalOptions,
} from './file-journal.ts';
import { runJournalContract } from './journal.case.ts';

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bourse-journal-'));
  dirs.push(dir);
  return dir;
}

function payloadOf(seq: number): Buffer {
  // Varying sizes, including empty payloads.
  return Buffer.from(`record ${seq} `.repeat(seq % 5));
}

/** Appends up to `count`, waiting for durability every `perFlush` records (segments roll between flushes). */
async function writeJournal(
  dir: string,
  count: number,
  options: Partial<JournalOptions> & { perFlush?: number } = {},
  payload: (seq: number) => Uint8Array = payloadOf,
): Promise<void> {
  const { perFlush = Infinity, ...journalOptions } = options;
  const journal = FileJournal.open(dir, journalOptions);
  for (let seq = journal.lastSeq + 1; seq <= count; seq++) {
    journal.append(seq, payload(seq));
    if (seq % perFlush === 0) await journal.whenDurable(seq);
  }
  await journal.close();
}

function readAll(journal: FileJournal, fromSeq = 1): { seq: number; payload: Buffer }[] {
  return [...journal.read(fromSeq)].map(({ seq, payload }) => ({ seq, payload: Buffer.from(payload) }));
}

/** The record framing as docs/journal-format.md describes it, written independently of the code. */
function encodeRecord(seq: number, payload: Buffer): Buffer {
  const record = Buffer.alloc(RECORD_HEADER_BYTES + payload.length);
  record.writeUInt32LE(payload.length, 0);
  record.writeBigUInt64LE(BigInt(seq), 4);
  payload.copy(record, RECORD_HEADER_BYTES);
  record.writeUInt32LE(crc32(Buffer.concat([record.subarray(4, 12), payload])), 12);
  return record;
}

function encodeSegmentHeader(firstSeq: number): Buffer {
  const header = Buffer.alloc(SEGMENT_HEADER_BYTES);
  header.write('BJNL', 0, 'latin1');
  header.writeUInt16LE(1, 4);
  header.writeUInt16LE(SEGMENT_HEADER_BYTES, 6);
  header.writeBigUInt64LE(BigInt(firstSeq), 8);
  header.writeUInt32LE(crc32(header.subarray(0, 20)), 20);
  return header;
}

function writeSegment(dir: string, firstSeq: number, seqs: number[]): string {
  const file = path.join(dir, segmentName(firstSeq));
  fs.writeFileSync(
    file,
    Buffer.concat([encodeSegmentHeader(firstSeq), ...seqs.map((seq) => encodeRecord(seq, payloadOf(seq)))]),
  );
  return file;
}

/** Byte offsets at which each record of a segment starts. */
function recordOffsets(file: string): number[] {
  const data = fs.readFileSync(file);
  const offsets: number[] = [];
  for (let at = SEGMENT_HEADER_BYTES; at < data.length; at += RECORD_HEADER_BYTES + data.readUInt32LE(at)) {
    offsets.push(at);
  }
  return offsets;
}

function flipBit(file: string, offset: number): void {
  const data = fs.readFileSync(file);
  data[offset] = (data[offset] as number) ^ 0x10;
  fs.writeFileSync(file, data);
}

function segmentsOf(dir: string): string[] {
  return fs
    .readdirSync(dir)
    .filter((name) => name.endsWith('.seg'))
    .sort()
    .map((name) => path.join(dir, name));
}

function assertCorrupt(dir: string, file: string, offset: number): void {
  assert.throws(
    () => FileJournal.open(dir),
    (error: unknown) => {
      assert.ok(error instanceof JournalCorruptError, String(error));
      assert.equal(error.file, file);
      assert.equal(error.offset, offset);
      assert.match(error.message, new RegExp(`${path.basename(file)} at byte ${offset}\\b`));
      return true;
    },
  );
}

runJournalContract('file', async () => {
  const dir = tempDir();
  // Small segments, so that retention has whole segments to remove.
  return { open: async () => FileJournal.open(dir, { segmentBytes: 1024 }) };
});

describe('FileJournal', () => {
  it('uses the documented framing (records written by hand read back)', async () => {
    const dir = tempDir();
    writeSegment(dir, 1, [1, 2, 3]);
    const journal = FileJournal.open(dir);
    assert.deepEqual(journal.recovery, { lastSeq: 3, truncatedBytes: 0, segments: 1, tail: null });
    assert.equal(journal.lastSeq, 3);
    assert.deepEqual(
      readAll(journal).map((r) => r.payload),
      [1, 2, 3].map(payloadOf),
    );
    await journal.close();
  });

  it('group commit: appends of one event-loop turn share one write and one fdatasync', async () => {
    const journal = FileJournal.open(tempDir());
    for (let seq = 1; seq <= 1000; seq++) journal.append(seq, payloadOf(seq));
    assert.equal(journal.pending, 1000);
    await journal.whenDurable(1000);
    assert.equal(journal.stats.batches, 1);
    assert.equal(journal.stats.fsyncs, 1);
    await journal.close();
  });

  it('group commit: appends over many turns share a batch until its delay closes it', async () => {
    const journal = FileJournal.open(tempDir(), { closeBatchAtTurnEnd: false, maxBatchDelayMs: 200 });
    let seq = 0;
    for (let tick = 0; tick < 20; tick++) {
      for (let i = 0; i < 5; i++) journal.append(++seq, payloadOf(seq));
      await new Promise(setImmediate);
    }
    await journal.whenDurable(seq);
    assert.equal(journal.stats.batches, 1);
    assert.equal(journal.stats.fsyncs, 1);
    await journal.close();
  });

  it('group commit: full batches close early; those waiting behind a flush share the next fdatasync', async () => {
    const journal = FileJournal.open(tempDir(), { maxBatchRecords: 10 });
    const watermarks: number[] = [];
    journal.onDurable((durableSeq) => watermarks.push(durableSeq));
    for (let seq = 1; seq <= 95; seq++) journal.append(seq, payloadOf(seq));
    await journal.whenDurable(95);
    // The first full batch leaves at once; the eight full ones behind it wait for its write, then
    // go together in one pwritev and one fdatasync. The last, open batch (91–95) closes at the
    // turn's end: with them, or in a flush of its own when the first write finished before that
    // turn ended (the thread pool's timing, which a loaded machine changes; failed twice so).
    const { batches, writes, fsyncs } = journal.stats;
    assert.equal(batches, 10);
    assert.equal(fsyncs, writes);
    assert.ok(writes === 2 || writes === 3, `writes: ${writes}`);
    // Each flush's records become durable together: the watermark stops only at a batch's end
    // (two flushes that finish in one turn report once).
    assert.ok(
      watermarks.every((w) => w % 10 === 0 || w === 95),
      `watermarks: ${watermarks.join(', ')}`,
    );
    assert.equal(watermarks.at(-1), 95);
    assert.ok(watermarks.length <= writes);
    await journal.close();
    assert.deepEqual(FileJournal.verify(journal.dir).records, 95);
  });

  it('group commit under continuous load: records per fsync, and the watermark never goes back', async () => {
    const journal = FileJournal.open(tempDir());
    const watermarks: number[] = [];
    journal.onDurable((durableSeq) => watermarks.push(durableSeq));
    let seq = 0;
    const ticks = 200;
    for (let tick = 0; tick < ticks; tick++) {
      for (let i = 0; i < 10; i++) journal.append(++seq, payloadOf(seq));
      await new Promise(setImmediate);
    }
    await journal.close();
    const { writes, fsyncs, recordsWritten } = journal.stats;
    assert.equal(recordsWritten, seq);
    assert.equal(writes, fsyncs);
    assert.ok(fsyncs <= ticks);
    for (let i = 1; i < watermarks.length; i++)
      assert.ok((watermarks[i] as number) > (watermarks[i - 1] as number));
    assert.equal(watermarks.at(-1), seq);
  });

  describe('pipelined flushes', () => {
    /**
     * Holds every fdatasync until released, so the test decides in which order they complete.
     * Each journal is opened and its first record made durable first, so that the segment exists.
     */
    async function withHeldSyncs(
      options: Partial<JournalOptions>,
      body: (journal: FileJournal, held: (() => void)[]) => Promise<void>,
    ): Promise<void> {
      const journal = FileJournal.open(tempDir(), options);
      journal.append(1, payloadOf(1));
      await journal.whenDurable(1);
      const held: (() => void)[] = [];
      const real = fs.fdatasync;
      const m = mock.method(fs, 'fdatasync', (fd: number, callback: (error: Error | null) => void) => {
        held.push(() => real(fd, callback));
      });
      try {
        await body(journal, held);
      } finally {
        m.mock.restore();
        for (const release of held) release();
      }
      await journal.close();
      assert.equal(FileJournal.verify(journal.dir).records, journal.lastSeq);
    }
    const until = async (condition: () => boolean): Promise<void> => {
      while (!condition()) await new Promise((resolve) => setTimeout(resolve, 1));
    };
    const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 20));

    it('writes the next flush during the previous fdatasync; the watermark waits for both, in order', async () => {
      await withHeldSyncs({}, async (journal, held) => {
        const watermarks: number[] = [];
        journal.onDurable((durableSeq) => watermarks.push(durableSeq));
        for (let seq = 2; seq <= 10; seq++) journal.append(seq, payloadOf(seq));
        await until(() => held.length === 1);
        for (let seq = 11; seq <= 20; seq++) journal.append(seq, payloadOf(seq));
        // The second flush is written and its fdatasync issued while the first is still running.
        await until(() => held.length === 2);
        assert.equal(journal.stats.writes, 3);
        // A third flush waits: two syncs are in flight (pipelineDepth 2).
        journal.append(21, payloadOf(21));
        await settle();
        assert.equal(journal.stats.writes, 3);
        // The second sync completes first: nothing more is durable until the first completes too.
        held[1]?.();
        await settle();
        assert.equal(journal.durableSeq, 1);
        assert.deepEqual(watermarks, []);
        held[0]?.();
        await until(() => journal.durableSeq === 20);
        assert.deepEqual(watermarks, [20]);
        await until(() => held.length === 3);
        held[2]?.();
        await journal.whenDurable(21);
        assert.deepEqual(watermarks, [20, 21]);
      });
    });

    it('refuses a pipelineDepth that is not an integer ≥ 1, and opens nothing', () => {
      const dir = tempDir();
      for (const pipelineDepth of [0, -1, 1.5, Number.NaN]) {
        assert.throws(() => FileJournal.open(dir, { pipelineDepth }), /pipelineDepth must be an integer ≥ 1/);
      }
      assert.deepEqual(fs.readdirSync(dir), []);
    });

    it('pipelineDepth 1 writes nothing while an fdatasync runs', async () => {
      await withHeldSyncs({ pipelineDepth: 1 }, async (journal, held) => {
        journal.append(2, payloadOf(2));
        await until(() => held.length === 1);
        journal.append(3, payloadOf(3));
        await settle();
        assert.equal(journal.stats.writes, 2);
        held[0]?.();
        await until(() => held.length === 2);
        assert.equal(journal.stats.writes, 3);
        held[1]?.();
        await journal.whenDurable(3);
      });
    });

    it('a flush that must start a new segment waits for every fdatasync on the old one', async () => {
      await withHeldSyncs({ segmentBytes: 200 }, async (journal, held) => {
        journal.append(2, Buffer.alloc(200, 2));
        await until(() => held.length === 1);
        journal.append(3, Buffer.alloc(8, 3));
        await settle();
        assert.equal(journal.stats.segmentsCreated, 1);
        assert.equal(journal.stats.writes, 2);
        held[0]?.();
        // Then the new segment's header is synced (held too), then the record is written and synced.
        await until(() => held.length === 2);
        held[1]?.();
        await until(() => held.length === 3);
        assert.equal(journal.stats.segmentsCreated, 2);
        held[2]?.();
        await journal.whenDurable(3);
      });
    });
  });

  it('reports durability by watermark, listener and promise', async () => {
    const journal = FileJournal.open(tempDir());
    const seen: number[] = [];
    const unsubscribe = journal.onDurable((durableSeq) => seen.push(durableSeq));
    for (let seq = 1; seq <= 50; seq++) journal.append(seq, payloadOf(seq));
    assert.equal(journal.durableSeq, 0);
    assert.equal(journal.pending, 50);
    assert.ok(journal.pendingBytes >= 50 * RECORD_HEADER_BYTES);
    const order: number[] = [];
    // Out of seq order on purpose.
    const late = journal.whenDurable(50).then(() => order.push(50));
    const early = journal.whenDurable(10).then(() => order.push(10));
    await Promise.all([late, early]);
    assert.deepEqual(order, [10, 50]);
    assert.equal(journal.durableSeq, 50);
    assert.equal(journal.pending, 0);
    assert.equal(journal.pendingBytes, 0);
    assert.deepEqual(seen, [50]);
    await journal.whenDurable(3); // already durable: resolves at once
    unsubscribe();
    journal.append(51, payloadOf(51));
    await journal.whenDurable(51);
    assert.deepEqual(seen, [50]);
    await journal.close();
  });

  it('rolls segments, names them by first seq, and reads across them', async () => {
    const dir = tempDir();
    await writeJournal(dir, 300, { segmentBytes: 1024, perFlush: 7 });
    const files = segmentsOf(dir);
    assert.ok(files.length > 5, `${files.length} segments`);
    const journal = FileJournal.open(dir, { segmentBytes: 1024 });
    assert.equal(journal.recovery.segments, files.length);
    assert.deepEqual(journal.segmentFiles, files);
    let expectedFirst = 1;
    for (const file of files) {
      const header = fs.readFileSync(file).subarray(0, SEGMENT_HEADER_BYTES);
      assert.equal(Number(header.readBigUInt64LE(8)), expectedFirst);
      assert.equal(path.basename(file), segmentName(expectedFirst));
      expectedFirst += recordOffsets(file).length;
    }
    const all = readAll(journal);
    assert.deepEqual(
      all.map((r) => r.seq),
      Array.from({ length: 300 }, (_, i) => i + 1),
    );
    assert.deepEqual(all[299]?.payload, payloadOf(300));
    assert.deepEqual(readAll(journal, 123).map((r) => r.seq)[0], 123);
    for (let seq = 301; seq <= 400; seq++) journal.append(seq, payloadOf(seq));
    await journal.close();
    assert.deepEqual(FileJournal.verify(dir), {
      segments: segmentsOf(dir).length,
      records: 400,
      lastSeq: 400,
      problems: [],
    });
  });

  it('removeSegmentsBefore deletes only whole segments below seq, never the active one', async () => {
    const dir = tempDir();
    await writeJournal(dir, 200, { segmentBytes: 512, perFlush: 5 });
    const journal = FileJournal.open(dir, { segmentBytes: 512 });
    const files = journal.segmentFiles;
    const firstSeqs = files.map((file) => Number(path.basename(file, '.seg')));
    const cut = 100;
    // Segment i holds seqs [firstSeqs[i], firstSeqs[i+1]); it goes when that range is all < cut.
    const expected = files.filter((_, i) => i + 1 < files.length && (firstSeqs[i + 1] as number) <= cut);
    assert.ok(expected.length > 0);
    assert.deepEqual(journal.removeSegmentsBefore(cut), expected);
    assert.deepEqual(segmentsOf(dir), files.slice(expected.length));
    assert.ok(journal.firstSeq <= cut);
    assert.equal(readAll(journal, cut)[0]?.seq, cut);
    assert.throws(() => journal.read(1), RangeError);
    assert.deepEqual(journal.removeSegmentsBefore(cut), []);
    // Everything is below 10⁹, but the active segment stays.
    const rest = journal.removeSegmentsBefore(1e9);
    assert.deepEqual(segmentsOf(dir), [files.at(-1)]);
    assert.equal(rest.length, files.length - expected.length - 1);
    journal.append(201, payloadOf(201));
    await journal.close();
    const reopened = FileJournal.open(dir);
    assert.equal(reopened.lastSeq, 201);
    assert.equal(reopened.firstSeq, firstSeqs.at(-1));
    await reopened.close();
  });

  describe('recovery', () => {
    it('cuts a torn tail at every byte offset inside the last record, keeping earlier records', async () => {
      const base = tempDir();
      await writeJournal(base, 5, {}, (seq) => Buffer.alloc(40, seq));
      const [file] = segmentsOf(base) as [string];
      const full = fs.readFileSync(file);
      const lastStart = recordOffsets(file)[4] as number;
      for (let cut = lastStart + 1; cut < full.length; cut++) {
        const dir = tempDir();
        const copy = path.join(dir, path.basename(file));
        fs.writeFileSync(copy, full.subarray(0, cut));
        const journal = FileJournal.open(dir);
        assert.equal(journal.recovery.lastSeq, 4, `cut at ${cut}`);
        assert.equal(journal.recovery.truncatedBytes, cut - lastStart, `cut at ${cut}`);
        assert.ok(journal.recovery.tail?.includes(`at byte ${lastStart}`));
        assert.equal(fs.statSync(copy).size, lastStart);
        assert.deepEqual(
          readAll(journal).map((r) => r.payload),
          [1, 2, 3, 4].map((seq) => Buffer.alloc(40, seq)),
        );
        // The journal continues where the intact part ends.
        journal.append(5, Buffer.from('again'));
        await journal.close();
        assert.deepEqual(FileJournal.verify(dir).problems, []);
        fs.rmSync(dir, { recursive: true });
      }
    });

    it('removes a last segment whose header was never completed', async () => {
      const base = tempDir();
      await writeJournal(base, 20, { segmentBytes: 200, perFlush: 4 });
      const files = segmentsOf(base);
      const last = files.at(-1) as string;
      const previousEnd = Number(path.basename(last, '.seg')) - 1;
      const lastBytes = fs.readFileSync(last).subarray(0, SEGMENT_HEADER_BYTES);
      for (const variant of [0, 1, 10, SEGMENT_HEADER_BYTES - 1, 'zeros'] as const) {
        const dir = tempDir();
        for (const file of files.slice(0, -1)) fs.copyFileSync(file, path.join(dir, path.basename(file)));
        const torn =
          variant === 'zeros' ? Buffer.alloc(SEGMENT_HEADER_BYTES + 64) : lastBytes.subarray(0, variant);
        fs.writeFileSync(path.join(dir, path.basename(last)), torn);
        const journal = FileJournal.open(dir);
        assert.equal(journal.lastSeq, previousEnd, String(variant));
        assert.match(journal.recovery.tail ?? '', /removed/);
        assert.equal(fs.existsSync(path.join(dir, path.basename(last))), false);
        journal.append(previousEnd + 1, Buffer.from('next'));
        await journal.close();
        assert.equal(FileJournal.verify(dir).lastSeq, previousEnd + 1);
      }
    });

    it('cuts a zero-filled tail (what some filesystems leave after a crash)', async () => {
      const dir = tempDir();
      await writeJournal(dir, 5);
      const [file] = segmentsOf(dir) as [string];
      const size = fs.statSync(file).size;
      fs.appendFileSync(file, Buffer.alloc(4096));
      const journal = FileJournal.open(dir);
      assert.equal(journal.lastSeq, 5);
      assert.equal(journal.recovery.truncatedBytes, 4096);
      assert.equal(fs.statSync(file).size, size);
      await journal.close();
    });

    it('treats a bit flip in the last record as a torn tail and cuts that record', async () => {
      const dir = tempDir();
      await writeJournal(dir, 5, {}, (seq) => Buffer.alloc(40, seq));
      const [file] = segmentsOf(dir) as [string];
      const lastStart = recordOffsets(file)[4] as number;
      const size = fs.statSync(file).size;
      flipBit(file, lastStart + RECORD_HEADER_BYTES + 7);
      const verification = FileJournal.verify(dir);
      assert.equal(verification.problems.length, 1);
      assert.match(verification.problems[0] as string, /torn tail/);
      const journal = FileJournal.open(dir);
      assert.equal(journal.recovery.lastSeq, 4);
      assert.equal(journal.recovery.truncatedBytes, size - lastStart);
      assert.match(journal.recovery.tail ?? '', /checksum mismatch/);
      await journal.close();
    });

    it('refuses a bit flip in a middle record, naming file and offset', async () => {
      for (const where of ['payload', 'length', 'seq', 'crc'] as const) {
        const dir = tempDir();
        await writeJournal(dir, 10, {}, (seq) => Buffer.alloc(40, seq));
        const [file] = segmentsOf(dir) as [string];
        const start = recordOffsets(file)[4] as number;
        const offset = { payload: RECORD_HEADER_BYTES + 3, length: 1, seq: 5, crc: 13 }[where];
        flipBit(file, start + offset);
        const before = fs.readFileSync(file);
        assertCorrupt(dir, file, start);
        assert.deepEqual(fs.readFileSync(file), before, 'open() must not change a corrupt journal');
        const { problems } = FileJournal.verify(dir);
        assert.equal(problems.length, 1);
        assert.match(problems[0] as string, new RegExp(`${path.basename(file)} at byte ${start}:`));
      }
    });

    it('refuses any bad record in a segment that is not the last', async () => {
      const dir = tempDir();
      await writeJournal(dir, 30, { segmentBytes: 300, perFlush: 4 });
      const files = segmentsOf(dir);
      assert.ok(files.length >= 3);
      const first = files[0] as string;
      const offsets = recordOffsets(first);
      const lastStart = offsets.at(-1) as number;
      // Its last record torn: in any segment but the last, that is corruption.
      fs.truncateSync(first, lastStart + 5);
      assertCorrupt(dir, first, lastStart);
    });

    it('refuses a sequence gap or repeat inside a segment', () => {
      const gap = tempDir();
      const gapFile = writeSegment(gap, 1, [1, 2, 4, 5]);
      assertCorrupt(gap, gapFile, recordOffsets(gapFile)[2] as number);
      assert.throws(() => FileJournal.open(gap), /gap: found seq 4, expected 3/);

      const repeat = tempDir();
      const repeatFile = writeSegment(repeat, 1, [1, 2, 2, 3]);
      assertCorrupt(repeat, repeatFile, recordOffsets(repeatFile)[2] as number);

      // At the very end too: a record that verifies but has the wrong seq is not a torn write.
      const tail = tempDir();
      const tailFile = writeSegment(tail, 1, [1, 2, 7]);
      assertCorrupt(tail, tailFile, recordOffsets(tailFile)[2] as number);
    });

    it('refuses a sequence gap between segments', async () => {
      const dir = tempDir();
      await writeJournal(dir, 40, { segmentBytes: 300, perFlush: 4 });
      const files = segmentsOf(dir);
      assert.ok(files.length >= 3);
      fs.rmSync(files[1] as string);
      assertCorrupt(dir, files[2] as string, 0);
      assert.match(FileJournal.verify(dir).problems.join('\n'), /previous segment ends at/);
    });

    it('refuses a bad segment header on a segment that holds records', async () => {
      const dir = tempDir();
      await writeJournal(dir, 40, { segmentBytes: 300, perFlush: 4 });
      const files = segmentsOf(dir);
      for (const file of [files[0] as string, files.at(-1) as string]) {
        const original = fs.readFileSync(file);
        flipBit(file, 2);
        assertCorrupt(dir, file, 0);
        fs.writeFileSync(file, original);
      }
      // A header whose first seq disagrees with the file name.
      const wrong = path.join(dir, segmentName(1));
      const data = fs.readFileSync(wrong);
      encodeSegmentHeader(2).copy(data);
      fs.writeFileSync(wrong, data);
      assertCorrupt(dir, wrong, 0);
    });

    it('verify() reports a clean journal, a torn tail and corruption without changing files', async () => {
      const dir = tempDir();
      assert.deepEqual(FileJournal.verify(dir), { segments: 0, records: 0, lastSeq: 0, problems: [] });
      await writeJournal(dir, 12);
      assert.deepEqual(FileJournal.verify(dir), { segments: 1, records: 12, lastSeq: 12, problems: [] });
      const [file] = segmentsOf(dir) as [string];
      const size = fs.statSync(file).size;
      fs.truncateSync(file, size - 3);
      const torn = FileJournal.verify(dir);
      assert.equal(torn.lastSeq, 11);
      assert.match(torn.problems.join(), /torn tail: open\(\) would cut/);
      assert.equal(fs.statSync(file).size, size - 3);
    });
  });

  it('every record reported durable survives kill -9 of the writing process', async () => {
    const dir = tempDir();
    // The child appends bursts from the event loop, as a server would, and prints each watermark.
    const child = spawn(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `
        import { FileJournal } from ${JSON.stringify(new URL('./file-journal.ts', import.meta.url).href)};
        const journal = FileJournal.open(${JSON.stringify(dir)}, { segmentBytes: 64 * 1024 });
        journal.onDurable((seq) => process.stdout.write(seq + '\\n'));
        let seq = 0;
        const tick = () => {
          for (let i = 0; i < 50; i++) journal.append(++seq, Buffer.alloc(100 + (seq % 100), seq % 256));
          if (journal.pending < 5000) setImmediate(tick); else setTimeout(tick, 1);
        };
        tick();
        `,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let reported = 0;
    let text = '';
    await new Promise<void>((resolve) => {
      child.stdout.on('data', (chunk: Buffer) => {
        text += chunk.toString();
        const lines = text.split('\n');
        text = lines.pop() ?? '';
        for (const line of lines) reported = Math.max(reported, Number(line));
        if (reported >= 20_000) resolve();
      });
      child.on('exit', () => resolve());
    });
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('close', resolve));
    assert.ok(reported >= 20_000, `child reported only ${reported}`);
    const journal = FileJournal.open(dir);
    assert.ok(journal.lastSeq >= reported, `lastSeq ${journal.lastSeq} < reported durable ${reported}`);
    let seq = 0;
    for (const record of journal.read(1)) {
      assert.equal(record.seq, ++seq);
      assert.deepEqual(Buffer.from(record.payload), Buffer.alloc(100 + (seq % 100), seq % 256));
    }
    assert.equal(seq, journal.lastSeq);
    await journal.close();
  });

  describe('failure', () => {
    it('a failed write or sync stops the journal: no more appends, no acknowledgement, errors reported', async () => {
      const dir = tempDir();
      const journal = FileJournal.open(dir, { segmentBytes: 100 });
      for (let seq = 1; seq <= 5; seq++) journal.append(seq, Buffer.alloc(40, seq));
      await journal.whenDurable(5);
      // The next batch must roll to a new segment; make creating it fail.
      fs.mkdirSync(path.join(dir, segmentName(6)));
      const errors: Error[] = [];
      journal.onError((error) => errors.push(error));
      const durable: number[] = [];
      journal.onDurable((seq) => durable.push(seq));
      journal.append(6, Buffer.from('six'));
      await assert.rejects(journal.whenDurable(6), JournalFailedError);
      assert.equal(errors.length, 1);
      assert.ok(errors[0] instanceof JournalFailedError);
      assert.match(errors[0].message, /after durable seq 5/);
      assert.equal(journal.durableSeq, 5);
      assert.deepEqual(durable, []);
      assert.throws(() => journal.append(7, Buffer.from('seven')), JournalFailedError);
      await assert.rejects(journal.whenDurable(7), JournalFailedError);
      await assert.rejects(journal.close(), JournalFailedError);
      assert.equal(errors.length, 1);
    });
  });
});
