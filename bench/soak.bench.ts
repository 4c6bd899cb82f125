/**
 * @module soak.bench — `npm run bench:soak`: memory under a steady load, over time (issue 30,
 * "Under time"). The real server as `npm start` runs it (src/main.ts as a child process: metrics
 * on, logs at info, history written to its SQLite store, demo off; rate limits off, since two
 * keys send hundreds of requests a second), loaded from separate processes:
 * - an order process (ws-orders-worker.ts) sending signed `orderMoreV2` batches of `PER_BATCH`
 *   btc_usdt limit orders at one price, sells and buys alternating (every buy batch fills the
 *   sell batch before it: half the orders trade), at `--rate` orders/s;
 * - `--subscribers` WebSocket connections (ws-client-worker.ts) on btc_usdt's ticker, depth,
 *   trades and 1min kline.
 *
 * Every `--sample-seconds` (60; the minute of the issue) it samples the server's RSS (and its
 * anonymous and file-backed parts, /proc/<pid>/status), its JavaScript heap (`/metrics`), and
 * the order reply p50 / p99 of the orders sent in that interval. After the warm-up
 * (`--warmup-minutes`, default a sixth of the run) it fits a line to the RSS samples by least
 * squares: the slope (MiB per minute) is flat when within `--tolerance-mib-per-min` (default
 * 0.5, i.e. at most 15 MiB over 30 minutes). The RSS follows the main heap's sawtooth (a major
 * GC every few minutes at low rates gives pages back), so a short run's slope depends on where
 * in it the samples fall; the slope of what lies outside both JavaScript heaps (RSS minus the
 * main and the history thread's committed heaps: SQLite caches, Buffers, malloc) is printed
 * beside it. Prints a line per sample and, last, one JSON object.
 * A full run whose slope is not flat exits 1.
 *
 * Defaults: 30 minutes at 2,500 orders/s with 200 subscribers (`--rate`: half the peak order
 * rate the venue sustains on the machine, which bench:venue measures: set it from there).
 * `--quick`: 45 s at 500 orders/s, 20 subscribers, a sample every 5 s, 15 s warm-up; nothing is
 * asserted (the CI runs it to keep the benchmark working).
 */
import { finish } from './results.ts';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer } from '../test/fixtures/server-process.ts';
import { createTrader } from '../test/fixtures/zb-client.ts';
import {
  child,
  nextMessage,
  round,
  seedBook,
  sleep,
  startClients,
  waitReady,
  type Clients,
} from './ws-harness.ts';

const PER_BATCH = 20;
const CHANNELS = ['ticker', 'depth', 'trades', 'kline_1min'].map((kind) => `btcusdt_${kind}`);

interface Settings {
  readonly quick: boolean;
  readonly minutes: number;
  readonly rate: number;
  readonly subscribers: number;
  readonly sampleSeconds: number;
  readonly warmupMinutes: number;
  readonly toleranceMiBPerMin: number;
}

function settings(argv: readonly string[]): Settings {
  const quick = argv.includes('--quick');
  const flag = (name: string, fallback: number): number => {
    const i = argv.findIndex((a) => a === `--${name}` || a.startsWith(`--${name}=`));
    if (i < 0) return fallback;
    const arg = argv[i] as string;
    const value = Number(arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : argv[i + 1]);
    if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} takes a positive number`);
    return value;
  };
  const minutes = flag('minutes', quick ? 0.75 : 30);
  return {
    quick,
    minutes,
    rate: flag('rate', quick ? 500 : 2_500),
    subscribers: flag('subscribers', quick ? 20 : 200),
    sampleSeconds: flag('sample-seconds', quick ? 5 : 60),
    warmupMinutes: flag('warmup-minutes', quick ? 0.25 : minutes / 6),
    toleranceMiBPerMin: flag('tolerance-mib-per-min', 0.5),
  };
}

export interface SoakSample {
  /** Minutes since the load started. */
  readonly minute: number;
  readonly rssMiB: number;
  readonly anonMiB: number;
  readonly fileMiB: number;
  readonly heapUsedMiB: number;
  readonly heapTotalMiB: number;
  readonly externalMiB: number;
  /** Resident memory by kind of mapping (/proc/<pid>/smaps; see `residentByKind`). */
  readonly v8PagesMiB: number;
  readonly mallocMiB: number;
  readonly otherMiB: number;
  /** The history thread's heap (its engine replica), in use and committed. */
  readonly threadHeapUsedMiB: number;
  readonly threadHeapTotalMiB: number;
  readonly orderP50Ms: number;
  readonly orderP99Ms: number;
  /** Orders answered 1000 in the interval, per second. */
  readonly ordersPerSecond: number;
  readonly failed: number;
}

/** VmRSS, RssAnon and RssFile of `pid`, MiB. */
function memoryOf(pid: number): { rss: number; anon: number; file: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string): number =>
    Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return {
    rss: kib('VmRSS') / 1024,
    anon: kib('RssAnon') / 1024,
    file: (kib('RssFile') + kib('RssShmem')) / 1024,
  };
}

/**
 * The server's resident memory by kind of mapping, MiB, from /proc/<pid>/smaps: `v8Pages`, the
 * anonymous 256 KiB mappings V8 allocates its heap pages as (every isolate's, and those V8 keeps
 * after a GC for reuse, which the heap figures do not count); `malloc`, glibc's main heap
 * (`[heap]`) and its thread arenas (anonymous mappings at 64 MiB boundaries: SQLite's page
 * caches, Buffers, sockets); `other`, the rest (the node binary, libraries, stacks, code).
 */
export function residentByKind(smaps: string): { v8Pages: number; malloc: number; other: number } {
  const kib = { v8Pages: 0, malloc: 0, other: 0 };
  let kind: keyof typeof kib = 'other';
  for (const line of smaps.split('\n')) {
    const m = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \d+\s*(.*)$/.exec(line);
    if (m !== null) {
      const start = Number.parseInt(m[1] as string, 16);
      const size = Number.parseInt(m[2] as string, 16) - start;
      const name = (m[4] as string).trim();
      const arena = name === '' && start % (64 * 2 ** 20) === 0 && (m[3] as string).startsWith('rw');
      kind = name === '' && size === 256 * 1024 ? 'v8Pages' : name === '[heap]' || arena ? 'malloc' : 'other';
      continue;
    }
    if (line.startsWith('Rss:')) kib[kind] += Number(line.split(/\s+/)[1]);
  }
  return { v8Pages: kib.v8Pages / 1024, malloc: kib.malloc / 1024, other: kib.other / 1024 };
}

/**
 * The server's JavaScript heaps in use and committed (the main thread's and the history thread's),
 * and its external memory (Buffers), from `/metrics`, MiB.
 */
async function heapOf(
  adminBase: string,
): Promise<{ used: number; total: number; external: number; threadUsed: number; threadTotal: number }> {
  const text = await (await fetch(`${adminBase}/metrics`)).text();
  const mib = (name: string): number => {
    const m = new RegExp(`^${name}\\s+([\\d.e+]+)`, 'm').exec(text);
    return m === null ? NaN : Number(m[1]) / 1024 / 1024;
  };
  return {
    used: mib('nodejs_heap_size_used_bytes'),
    total: mib('nodejs_heap_size_total_bytes'),
    external: mib('nodejs_external_memory_bytes'),
    threadUsed: mib('bourse_history_thread_heap_bytes\\{kind="used"\\}'),
    threadTotal: mib('bourse_history_thread_heap_bytes\\{kind="total"\\}'),
  };
}

/** Least-squares slope of y over x. */
export function slope(points: readonly (readonly [number, number])[]): number {
  const n = points.length;
  if (n < 2) return NaN;
  const mx = points.reduce((s, [x]) => s + x, 0) / n;
  const my = points.reduce((s, [, y]) => s + y, 0) / n;
  const sxy = points.reduce((s, [x, y]) => s + (x - mx) * (y - my), 0);
  const sxx = points.reduce((s, [x]) => s + (x - mx) ** 2, 0);
  return sxx === 0 ? NaN : sxy / sxx;
}

async function main(): Promise<void> {
  const s = settings(process.argv.slice(2));
  const root = mkdtempSync(join(tmpdir(), 'bourse-soak-'));
  const server = await startServer(join(root, 'data'), [
    '--rate-limits=false',
    '--max-connections-per-ip',
    String(s.subscribers + 256),
    '--log-format',
    'json',
  ]);
  let orders: ChildProcess | undefined;
  let clients: Clients | undefined;
  const samples: SoakSample[] = [];
  const loads: number[] = [];
  try {
    const pid = server.child.pid as number;
    const buyer = await createTrader(server, 'soak-buyer', [['usdt', '5000000000']]);
    const seller = await createTrader(server, 'soak-seller', [['btc', '10000000']]);
    const maker = await createTrader(server, 'soak-maker', [
      ['usdt', '10000000'],
      ['btc', '1000'],
    ]);
    await seedBook(maker);
    const url = new URL(server.base);
    clients = startClients(url.hostname, Number(url.port), {
      connections: s.subscribers,
      workers: s.subscribers >= 100 ? 2 : 1,
      channels: CHANNELS,
      sampleEvery: 0,
    });
    await waitReady(clients, s.subscribers);
    const before = memoryOf(pid);
    console.log(
      `soak: ${s.minutes} min at ${s.rate} orders/s (batches of ${PER_BATCH}) with ${s.subscribers} subscribers; ` +
        `server RSS ${round(before.rss)} MiB before the load`,
    );
    orders = child('ws-orders-worker.ts', [
      server.base,
      buyer.accessKey,
      buyer.secret,
      seller.accessKey,
      seller.secret,
      String(s.rate / PER_BATCH),
      String(PER_BATCH),
      '30000.00',
      '0.0100',
    ]);
    let count = { ok: 0, failed: 0 };
    orders.on('message', (m: { type: string; ok: number; failed: number }) => {
      if (m.type === 'count') count = m;
    });
    orders.send({ type: 'measure' });
    const started = performance.now();
    const end = started + s.minutes * 60_000;
    let last = { ...count };
    for (let due = started + s.sampleSeconds * 1000; due <= end + 1; due += s.sampleSeconds * 1000) {
      await sleep(Math.max(0, due - performance.now()));
      const replies = nextMessage<{ p50: number; p99: number }>(orders, 'replies');
      orders.send({ type: 'replies', reset: true });
      const { p50, p99 } = await replies;
      const memory = memoryOf(pid);
      const kinds = residentByKind(readFileSync(`/proc/${pid}/smaps`, 'utf8'));
      const heap = await heapOf(server.adminBase);
      const sample: SoakSample = {
        minute: round((performance.now() - started) / 60_000, 2),
        rssMiB: round(memory.rss),
        anonMiB: round(memory.anon),
        fileMiB: round(memory.file),
        heapUsedMiB: round(heap.used),
        heapTotalMiB: round(heap.total),
        externalMiB: round(heap.external),
        v8PagesMiB: round(kinds.v8Pages),
        mallocMiB: round(kinds.malloc),
        otherMiB: round(kinds.other),
        threadHeapUsedMiB: round(heap.threadUsed),
        threadHeapTotalMiB: round(heap.threadTotal),
        orderP50Ms: round(p50),
        orderP99Ms: round(p99),
        ordersPerSecond: Math.round(((count.ok - last.ok) * PER_BATCH) / s.sampleSeconds),
        failed: count.failed - last.failed,
      };
      last = { ...count };
      samples.push(sample);
      loads.push(loadavg()[0] as number);
      console.log(
        `${sample.minute.toFixed(2)} min: RSS ${sample.rssMiB} MiB (anon ${sample.anonMiB}, file ${sample.fileMiB}), ` +
          `heap ${sample.heapUsedMiB} of ${sample.heapTotalMiB} MiB, history thread's ${sample.threadHeapUsedMiB} of ${sample.threadHeapTotalMiB}, external ${sample.externalMiB}; ` +
          `resident: V8 pages ${sample.v8PagesMiB}, malloc ${sample.mallocMiB}, other ${sample.otherMiB}; ` +
          `${sample.ordersPerSecond} orders/s, reply p50 ${sample.orderP50Ms} / p99 ${sample.orderP99Ms} ms` +
          `${sample.failed > 0 ? `, ${sample.failed} batches refused` : ''}; load ${(loadavg()[0] as number).toFixed(1)}`,
      );
    }
    orders.send({ type: 'stop' });
    await sleep(2_000);
    const idle = memoryOf(pid);
    const settled = samples.filter((x) => x.minute >= s.warmupMinutes);
    const rssSlope = slope(settled.map((x) => [x.minute, x.rssMiB]));
    const heapSlope = slope(settled.map((x) => [x.minute, x.heapUsedMiB]));
    // What grows outside both JavaScript heaps (native memory: SQLite caches, Buffers, malloc).
    const outsideHeaps = (x: SoakSample): number => x.rssMiB - x.heapTotalMiB - x.threadHeapTotalMiB;
    const outsideSlope = slope(settled.map((x) => [x.minute, outsideHeaps(x)]));
    const v8PagesSlope = slope(settled.map((x) => [x.minute, x.v8PagesMiB]));
    const mallocSlope = slope(settled.map((x) => [x.minute, x.mallocMiB]));
    const flat = Math.abs(rssSlope) <= s.toleranceMiBPerMin;
    const p99s = settled.map((x) => x.orderP99Ms);
    console.log(
      `RSS slope after ${s.warmupMinutes} min of warm-up: ${round(rssSlope, 3)} MiB/min over ${settled.length} samples ` +
        `(${flat ? 'flat' : 'NOT flat'}: tolerance ±${s.toleranceMiBPerMin}); heap ${round(heapSlope, 3)} MiB/min; ` +
        `outside both JavaScript heaps ${round(outsideSlope, 3)} MiB/min (${round(outsideHeaps(settled[0] as SoakSample))} → ${round(outsideHeaps(samples.at(-1) as SoakSample))} MiB); ` +
        `resident V8 pages ${round(v8PagesSlope, 3)} MiB/min, malloc ${round(mallocSlope, 3)} MiB/min; ` +
        `RSS ${round(before.rss)} MiB before the load, ${samples.at(-1)?.rssMiB} at the end, ${round(idle.rss)} idle 2 s later`,
    );
    finish('soak', {
      bench: 'soak',
      quick: s.quick,
      minutes: s.minutes,
      rate: s.rate,
      subscribers: s.subscribers,
      warmupMinutes: s.warmupMinutes,
      toleranceMiBPerMin: s.toleranceMiBPerMin,
      rssSlopeMiBPerMin: round(rssSlope, 3),
      heapSlopeMiBPerMin: round(heapSlope, 3),
      outsideHeapsSlopeMiBPerMin: round(outsideSlope, 3),
      v8PagesSlopeMiBPerMin: round(v8PagesSlope, 3),
      mallocSlopeMiBPerMin: round(mallocSlope, 3),
      flat,
      rssBeforeMiB: round(before.rss),
      rssEndMiB: samples.at(-1)?.rssMiB,
      rssIdleMiB: round(idle.rss),
      orderP99MsMax: Math.max(...p99s),
      orderP99MsFirst: p99s[0],
      orderP99MsLast: p99s.at(-1),
      loadAverage: `${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)}`,
      samples,
    });
    if (!s.quick && !flat) process.exitCode = 1;
  } finally {
    orders?.kill();
    for (const w of clients?.workers ?? []) w.kill();
    await server.stop().catch(() => server.kill());
    rmSync(root, { recursive: true, force: true });
  }
}

if (import.meta.main) await main();
