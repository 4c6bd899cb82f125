/**
 * ReadyToLead (issue 30): a standby opens its history store and seeds the market data of its
 * replica's engine before it leads, and the batches the replica applies meanwhile are neither
 * lost nor counted twice with what the store already holds.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { dataPaths } from '../config/data-dir.ts';
import { loadOptions } from '../config/options.ts';
import { SILENT_LOG } from '../observability/memory-log.ts';
import type { ApplyResult } from '../engine/engine.ts';
import type { AppliedCommand, AppliedListener } from '../sequencer/sequencer.ts';
import { SqliteHistoryStore } from '../store/sqlite-history-store.ts';
import { EngineDriver, limitOrder } from '../../test/fixtures/engine-driver.ts';
import { ReadyToLead } from './ready-to-lead.ts';

/** The trade ids of btc_usdt's recent trades, as /data/v1/trades answers them. */
function tradeIds(ready: ReadyToLead): number[] {
  const body = ready.parts.market?.marketData.latestTradesBody('btc_usdt');
  if (body === undefined) return [];
  return (JSON.parse(body.toString()) as { tid: number }[]).map((t) => t.tid);
}

test('the batches applied while the seed reads count once: those the store holds are not applied again', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'bourse-ready-'));
  const d = new EngineDriver();
  const applied: { seq: number; time: number; result: ApplyResult }[] = [];
  const run = (result: ApplyResult): void => {
    applied.push({ seq: d.seq, time: d.time, result });
  };
  const seller = d.fund('seller', 'btc', '10');
  const buyer = d.fund('buyer', 'usdt', '1000000');
  // Two trades: the first one's command is in the history store, the second one's is not yet.
  run(d.apply(limitOrder(seller, 0, 3_000_000, 100)));
  run(d.apply(limitOrder(buyer, 1, 3_000_000, 100)));
  const stored = d.seq;
  run(d.apply(limitOrder(seller, 0, 3_000_000, 100)));
  run(d.apply(limitOrder(buyer, 1, 3_000_000, 100)));
  const store = SqliteHistoryStore.open(dataPaths(dir).history);
  const entries = [];
  for (let seq = 1; seq <= stored; seq++) {
    const a = applied.find((x) => x.seq === seq);
    entries.push({ seq, time: a?.time ?? d.time, events: a?.result.events ?? [] });
  }
  await store.applyBatch(entries);
  await store.close();
  const trades = applied.flatMap((a) => a.result.events.filter((e) => e.type === 'TradeExecuted'));
  assert.equal(trades.length, 2);

  // The replica stands where the first order was applied: it applies the rest while the seed reads.
  const from = (applied[0] as { seq: number }).seq;
  let listener: AppliedListener | undefined;
  const batch = applied
    .filter((a) => a.seq >= from)
    .map((a) => ({ command: { seq: a.seq }, result: a.result }) as unknown as AppliedCommand);
  const ready = await ReadyToLead.open(loadOptions(['--data', dir, '--rate-limits=false'], {}), SILENT_LOG, {
    state: d.engine,
    appliedSeq: from - 1,
    subscribe: (fromSeq, l) => {
      assert.equal(fromSeq, from);
      listener = l;
      l(batch);
    },
  });
  try {
    assert.notEqual(listener, undefined);
    const ids = tradeIds(ready);
    assert.equal(ids.length, 2, JSON.stringify(ids));
    assert.equal(new Set(ids).size, 2);
    // From now on, what the replica applies goes in at once.
    run(d.apply(limitOrder(seller, 0, 3_000_000, 100)));
    run(d.apply(limitOrder(buyer, 1, 3_000_000, 100)));
    listener?.(
      applied
        .slice(-2)
        .map((a) => ({ command: { seq: a.seq }, result: a.result }) as unknown as AppliedCommand),
    );
    assert.equal(tradeIds(ready).length, 3);
  } finally {
    await ready.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('parts handed over are the venue’s to close; parts never handed over are closed by the standby', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'bourse-ready-'));
  const d = new EngineDriver();
  const replica = { state: d.engine, appliedSeq: 0, subscribe: () => undefined };
  const options = loadOptions(['--data', dir, '--rate-limits=false'], {});
  try {
    const kept = await ReadyToLead.open(options, SILENT_LOG, replica);
    const parts = kept.handOver();
    await kept.close();
    assert.equal(await parts.history.checkpoint(), 0, 'still open after close: it was handed over');
    await parts.history.close();
    const dropped = await ReadyToLead.open(options, SILENT_LOG, replica);
    await dropped.close();
    await assert.rejects(dropped.parts.history.checkpoint());
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
