/**
 * @module ws.bench — the WebSocket API under load, every party in its own process:
 * - the real server (`ws-server-child.ts`: `startVenue`, with its event-loop delay measured inside
 *   it by `monitorEventLoopDelay` and read over IPC);
 * - `WS_BENCH_WORKERS` client processes (`ws-client-worker.ts`) holding `WS_BENCH_CONNECTIONS`
 *   connections in all, each subscribed to one busy market's ticker, depth, quick depth, trades
 *   and 1min kline, counting every message delivered;
 * - an order process (`ws-orders-worker.ts`) sending signed orderMoreV2 batches of 20 at
 *   `WS_BENCH_ORDERS` orders/s, sells and buys alternating at one price (half the orders trade);
 * - this process: setup, a latency probe subscribed to both traders' push_user_incr_record (whose
 *   records carry each fill's trade id and time), the figures.
 * Trade-to-push latency: from the time the sequencer stamped on the command that made the trade
 * (before its journal write) to the arrival of the trades push carrying it, for every 10th trade
 * on every 20th connection (and, for the private channel, every fill record at the probe).
 * Same-run baseline (first): the same client processes against a bare `ws` server that sends
 * messages of the same sizes every 10 ms the naive way (ws-baseline-child.ts), no exchange.
 * The CPU each party used in the measured window, and what other processes on the machine used
 * (from /proc/stat), are reported with the figures. Medians of per-second samples; the last line
 * is one JSON object.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import {
  child,
  machineBusyMicros,
  median,
  nextMessage,
  percentile,
  perSecond,
  round,
  seedBook,
  sleep,
  startClients as startClientProcesses,
  TradeProbe,
  waitReady,
  type Clients,
} from './ws-harness.ts';
import { createTrader } from '../test/fixtures/zb-client.ts';
import { finish, sized } from './results.ts';

const CONNECTIONS = Number(process.env['WS_BENCH_CONNECTIONS'] ?? sized(1000, 100));
const WORKERS = Number(process.env['WS_BENCH_WORKERS'] ?? 2);
const ORDERS_PER_SECOND = Number(process.env['WS_BENCH_ORDERS'] ?? sized(10_000, 500));
const SECONDS = Number(process.env['WS_BENCH_SECONDS'] ?? sized(20, 3));
const WARMUP_SECONDS = sized(5, 1);
const BASELINE_SECONDS = sized(5, 2);
const PER_BATCH = 20;
const SAMPLE_EVERY_CONNECTION = 20;
/** What each connection subscribes to (WS_BENCH_CHANNELS: kinds separated by commas). */
const CHANNELS = (process.env['WS_BENCH_CHANNELS'] ?? 'ticker,depth,quick_depth,trades,kline_1min')
  .split(',')
  .map((kind) => `btcusdt_${kind}`);

interface ServerStats {
  readonly lagP50Ms: number;
  readonly lagP99Ms: number;
  readonly lagMaxMs: number;
  readonly cpuShare: number;
  readonly rssMiB: number;
  readonly connections: number;
  readonly dropped: number;
}

/** WS_BENCH_CONNECTIONS connections in WS_BENCH_WORKERS processes, each on CHANNELS. */
const startClients = (host: string, port: number, sample = true): Clients =>
  startClientProcesses(host, port, {
    connections: CONNECTIONS,
    workers: WORKERS,
    channels: CHANNELS,
    sampleEvery: sample ? SAMPLE_EVERY_CONNECTION : 0,
  });

/** The same clients against ws-baseline-child.ts, for BASELINE_SECONDS. */
async function baselineRun(): Promise<{ messagesPerSecond: number; lagP99Ms: number; cpuShare: number }> {
  const server = child('ws-baseline-child.ts', []);
  const processes: ChildProcess[] = [server];
  try {
    const { base } = await nextMessage<{ base: string }>(server, 'ready');
    const url = new URL(base);
    const clients = startClients(url.hostname, Number(url.port), false);
    processes.push(...clients.workers);
    while (clients.frames() < CONNECTIONS * CHANNELS.length) await sleep(250);
    await sleep(2000);
    server.send({ type: 'reset' });
    const rates = await perSecond(BASELINE_SECONDS, clients.frames);
    const reply = nextMessage<ServerStats>(server, 'stats');
    server.send({ type: 'stats' });
    const stats = await reply;
    return {
      messagesPerSecond: Math.round(median(rates)),
      lagP99Ms: stats.lagP99Ms,
      cpuShare: stats.cpuShare,
    };
  } finally {
    for (const p of processes) p.kill();
  }
}

async function main(): Promise<void> {
  const root = mkdtempSync(join(import.meta.dirname, '..', '.bench-tmp-ws-'));
  const dataDir = join(root, 'data');
  console.log(
    `bench:ws — node ${process.version}, ${cpus().length} × ${cpus()[0]?.model}, load average ${loadavg()[0]?.toFixed(2)}; ` +
      `${CONNECTIONS} connections in ${WORKERS} client processes, channels ${CHANNELS.join(' ')}; ` +
      `${ORDERS_PER_SECOND} orders/s in batches of ${PER_BATCH}; ${WARMUP_SECONDS} s warm-up, ${SECONDS} s measured`,
  );
  const baseline = await baselineRun();
  console.log(
    `baseline (bare ws, naive send per socket, 10 ms ticks, no exchange): ${baseline.messagesPerSecond} messages/s median; ` +
      `event-loop delay p99 ${baseline.lagP99Ms} ms; CPU ${round(baseline.cpuShare * 100)}% of a core`,
  );
  const server = child(
    'ws-server-child.ts',
    [
      '--data',
      dataDir,
      '--port',
      '0',
      '--admin-port',
      '0',
      '--rate-limits=false',
      '--snapshot-every',
      '0',
      // Every client is on loopback: one address holds all the connections (and the probe's and traders').
      '--max-connections-per-ip',
      String(CONNECTIONS + 64),
    ],
    { XDG_CONFIG_HOME: join(root, 'config') },
    // e.g. WS_BENCH_SERVER_ARGS=--cpu-prof to profile the server alone.
    (process.env['WS_BENCH_SERVER_ARGS'] ?? '').split(' ').filter((a) => a !== ''),
  );
  const stats = async (): Promise<ServerStats> => {
    const reply = nextMessage<ServerStats>(server, 'stats');
    server.send({ type: 'stats' });
    return reply;
  };
  const processes: ChildProcess[] = [server];
  try {
    const { base, adminBase } = await nextMessage<{ base: string; adminBase: string }>(server, 'ready');
    const url = new URL(base);
    const venue = { base, adminBase, token: readFileSync(join(dataDir, 'admin.token'), 'utf8').trim() };
    const buyer = await createTrader(venue, 'buyer', [['usdt', '5000000000']]);
    const seller = await createTrader(venue, 'seller', [['btc', '10000000']]);
    const maker = await createTrader(venue, 'maker', [
      ['usdt', '100000000'],
      ['btc', '10000'],
    ]);
    await seedBook(maker);
    const probe = await TradeProbe.open(`${base.replace('http', 'ws')}/websocket`, [buyer, seller]);

    // Baseline: the same connections and subscriptions, no orders.
    const clients = startClients(url.hostname, Number(url.port));
    processes.push(...clients.workers);
    await waitReady(clients, CONNECTIONS);
    console.log(`${clients.ready()} connections subscribed`);
    const orders = child('ws-orders-worker.ts', [
      base,
      buyer.accessKey,
      buyer.secret,
      seller.accessKey,
      seller.secret,
      String(ORDERS_PER_SECOND / PER_BATCH),
      String(PER_BATCH),
    ]);
    processes.push(orders);
    let placed = { ok: 0, failed: 0, inFlight: 0, cpuMicros: 0 };
    orders.on(
      'message',
      (m: { type: string; ok: number; failed: number; inFlight: number; cpuMicros: number }) => {
        if (m.type === 'count') placed = m;
      },
    );
    await sleep(WARMUP_SECONDS * 1000);
    server.send({ type: 'reset' });
    orders.send({ type: 'measure' });
    probe.windowStart = Date.now();
    const windowStart = probe.windowStart;
    const cpuAtStart = {
      machine: machineBusyMicros(),
      clients: clients.cpuMicros(),
      orders: placed.cpuMicros,
      self: process.cpuUsage(),
      at: performance.now(),
    };
    const orderRates: number[] = [];
    let lastOk = placed.ok;
    const frameRates = await perSecond(SECONDS, () => {
      orderRates.push((placed.ok - lastOk) * PER_BATCH);
      lastOk = placed.ok;
      return clients.frames();
    });
    const windowEnd = Date.now();
    const busy = await stats();
    const wallMicros = (performance.now() - cpuAtStart.at) * 1000;
    const share = (micros: number): number => round(micros / wallMicros, 2);
    const selfCpu = process.cpuUsage(cpuAtStart.self);
    const cores = {
      machine: share(machineBusyMicros() - cpuAtStart.machine),
      server: round(busy.cpuShare, 2),
      clients: share(clients.cpuMicros() - cpuAtStart.clients),
      orders: share(placed.cpuMicros - cpuAtStart.orders),
      probe: share(selfCpu.user + selfCpu.system),
    };
    const others = round(cores.machine - cores.server - cores.clients - cores.orders - cores.probe, 2);
    // null (NaN over IPC) when no reply of the window came back before its end.
    const repliesReply = nextMessage<{ p50: number | null; p99: number | null }>(orders, 'replies');
    orders.send({ type: 'replies' });
    const replies = await repliesReply;
    orders.send({ type: 'stop' });

    const publicLatency = await probe.publicLatencies(clients.workers, windowStart, windowEnd);
    const privateLatency = probe.privateLatency;
    const figures = {
      bench: 'ws',
      connections: CONNECTIONS,
      channelsPerConnection: CHANNELS.length,
      clientProcesses: WORKERS,
      seconds: SECONDS,
      ordersPerSecondOffered: ORDERS_PER_SECOND,
      ordersPerSecond: Math.round(median(orderRates.slice(1))),
      ordersFailed: placed.failed,
      orderReplyP50Ms: round(replies.p50 ?? NaN),
      orderReplyP99Ms: round(replies.p99 ?? NaN),
      messagesPerSecond: Math.round(median(frameRates)),
      messagesPerSecondMin: Math.round(percentile(frameRates, 0)),
      lagP50Ms: busy.lagP50Ms,
      lagP99Ms: busy.lagP99Ms,
      lagMaxMs: busy.lagMaxMs,
      serverCpuShare: busy.cpuShare,
      serverRssMiB: busy.rssMiB,
      dropped: busy.dropped,
      publicLatencySamples: publicLatency.length,
      publicLatencyP50Ms: round(percentile(publicLatency, 0.5)),
      publicLatencyP99Ms: round(percentile(publicLatency, 0.99)),
      publicLatencyMaxMs: round(percentile(publicLatency, 1)),
      privateLatencySamples: privateLatency.length,
      privateLatencyP50Ms: round(percentile(privateLatency, 0.5)),
      privateLatencyP99Ms: round(percentile(privateLatency, 0.99)),
      baselineMessagesPerSecond: baseline.messagesPerSecond,
      baselineLagP99Ms: baseline.lagP99Ms,
      baselineServerCpuShare: baseline.cpuShare,
      coresMachine: cores.machine,
      coresServer: cores.server,
      coresClients: cores.clients,
      coresOrders: cores.orders,
      coresProbe: cores.probe,
      coresOthers: others,
      loadAverage: round(loadavg()[0] ?? 0, 2),
    };
    console.log(
      [
        `orders: ${figures.ordersPerSecond} orders/s median (offered ${ORDERS_PER_SECOND}), ${placed.failed} batches refused; ` +
          `reply (durable and applied) p50 ${figures.orderReplyP50Ms} ms, p99 ${figures.orderReplyP99Ms} ms`,
        `delivered: ${figures.messagesPerSecond} messages/s median (min ${figures.messagesPerSecondMin}) to ${busy.connections} connections, ${busy.dropped} dropped`,
        `server event-loop delay: p50 ${busy.lagP50Ms} ms, p99 ${busy.lagP99Ms} ms, max ${busy.lagMaxMs} ms; CPU ${round(busy.cpuShare * 100)}% of a core; RSS ${busy.rssMiB} MiB`,
        `trade-to-push, public trades (${publicLatency.length} samples): p50 ${figures.publicLatencyP50Ms} ms, p99 ${figures.publicLatencyP99Ms} ms, max ${figures.publicLatencyMaxMs} ms`,
        `trade-to-push, private records (${privateLatency.length} samples): p50 ${figures.privateLatencyP50Ms} ms, p99 ${figures.privateLatencyP99Ms} ms`,
        `CPU (cores of 2): machine ${cores.machine} = server ${cores.server} + clients ${cores.clients} + orders ${cores.orders} + probe ${cores.probe} + other processes ${others}`,
      ].join('\n'),
    );
    finish('ws', figures);
    await probe.close();
  } finally {
    for (const p of processes.slice(1)) p.kill();
    server.send({ type: 'stop' });
    await new Promise((resolve) => server.once('exit', resolve));
    rmSync(root, { recursive: true, force: true });
  }
}

await main();
