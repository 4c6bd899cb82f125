import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { BUY, SELL, type SequencedCommand } from '../domain/commands.ts';
import type { ApplyResult } from '../engine/engine.ts';
import type { AppliedCommand } from '../sequencer/sequencer.ts';
import type { HistoryEntry } from './history-store.ts';
import { HistoryWriter, type HistorySink, type HistoryWriterOptions } from './history-writer.ts';
import { SqliteHistoryStore } from './sqlite-history-store.ts';
import { EngineRecorder } from './trading-stream.ts';

const dir = mkdtempSync(join(tmpdir(), 'bourse-history-writer-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A few dozen real entries: two users trading. */
function tradingEntries(): readonly HistoryEntry[] {
  const r = new EngineRecorder(1_763_769_600_000);
  const alice = r.fundedUser('alice', { usdt: 10_000_000_000_000, btc: 100_000_000 });
  const bob = r.fundedUser('bob', { usdt: 10_000_000_000_000, btc: 100_000_000 });
  for (let i = 0; i < 10; i++) {
    r.place(alice, 'btc_usdt', SELL, 'limit', 3_000_000 + i, 10);
    r.place(bob, 'btc_usdt', BUY, 'limit', 3_000_000 + i, 10);
  }
  return r.entries;
}

/** The applied command a sequencer would hand the writer for an entry. */
const applied = (e: HistoryEntry): AppliedCommand => ({
  command: { seq: e.seq, time: e.time } as SequencedCommand,
  result: { result: 'OK', events: e.events } as ApplyResult,
  payload: new Uint8Array(0),
});

/** The real store, with the size of every batch it was sent. */
function recordingStore(name: string): { sink: HistorySink; batches: number[]; store: SqliteHistoryStore } {
  const store = SqliteHistoryStore.open(join(dir, name));
  const batches: number[] = [];
  return {
    store,
    batches,
    sink: {
      applyBatch: (entries) => {
        batches.push(entries.length);
        return store.applyBatch(entries);
      },
    },
  };
}

async function feedOneByOne(options: HistoryWriterOptions, name: string): Promise<number[]> {
  const entries = tradingEntries();
  const { sink, batches, store } = recordingStore(name);
  const writer = new HistoryWriter(sink, (m) => assert.fail(m), options);
  // One applied batch per event-loop turn, as journal flushes arrive under a steady load.
  for (const e of entries) {
    writer.enqueue([applied(e)]);
    await new Promise((resolve) => setImmediate(resolve));
  }
  await writer.drain();
  assert.equal(writer.written, entries.length);
  assert.equal(await store.checkpoint(), entries.at(-1)?.seq);
  await store.close();
  return batches;
}

describe('HistoryWriter', () => {
  test('gathers entries that arrive within gatherMs into one transaction', async () => {
    const batches = await feedOneByOne({ gatherMs: 200 }, 'gathered.sqlite');
    assert.deepEqual(batches, [tradingEntries().length]);
  });

  test('with gatherMs 0 each turn’s entries go at once', async () => {
    const batches = await feedOneByOne({ gatherMs: 0 }, 'at-once.sqlite');
    assert.ok(batches.length > 1, `expected several batches, got ${batches.join(',')}`);
  });

  test('a queue of gatherEntries or more goes without waiting', async () => {
    const entries = tradingEntries();
    const { sink, batches, store } = recordingStore('full.sqlite');
    const writer = new HistoryWriter(sink, (m) => assert.fail(m), { gatherMs: 60_000, gatherEntries: 5 });
    const started = performance.now();
    writer.enqueue(entries.map(applied));
    await writer.drain();
    assert.ok(performance.now() - started < 30_000, 'the writer waited for company with a full queue');
    assert.deepEqual(batches, [entries.length]);
    await store.close();
  });
});
