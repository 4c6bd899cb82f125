/**
 * @module fan-out.bench — `npm run bench:fan-out`: the WebSocket fan-out's own cost per delivered
 * message, on a fixed load, with figures that do not depend on how busy the machine is (issue
 * 30: the ws and venue benches' wall figures move 2–10× with the host's load).
 *
 * In process: the real gateway (src/api/ws/test-gateway.ts: a real Engine, MarketData,
 * LiveKlines, WsGateway on a loopback TCP port), `--connections` subscribers in client
 * processes (ws-client-worker.ts) on btc_usdt's ticker, depth, trades and 1min kline, a 50-level
 * book a side. Each of `--ticks` ticks applies one crossing pair of orders (a trade, so every
 * channel changes) and waits until the tick's frames are written to every connection. Measured
 * over the ticks, on the server's thread:
 * - **bytes allocated per delivered message** on the JavaScript heap (v8.GCProfiler: the heap's
 *   growth plus what each GC freed), the deterministic figure;
 * - CPU per delivered message (process.cpuUsage; moves with the host's load, quoted beside it).
 * `FANOUT_HEAP_PROFILE=<file>`: a sampling heap profile of the ticks' allocations (collected
 * ones included) for DevTools. `--quick`: 20 connections, 20 ticks.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { GCProfiler } from 'node:v8';
import { finish, QUICK } from './results.ts';
import { round, startClients, waitReady, type Clients } from './ws-harness.ts';
import { WsHarness } from '../test/fixtures/ws-harness.ts';

const CHANNELS = ['ticker', 'depth', 'trades', 'kline_1min'].map((kind) => `btcusdt_${kind}`);

function flag(name: string, fallback: number): number {
  const argv = process.argv;
  const i = argv.indexOf(`--${name}`);
  if (i < 0) return fallback;
  const value = Number(argv[i + 1]);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`--${name} takes a positive integer`);
  return value;
}

const connections = flag('connections', QUICK ? 20 : 1_000);
const ticks = flag('ticks', QUICK ? 20 : 200);
/** Where to write a sampling heap profile of the ticks' allocations, collected ones included. */
const heapProfile = process.env['FANOUT_HEAP_PROFILE'];

/**
 * Resolves once `done()` holds, checked each millisecond: a check every event-loop turn would
 * spin while the fan-out waits for its next tick and its allocations would swamp the figure.
 */
function until(done: () => boolean, what: string): Promise<void> {
  const deadline = performance.now() + 60_000;
  return new Promise((resolve, reject) => {
    const check = (): void => {
      if (done()) resolve();
      else if (performance.now() > deadline) reject(new Error(`timed out waiting for ${what}`));
      else setTimeout(check, 1);
    };
    check();
  });
}

async function main(): Promise<void> {
  const h = new WsHarness({ maxSubscriptions: 100 });
  let clients: Clients | undefined;
  try {
    const base = new URL(await h.listen());
    const maker = h.user('maker', [
      ['usdt', '100000000'],
      ['btc', '100000'],
    ]);
    const taker = h.user('taker', [
      ['usdt', '100000000'],
      ['btc', '100000'],
    ]);
    for (let i = 0; i < 50; i++) {
      h.order(maker, 1, `${29_950 - i}.00`, '0.5000');
      h.order(maker, 0, `${30_050 + i}.00`, '0.5000');
    }
    clients = startClients(base.hostname, Number(base.port), {
      connections,
      workers: connections >= 100 ? 2 : 1,
      channels: CHANNELS,
      sampleEvery: 0,
    });
    await waitReady(clients, connections);
    const tick = async (): Promise<number> => {
      const before = h.gateway.pushesSent;
      h.order(maker, 0, '30000.00', '0.0100');
      h.order(taker, 1, '30000.00', '0.0100');
      // Every connection gets the tick's message of each channel.
      const expected = before + connections * CHANNELS.length;
      await until(() => h.gateway.pushesSent >= expected, 'a tick');
      return h.gateway.pushesSent - before;
    };
    // Warm-up: the snapshots, and the code's optimization.
    for (let i = 0; i < Math.max(5, ticks / 4); i++) await tick();
    const session = heapProfile === undefined ? undefined : new Session();
    session?.connect();
    await session?.post('HeapProfiler.startSampling', {
      samplingInterval: 1024,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
    const profiler = new GCProfiler();
    profiler.start();
    const heapBefore = process.memoryUsage().heapUsed;
    const cpuBefore = process.cpuUsage();
    let messages = 0;
    for (let i = 0; i < ticks; i++) messages += await tick();
    const cpu = process.cpuUsage(cpuBefore);
    const heapAfter = process.memoryUsage().heapUsed;
    const gcs = profiler.stop()?.statistics ?? [];
    const freed = gcs.reduce(
      (sum, gc) => sum + gc.beforeGC.heapStatistics.usedHeapSize - gc.afterGC.heapStatistics.usedHeapSize,
      0,
    );
    const allocated = heapAfter - heapBefore + freed;
    if (session !== undefined) {
      const { profile } = await session.post('HeapProfiler.stopSampling');
      writeFileSync(heapProfile as string, JSON.stringify(profile));
      session.disconnect();
    }
    const figures = {
      bench: 'fan-out',
      quick: QUICK,
      connections,
      channels: CHANNELS.length,
      ticks,
      messages,
      bytesAllocatedPerMessage: round(allocated / messages, 1),
      bytesAllocatedPerTick: Math.round(allocated / ticks),
      cpuMicrosPerMessage: round((cpu.user + cpu.system) / messages, 3),
      gcs: gcs.length,
    };
    console.log(
      `fan-out: ${connections} connections × ${CHANNELS.length} channels, ${ticks} ticks, ${messages} messages: ` +
        `${figures.bytesAllocatedPerMessage} B allocated a message (${gcs.length} GCs), ` +
        `${figures.cpuMicrosPerMessage} µs CPU a message`,
    );
    finish('fan-out', figures);
  } finally {
    for (const w of clients?.workers ?? []) w.kill();
    await h.close();
  }
}

if (import.meta.main) await main();
