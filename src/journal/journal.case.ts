/**
 * @module journal.case — the contract suite every JournalPort adapter must pass (the file journal,
 * the JetStream journal): what the sequencer and recovery rely on, seen through the port only.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { JournalPort, JournalRecord } from '../sequencer/ports.ts';

/** One journal's storage: `open` opens it, and a later `open` (after `close`) reopens what was written. */
export interface JournalHarness {
  open(): Promise<JournalPort>;
}

/** Makes a harness on fresh, empty storage. */
export type CreateJournalHarness = () => Promise<JournalHarness>;

/** Varying sizes, including empty payloads. */
export function payloadOf(seq: number): Uint8Array {
  return Buffer.from(`record ${seq} `.repeat(seq % 5));
}

/** Every record `read(fromSeq)` gives, copied, whether the adapter reads synchronously or not. */
export async function readAll(journal: JournalPort, fromSeq = 1): Promise<JournalRecord[]> {
  const out: JournalRecord[] = [];
  for await (const { seq, payload } of journal.read(fromSeq))
    out.push({ seq, payload: Buffer.from(payload) });
  return out;
}

/** Resolves once the journal reports `seq` durable. */
export function durable(journal: JournalPort, seq: number): Promise<void> {
  if (journal.durableSeq >= seq) return Promise.resolve();
  return new Promise((resolve, reject) => {
    journal.onDurable((d) => {
      if (d >= seq) resolve();
    });
    journal.onError(reject);
  });
}

const seqs = (from: number, to: number): number[] =>
  Array.from({ length: to - from + 1 }, (_, i) => from + i);

/** Runs the journal contract against harnesses made by `create`. */
export function runJournalContract(
  name: string,
  create: CreateJournalHarness,
  options: { skip?: string | false } = {},
): void {
  describe(`journal contract: ${name}`, { skip: options.skip ?? false }, () => {
    it('starts empty', async () => {
      const journal = await (await create()).open();
      assert.equal(journal.durableSeq, 0);
      assert.equal(journal.pending, 0);
      assert.deepEqual(await readAll(journal), []);
      await journal.close();
    });

    it('round-trips records through close and reopen, and reads from any seq', async () => {
      const harness = await create();
      const journal = await harness.open();
      for (let seq = 1; seq <= 200; seq++) journal.append(seq, payloadOf(seq));
      await durable(journal, 200);
      await journal.close();
      const reopened = await harness.open();
      assert.equal(reopened.durableSeq, 200);
      assert.equal(reopened.pending, 0);
      const all = await readAll(reopened);
      assert.deepEqual(
        all.map((r) => r.seq),
        seqs(1, 200),
      );
      for (const r of all) assert.deepEqual(r.payload, payloadOf(r.seq), `payload of ${r.seq}`);
      assert.deepEqual(
        (await readAll(reopened, 150)).map((r) => r.seq),
        seqs(150, 200),
      );
      assert.deepEqual(await readAll(reopened, 201), []);
      await reopened.close();
    });

    it('continues the sequence after reopening; a wrong seq is refused and changes nothing', async () => {
      const harness = await create();
      const journal = await harness.open();
      for (let seq = 1; seq <= 10; seq++) journal.append(seq, payloadOf(seq));
      await journal.close();
      assert.throws(() => journal.append(11, payloadOf(11)), /closed/);
      const reopened = await harness.open();
      assert.equal(reopened.durableSeq, 10);
      assert.throws(() => reopened.append(10, Buffer.from('repeat')), RangeError);
      assert.throws(() => reopened.append(12, Buffer.from('gap')), RangeError);
      assert.equal(reopened.pending, 0);
      reopened.append(11, payloadOf(11));
      assert.equal(reopened.pending, 1);
      await reopened.close();
      const again = await harness.open();
      assert.deepEqual(
        (await readAll(again)).map((r) => r.seq),
        seqs(1, 11),
      );
      await again.close();
    });

    it('reports durability as a watermark that only moves forward, up to the last record', async () => {
      const journal = await (await create()).open();
      const watermarks: number[] = [];
      let appended = 0;
      journal.onDurable((d) => {
        assert.ok(d <= appended, `durable ${d} beyond the ${appended} appended`);
        assert.equal(journal.durableSeq, d);
        watermarks.push(d);
      });
      for (let turn = 0; turn < 100; turn++) {
        for (let i = 0; i < 20; i++) journal.append(++appended, payloadOf(appended));
        await new Promise(setImmediate);
      }
      await durable(journal, appended);
      assert.equal(journal.pending, 0);
      for (let i = 1; i < watermarks.length; i++) {
        assert.ok((watermarks[i] as number) > (watermarks[i - 1] as number), 'the watermark went back');
      }
      assert.equal(watermarks.at(-1), appended);
      // Group commit: far fewer reports than records.
      assert.ok(watermarks.length < appended / 2, `${watermarks.length} reports for ${appended} records`);
      await journal.close();
    });

    it('close() makes every appended record durable first', async () => {
      const harness = await create();
      const journal = await harness.open();
      for (let seq = 1; seq <= 30; seq++) journal.append(seq, payloadOf(seq));
      assert.equal(journal.pending, 30);
      await journal.close();
      assert.equal(journal.durableSeq, 30);
      const reopened = await harness.open();
      assert.equal((await readAll(reopened)).length, 30);
      await reopened.close();
    });

    it('copies the payload: the caller may reuse its buffer', async () => {
      const harness = await create();
      const journal = await harness.open();
      const buffer = Buffer.from('first');
      journal.append(1, buffer);
      buffer.write('xxxxx');
      journal.append(2, buffer);
      await journal.close();
      const reopened = await harness.open();
      assert.deepEqual(
        (await readAll(reopened)).map((r) => Buffer.from(r.payload).toString()),
        ['first', 'xxxxx'],
      );
      await reopened.close();
    });

    it('reads what was durable when read was called, not records appended after', async () => {
      const journal = await (await create()).open();
      for (let seq = 1; seq <= 10; seq++) journal.append(seq, payloadOf(seq));
      await durable(journal, 10);
      const records = journal.read(1);
      for (let seq = 11; seq <= 15; seq++) journal.append(seq, payloadOf(seq));
      await durable(journal, 15);
      const got: number[] = [];
      for await (const r of records) got.push(r.seq);
      assert.deepEqual(got, seqs(1, 10));
      await journal.close();
    });

    it('listeners may append: the sequencer submits timers from inside a durability report', async () => {
      const journal = await (await create()).open();
      let next = 2;
      journal.onDurable((d) => {
        if (next <= 50 && d === next - 1) journal.append(next, payloadOf(next++));
      });
      journal.append(1, payloadOf(1));
      await durable(journal, 50);
      assert.deepEqual(
        (await readAll(journal)).map((r) => r.seq),
        seqs(1, 50),
      );
      await journal.close();
    });

    it('retention keeps every record at or after the cut, and the journal goes on', async () => {
      const harness = await create();
      const journal = await harness.open();
      for (let seq = 1; seq <= 300; seq++) {
        journal.append(seq, payloadOf(seq));
        // Several flushes, so that a segmented journal has segments to remove.
        if (seq % 25 === 0) await durable(journal, seq);
      }
      journal.removeSegmentsBefore(100);
      assert.equal(journal.durableSeq, 300);
      assert.deepEqual(
        (await readAll(journal, 100)).map((r) => r.seq),
        seqs(100, 300),
      );
      journal.append(301, payloadOf(301));
      await journal.close();
      const reopened = await harness.open();
      assert.equal(reopened.durableSeq, 301);
      const tail = await readAll(reopened, 100);
      assert.deepEqual(
        tail.map((r) => r.seq),
        seqs(100, 301),
      );
      await reopened.close();
    });
  });
}
