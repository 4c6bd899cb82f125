import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { BUY, SELL } from '../domain/commands.ts';
import { HistoryWorker } from './history-worker.ts';
import { SqliteHistoryStore } from './sqlite-history-store.ts';
import { EngineRecorder } from './trading-stream.ts';

const dir = mkdtempSync(join(tmpdir(), 'bourse-history-worker-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('HistoryWorker', () => {
  test('applies batches on its thread; the main connection reads them; a bad batch is refused', async () => {
    const path = join(dir, 'history.sqlite');
    const reader = SqliteHistoryStore.open(path);
    const worker = new HistoryWorker({ kind: 'sqlite', path });
    try {
      const r = new EngineRecorder(1_763_769_600_000);
      const alice = r.fundedUser('alice', { usdt: 10_000_000_000_000, btc: 100_000_000 });
      const bob = r.fundedUser('bob', { usdt: 10_000_000_000_000, btc: 100_000_000 });
      r.place(alice, 'btc_usdt', SELL, 'limit', 3_000_000, 10);
      r.place(bob, 'btc_usdt', BUY, 'limit', 3_000_000, 4);

      const first = await worker.applyBatch(r.entries.slice(0, 3));
      assert.equal(first.checkpoint, 3);
      const rest = await worker.applyBatch(r.entries.slice(3));
      assert.equal(rest.checkpoint, r.seq);
      assert.equal(await reader.checkpoint(), r.seq);
      const trades = await reader.trades('btc_usdt');
      assert.equal(trades.length, 1);
      assert.equal(trades[0]?.amount, 4);

      // Out of order: refused with the store's message, and the worker goes on working.
      const reversed = [...r.entries].reverse();
      await assert.rejects(worker.applyBatch(reversed), /order|sequence/i);
      const again = await worker.applyBatch(r.entries);
      assert.equal(again.applied, 0);
    } finally {
      await worker.close();
      await reader.close();
    }
    await assert.rejects(worker.applyBatch([]), /closed/);
  });

  test('a store that cannot open rejects the batch instead of hanging', async () => {
    const worker = new HistoryWorker({ kind: 'sqlite', path: join(dir, 'no-such-dir', 'history.sqlite') });
    await assert.rejects(worker.applyBatch([]), /unable to open|exited|no such/i);
    await worker.close();
  });
});
