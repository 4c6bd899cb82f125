/** @module journal.bench — durable journal throughput and acknowledgement latency: the file journal (group-committed fdatasync) beside raw fdatasync and fsync-off baselines, and the JetStream journal on a private nats-server with sync_interval always, in the same run; snapshot write/load of a 1M-order state */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { FileJournal, type JournalOptions } from '../src/journal/file-journal.ts';
import { JetStreamJournal } from '../src/journal/jetstream-journal.ts';
import { natsSkipReason, startNatsServer, type NatsServer } from '../test/fixtures/nats-server.ts';
import { SnapshotStore } from '../src/journal/snapshot-store.ts';
import { finish, QUICK } from './results.ts';

// ───────────────────────────── settings ─────────────────────────────

/** `--no-snapshot` skips the 1M-order snapshot phase (the slowest part). */
const SNAPSHOT = !process.argv.includes('--no-snapshot');
/** `--no-jetstream` skips the JetStream journal phases. */
const JETSTREAM = !process.argv.includes('--no-jetstream');
const PHASE_MS = QUICK ? 400 : 4_000;
/** Warm-up before each measured phase (JIT, page cache, file growth). */
const WARMUP_MS = QUICK ? 200 : 1_000;
const PAYLOAD_BYTES = 200;
/** Records appended per event-loop turn when saturating: a busy server's poll phase. */
const SATURATION_BURST_RECORDS = 100;
/** Backpressure as the sequencer applies it: no new records while this many await durability. */
const MAX_PENDING_RECORDS = 50_000;
/** Offered loads (records/s) for the latency runs, paced per event-loop turn. */
const PACED_RATES = [1_000, 20_000, 100_000, 200_000];
const RAW_FSYNC_SAMPLES = QUICK ? 200 : 1_000;
const SNAPSHOT_ORDERS = QUICK ? 30_000 : 1_000_000;
/** On the same disk as /work (the repository ignores it). */
const BENCH_ROOT = path.join(import.meta.dirname, '..', '.bench-tmp');

// ───────────────────────────── helpers ─────────────────────────────

/** Latency samples, each standing for `count` records acknowledged together. */
class Latencies {
  readonly #samples: [ms: number, count: number][] = [];
  add(ms: number, count: number): void {
    this.#samples.push([ms, count]);
  }
  summary(): { p50Us: number; p99Us: number; p999Us: number; maxUs: number } {
    const sorted = this.#samples.slice().sort((a, b) => a[0] - b[0]);
    const total = sorted.reduce((n, [, c]) => n + c, 0);
    const at = (q: number): number => {
      let seen = 0;
      for (const [ms, count] of sorted) {
        seen += count;
        if (seen >= q * total) return Math.round(ms * 1000);
      }
      return Math.round((sorted.at(-1)?.[0] ?? 0) * 1000);
    };
    return { p50Us: at(0.5), p99Us: at(0.99), p999Us: at(0.999), maxUs: at(1) };
  }
}

/** Saturating: the next turn at once (the loop never sleeps, like a server that is never idle). */
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
/** Paced: sleep in the poll phase until the next timer tick (~1 ms), as an idle server waits on I/O. */
const nextTick = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 1));

function payloadFor(base: Buffer, seq: number): Buffer {
  base.writeUInt32LE(seq >>> 0, 0);
  return base;
}

interface DriveResult {
  readonly offeredPerSec: number | null;
  readonly recordsPerSec: number;
  readonly recordsPerFsync: number;
  readonly fsyncs: number;
  readonly latency: ReturnType<Latencies['summary']>;
  readonly durationMs: number;
}

/**
 * Drives a journal from the event loop like a server: each turn appends a burst (a fixed size
 * every turn when saturating; when paced, what the offered rate owes since the start, every
 * timer tick of about 1 ms), holds back while `MAX_PENDING_RECORDS` await durability, and times
 * each burst from append to durable watermark.
 */
/** What `drive` needs of a journal: the port, plus a count of its writes (flushes or messages). */
interface DrivenJournal {
  append(seq: number, payload: Uint8Array): void;
  readonly pending: number;
  onDurable(listener: (durableSeq: number) => void): unknown;
  whenDurable(seq: number): Promise<void>;
  close(): Promise<void>;
  /** Writes so far: fdatasync'ed flushes of the file journal, messages of the JetStream one. */
  writes(): number;
}

/** A fresh file journal in `dir`. */
function fileJournal(dir: string, options: Partial<JournalOptions>): () => Promise<DrivenJournal> {
  return async () => {
    fs.rmSync(dir, { recursive: true, force: true });
    const journal = FileJournal.open(dir, options);
    return Object.assign(journal, { writes: () => journal.stats.writes });
  };
}

let streams = 0;
/** A JetStream journal on a fresh stream of `server`. */
function jetStreamJournal(server: NatsServer): () => Promise<DrivenJournal> {
  return async () => {
    const stream = `BENCH_${++streams}`;
    const journal = await JetStreamJournal.open({
      servers: server.url,
      monitorUrls: server.monitorUrl,
      stream,
      subject: `bench.${stream}`,
    });
    return Object.assign(journal, { writes: () => journal.messages });
  };
}

async function drive(open: () => Promise<DrivenJournal>, rate: number | null): Promise<DriveResult> {
  const journal = await open();
  const base = Buffer.alloc(PAYLOAD_BYTES, 0x61);
  const bursts: { lastSeq: number; count: number; at: number }[] = [];
  let head = 0;
  let measuring = false;
  let latencies = new Latencies();
  journal.onDurable((durableSeq) => {
    const now = performance.now();
    while (head < bursts.length && (bursts[head]?.lastSeq as number) <= durableSeq) {
      const burst = bursts[head++] as { lastSeq: number; count: number; at: number };
      if (measuring) latencies.add(now - burst.at, burst.count);
    }
    if (head > 4096) {
      bursts.splice(0, head);
      head = 0;
    }
  });
  let seq = 0;
  const run = async (ms: number): Promise<{ appended: number; elapsed: number; fsyncs: number }> => {
    const writesBefore = journal.writes();
    const startSeq = seq;
    const start = performance.now();
    let now = start;
    while (now - start < ms) {
      let count: number;
      if (rate === null) count = SATURATION_BURST_RECORDS;
      else count = Math.floor(((now - start) * rate) / 1000) - (seq - startSeq);
      if (journal.pending < MAX_PENDING_RECORDS && count > 0) {
        for (let i = 0; i < count; i++) journal.append(++seq, payloadFor(base, seq));
        bursts.push({ lastSeq: seq, count, at: performance.now() });
      }
      await (rate === null ? nextTurn() : nextTick());
      now = performance.now();
    }
    await journal.whenDurable(seq);
    return {
      appended: seq - startSeq,
      elapsed: performance.now() - start,
      fsyncs: journal.writes() - writesBefore,
    };
  };
  await run(WARMUP_MS);
  latencies = new Latencies();
  measuring = true;
  const measured = await run(PHASE_MS);
  measuring = false;
  await journal.close();
  return {
    offeredPerSec: rate,
    recordsPerSec: Math.round((measured.appended / measured.elapsed) * 1000),
    recordsPerFsync: Math.round((measured.appended / Math.max(measured.fsyncs, 1)) * 10) / 10,
    fsyncs: measured.fsyncs,
    latency: latencies.summary(),
    durationMs: Math.round(measured.elapsed),
  };
}

/** One 200-byte write + fdatasync at a time: what a journal without group commit could do. */
function rawFdatasync(dir: string): { p50Us: number; p99Us: number; perSec: number } {
  const file = path.join(dir, 'raw.bin');
  const fd = fs.openSync(file, 'w');
  const record = Buffer.alloc(PAYLOAD_BYTES, 0x62);
  const samples: number[] = [];
  const start = performance.now();
  for (let i = 0; i < RAW_FSYNC_SAMPLES; i++) {
    const t = performance.now();
    fs.writeSync(fd, record);
    fs.fdatasyncSync(fd);
    samples.push(performance.now() - t);
  }
  const elapsed = performance.now() - start;
  fs.closeSync(fd);
  fs.rmSync(file);
  samples.sort((a, b) => a - b);
  const q = (p: number): number =>
    Math.round((samples[Math.min(samples.length - 1, Math.floor(p * samples.length))] as number) * 1000);
  return { p50Us: q(0.5), p99Us: q(0.99), perSec: Math.round((RAW_FSYNC_SAMPLES / elapsed) * 1000) };
}

/** The shape of an engine snapshot with `orders` resting orders (tuples as src/engine/snapshot.ts). */
function bigState(orders: number): Record<string, unknown> {
  return {
    version: 1,
    lastSeq: 123_456_789,
    settings: { platformCoin: 'zb' },
    coins: [{ name: 'btc' }, { name: 'usdt' }],
    users: Array.from({ length: 10_000 }, (_, i) => [i + 1, `user${i + 1}`, false, [1e12, 5e12], [1e9, 2e9]]),
    orders: Array.from({ length: orders }, (_, i) => [
      i + 1,
      (i % 10_000) + 1,
      'btc_usdt',
      i % 2 === 0 ? 'buy' : 'sell',
      'limit',
      6_500_000 + (i % 20_000),
      1_000 + (i % 977),
      900 + (i % 977),
      100,
      650_000_000,
      130,
      0,
      6_500_000_000 + i,
      1_700_000_000_000 + i,
      i % 3 === 0 ? `cid-${i}` : '',
      'spot',
      false,
      i,
      6_500_000,
      100,
      1_700_000_000_000,
    ]),
  };
}

/**
 * Writes and loads a snapshot of `SNAPSHOT_ORDERS` orders. The load runs with nothing else of
 * the state in memory, as at start-up; the one-string JSON.stringify / JSON.parse of the same
 * state are timed for comparison.
 */
async function snapshotPhase(dir: string): Promise<Record<string, number>> {
  let state: Record<string, unknown> | null = bigState(SNAPSHOT_ORDERS);
  const store = new SnapshotStore(dir);
  // How long the event loop is blocked at a stretch while the snapshot is written in chunks.
  const loopDelay = monitorEventLoopDelay({ resolution: 1 });
  loopDelay.enable();
  let t = performance.now();
  const file = await store.write(state, { lastSeq: 123_456_789, stateHash: 'f'.repeat(64) });
  const writeMs = performance.now() - t;
  loopDelay.disable();
  const bytes = fs.statSync(file).size;
  t = performance.now();
  let whole: string | null = JSON.stringify(state);
  const stringifyWholeMs = performance.now() - t;
  const wholeChars = whole.length;
  t = performance.now();
  JSON.parse(whole);
  const parseWholeMs = performance.now() - t;
  whole = null;
  state = null;
  t = performance.now();
  const problems = store.verifyAll();
  const verifyMs = performance.now() - t;
  t = performance.now();
  const loaded = store.latestValid();
  const loadMs = performance.now() - t;
  const orders = (loaded?.state as { orders: unknown[] } | undefined)?.orders.length ?? 0;
  if (orders !== SNAPSHOT_ORDERS || problems.length > 0) {
    throw new Error(`snapshot round trip failed: ${problems.join()}`);
  }
  fs.rmSync(file);
  return {
    orders: SNAPSHOT_ORDERS,
    bytes,
    writeMs: Math.round(writeMs),
    writeMaxLoopBlockMs: Math.round(loopDelay.max / 1e6),
    verifyMs: Math.round(verifyMs),
    loadMs: Math.round(loadMs),
    stringifyWholeMs: Math.round(stringifyWholeMs),
    parseWholeMs: Math.round(parseWholeMs),
    wholeChars,
  };
}

// ───────────────────────────── main ─────────────────────────────

fs.mkdirSync(BENCH_ROOT, { recursive: true });
const root = fs.mkdtempSync(path.join(BENCH_ROOT, 'journal-'));
const fmt = (n: number): string => n.toLocaleString('en-US');
try {
  console.log(
    `journal bench: ${PAYLOAD_BYTES}-byte payloads, ${PHASE_MS} ms per phase after ${WARMUP_MS} ms warm-up, ` +
      `data under ${BENCH_ROOT}${QUICK ? ' (QUICK: do not quote)' : ''}`,
  );
  const loadBefore = os.loadavg().map((x) => Math.round(x * 100) / 100);
  console.log(`load average before: ${loadBefore.join(' ')} (the machine is shared: figures move with it)`);
  console.log(
    `${os.cpus().length} cpus (${os.cpus()[0]?.model ?? '?'}), node ${process.version}, ${os.platform()} ${os.release()}\n`,
  );

  const raw = rawFdatasync(root);
  console.log(
    `raw 200-byte write + fdatasync, one at a time: p50 ${raw.p50Us} µs, p99 ${raw.p99Us} µs → ${fmt(raw.perSec)} durable records/s`,
  );

  const dir = path.join(root, 'journal');
  const noSync = await drive(fileJournal(dir, { fsync: false }), null);
  console.log(
    `journal, fsync OFF (page cache only), saturated in bursts of ${SATURATION_BURST_RECORDS}/turn: ` +
      `${fmt(noSync.recordsPerSec)} records/s`,
  );
  const saturated = await drive(fileJournal(dir, {}), null);
  console.log(
    `journal, fdatasync group commit, saturated in bursts of ${SATURATION_BURST_RECORDS}/turn: ` +
      `${fmt(saturated.recordsPerSec)} durable records/s, ${saturated.recordsPerFsync} records/fsync, ` +
      `append→durable p50 ${saturated.latency.p50Us} µs p99 ${saturated.latency.p99Us} µs max ${saturated.latency.maxUs} µs`,
  );
  const paced: DriveResult[] = [];
  for (const rate of PACED_RATES) {
    const result = await drive(fileJournal(dir, {}), rate);
    paced.push(result);
    console.log(
      `journal, fdatasync group commit, offered ${fmt(rate)}/s: achieved ${fmt(result.recordsPerSec)}/s, ` +
        `${result.recordsPerFsync} records/fsync, append→durable p50 ${result.latency.p50Us} µs ` +
        `p99 ${result.latency.p99Us} µs p99.9 ${result.latency.p999Us} µs max ${result.latency.maxUs} µs`,
    );
  }
  let jetstream: { saturated: DriveResult; paced: DriveResult[] } | { skipped: string } | null = null;
  const natsSkip = JETSTREAM ? natsSkipReason() : 'not asked for (--no-jetstream)';
  if (natsSkip !== false) {
    jetstream = { skipped: natsSkip };
    console.log(`\nJetStream journal: skipped (${natsSkip})`);
  } else {
    const server = await startNatsServer();
    try {
      const open = jetStreamJournal(server);
      const js = await drive(open, null);
      console.log(
        `\nJetStream journal (private nats-server, sync_interval always, R1), saturated in bursts of ${SATURATION_BURST_RECORDS}/turn: ` +
          `${fmt(js.recordsPerSec)} durable records/s, ${js.recordsPerFsync} records/message, ` +
          `append→durable p50 ${js.latency.p50Us} µs p99 ${js.latency.p99Us} µs max ${js.latency.maxUs} µs`,
      );
      const jsPaced: DriveResult[] = [];
      for (const rate of PACED_RATES) {
        const result = await drive(open, rate);
        jsPaced.push(result);
        console.log(
          `JetStream journal, offered ${fmt(rate)}/s: achieved ${fmt(result.recordsPerSec)}/s, ` +
            `${result.recordsPerFsync} records/message, append→durable p50 ${result.latency.p50Us} µs ` +
            `p99 ${result.latency.p99Us} µs p99.9 ${result.latency.p999Us} µs max ${result.latency.maxUs} µs`,
        );
      }
      jetstream = { saturated: js, paced: jsPaced };
    } finally {
      await server.stop();
    }
  }
  const ratios = {
    groupCommitVsRawFsync: Math.round((saturated.recordsPerSec / raw.perSec) * 10) / 10,
    groupCommitVsFsyncOff: Math.round((saturated.recordsPerSec / noSync.recordsPerSec) * 100) / 100,
  };
  console.log(
    `\nratios: group commit = ${ratios.groupCommitVsRawFsync}× one-fsync-per-record, ` +
      `${ratios.groupCommitVsFsyncOff}× the fsync-off rate`,
  );

  let snapshot: Record<string, number> | null = null;
  if (SNAPSHOT) {
    snapshot = await snapshotPhase(path.join(root, 'snapshots'));
    console.log(
      `\nsnapshot of ${fmt(snapshot.orders as number)} orders: ${fmt(Math.round((snapshot.bytes as number) / 1e6))} MB; ` +
        `write (chunked, fsync, rename, dir fsync) ${fmt(snapshot.writeMs as number)} ms, ` +
        `event loop blocked ≤ ${fmt(snapshot.writeMaxLoopBlockMs as number)} ms at a stretch; ` +
        `verifyAll ${fmt(snapshot.verifyMs as number)} ms; latestValid (read, check, parse) ${fmt(snapshot.loadMs as number)} ms; ` +
        `for comparison one JSON.stringify of the whole state ${fmt(snapshot.stringifyWholeMs as number)} ms ` +
        `(${fmt(snapshot.wholeChars as number)} chars), one JSON.parse ${fmt(snapshot.parseWholeMs as number)} ms`,
    );
  }

  const loadAfter = os.loadavg().map((x) => Math.round(x * 100) / 100);
  console.log(`load average after: ${loadAfter.join(' ')}`);
  finish('journal', {
    bench: 'journal',
    loadBefore,
    loadAfter,
    quick: QUICK,
    node: process.version,
    cpus: os.cpus().length,
    payloadBytes: PAYLOAD_BYTES,
    phaseMs: PHASE_MS,
    rawFdatasync: raw,
    fsyncOff: { recordsPerSec: noSync.recordsPerSec },
    groupCommitSaturated: saturated,
    groupCommitPaced: paced,
    ratios,
    jetstream,
    snapshot,
  });
} finally {
  fs.rmSync(root, { recursive: true, force: true });
}
