/**
 * @module recovery.bench — how long a restart takes:
 * 1. 1,000,000 journal records since the last snapshot (none here): open the journal (every
 *    record's checksum verified) and replay them into a fresh engine;
 * 2. a snapshot holding 1,000,000 open orders: write it, then load, verify and restore it.
 * The baseline in the same run is a plain read of the journal's bytes (the disk's part).
 * Prints a human summary and, last, one JSON line.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_VENUE } from '../src/config/default-venue.ts';
import { BUY, SELL, type Command, type SequencedCommand } from '../src/domain/commands.ts';
import { Engine } from '../src/engine/engine.ts';
import type { EngineSnapshot } from '../src/engine/snapshot.ts';
import { FileJournal } from '../src/journal/file-journal.ts';
import { SnapshotStore } from '../src/journal/snapshot-store.ts';
import { encodeCommand } from '../src/sequencer/command-codec.ts';
import { recover } from '../src/sequencer/recovery.ts';
import { createEngine, DEFAULT_STREAM, generateStream } from './engine-stream.ts';
import { seededRandom } from '../src/store/trading-stream.ts';
import { SILENT_LOG } from '../src/observability/memory-log.ts';
import { finish, QUICK, sized } from './results.ts';

const RECORDS = Number(process.env['RECOVERY_RECORDS'] ?? sized(1_000_000, 20_000));
const OPEN_ORDERS = Number(process.env['RECOVERY_OPEN_ORDERS'] ?? sized(1_000_000, 20_000));
const USERS = 1_000;

const workDir = mkdtempSync(join(import.meta.dirname, '..', '.bench-tmp-recovery-'));
const seconds = (ms: number): string => (ms / 1000).toFixed(2);

/**
 * Writes the engine benchmark's realistic stream (~10,000 resting orders, places, cancels, IOCs,
 * fills) as a journal in `dir`; returns what the replay must reproduce. The stream and its engine
 * are dropped on return: a restarting server holds neither.
 */
async function writeJournal(dir: string): Promise<{ records: number; stateHash: string; open: number }> {
  const writer = FileJournal.open(dir, { fsync: false });
  const generated = generateStream({ ...DEFAULT_STREAM, commands: RECORDS, hash: true });
  const live = createEngine();
  for (const command of [...generated.setup, ...generated.commands]) {
    live.apply(command);
    writer.append(command.seq, encodeCommand(command));
    if (command.seq % 10_000 === 0) await writer.whenDurable(command.seq);
  }
  await writer.close();
  return { records: live.lastSeq, stateHash: live.stateHash(), open: live.openOrderCount };
}

async function journalReplay(): Promise<Record<string, number>> {
  const dir = join(workDir, 'journal');
  const written = await writeJournal(dir);
  const bytes = readdirSync(dir).reduce((sum, f) => sum + statSync(join(dir, f)).size, 0);

  // Baseline: the bytes alone, read from the (warm) page cache.
  let t = performance.now();
  for (const f of readdirSync(dir)) readFileSync(join(dir, f));
  const readMs = performance.now() - t;

  t = performance.now();
  const journal = FileJournal.open(dir);
  const openMs = performance.now() - t;
  const { engine, replayed } = await recover({
    genesis: DEFAULT_VENUE,
    journal,
    snapshots: undefined,
    log: SILENT_LOG,
  });
  const totalMs = performance.now() - t;
  await journal.close();
  if (engine.stateHash() !== written.stateHash || replayed !== written.records)
    throw new Error('replay diverged');
  console.log(
    `journal: ${written.records} records (${(bytes / 2 ** 20).toFixed(0)} MiB, ${written.open} orders open at the end)\n` +
      `  restart (open + verify + replay): ${seconds(totalMs)} s — open ${seconds(openMs)} s, replay ${seconds(totalMs - openMs)} s, ` +
      `${Math.round(written.records / (totalMs / 1000))} records/s\n  baseline, reading the files: ${seconds(readMs)} s`,
  );
  return {
    journalRecords: written.records,
    journalMiB: bytes / 2 ** 20,
    restartMs: totalMs,
    openMs,
    readBaselineMs: readMs,
  };
}

async function snapshotRestore(): Promise<Record<string, number>> {
  const engine = new Engine(DEFAULT_VENUE);
  let seq = 0;
  const apply = (c: Command): void =>
    void engine.apply({ ...c, seq: ++seq, time: 1_700_000_000_000 + seq } as SequencedCommand);
  for (let u = 1; u <= USERS; u++) {
    apply({ type: 'RegisterUser', name: `u${u}` });
    apply({
      type: 'CreditDeposit',
      depositId: `u${u}`,
      userId: u,
      coin: 'usdt',
      amount: 10 ** 12,
      remark: '',
    });
    apply({
      type: 'CreditDeposit',
      depositId: `b${u}`,
      userId: u,
      coin: 'btc',
      amount: 10 ** 11,
      remark: '',
    });
  }
  const next = seededRandom(11);
  for (let i = 0; i < OPEN_ORDERS; i++) {
    const side = i % 2 === 0 ? BUY : SELL;
    const offset = 1 + Math.floor(next() * 50_000);
    apply({
      type: 'PlaceOrder',
      userId: 1 + (i % USERS),
      market: 'btc_usdt',
      side,
      kind: 'limit',
      price: 3_000_000 + (side === BUY ? -offset : offset),
      amount: 2 + Math.floor(next() * 500),
      acctType: 0,
      clientOrderId: '',
    });
  }
  const store = new SnapshotStore(join(workDir, 'snapshots'));
  let t = performance.now();
  const state = engine.snapshot();
  const hash = engine.stateHash(state);
  const captureMs = performance.now() - t;
  t = performance.now();
  const path = await store.write(state, { lastSeq: engine.lastSeq, stateHash: hash });
  const writeMs = performance.now() - t;
  t = performance.now();
  const loaded = store.latestValid();
  if (loaded === undefined) throw new Error('snapshot not found');
  const loadMs = performance.now() - t;
  const restored = Engine.restore(loaded.state as EngineSnapshot);
  if (restored.stateHash() !== loaded.stateHash) throw new Error('restored state differs');
  const restoreMs = performance.now() - t;
  const mib = statSync(path).size / 2 ** 20;
  console.log(
    `snapshot: ${engine.openOrderCount} open orders (${mib.toFixed(0)} MiB)\n` +
      `  capture (state + hash): ${seconds(captureMs)} s, write (fsync, rename): ${seconds(writeMs)} s\n` +
      `  restart from it (load + verify + restore + hash check): ${seconds(restoreMs)} s — load ${seconds(loadMs)} s`,
  );
  return {
    snapshotOpenOrders: engine.openOrderCount,
    snapshotMiB: mib,
    snapshotCaptureMs: captureMs,
    snapshotWriteMs: writeMs,
    snapshotRestoreMs: restoreMs,
  };
}

try {
  console.log(`bench:recovery — node ${process.version}, ${new Date().toISOString()}`);
  const figures = { ...(await journalReplay()), ...(await snapshotRestore()) };
  finish('recovery', { bench: 'recovery', quick: QUICK, ...figures });
} finally {
  rmSync(workDir, { recursive: true, force: true });
}
