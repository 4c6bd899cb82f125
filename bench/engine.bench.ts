/** @module engine.bench — engine throughput, latency and GC pauses on a mixed stream, beside nodejs-order-book */
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { constants, performance, PerformanceObserver } from 'node:perf_hooks';
import { OrderBook } from 'nodejs-order-book';
import { BUY, type SequencedCommand } from '../src/domain/commands.ts';
import type { Engine } from '../src/engine/engine.ts';
import { createEngine, DEFAULT_STREAM, generateStream, type GeneratedStream } from './engine-stream.ts';

// ───────────────────────────── settings ─────────────────────────────

/** `--quick` shrinks everything for a smoke run; its figures are not to be quoted. */
const QUICK = process.argv.includes('--quick');
/** Timed runs of each book on the 10,000-order stream; the median is reported. */
const RUNS = QUICK ? 2 : 7;
/** Separate runs with a timer around every command (timers distort throughput, so never both). */
const LATENCY_RUNS = QUICK ? 1 : 3;
const STREAM_COMMANDS = QUICK ? 100_000 : 1_000_000;
const BIG_RESTING = QUICK ? 100_000 : 1_000_000;
const BIG_COMMANDS = QUICK ? 50_000 : 300_000;
const BIG_USERS = 1_000;
/** Mean distance from the mid of the big book's orders: about 100,000 priced levels a side. */
const BIG_MEAN_DISTANCE_TICKS = 30_000;

// ───────────────────────────── helpers ─────────────────────────────

const runGc = (): void => {
  if (typeof gc !== 'function') throw new Error('run with --expose-gc (npm run bench:engine does)');
  gc();
  gc();
};

/** Lets queued PerformanceObserver callbacks run: the timed loops are synchronous. */
const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 20));

interface GcPause {
  readonly start: number;
  readonly ms: number;
  readonly kind: string;
}

const GC_KINDS = new Map<number, string>([
  [constants.NODE_PERFORMANCE_GC_MINOR, 'minor'],
  [constants.NODE_PERFORMANCE_GC_MAJOR, 'major'],
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL, 'incremental'],
  [constants.NODE_PERFORMANCE_GC_WEAKCB, 'weakcb'],
]);

/** Every GC pause of the process; timed sections pick theirs by time window. */
const gcPauses: GcPause[] = [];
const gcObserver = new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    const kind = ((e as { detail?: unknown }).detail as { kind?: number } | null)?.kind ?? 0;
    gcPauses.push({ start: e.startTime, ms: e.duration, kind: GC_KINDS.get(kind) ?? String(kind) });
  }
});
gcObserver.observe({ entryTypes: ['gc'] });

interface GcSummary {
  count: number;
  totalMs: number;
  maxMs: number;
  maxKind: string;
  byKind: Record<string, { count: number; maxMs: number }>;
}

function gcBetween(t0: number, t1: number): GcSummary {
  const s: GcSummary = { count: 0, totalMs: 0, maxMs: 0, maxKind: '', byKind: {} };
  for (const p of gcPauses) {
    if (p.start < t0 || p.start > t1) continue;
    s.count++;
    s.totalMs += p.ms;
    if (p.ms > s.maxMs) {
      s.maxMs = p.ms;
      s.maxKind = p.kind;
    }
    const k = (s.byKind[p.kind] ??= { count: 0, maxMs: 0 });
    k.count++;
    if (p.ms > k.maxMs) k.maxMs = p.ms;
  }
  return s;
}

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};

interface Percentiles {
  p50: number;
  p90: number;
  p99: number;
  p999: number;
  p9999: number;
  max: number;
}

/** Percentiles of per-command latencies (µs), nearest rank. */
function percentiles(samples: Float64Array): Percentiles {
  const s = Float64Array.from(samples).sort();
  const at = (q: number): number => s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)] as number;
  return { p50: at(0.5), p90: at(0.9), p99: at(0.99), p999: at(0.999), p9999: at(0.9999), max: at(1) };
}

const round = (x: number, digits: number): number => Number(x.toFixed(digits));
const fmtInt = (x: number): string => Math.round(x).toLocaleString('en-US');
const fmtUs = (p: Percentiles): string =>
  `p50 ${p.p50.toFixed(2)} µs, p90 ${p.p90.toFixed(2)} µs, p99 ${p.p99.toFixed(2)} µs, ` +
  `p99.9 ${p.p999.toFixed(1)} µs, p99.99 ${p.p9999.toFixed(1)} µs, max ${p.max.toFixed(0)} µs`;
const roundPercentiles = (p: Percentiles): Percentiles => ({
  p50: round(p.p50, 3),
  p90: round(p.p90, 3),
  p99: round(p.p99, 3),
  p999: round(p.p999, 2),
  p9999: round(p.p9999, 1),
  max: round(p.max, 1),
});
const mb = (bytes: number): number => round(bytes / 1_048_576, 1);

function cpuModel(): string {
  try {
    const m = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'));
    if (m?.[1] !== undefined) return m[1].trim();
  } catch {
    // Not Linux: fall back to what os reports.
  }
  return os.cpus()[0]?.model ?? 'unknown';
}

// ───────────────────────────── Bourse ─────────────────────────────

/** A fresh engine with the stream's setup applied (users, funds, resting book). */
function preparedEngine(stream: GeneratedStream): Engine {
  const engine = createEngine();
  for (const cmd of stream.setup) {
    const r = engine.apply(cmd);
    if (r.result !== 'OK') throw new Error(`setup command ${cmd.seq} refused: ${r.result}`);
  }
  return engine;
}

/** Applies the commands; returns the events produced, a cheap check that every run did the same work. */
function applyAll(engine: Engine, commands: readonly SequencedCommand[]): number {
  let events = 0;
  for (let i = 0; i < commands.length; i++) events += engine.apply(commands[i] as SequencedCommand).events.length;
  return events;
}

/** Applies the commands with a timer around each; `out[i]` is command i's latency in µs. */
function applyTimed(engine: Engine, commands: readonly SequencedCommand[], out: Float64Array): number {
  let events = 0;
  for (let i = 0; i < commands.length; i++) {
    const t0 = performance.now();
    events += engine.apply(commands[i] as SequencedCommand).events.length;
    out[i] = (performance.now() - t0) * 1000;
  }
  return events;
}

/** What two back-to-back timer reads cost (µs), the floor under every latency sample. */
function timerOverheadUs(): number {
  const n = 1_000_000;
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    out[i] = (performance.now() - t0) * 1000;
  }
  return percentiles(out).p50;
}

// ───────────────────────────── nodejs-order-book ─────────────────────────────

/** The part of nodejs-order-book's API used here (its option types are TypeScript enums). */
interface LibLimit {
  readonly id: string;
  readonly side: 'buy' | 'sell';
  readonly size: number;
  readonly price: number;
  readonly timeInForce: 'GTC' | 'IOC';
  readonly postOnly: boolean;
  readonly accountId: string;
  readonly stpMode: 'EXPIRE_TAKER';
}
interface LibBook {
  limit(options: LibLimit): { err: unknown };
  cancel(id: string): unknown;
}
interface LibSides {
  readonly bids: { len(): number };
  readonly asks: { len(): number };
}

/** One operation of the translated stream: a limit order, or a cancel (by id). */
type LibOp = LibLimit | string;

/**
 * The same stream in nodejs-order-book's terms: decimal prices and sizes (it computes in floats),
 * the ids Bourse assigns, IOC as timeInForce, PostOnly as postOnly, and self-trade prevention that
 * expires the taker (Bourse cancels the taker's remainder). Deposits and users have no counterpart.
 */
function translate(commands: readonly SequencedCommand[], orderIds: Int32Array): LibOp[] {
  const ops: LibOp[] = [];
  for (let i = 0; i < commands.length; i++) {
    const c = commands[i] as SequencedCommand;
    if (c.type === 'PlaceOrder') {
      const id = orderIds[i] as number;
      ops.push({
        // A placement Bourse refused still goes to the book, which refuses it by its own rules.
        id: id > 0 ? String(id) : `refused-${c.seq}`,
        side: c.side === BUY ? 'buy' : 'sell',
        size: c.amount / 10_000,
        price: c.price / 100,
        timeInForce: c.kind === 'ioc' ? 'IOC' : 'GTC',
        postOnly: c.kind === 'postOnly',
        accountId: String(c.userId),
        stpMode: 'EXPIRE_TAKER',
      });
    } else if (c.type === 'CancelOrder') {
      ops.push(String(c.orderId));
    }
  }
  return ops;
}

function libApplyAll(book: LibBook, ops: readonly LibOp[]): number {
  let refused = 0;
  for (let i = 0; i < ops.length; i++) {
    const op = ops[i] as LibOp;
    if (typeof op === 'string') {
      if (book.cancel(op) === undefined) refused++;
    } else if (book.limit(op).err !== null) refused++;
  }
  return refused;
}

const newLibBook = (): LibBook => new OrderBook() as unknown as LibBook;
const libResting = (book: LibBook): number => {
  const sides = book as unknown as LibSides;
  return sides.bids.len() + sides.asks.len();
};

// ───────────────────────────── the benchmark ─────────────────────────────

async function main(): Promise<void> {
  const started = performance.now();
  const machine = {
    cpu: cpuModel(),
    cores: os.cpus().length,
    memoryGB: round(os.totalmem() / 2 ** 30, 1),
    node: process.version,
    v8: process.versions.v8,
    loadavgAtStart: os.loadavg().map((x) => round(x, 2)),
  };
  console.log(`Engine benchmark${QUICK ? ' (QUICK: smoke run, do not quote)' : ''}`);
  console.log(
    `  ${machine.cpu}, ${machine.cores} cores, ${machine.memoryGB} GB; Node ${machine.node} (V8 ${machine.v8}); ` +
      `load average ${machine.loadavgAtStart.join(' ')}`,
  );

  // ── The 10,000-order stream ──
  let t = performance.now();
  const stream = generateStream({ ...DEFAULT_STREAM, commands: STREAM_COMMANDS });
  const s = stream.summary;
  const n = stream.commands.length;
  console.log(
    `\nStream: ${fmtInt(n)} commands on btc_usdt after ${fmtInt(s.setupCommands)} setup commands ` +
      `(${DEFAULT_STREAM.users} users, ${fmtInt(s.restingAfterSetup)} resting orders); generated in ` +
      `${((performance.now() - t) / 1000).toFixed(1)} s`,
  );
  const pct = (k: number): string => `${((100 * k) / n).toFixed(1)}%`;
  console.log(
    `  mix: place ${pct(s.kinds.place)}, PostOnly ${pct(s.kinds.postOnly)}, crossing limit ` +
      `${pct(s.kinds.crossing)}, IOC ${pct(s.kinds.ioc)}, cancel ${pct(s.kinds.cancel)} ` +
      `(+ ${pct(s.kinds.staleCancel)} of finished orders)`,
  );
  console.log(
    `  results: ${Object.entries(s.results)
      .map(([k, v]) => `${k} ${fmtInt(v)}`)
      .join(', ')}; ${fmtInt(s.trades)} trades, ${fmtInt(s.selfTradeCancels)} self-trade cancels, ` +
      `${(s.events / n).toFixed(2)} events per command`,
  );
  console.log(
    `  resting ${fmtInt(s.restingMin)}–${fmtInt(s.restingMax)} (${fmtInt(s.bidLevels)} bid and ` +
      `${fmtInt(s.askLevels)} ask levels at the end); mid ${(s.midStartTicks / 100).toFixed(2)} → ` +
      `${(s.midEndTicks / 100).toFixed(2)} usdt`,
  );

  const libSetup = translate(stream.setup, stream.setupOrderIds);
  const libOps = translate(stream.commands, stream.orderIds);

  const bourseRun = async (): Promise<{ rate: number; events: number; gc: GcSummary; engine: Engine }> => {
    const engine = preparedEngine(stream);
    runGc();
    const t0 = performance.now();
    const events = applyAll(engine, stream.commands);
    const t1 = performance.now();
    await settle();
    return { rate: (n / (t1 - t0)) * 1000, events, gc: gcBetween(t0, t1), engine };
  };
  const libRun = async (): Promise<{ rate: number; refused: number; resting: number; gc: GcSummary }> => {
    const book = newLibBook();
    libApplyAll(book, libSetup);
    runGc();
    const t0 = performance.now();
    const refused = libApplyAll(book, libOps);
    const t1 = performance.now();
    await settle();
    return { rate: (n / (t1 - t0)) * 1000, refused, resting: libResting(book), gc: gcBetween(t0, t1) };
  };

  // Warm-up: one full run of each (the generator already ran the engine's code once).
  t = performance.now();
  const warm = await bourseRun();
  if (warm.events !== s.events) throw new Error(`replay produced ${warm.events} events, expected ${s.events}`);
  const hash = warm.engine.stateHash();
  if (hash !== s.stateHash) throw new Error('replay reached a different state than the generator');
  const warmLib = await libRun();
  console.log(
    `\nWarm-up done in ${((performance.now() - t) / 1000).toFixed(1)} s; replay state hash matches the ` +
      `generator's (${hash.slice(0, 12)}…)`,
  );

  // Interleaved so that load from other processes falls on both books alike.
  const bourseRates: number[] = [];
  const libRates: number[] = [];
  let bourseGcMax = 0;
  let libGcMax = 0;
  for (let r = 0; r < RUNS; r++) {
    const b = await bourseRun();
    if (b.events !== s.events) throw new Error(`run ${r}: ${b.events} events, expected ${s.events}`);
    bourseRates.push(b.rate);
    bourseGcMax = Math.max(bourseGcMax, b.gc.maxMs);
    const l = await libRun();
    libRates.push(l.rate);
    libGcMax = Math.max(libGcMax, l.gc.maxMs);
    console.log(
      `  run ${r + 1}/${RUNS}: Bourse ${fmtInt(b.rate)} commands/s (GC ${b.gc.count} pauses, ` +
        `${b.gc.totalMs.toFixed(0)} ms, max ${b.gc.maxMs.toFixed(2)} ms); nodejs-order-book ` +
        `${fmtInt(l.rate)} ops/s (GC max ${l.gc.maxMs.toFixed(2)} ms)`,
    );
  }
  const bourseMedian = median(bourseRates);
  const libMedian = median(libRates);

  // Latency, in separate runs: the timer reads cost about as much as a cancel.
  const overhead = timerOverheadUs();
  const latencyRuns: Percentiles[] = [];
  const latencies = new Float64Array(n);
  for (let r = 0; r < LATENCY_RUNS; r++) {
    const engine = preparedEngine(stream);
    runGc();
    applyTimed(engine, stream.commands, latencies);
    latencyRuns.push(percentiles(latencies));
  }
  const pick = (k: keyof Percentiles): number =>
    k === 'max' ? Math.max(...latencyRuns.map((p) => p.max)) : median(latencyRuns.map((p) => p[k]));
  const latency: Percentiles = {
    p50: pick('p50'),
    p90: pick('p90'),
    p99: pick('p99'),
    p999: pick('p999'),
    p9999: pick('p9999'),
    max: pick('max'),
  };

  console.log('\nBourse engine (accounts, freezes, fees incl. platform-coin fees, events):');
  console.log(
    `  throughput: median ${fmtInt(bourseMedian)} commands/s over ${RUNS} runs ` +
      `(min ${fmtInt(Math.min(...bourseRates))}, max ${fmtInt(Math.max(...bourseRates))}); ` +
      `largest GC pause in timed runs ${bourseGcMax.toFixed(2)} ms`,
  );
  console.log(
    `  latency per command (median of ${LATENCY_RUNS} runs; max is the largest): ${fmtUs(latency)}; ` +
      `timer overhead ${overhead.toFixed(3)} µs included`,
  );
  console.log(
    `  targets: ≥ 1,000,000 commands/s ${bourseMedian >= 1_000_000 ? 'met' : 'MISSED'}, ` +
      `p99 ≤ 5 µs ${latency.p99 <= 5 ? 'met' : 'MISSED'}`,
  );
  console.log('nodejs-order-book 10 (matching only: no accounts, funds, fees or events), same stream:');
  console.log(
    `  throughput: median ${fmtInt(libMedian)} ops/s over ${RUNS} runs ` +
      `(min ${fmtInt(Math.min(...libRates))}, max ${fmtInt(Math.max(...libRates))}); ` +
      `${fmtInt(warmLib.refused)} refusals; ${fmtInt(warmLib.resting)} resting at the end ` +
      `(Bourse ${fmtInt(s.restingAtEnd)}); largest GC pause ${libGcMax.toFixed(2)} ms`,
  );
  const ratio = bourseMedian / libMedian;
  console.log(`  Bourse ÷ nodejs-order-book throughput: ${ratio.toFixed(2)}×`);

  // ── The 1,000,000-order book ──
  warm.engine.assertInvariants();
  runGc();
  t = performance.now();
  const big = generateStream({
    ...DEFAULT_STREAM,
    seed: DEFAULT_STREAM.seed + 1,
    users: BIG_USERS,
    resting: BIG_RESTING,
    commands: BIG_COMMANDS,
    meanDistanceTicks: BIG_MEAN_DISTANCE_TICKS,
    hash: false,
  });
  const genSeconds = (performance.now() - t) / 1000;
  runGc();
  const heapBefore = process.memoryUsage().heapUsed;
  t = performance.now();
  const bigEngine = preparedEngine(big);
  const buildSeconds = (performance.now() - t) / 1000;
  runGc();
  const heapBook = process.memoryUsage().heapUsed - heapBefore;
  const bigLatencies = new Float64Array(big.commands.length);
  const b0 = performance.now();
  const bigEvents = applyTimed(bigEngine, big.commands, bigLatencies);
  const b1 = performance.now();
  await settle();
  if (bigEvents !== big.summary.events) throw new Error('big book replay diverged from its generator');
  if (bigEngine.openOrderCount !== big.summary.restingAtEnd) throw new Error('big book resting count differs');
  const bigGc = gcBetween(b0, b1);
  const bigLatency = percentiles(bigLatencies);
  const bigRate = (big.commands.length / (b1 - b0)) * 1000;
  const bigHeapAfter = process.memoryUsage();
  const bs = big.summary;
  console.log(
    `\n1,000,000-order book: ${fmtInt(bs.restingAfterSetup)} resting orders of ${BIG_USERS} users over ` +
      `${fmtInt(bs.bidLevels)} bid and ${fmtInt(bs.askLevels)} ask levels (generated in ` +
      `${genSeconds.toFixed(1)} s, replayed into a fresh engine in ${buildSeconds.toFixed(1)} s); ` +
      `book heap ≈ ${mb(heapBook)} MB (${fmtInt(heapBook / bs.restingAfterSetup)} B per order), ` +
      `heap used ${mb(bigHeapAfter.heapUsed)} MB, RSS ${mb(bigHeapAfter.rss)} MB`,
  );
  console.log(
    `  then ${fmtInt(big.commands.length)} mixed commands, timed one by one: ${fmtInt(bigRate)} commands/s ` +
      `with timers; ${fmtUs(bigLatency)}`,
  );
  console.log(
    `  GC during the stream: ${bigGc.count} pauses, ${bigGc.totalMs.toFixed(0)} ms in all, largest ` +
      `${bigGc.maxMs.toFixed(2)} ms (${bigGc.maxKind || 'none'}); ` +
      Object.entries(bigGc.byKind)
        .map(([k, v]) => `${k} ${v.count}× max ${v.maxMs.toFixed(2)} ms`)
        .join(', '),
  );
  const largestPauseMs = Math.max(bigGc.maxMs, bigLatency.max / 1000);
  console.log(
    `  largest pause (max of GC pause and command latency): ${largestPauseMs.toFixed(2)} ms — aim ≤ 10 ms ` +
      `${largestPauseMs <= 10 ? 'met' : 'MISSED'}`,
  );

  const loadavgAtEnd = os.loadavg().map((x) => round(x, 2));
  const totalSeconds = (performance.now() - started) / 1000;
  console.log(`\nLoad average at the end ${loadavgAtEnd.join(' ')}; total ${totalSeconds.toFixed(0)} s`);

  const json = {
    bench: 'engine',
    quick: QUICK,
    date: new Date().toISOString(),
    machine: { ...machine, loadavgAtEnd },
    stream: {
      market: 'btc_usdt',
      seed: DEFAULT_STREAM.seed,
      users: DEFAULT_STREAM.users,
      commands: n,
      setupCommands: s.setupCommands,
      resting: { start: s.restingAfterSetup, min: s.restingMin, max: s.restingMax, end: s.restingAtEnd },
      kinds: s.kinds,
      results: s.results,
      trades: s.trades,
      eventsPerCommand: round(s.events / n, 3),
    },
    bourse: {
      runs: RUNS,
      commandsPerSec: bourseRates.map(Math.round),
      medianCommandsPerSec: Math.round(bourseMedian),
      maxGcPauseMs: round(bourseGcMax, 2),
      latencyUs: roundPercentiles(latency),
      latencyRuns: LATENCY_RUNS,
      timerOverheadUs: round(overhead, 3),
    },
    nodejsOrderBook: {
      version: '10.1.1',
      opsPerSec: libRates.map(Math.round),
      medianOpsPerSec: Math.round(libMedian),
      maxGcPauseMs: round(libGcMax, 2),
      restingAtEnd: warmLib.resting,
    },
    ratioBourseToNodejsOrderBook: round(ratio, 2),
    bigBook: {
      resting: bs.restingAfterSetup,
      users: BIG_USERS,
      bidLevels: bs.bidLevels,
      askLevels: bs.askLevels,
      buildSeconds: round(buildSeconds, 2),
      bookHeapMB: mb(heapBook),
      heapUsedMB: mb(bigHeapAfter.heapUsed),
      rssMB: mb(bigHeapAfter.rss),
      commands: big.commands.length,
      commandsPerSecWithTimers: Math.round(bigRate),
      latencyUs: roundPercentiles(bigLatency),
      gc: {
        count: bigGc.count,
        totalMs: round(bigGc.totalMs, 1),
        maxMs: round(bigGc.maxMs, 2),
        maxKind: bigGc.maxKind,
      },
      largestPauseMs: round(largestPauseMs, 2),
    },
    totalSeconds: round(totalSeconds, 1),
  };
  gcObserver.disconnect();
  console.log(JSON.stringify(json));
}

await main();
